// Package analyzer is the pcap analyzer behind cmd/analyze: it reads
// packet traces and writes Zeek-style conn.log, http.log and dns.log, the
// way Zeek's default scripts would for the same traces.
//
// # Data flow
//
// It drives the same pieces as the rest of wirebench, one instance each:
//
//	capture.Reader ─> capture.Decoder ─> flow.Engine ─> Analyzer (a flow.Handler)
//	                                                     │  conn.log state per connection (flow.Conn.Aux)
//	                                                     │  dynamic protocol detection (HTTP on any TCP port)
//	                                                     │  tunnel decapsulation ─> inner frames ─┐
//	                                                     v                                       │
//	                                              parsers.Dispatcher ─> parsers ─> zeeklog   <─┘ (back into the Decoder and the Engine)
//
// The Analyzer wraps the dispatcher: every flow event passes through it
// on its way to the parsers, which report transactions to http.log and
// dns.log through sinks that also note the protocol confirmation Zeek
// bases conn.log's service on. When a connection ends, its conn.log
// record is written from the engine's counters.
//
// # Following Zeek
//
//   - Ports: HTTP on Zeek's HTTP::ports (80, 81, 631, 1080, 3128, 8000,
//     8080, 8888/tcp), DNS on DNS::ports (53/udp, 53/tcp, 137/udp,
//     5353/udp, 5355/udp); Config.HTTPPorts and Config.DNSPorts replace
//     them.
//   - Dynamic protocol detection: TCP connections to other ports are
//     watched with Zeek's HTTP signatures (base/protocols/http/dpd.sig): a
//     request method at the start of the originator's stream and
//     "HTTP/<digit>" at the start of the responder's. The first bytes of
//     each side are held back (at most Config.DPDBuffer per side, and
//     Config.DPDMaxBuffered in all); when both signatures match, the HTTP
//     parsers are attached and the held bytes replayed into them, and
//     when either side cannot match, the bytes are dropped.
//   - Service: "http" once a request line was parsed (Zeek's HTTP analyzer
//     confirms the protocol there), "dns" once a DNS message was parsed,
//     and the tunnel's name for a UDP connection carrying a confirmed
//     tunnel. A port alone sets no service.
//   - Tunnels (package internal/tunnel): Teredo on 3544/udp and, found by
//     content, on other UDP ports; AYIYA on 5072/udp; VXLAN on 4789/udp;
//     GTPv1 on 2152/udp and 2123/udp; GRE (IP protocol 47, and over
//     4754/udp); IP in IP (protocols 4 and 41). As in Zeek the responder's
//     port picks the UDP tunnel, Teredo counts as confirmed once both
//     directions carried valid Teredo and stops being decapsulated after a
//     packet that is not, the other UDP tunnels are confirmed by their
//     first valid packet, and tunnels nest at most Config.MaxTunnelDepth
//     deep (Zeek's Tunnel::max_depth, 2). Inner connections get the uid of
//     the UDP connection that carried them in tunnel_parents; GRE and IP in
//     IP tunnels, which have no connection of their own in conn.log, get a
//     uid per pair of tunnel endpoints, as Zeek gives them.
//   - conn.log: duration, orig_bytes and resp_bytes are unset for a
//     connection whose first and last packet have the same time, as Zeek
//     leaves them; everything else comes from the flow engine, which
//     follows Zeek's TCP, UDP and ICMP state machines.
//
// # Differences from Zeek
//
//   - Fragmented IP-in-IP and GRE packets are not reassembled before
//     decapsulation (the flow engine reassembles fragments of the
//     protocols it tracks: TCP, UDP, ICMP); UDP tunnels over fragmented
//     IP are decapsulated.
//   - tunnel_parents holds the tunnel that carried a connection's first
//     packet; Zeek adds the tunnels of later packets too.
//   - Zeek's DNS analyzer swaps the roles of a connection whose first
//     message is a reply from the originator; the analyzer keeps the flow
//     engine's roles.
//   - DPD replays the held-back bytes with the time of the packet that
//     completed the match, so the ts of the first request of such a
//     connection may be later than Zeek's.
//
// # Speed
//
// Measured on the 2-core development machine (shared, so compare ratios of
// one run), with traces inflated from the corpus by scripts/inflate-trace
// and split with tcpdump ('tcp port 80': 206 MB, 280,000 packets;
// 'udp port 53', inflated again: 100 MB, 456,000 packets, 198,000
// connections); CPU seconds are user plus system time:
//
//	                        CPU s   MB/s   peak RSS
//	tshark -Y http          8.00     26    485 MiB
//	analyze (std HTTP)      0.64    315     27 MiB   12x tshark
//	analyze --protocols ""  0.34    590     16 MiB   read, decode, flow engine, conn.log
//	tshark -Y dns           9.52     11    227 MiB
//	analyze (native DNS)    1.20     77     24 MiB   8x tshark
//	analyze --protocols ""  0.75    124     19 MiB   (DNS: a connection every 2 packets)
//
// BenchmarkSynthetic and BenchmarkCorpus time the same pipeline from
// memory. DNS traffic costs per connection (two log records, a uid, a
// parser context), not per byte.
//
// # Bounded memory
//
// Per connection the analyzer keeps a small record (the uid, service
// bits, up to MaxTunnelParents parent uids) and, while detection is
// undecided, at most DPDBuffer bytes per side; all of it comes from free
// lists. Decapsulated frames are copied into a queue of reused buffers
// that holds at most the frames of one outer packet. The map of GRE and
// IP-in-IP tunnel uids is capped at MaxIPTunnels entries. The flow engine
// bounds its own state (see package flow).
package analyzer

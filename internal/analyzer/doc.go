// Package analyzer is the pcap analyzer behind cmd/analyze: it reads
// packet traces and writes Zeek-style conn.log and the log of every
// protocol it parses (http.log, dns.log), the way Zeek's default scripts
// would for the same traces. The protocols are those of
// builtin.Protocols, or any list of parsers.Protocol descriptors
// (Config.Protocols): each brings its ports, parsers, log writer and the
// rule that confirms it as a connection's service.
//
// # Data flow
//
// It drives the same pieces as the rest of wirebench, one instance each:
//
//	capture.Reader ─> capture.Decoder ─> flow.Engine ─> Analyzer (a flow.Handler)
//	                                                     │  conn.log and parser state per connection (flow.Conn.Aux)
//	                                                     │  dynamic protocol detection (HTTP on any TCP port)
//	                                                     │  tunnel decapsulation ─> inner frames ─┐
//	                                                     v                                       │
//	                                           flowdispatch.Dispatcher ─> parsers ─> logs    <─┘ (back into the Decoder and the Engine)
//
// The Analyzer wraps the dispatcher: every flow event passes through it
// on its way to the parsers, which report transactions to their
// protocol's log through sinks that also note the protocol confirmation
// Zeek bases conn.log's service on. When a connection ends, its conn.log
// record is written from the engine's counters.
//
// # Several workers
//
// Parallel runs several Analyzers, each in a goroutine with its own flow
// engine, parsers and log buffers, on the connections a symmetric hash of
// the IP address pair gives it (see package internal/shard), or only one
// shard of the connections, so that processes split a trace. The logs hold
// the records of one Analyzer, in another order, with one TSV header.
//
// # Following Zeek
//
//   - Ports: every protocol on the ports of its descriptor
//     (parsers.Protocol.Ports), Zeek's: HTTP on HTTP::ports (80, 81, 631,
//     1080, 3128, 8000, 8080, 8888/tcp), DNS on DNS::ports (53/udp,
//     53/tcp, 137/udp, 5353/udp, 5355/udp); Config.Ports replaces them.
//   - Dynamic protocol detection: TCP connections to other ports are
//     watched with the signatures of the protocols whose descriptor has
//     them (parsers.Protocol.Detect), Zeek's: for HTTP those of
//     base/protocols/http/dpd.sig, a request method (of the 49 Zeek lists)
//     at the start of the originator's stream, or "HTTP/<digit>", HTTP in
//     any case, at the start of the responder's; either side alone
//     recognises the protocol, as in Zeek since each side is matched on
//     its own. The first bytes of the connection are held back meanwhile;
//     when a signature matches, the protocol's parsers are attached and
//     the held bytes replayed into them. Detection gives up when every
//     signature failed on both sides, or, as Zeek's PIA,
//     past Config.DPDBuffer bytes (1024, dpd_buffer_size) or
//     Config.DPDMaxChunks deliveries (100, dpd_max_packets) without a
//     match; Config.DPDMaxBuffered caps what all connections hold.
//   - Captures that start in the middle of a connection: a TCP
//     connection whose handshake was not seen gets its analyzers as any
//     other, by port and by DPD on the first bytes seen from each side,
//     as in Zeek, whose core.tcp.missing-syn baseline logs HTTP for a
//     connection that starts with the server's SYN-ACK (the flow engine
//     flips the roles by the ports, as Zeek does; TestCorpusMissingSYN).
//   - Service: "http" once a request line was parsed (Zeek's HTTP analyzer
//     confirms the protocol there), "dns" once a DNS message was parsed,
//     and the tunnel's name for a UDP connection carrying a confirmed
//     tunnel. A port alone sets no service.
//   - Tunnels (package internal/tunnel): Teredo on 3544/udp and, found by
//     content, on other UDP ports; AYIYA on 5072/udp; VXLAN on 4789/udp;
//     Geneve on 6081/udp; GTPv1 on 2152/udp and 2123/udp; GRE (IP protocol
//     47, and over 4754/udp); IP in IP (protocols 4 and 41). As in Zeek the
//     responder's port picks the UDP tunnel, Teredo counts as confirmed
//     once both directions carried valid Teredo and stops being
//     decapsulated after a packet that is not, VXLAN and Geneve are
//     confirmed by their first valid header (even with nothing, or a
//     protocol not followed, after it) and not decapsulated after an
//     invalid one, AYIYA and GTPv1 are confirmed by their first valid
//     packet, and tunnels of any kinds nest at most Config.MaxTunnelDepth
//     deep (Zeek's Tunnel::max_depth, 2: VXLAN in VXLAN is followed, a
//     third level is not). Inner connections get the uid of
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
//   - A UDP tunnel nested deeper than Config.MaxTunnelDepth is not
//     decapsulated, as in Zeek, but its connection's history lacks the 'X'
//     Zeek adds to it.
//   - Zeek's DNS analyzer swaps the roles of a connection whose first
//     message is a reply from the originator; the analyzer keeps the flow
//     engine's roles.
//   - DPD replays the held-back bytes with the time of the packet that
//     completed the match, so the ts of the first request of such a
//     connection may be later than Zeek's.
//
// # Speed
//
// scripts/bench-analyze measures the analyzer against tshark and against
// decoding plus gopacket's tcpassembly, side by side in one run:
//
//	go run ./scripts/bench-analyze -runs 5
//
// It splits the Ethernet traces of Zeek's test corpus (../shared/corpus,
// or the traces given) with tcpdump ('tcp port 80', 'udp port 53'),
// inflates each part with scripts/inflate-trace and runs every variant in
// turn: tshark -Y http (and -Y dns), the analyzer with the native and
// the standard parsers, the analyzer without parsers (--protocols "":
// reading, decoding, the flow engine and conn.log), and decoding plus
// gopacket's tcpassembly. It prints CPU seconds (user plus system time
// from the child's rusage), MB/s and packets per CPU second, peak RSS and
// the ratio to tshark; compare the ratios of one run, as a shared machine
// moves single runs by a fifth. The README gives the figures of the
// development machine.
//
// Where the time goes. HTTP: reading the file is 35-45% of the CPU
// time of the native run, nearly all of it the kernel copying the file
// into the 64 KiB read buffer (about 50 ms for 200 MB here; a memory map
// costs more, see package capture), then the native parser (about a third
// of the rest, half of it inflating gzip bodies), the flow engine (TCP
// state and reassembly, about 1,000 instructions a packet) and decoding.
// DNS: writing dns.log and conn.log is about a third of the CPU time
// (4,000 instructions for the two records of a connection, and the write
// system calls of 86 MB of logs), the DNS parser about a third, and the
// per-connection work of the flow engine, the dispatcher, the uid and the
// analyzer most of the rest.
//
// BenchmarkSynthetic and BenchmarkCorpus time the same pipeline from
// memory. For decisions below the second, count instructions, which a
// shared machine does not disturb: valgrind --tool=callgrind with
// GODEBUG=asyncpreemptoff=1 (see scripts/bench-analyze).
//
// # Bounded memory
//
// Per connection the analyzer keeps a small record (the uid, service
// bits, up to MaxTunnelParents parent uids) and, while detection is
// undecided, DPDBuffer bytes and the delivery that goes past them (at
// most DPDMaxBuffered over all connections); all of it comes from free
// lists. A uid is made when first asked for (by the parsers, or by a
// tunnel for the connections it carries) and rendered into 512-byte
// chunks of a parsers.UIDArena, never rewritten (a tunnel's uid may
// outlive its connection in the tunnel_parents of others); a chunk is
// freed by the garbage collector once no uid in it is referred to, so a
// uid in use keeps at most one chunk alive. conn.log renders the uid of
// a connection nothing asked for straight into its record. Decapsulated
// frames are copied into a queue of reused buffers that holds at most the
// frames of one outer packet. The map of GRE and IP-in-IP tunnel uids is
// capped at MaxIPTunnels entries. The flow engine bounds its own state
// (see package flow).
package analyzer

// Package flow turns decoded packets into connection events: it keeps the
// connection table (keyed by 5-tuple), decides which side is the originator,
// reassembles IPv4/IPv6 fragments and TCP byte streams, expires idle
// connections, and reports BeginConn / Data / Gap / EndConn to a Handler.
//
// Everything that grows with input (out-of-order TCP segments, fragment
// buffers, the connection table) is bounded by a cap and counted when the cap
// bites, so memory does not depend on the size of the trace. The caps count
// the memory held (buffer capacity and bookkeeping), not payload bytes, and
// one budget, Config.MaxMemory, bounds them together with the connections
// and what the handler holds for them (Config.ConnCost, Engine.Charge):
// when a new connection does not fit, the connection idle longest is
// evicted first. Time is linear in the input however packets are made:
// the connection table's hash is keyed with a per-engine secret
// (Config.HashSeed), and out-of-order segments are kept in a treap, so a
// segment arriving anywhere costs O(log n).
//
// # Data flow
//
//	capture.Packet ──> Engine.Packet ──> [fragment? defragmenter] ──> TCP | UDP | ICMP
//	                        │                                           │
//	                        └─ expire timers (clock = packet time)      ├─ connection table (canonical 5-tuple)
//	                                                                    ├─ Zeek endpoint state and history
//	                                                                    └─ TCP: stream reassembler per direction
//	                                                                          │
//	Handler: BeginConn, Data (slices of the packet, or of a reassembly buffer), Gap, EndConn
//
// An Engine is single-threaded and has no global state; time comes only
// from packet timestamps. Once warm it allocates nothing per packet:
// connections come from a free list, out-of-order segments and fragments
// from pooled buffers and an arena of tree nodes (TestSteadyStateAllocs).
// The hostile traces of scripts/hostile ("make hostile") check the
// bounds on inputs made to hurt.
//
// The connection table is open addressing over (hash, *Conn) slots, keyed
// by the canonical 5-tuple as five machine words, two for IPv4
// (table.go): a lookup costs two or three multiplies (a keyed mix) and a
// few compares, where a Go map keyed by netip.AddrPort pairs hashed and
// compared 72 bytes. A packet of the
// connection of the latest TCP (or UDP) packet, as in a burst of segments
// or a DNS reply right after its query, skips even that: it matches the
// remembered connection's addresses and ports. A segment without SYN,
// FIN or RST of a connection both of whose sides are established, as
// most are, takes a path of its own (steadySegment, or steadyAck without
// payload, tcp.go) with only the steps such a segment can need; so do the
// handshake's SYN and SYN-ACK, each side's first FIN and the bare acks
// around the close, without payload (openingSYN, answeringSYN,
// closingFIN, bareAck), each held to processTCP by a test. Each timer class is a list sorted by
// deadline, and the engine keeps a lower bound of the earliest deadline,
// so most packets look at no list at all.
//
// # Following Zeek
//
// The engine reproduces what Zeek's conn.log says of a connection, so that
// the analyzer built on it writes the same conn.log:
//
//   - Originator: the sender of a SYN without ACK; the receiver of a SYN-ACK
//     that comes first; otherwise the sender of the first packet, unless it
//     comes from a likely server port (Config.ServerPorts, by default the
//     ports Zeek's base scripts put in likely_server_ports) and goes to one
//     that is not (TCP: or to a higher one that also is), as Zeek's
//     WantConnection decides. A connection whose originator did not send its
//     first packet has Conn.Flipped set and a history starting with '^'.
//     (Zeek flips a first SYN-ACK only when it comes from a likely server
//     port; the engine always does.)
//   - TCP endpoint states, the history letters (with Zeek's once-only,
//     per-sequence-number and 1/10/100 scaling rules), orig_bytes and
//     resp_bytes (sequence space, Zeek's TCP_Endpoint::Size), and
//     missed_bytes follow Zeek's TCPSessionAdapter and TCP_Endpoint; see
//     Conn.State for conn_state. UDP and ICMP connections are flows, as in
//     Zeek; ICMP "ports" are the message type and the reply type (or the
//     code of one-way messages).
//   - Timeouts: Zeek's tcp_inactivity_timeout, udp_inactivity_timeout (also
//     for TCP connections still in their handshake), icmp_inactivity_timeout,
//     tcp_attempt_delay for unanswered SYNs, and tcp_close_delay after a
//     close, during which late packets still count (but, as in Zeek, no
//     longer extend the duration). A SYN with a new initial sequence number
//     on a closed or still-open 5-tuple starts a new connection (Zeek's
//     IsReuse).
//
// # TCP reassembly
//
// The reassembler follows Zeek's TCP_Reassembler and Reassembler, and so
// delivers what Zeek's analyzers and tshark's "follow,tcp,raw" see:
// sequence numbers are 64-bit offsets from the initial sequence number (so
// the 32-bit wrap is invisible), the first bytes seen for an offset win
// (retransmissions with different bytes are counted in
// Stats.Inconsistent), data below what the peer acknowledged is dropped,
// and a hole becomes a Gap when it is known to be lost: when the peer
// acknowledges data beyond it, when Config.MaxFlowBuffer or
// Config.MaxBuffer forces it, or when the connection ends (including bytes
// missing before a FIN). Buffered data after the hole is then delivered.
// In-order data is passed to the Handler straight from the packet. Zeek's
// exceptions for partial connections are kept: an ack of one of the
// made-up first octets is no evidence of loss. Where Zeek gives up on a
// direction (16 KiB buffered above a hole with nothing acknowledged, or
// 10 MiB unacknowledged), the engine keeps going and forces holes at its
// caps instead, so parsers always get the rest of the stream.
//
// The reassembled HTTP streams of every corpus trace are checked against
// tshark's "follow,tcp,raw" through the batch files preprocess records
// (TestRunFollowMatchesTshark in package preprocess): all 265 gap-free
// directions match byte for byte, and where bytes are missing the gaps add
// up to what tshark reports missing.
//
// # Differences from Zeek
//
//   - Checksums are not verified unless Config.VerifyChecksums is set
//     (Zeek's -C is the default here: captures from the sending host carry
//     checksums the NIC never filled in).
//   - Zeek's deferral of a close while data is pending, its partial-close
//     and connection-linger timers, and tunnel decapsulation are not
//     modelled.
//   - TCP segments cut by the snap length are used as far as they were
//     captured (Zeek ignores their payload); Stats.TruncatedPayload counts
//     them.
//   - Conn.History is bounded to MaxHistory letters.
//
// # Purpose-built or gopacket's reassembly: the measurement
//
// The choice was made by measurement (BenchmarkCorpus, BenchmarkSynthetic;
// both engines get the same decoded packets, decoding is not timed):
//
//	go test ./internal/flow -run '^$' -bench . -count 6 | benchstat
//
// Medians of six alternating runs on the 2-core development machine (shared,
// hence the wide spread of single runs: compare the ratios), with the
// corpus input (4.5 MB, 8,600 packets) replayed 20 times and the synthetic
// input (66 MB, 67,000 packets):
//
//	                         engine        gopacket reassembly   ratio
//	corpus     throughput    2.00 GiB/s    1.75 GiB/s            1.14x
//	           packets/s     4.12 M        3.60 M
//	           allocs/op     112 (once)    4,837
//	           peak heap     10.6 MiB      16.2 MiB
//	synthetic  throughput    1.71 GiB/s    197 MiB/s             8.7x
//	           packets/s     1.88 M        211 k
//	           allocs/op     483 (once)    120 (62.5 MiB)
//	           peak heap     2.7 MiB       125 MiB
//
// The engine's numbers include its UDP and ICMP connections and Zeek's
// state tracking, which gopacket does not do; its allocations are the
// warm-up of one Engine per operation (TestSteadyStateAllocs shows none per
// packet afterwards). Peak heap is the heap in use above the input's,
// sampled after every replay. For scale: decoding plus gopacket's
// tcpassembly was measured at 0.84 GB/s on real traffic; the engine alone
// runs at about 2 GiB/s on packets that are not in the cache.
//
// The purpose-built reassembler is faster on real traffic, far faster with
// loss and reordering (gopacket buffers until its page cap bites, while the
// engine learns of lost bytes from acks), does not allocate in steady state,
// and follows Zeek's semantics, which gopacket's does not (it knows nothing
// of acks, conn_state or history). It is the engine's reassembler;
// gopacket's stays a benchmark reference only.
package flow

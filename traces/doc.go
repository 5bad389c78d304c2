// Package traces generates synthetic packet traces of HTTP/1.x and DNS
// traffic, with background traffic around them, together with their ground
// truth: what a correct analyzer must find in them. The bundled sample
// traces in this directory were made by it (see README.md).
//
// # Data flow
//
// Generate starts Config.Concurrency sessions and keeps that many open:
// when one ends, another of a kind drawn from Config.Mix starts a little
// later, until Config.Size bytes are written or Config.Sessions sessions
// have started. A session (an HTTP connection, a DNS exchange, a TLS, SSH,
// NTP or ping flow) is a small state machine that yields its packets one at
// a time in time order; a heap keyed by each session's next packet time
// merges them, so packets of many connections interleave as on a real link
// and memory holds only the open sessions, whatever the size of the trace:
//
//	sessions --(next packet time)--> heap --> frame builder --> pcap/pcapng writer
//	                                              |
//	                                              +--> Truth counters
//
// Frames are built in one reused buffer with Ethernet, optional 802.1Q,
// IPv4 or IPv6 headers and valid IP, TCP, UDP and ICMP checksums; no
// allocation happens per packet. Config.Link writes them in another link
// layer instead (802.11 with or without radiotap, NFLOG, PPP, Cisco
// HDLC), the same packets behind its header. Bodies of any size are produced piecewise
// from content pools made from the seed.
//
// # The model
//
// The capture point is next to the servers. TCP connections open with a
// three-way handshake (MSS, SACK, timestamps and window scaling options as
// Linux or Windows send them), carry MSS-sized segments in slow-start
// flights one round trip apart with the receiver acknowledging every second
// segment, and end with FIN exchanges or resets. HTTP connections carry
// keep-alive request/response rounds, pipelined GETs, 100-continue
// uploads, HEAD, 204/304, redirects, client and server errors, chunked and
// Content-Length bodies, gzip bodies and HTTP/1.0 replies delimited by the
// server closing; body sizes are heavy-tailed up to Config.MaxBody. DNS
// exchanges use miekg/dns messages with name compression, EDNS0, DNSSEC
// records, NXDOMAIN/SERVFAIL/REFUSED, unanswered queries and truncated
// replies followed by a retry over TCP. Oversized UDP datagrams are
// fragmented as the sending host would.
//
// # Impairments
//
// Loss (a segment missing from the capture), reordering, retransmission,
// duplication and IPv4 fragmentation hit only TCP segments that lie wholly
// inside an identity-coded HTTP body with a Content-Length, short of its
// last byte, and, for fragmentation, large DNS replies over UDP. So no
// impairment ever touches a header, a chunk-size line or a DNS message, and
// every message stays countable: the truth is exact. Messages that lose
// bytes are counted (Truth.HTTPRequestsWithGaps, HTTPResponsesWithGaps),
// because analyzers that wait for every byte of a message (tshark) do not
// report them, while analyzers that resynchronise after a gap (Zeek) do.
//
// # Reproducibility
//
// The same Config gives the same bytes: the generator uses its own PRNG and
// integer arithmetic only, and every session draws from its own stream, so
// its content does not depend on how sessions interleave. The Config is
// recorded in the truth file, so a trace can be made again from it.
//
// # Adding a kind of session
//
//  1. Write a session (at, step, done), or a tcpApp for the TCP model
//     (next, read, interior, lost), in a file of its own.
//  2. Add a field to Mix, its weight to Mix.weights, ParseMix and
//     Mix.String, and a case to gen.startSession.
//  3. Count what it produces in Truth, documenting each new key there and
//     in README.md, and extend TestTruthMatchesContent to find it in the
//     trace independently.
package traces

// Package preprocess turns packet traces into the inputs of the parser
// benchmarks, as Spicy's "run-benchmark preprocess" does with tcpdump and
// Zeek's record-spicy-batch.zeek: it splits the traces into sub-traces by
// port rules, one per protocol, and records the connections of each
// sub-trace as a Spicy batch file. The rules are those the protocols
// declare ([parsers.Protocol.SubTrace], gathered by [RulesFor]); by
// default ([DefaultRules]) an HTTP sub-trace of "tcp port 80" and a DNS
// sub-trace of "udp port 53", as in Spicy's run-benchmark.
//
// # Data flow
//
// Run (files) and Process (readers and writers) make one pass over the
// input; each packet is read, decoded and classified once:
//
//	capture.Reader ─> capture.Decoder ─> Splitter (Classifier: port rules)
//	                                       ├─ HTTP ─> spicy-http.pcap
//	                                       │    └──> flow.Engine ─> Recorder ─> spicy-http.dat
//	                                       └─ DNS ──> spicy-dns.pcap
//	                                            └──> flow.Engine ─> Recorder ─> spicy-dns.dat
//
// The pcap files hold the matching frames unchanged; "run-benchmark run"
// times the pcap analyzers and tshark on them. The batch files hold what
// the parsers see: each TCP connection's reassembled byte streams (with
// @gap records where bytes are missing) and each UDP connection's
// datagrams; the replay binaries read them as spicy-driver does. A batch
// file records only connections of its rule's transport protocol (the
// HTTP batch file TCP ones, the DNS batch file UDP ones), as Zeek's
// recorder does for the connections its HTTP and DNS analyzers see in
// "tcp port 80" and "udp port 53" traffic. (A port rule matches only its
// transport protocol: nothing else reaches the recorders, and Summary
// counts it if it did.)
//
// # Several workers
//
// With Config.Workers, the connections of the sub-traces are recorded by
// several workers, each with its own flow engines and recorders, given the
// packets by a symmetric hash of their IP address pair (see package
// internal/shard); the reader still decodes, splits and writes the pcap
// files in input order. The batch files then hold the same connections,
// each with the same records, in another order. Config.Shard restricts
// every output to one shard of the connections, so that processes split a
// trace.
//
// # Several inputs
//
// Several inputs are processed as one trace, one after the other in the
// order given, like the pieces of a capture rotated by tcpdump -C or -G:
// connections that continue from one piece into the next stay one
// connection. Inputs are not merged by time; when one starts before the
// packets read until then end, Summary.Warnings says so (merge captures
// taken in parallel with mergecap first). The flow engines' clock is the
// highest timestamp seen, so timeouts never run backwards; frames keep
// their timestamps in the sub-traces.
//
// A pcap file holds one link type, so the inputs must share one: their
// file headers are checked before anything is written, and an input of
// another link type is refused with an error naming both. The
// sub-traces take the first input's link type, the largest snap length
// of the inputs, and nanosecond timestamps when any input has them. A
// pcapng input whose interfaces have different link types is split as
// long as the packets that match the rules have the first one (see
// Splitter).
//
// # Differences from tcpdump and Zeek
//
// The split follows tcpdump's "tcp port 80" and "udp port 53" but also
// matches packets under VLAN tags, MPLS labels and LLC/SNAP headers,
// behind IPv6 extension headers, and the non-first fragments of matching
// IP datagrams, which tcpdump drops (see Classifier). The recording
// follows Zeek (see Recorder and package flow), except that checksums are
// not verified unless Config.VerifyChecksums is set.
//
// # Errors
//
// An error stops processing: a damaged or truncated input, an input of an
// unsupported link type (refused when it is opened, before any output is
// written), a packet the sub-trace cannot hold, a write error, or the
// context being cancelled. Every output is still flushed: the pcap files
// hold every matching packet up to the last whole one read, and the batch
// files every connection seen until then, ended with @end-conn. Errors
// are one line naming the file and the cause, such as
// "trace.pcap: offset 1234: truncated packet record (want 76 bytes, have
// 33)".
//
// Memory does not grow with the size of the input: the reader, decoder
// and writers reuse fixed buffers and allocate nothing per packet
// (TestProcessAllocs), and what the flow engines and recorders keep grows
// with the connections open at once, about 1 kB each, up to the caps of
// flow.Config and its memory budget (flow.Config.MaxMemory, which counts
// the recorders' state too). "make memcheck" preprocesses a 1 GB trace and
// fails above 150 MB of peak resident memory; "make hostile" checks time
// and memory on traces made to hurt.
package preprocess

// Package std implements the parsers.Analyzer interface over the standard
// Go parsers, net/http for HTTP/1.x and miekg/dns for DNS, producing the
// same http.Transaction and dns.Transaction records as wirebench's native
// parsers with Zeek's http.log and dns.log semantics. It is the "std"
// column of the benchmark: what a typical Go program that parses traffic
// with these libraries costs.
//
// # HTTP: a goroutine per direction
//
// net/http is a pull parser (http.ReadRequest reads from a bufio.Reader)
// while parsers are pushed chunks (Feed). Two bridges are possible:
//
//   - re-parsing: buffer the unconsumed input and call ReadRequest on it
//     after every chunk until it succeeds. Cheap per chunk for small
//     messages, but every retry re-reads the whole buffer: a body that
//     arrives in k chunks costs O(k²) and the whole body must be buffered
//     to count its decoded length (a 10 MB body in 1460-byte segments
//     would re-read about 35 GB).
//   - a goroutine per direction reading from an io.Reader fed by Feed
//     through unbuffered channels (feeder): each Feed costs two goroutine
//     handoffs, constant per chunk, memory bounded by bufio's buffer.
//
// The benchmark BenchmarkBridge measures both on pipelined requests and on
// a large body; the goroutine bridge is used (see its numbers in the
// benchmark's doc comment). Feed blocks until the direction's goroutine has
// consumed the chunk and waits for more, so parsing never runs
// concurrently with the caller and chunks are not kept.
//
// # Known differences from Zeek (and from the native parsers)
//
// Where net/http or miekg/dns refuse input Zeek accepts, the standard
// parsers stop rather than reimplement the library:
//
//   - HTTP/0.9 requests and replies without a status line are rejected by
//     net/http: parsing of that direction stops (counted in
//     HTTPStats.Errors); Zeek logs them with version 0.9.
//   - A gap ends parsing of its direction (net/http cannot resynchronise);
//     Zeek skips to the next message.
//   - net/http rejects some framing Zeek tolerates (e.g. a
//     Content-Length with a leading "+", conflicting Content-Lengths,
//     invalid header names) and then stops the direction.
//   - host is net/http's Request.Host: for an absolute request URI it is
//     the URI's host, not the Host header. (uri is unescaped as Zeek does,
//     %XX decoded.)
//   - A DNS message miekg/dns cannot unpack completely is dropped whole
//     (DNSStats.Malformed); Zeek logs what it parsed before the error.
//   - DNS over TCP: a gap ends parsing of its direction.
//
// The corpus tests (corpus_test.go, corpus_http_test.go) run both
// analyzers over the traces of Zeek's test suite and compare the logs
// zeeklog writes with Zeek's baselines field by field; every trace where
// std differs is listed there with its reason (stdDNSDifferences,
// stdHTTPDifferences). The native parsers match Zeek on those traces, so
// the lists are also the native/std differences.
package std

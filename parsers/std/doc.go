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
// # Zeek's semantics
//
// The parsers read with the libraries as a Go program would, and record
// what they read with the meaning Zeek's logs give it:
//
//   - uri is the request target with %XX escapes decoded, as Zeek logs it;
//     host is the last Host header as sent, which net/http moves into
//     Request.Host (replaced by the host of an absolute target) and
//     deletes from the header map, so it is taken from the header section
//     as read;
//   - request_body_len and response_body_len count a gzip or deflate body
//     decompressed (compress/gzip, compress/zlib, compress/flate), as Zeek
//     does, with its rules for streams that end early or turn out corrupt;
//   - a request or status line net/http rejects is a protocol violation:
//     as Zeek's dynamic protocol detection removes a confirmed HTTP
//     analyzer on a violation within the first 10 KiB of a connection,
//     parsing of both directions then stops (HTTPStats.Removed);
//   - status_msg is "<empty>" for a status line without a reason phrase;
//     info_code keeps the last 1xx reply, 101 included; proxied lists the
//     proxy headers;
//   - orig_mime_types and resp_mime_types hold the type Zeek's file
//     analysis sniffs from the first 4 KiB of each body (decompressed) or,
//     for a multipart or message body, of each part (read with
//     mime/multipart and net/textproto), with Zeek's file-magic signatures;
//   - DNS answers are rendered as Zeek's script renders them, dynamic
//     updates' prerequisites and updates included, and only records Zeek
//     logs set the query name, AA, RA and rtt; a query's name on 137/udp is
//     decoded from NetBIOS's first-level encoding, as Zeek's dns_request
//     does.
//
// # Known differences from Zeek (and from the native parsers)
//
// Where net/http or miekg/dns refuse input Zeek accepts, the standard
// parsers stop rather than reimplement the library:
//
//   - net/http rejects HTTP/0.9 requests and replies without a status line,
//     request lines without a version or with one it cannot read
//     ("HTTP/1."), status lines in lower case ("http/1.1 200 OK"), request
//     targets with an incomplete escape ("/%"), methods that are no tokens,
//     malformed header lines, and framing Zeek tolerates (a negative or
//     conflicting Content-Length, several transfer codings). Parsing of
//     that direction stops (HTTPStats.Errors); Zeek logs the message.
//   - A gap ends parsing of its direction (net/http cannot resynchronise);
//     Zeek skips to the next message, or counts the gap into a body.
//   - A body without framing (read until the connection closes) counts
//     its bytes; Zeek reads it as lines and counts two bytes for every line
//     end, present or not.
//   - proxied lists different proxy headers in a fixed order (net/http's
//     header map does not keep theirs), Zeek in the order seen.
//   - A DNS message miekg/dns cannot unpack completely is dropped whole
//     (DNSStats.Malformed); Zeek logs what it parsed before the error.
//   - DNS over TCP: a gap ends parsing of its direction.
//
// The corpus tests (corpus_test.go, corpus_http_test.go) run both
// analyzers over the traces of Zeek's test suite and compare the logs
// zeeklog writes with Zeek's baselines field by field; every trace where
// std differs is listed there with its reason (stdDNSDifferences,
// stdHTTPDifferences). The native parsers match Zeek on those traces, so
// the lists are also the native/std differences. replay's
// TestCorpusNativeVsStd compares the two implementations directly on
// every corpus trace, through preprocess and the replay binaries' code.
package std

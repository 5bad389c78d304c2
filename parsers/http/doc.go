// Package http is wirebench's native HTTP/1.x parser. It reads the two
// directions of a TCP connection incrementally, pairs requests with replies,
// and reports one Transaction per record of Zeek's http.log, with the fields
// Zeek would log for the same streams.
//
// # Use
//
//	a := http.New(sink)              // sink receives every Transaction
//	cp := a.Open(conn)               // per connection; state from a free list
//	cp.Orig().Feed(clientBytes)      // any chunking; Gap(n) for missing bytes
//	cp.Resp().Feed(serverBytes)
//	cp.Orig().Finish()               // at the client's FIN
//	cp.Resp().Finish()               // at the server's FIN
//	cp.Close()                       // pending records are reported
//
// Call Finish on a direction when its FIN arrives, not only at the end of
// the connection: as in Zeek, a message that runs until the connection
// closes ends there, and the order of the two ends decides some records
// (an HTTP/0.9 request whose client closes after the reply gets a second,
// empty record).
//
// # How data flows
//
// The parser mirrors the three layers of Zeek's HTTP analysis, so that each
// quirk of Zeek's output has one obvious home:
//
//  1. The stream layer (direction, stream.go) is Zeek's ContentLine
//     analyzer. It splits the bytes into lines, each ended by CR LF, a lone
//     LF or a lone CR (Zeek's default), or passes body bytes through
//     unsplit ("plain delivery") for a body of known length. A line that
//     fits in the chunk being fed is handed on as a slice of the chunk;
//     only a line split across chunks is copied, into a per-direction
//     buffer. The fast path (head) takes a whole message head at once:
//     scanHead finds the ends of up to 32 lines and where each header name
//     ends in one pass, 32 bytes at a time with AVX2 or 16 with SSE2 on
//     amd64 (scan_amd64.s), with scanHeadGeneric (bytes.IndexByte per line)
//     elsewhere and under the purego build tag; it stops before any line
//     the general path must see (a lone CR, a continuation line, a NUL, an
//     overlong line), so both paths give the same transactions. Tests and a
//     fuzz target compare the assembly with scanHeadGeneric.
//  2. The message layer (conn.go, message.go, header.go, mime.go) is Zeek's
//     HTTP_Analyzer with its HTTP_Message and HTTP_Entity: request and
//     status lines (any method token, HTTP/0.9, malformed versions as Zeek
//     reads them), headers with obsolete line folding, and the framing of
//     the body: Content-Length (last one wins; negative or garbage counts
//     as 0), Content-Range of 206 replies, chunked encoding (honoured, as in
//     Zeek, only for HTTP/1.1) with extensions and trailers, bodies running
//     until the connection closes (after "Connection: close", or when
//     compressed), bodies read as lines (a reply with no framing, multipart
//     and message bodies with their MIME parts), no body for HEAD, 1xx, 204
//     and 304. CONNECT and Upgrade stop the parsing at the switch. Body
//     lengths count what gzip and deflate bodies decompress to (inflate.go
//     decodes the deflate codes and only counts output).
//  3. The record layer (record.go) is Zeek's scripts/base/protocols/http:
//     the table of pending records indexed by current_request and
//     current_response, trans_depth, the event handlers that fill the
//     fields, and the moment a record is logged (when its final reply ends,
//     when more than 100 requests are pending, or when the connection is
//     removed).
//
// The layers talk through the events Zeek raises (http_request,
// http_reply, http_header, http_message_done), called in the order Zeek
// raises them.
//
// # States
//
// Each direction is in one of these states: expecting a request or status
// line (stateLine); inside a message, its header section or its body
// (stateMessage); ignoring everything after a violation or a switch of
// protocols (stateNothing); reading a raw HTTP/0.9 reply (stateHTTP09,
// replies only); or looking for the next request or status line after a
// gap or an oversized header section (stateResync). Inside a message, the
// body is read plainly (a length is known), as chunks (chunkSize, chunkData,
// chunkDataCRLF, chunkTrailer), or as lines.
//
// # Buffering and limits
//
// Nothing grows with the input without a cap and a counter (Stats):
//
//   - a line split across chunks is copied into a buffer of at most the
//     line limit (WithLimits; 64 KiB by default). A longer line is cut at
//     the limit, handed on, and the rest of it is skipped (LongLines);
//   - a header section larger than the header limit (256 KiB by default)
//     ends its message, and the direction resynchronises (LargeHeaders);
//   - a folded header grows to at most 64 KiB (Zeek's MIME::max_header_bytes);
//   - MIME parts nest at most 100 deep (Zeek's MIME::max_depth);
//   - at most 128 records wait per connection (Zeek flushes unanswered
//     requests beyond 100; the rest are reported early, EarlyReports);
//   - the queue of unanswered request methods holds 4096 entries.
//
// Bodies are never buffered: their bytes are only counted, so a body of
// many gigabytes costs what its chunks cost to skip. A compressed body in
// dynamic deflate blocks borrows its Huffman tables (10 KiB) from the
// analyzer while it is decoded. Every buffer is reused from message to
// message and from connection to connection; once warmed up, the parser
// allocates nothing per connection or per transaction.
//
// # Where it differs from Zeek
//
// Zeek's output depends in a few places on how TCP segmented the stream; the
// parser's output never depends on how its input is chunked (a property
// test checks it), so there it picks the common case:
//
//   - a multipart or message body of known length ends a line that runs past
//     its end (Zeek does only when a segment ends there too), and ends plain
//     data (after a part's Content-Length) where its count ends (Zeek counts
//     the rest of the segment);
//   - when a gzip or deflate body turns out corrupt, the output of the 4 KiB
//     piece in which the error falls is dropped, counted from the start of
//     the body (Zeek counts the pieces from the start of each segment); the
//     checksum in the trailer is not verified;
//   - the byte count that decides whether DPD still removes the analyzer
//     after a violation (10 KiB) is taken at the end of the offending line.
//
// Where Zeek's number parsing overflows (util::atoi_n wraps, so a
// Content-Length or chunk size of 2^64+5 reads as 5 and the bytes after the
// fifth pass for the next message, a way to smuggle requests past it), a
// length too large for an int64 is read as the largest one: the body runs
// to the end of the connection.
//
// Elsewhere it leaves out what does not show in http.log (files, MIME
// decoding of parts, Content-Length headers inside multipart parts) and what
// belongs to other analyzers (tunnels behind CONNECT and Upgrade, HTTP inside
// WebSocket frames). Zeek also ignores the payload of connections whose
// handshake it did not see; that decision belongs to the caller. After a gap
// outside a body Zeek stops parsing the direction; the default here is to
// resynchronise (WithGapPolicy(StopOnGap) behaves as Zeek). TestZeekBaselines
// compares every record with Zeek's own baselines for the Zeek test-suite
// traces.
//
// # Extending the parser
//
// To report another header in Transaction:
//
//  1. add the field to Transaction (transaction.go) and to record, and copy
//     it in connState.report (record.go);
//  2. give the header name a constant and a case in classify (header.go);
//     keep the constants the script layer handles after hdrReferer;
//  3. set the field in connState.evHeader (header.go), which sees client
//     headers only, as Zeek's http_header handler does;
//  4. add a case to parseTests (parser_test.go) and, when the corpus holds a
//     trace with that header, check that TestZeekBaselines still passes.
//
// To change how a body is framed, change submitAllHeaders (which decides)
// and entityData (which counts), both in message.go, then add the case to parseTests and
// chunkingCases: the chunking property is the first thing a framing change
// breaks.
package http

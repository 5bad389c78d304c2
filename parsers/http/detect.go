package http

import (
	"bytes"

	"github.com/wirebench/wirebench/parsers"
)

// detect is HTTP's signature for dynamic protocol detection (see
// parsers.Protocol.Detect): Zeek's base/protocols/http/dpd.sig, a request
// method at the start of the originator's stream or "HTTP/" and a digit at
// the start of the responder's.
func detect(side parsers.Role, start []byte) parsers.Verdict {
	if side == parsers.Orig {
		return detectRequest(start)
	}
	return detectReply(start)
}

// dpdMethods are the request methods of Zeek's dpd_http_client
// signature: IANA's registry of HTTP methods, WebDAV's and Exchange's,
// and Microsoft's RPC over HTTP, in the signature's order.
var dpdMethods = [][]byte{
	[]byte("OPTIONS"), []byte("GET"), []byte("HEAD"), []byte("POST"), []byte("PUT"), []byte("DELETE"),
	[]byte("ACL"), []byte("BASELINE-CONTROL"), []byte("BIND"), []byte("CHECKIN"), []byte("CHECKOUT"),
	[]byte("CONNECT"), []byte("COPY"), []byte("LABEL"), []byte("LINK"), []byte("LOCK"), []byte("MERGE"),
	[]byte("MKACTIVITY"), []byte("MKCALENDAR"), []byte("MKCOL"), []byte("MKREDIRECTREF"), []byte("MOVE"),
	[]byte("ORDERPATCH"), []byte("PATCH"), []byte("PROPFIND"), []byte("PROPPATCH"), []byte("REBIND"),
	[]byte("REPORT"), []byte("SEARCH"), []byte("TRACE"), []byte("UNBIND"), []byte("UNCHECKOUT"),
	[]byte("UNLINK"), []byte("UNLOCK"), []byte("UPDATE"), []byte("VERSION-CONTROL"), []byte("BCOPY"),
	[]byte("BDELETE"), []byte("BMOVE"), []byte("BPROPFIND"), []byte("BPROPPATCH"), []byte("NOTIFY"),
	[]byte("POLL"), []byte("SUBSCRIBE"), []byte("UNSUBSCRIBE"), []byte("X-MS-ENUMATTS"),
	[]byte("MKWORKSPACE"), []byte("RPC_IN_DATA"), []byte("RPC_OUT_DATA"),
}

// detectRequest applies Zeek's dpd_http_client pattern,
// /^[[:space:]]*(OPTIONS|GET|...)[[:space:]]*/, to the start of the
// originator's stream.
func detectRequest(b []byte) parsers.Verdict {
	b = bytes.TrimLeft(b, " \t\n\v\f\r")
	if len(b) == 0 {
		return parsers.Undecided
	}
	verdict := parsers.Failed
	for _, m := range dpdMethods {
		if bytes.HasPrefix(b, m) {
			return parsers.Matched
		}
		if len(b) < len(m) && bytes.HasPrefix(m, b) {
			verdict = parsers.Undecided
		}
	}
	return verdict
}

// detectReply applies Zeek's dpd_http_server pattern,
// /^[hH][tT][tT][pP]\/[0-9]/, to the start of the responder's stream: the
// word HTTP in any case (the http-lower-case test of Zeek's suite has a
// server answering "http/1.1"), "/" and a digit.
func detectReply(b []byte) parsers.Verdict {
	const prefix = "http/"
	n := min(len(b), len(prefix))
	for i := range n {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return parsers.Failed
		}
	}
	if len(b) <= len(prefix) {
		return parsers.Undecided
	}
	if c := b[len(prefix)]; c >= '0' && c <= '9' {
		return parsers.Matched
	}
	return parsers.Failed
}

package http

// Header lines: splitting them as Zeek's MIME parser does, naming the
// headers the parser acts on, and acting on them (framing headers for the
// entity, Connection and Upgrade for the analyzer, client headers for the
// record, as Zeek's http_header handler does).

import (
	"bytes"
	"encoding/binary"
	"math"
)

// splitHeader splits a header line into name and value as Zeek's
// MIME_Header does: comments and junk before the name are skipped, white
// space (and comments) may precede the ':', and leading white space of the
// value is dropped; trailing white space is kept.
func splitHeader(h []byte) (name, value []byte, ok bool) {
	if len(h) > 0 && h[0] != '(' && !isLWS(h[0]) {
		// The usual case: the name runs up to the first ':'.
		if colon := bytes.IndexByte(h, ':'); colon > 0 && nameChars(h[:colon]) {
			j := colon + 1
			for j < len(h) && class[h[j]]&clsSpace != 0 {
				j++
			}
			return h[:colon], h[j:], true
		}
	}
	i := 0
	if len(h) > 0 && (h[0] == '(' || isLWS(h[0])) {
		i = skipLWSComments(h, 0)
	}
	for i < len(h) && class[h[i]]&clsFieldName == 0 {
		if j := skipLWSComments(h, i); j > i {
			i = j
		} else {
			i++
		}
	}
	if i >= len(h) {
		return nil, nil, false
	}
	j := i + 1
	for j < len(h) && class[h[j]]&clsFieldName != 0 {
		j++
	}
	name = h[i:j]
	if j < len(h) && h[j] != ':' {
		j = skipLWSComments(h, j)
	}
	if j >= len(h) || h[j] != ':' {
		return nil, nil, false
	}
	j++
	for j < len(h) && class[h[j]]&clsSpace != 0 {
		j++
	}
	return name, h[j:], true
}

// nameChars reports whether b consists of header-name characters (printable
// ASCII, the caller having excluded ':'), eight bytes at a time.
func nameChars(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(b) >= 8 {
		x := binary.LittleEndian.Uint64(b)
		// A byte below 0x21, or above 0x7e, sets its high bit here.
		if ((x-0x21*ones)&^x|(x+ones)|x)&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 33 || c > 126 {
			return false
		}
	}
	return true
}

// Header names the analyzer or the script layer act on.
const (
	hdrOther uint8 = iota
	hdrContentLength
	hdrContentRange
	hdrContentType
	hdrContentEncoding
	hdrTransferEncoding
	hdrConnection
	hdrUpgrade
	hdrReferer
	hdrHost
	hdrOrigin
	hdrUserAgent
	hdrAuthorization // Authorization and Proxy-Authorization
	hdrProxy         // one of HTTP::proxy_headers
)

// Folded words of the names classify recognises, read the way classify
// reads a name of that length: w8 and w4 load 8 and 4 bytes at an offset,
// with bit 0x20 set in each byte, which folds ASCII upper case onto lower
// case as equalFold does (a name made only of printable bytes matches
// exactly when equalFold would say so).
var (
	nHost                   = w4("host", 0)
	nOrigin0, nOrigin1      = w4("origin", 0), w4("origin", 2)
	nReferer0, nReferer1    = w4("referer", 0), w4("referer", 3)
	nUpgrade0, nUpgrade1    = w4("upgrade", 0), w4("upgrade", 3)
	nForwarded0             = w8("forwarded", 0)
	nClientIP0              = w8("client-ip", 0)
	nUserAgent0             = w8("user-agent", 0)
	nConnection0            = w8("connection", 0)
	nTen1                   = [2]uint64{w8("user-agent", 2), w8("connection", 2)}
	nContentType0           = w8("content-type", 0)
	nContentType1           = w8("content-type", 4)
	nContentRange0          = w8("content-range", 0)
	nContentRange1          = w8("content-range", 5)
	nAuthorization0         = w8("authorization", 0)
	nAuthorization1         = w8("authorization", 5)
	nContentLength0         = w8("content-length", 0)
	nContentLength1         = w8("content-length", 6)
	nXForwardedFor0         = w8("x-forwarded-for", 0)
	nXForwardedFor1         = w8("x-forwarded-for", 7)
	nContentEncoding        = [2]uint64{w8("content-encoding", 0), w8("content-encoding", 8)}
	nXForwardedFrom         = [2]uint64{w8("x-forwarded-from", 0), w8("x-forwarded-from", 8)}
	nXroxyConnection        = [2]uint64{w8("xroxy-connection", 0), w8("xroxy-connection", 8)}
	nProxyConnection        = [2]uint64{w8("proxy-connection", 0), w8("proxy-connection", 8)}
	nTransferEncoding       = [3]uint64{w8("transfer-encoding", 0), w8("transfer-encoding", 8), w8("transfer-encoding", 9)}
	nProxyAuthorization     = [3]uint64{w8("proxy-authorization", 0), w8("proxy-authorization", 8), w8("proxy-authorization", 11)}
	nForwarded1, nClientIP1 = w8("forwarded", 1), w8("client-ip", 1)
)

func w8(s string, i int) uint64 { return binary.LittleEndian.Uint64([]byte(s[i:])) | fold64 }
func w4(s string, i int) uint32 { return binary.LittleEndian.Uint32([]byte(s[i:])) | fold32 }

const (
	fold32 = 0x20202020
	fold64 = 0x2020202020202020
)

// knownLengths[c] has bit n set when a name classify knows is n bytes long
// and starts with the byte c, in either case.
var knownLengths = func() (t [256]uint32) {
	for _, name := range []string{"via", "host", "origin", "referer", "upgrade", "forwarded", "client-ip",
		"user-agent", "connection", "content-type", "content-range", "authorization", "content-length",
		"x-forwarded-for", "content-encoding", "x-forwarded-from", "xroxy-connection", "proxy-connection",
		"transfer-encoding", "proxy-authorization"} {
		t[name[0]] |= 1 << len(name)
		t[name[0]-('a'-'A')] |= 1 << len(name)
	}
	return t
}()

// mayBeKnown says whether a name that starts with first and is n bytes
// long may be one classify knows; when it says no, classify would say
// hdrOther.
func mayBeKnown(first byte, n int) bool {
	return uint(n) < 32 && knownLengths[first]>>uint(n)&1 != 0
}

// classify names a header, ignoring case as equalFold does: by its length,
// then by one to three folded words of it, read with overlapping loads so
// that every byte counts.
func classify(b []byte) uint8 {
	le32 := func(i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) | fold32 }
	le64 := func(i int) uint64 { return binary.LittleEndian.Uint64(b[i:]) | fold64 }
	switch len(b) {
	case 3:
		if b[0]|0x20 == 'v' && b[1]|0x20 == 'i' && b[2]|0x20 == 'a' {
			return hdrProxy
		}
	case 4:
		if le32(0) == nHost {
			return hdrHost
		}
	case 6:
		if le32(0) == nOrigin0 && le32(2) == nOrigin1 {
			return hdrOrigin
		}
	case 7:
		w0, w1 := le32(0), le32(3)
		switch {
		case w0 == nReferer0 && w1 == nReferer1:
			return hdrReferer
		case w0 == nUpgrade0 && w1 == nUpgrade1:
			return hdrUpgrade
		}
	case 9:
		w0, w1 := le64(0), le64(1)
		if w0 == nForwarded0 && w1 == nForwarded1 || w0 == nClientIP0 && w1 == nClientIP1 {
			return hdrProxy
		}
	case 10:
		w0, w1 := le64(0), le64(2)
		switch {
		case w0 == nUserAgent0 && w1 == nTen1[0]:
			return hdrUserAgent
		case w0 == nConnection0 && w1 == nTen1[1]:
			return hdrConnection
		}
	case 12:
		if le64(0) == nContentType0 && le64(4) == nContentType1 {
			return hdrContentType
		}
	case 13:
		w0, w1 := le64(0), le64(5)
		switch {
		case w0 == nContentRange0 && w1 == nContentRange1:
			return hdrContentRange
		case w0 == nAuthorization0 && w1 == nAuthorization1:
			return hdrAuthorization
		}
	case 14:
		if le64(0) == nContentLength0 && le64(6) == nContentLength1 {
			return hdrContentLength
		}
	case 15:
		if le64(0) == nXForwardedFor0 && le64(7) == nXForwardedFor1 {
			return hdrProxy
		}
	case 16:
		w := [2]uint64{le64(0), le64(8)}
		switch w {
		case nContentEncoding:
			return hdrContentEncoding
		case nXForwardedFrom, nXroxyConnection, nProxyConnection:
			return hdrProxy
		}
	case 17:
		if [3]uint64{le64(0), le64(8), le64(9)} == nTransferEncoding {
			return hdrTransferEncoding
		}
	case 19:
		if [3]uint64{le64(0), le64(8), le64(11)} == nProxyAuthorization {
			return hdrAuthorization
		}
	}
	return hdrOther
}

// submitHeader acts on a header of the message: the entity's framing
// headers (HTTP_Entity::SubmitHeader), the analyzer's connection headers
// (HTTP_Header), and the http_header event of the script layer.
func (d *direction) submitHeader(name, value []byte) {
	kind := classify(name)
	if kind == hdrOther {
		d.otherHeader()
		return
	}
	d.submitKnownHeader(kind, name, value)
}

// otherHeader is what a header that nobody acts on still does: its
// http_header event makes sure the record exists (once per Feed suffices).
func (d *direction) otherHeader() {
	if !d.headerEvent {
		d.c.setState(d.orig)
		d.headerEvent = true
	}
}

// submitKnownHeader is submitHeader for a header of a known kind.
func (d *direction) submitKnownHeader(kind uint8, name, value []byte) {
	c, m := d.c, &d.msg
	if kind >= hdrReferer {
		// A client header: only the record takes it.
		c.evHeader(d.orig, kind, name, value)
		return
	}
	switch kind {
	case hdrContentType:
		m.ctype = parseContentType(value, m.ctype, &m.boundary, &m.hasBoundary)
	case hdrContentLength:
		if n, ok := contentLength(value); ok {
			m.contentLength = n
			if m.partialContent && m.rangeLength > n {
				m.contentLength = m.rangeLength
			}
		}
	case hdrContentRange:
		if c.replyCode == 206 {
			m.contentRange(value)
		}
	case hdrTransferEncoding:
		v := c.replyVersion
		if c.reqOngoing {
			v = c.reqVersion
		}
		if tok, _, ok := mimeToken(value); ok && equalFold(tok, "chunked") && v == (version{1, 1}) {
			m.chunk = chunkBefore
		}
	case hdrContentEncoding:
		if tok, _, ok := mimeToken(value); ok {
			switch {
			case equalFold(tok, "gzip"), equalFold(tok, "x-gzip"):
				m.encoding = encGzip
			case equalFold(tok, "deflate"):
				m.encoding = encDeflate
			}
		}
	}
	if kind == hdrConnection || kind == hdrUpgrade {
		d.connectionHeader(kind, value)
	}
	// The http_header event of a framing header does no more than that
	// of a header nobody acts on (see evHeader).
	d.otherHeader()
}

// contentLength reads a Content-Length value: its first token as a decimal
// number; a token that is no number, or a negative one, counts as 0
// (HTTP_bad_content_length), and one above math.MaxInt64 as
// math.MaxInt64, so that the body runs to the end of the connection (see
// atoiN). ok is false when the value holds no token.
func contentLength(value []byte) (int64, bool) {
	if len(value) > 0 && isDigit(value[0]) {
		// The usual case: the token starts with the digits atoiN reads.
		var n int64
		for _, c := range value {
			if !isDigit(c) {
				break
			}
			n = accumulate(n, 10, int64(c-'0'))
		}
		return n, true
	}
	return contentLengthToken(value)
}

// contentLengthToken is contentLength the long way: the first MIME token,
// read by atoiN.
func contentLengthToken(value []byte) (int64, bool) {
	tok, _, ok := mimeToken(value)
	if !ok {
		return 0, false
	}
	if n, ok := atoiN(tok, 10); ok && n >= 0 {
		return n, true
	}
	return 0, true
}

// connectionHeader is the part of HTTP_Analyzer::HTTP_Header that watches
// Connection and Upgrade: "Connection: close" in a reply makes later bodies
// without framing run until the connection closes.
func (d *direction) connectionHeader(kind uint8, value []byte) {
	c := d.c
	switch kind {
	case hdrConnection:
		if d.orig && isKeepAlive(value) {
			c.keepAlive = true
			return
		}
		tok, _, ok := mimeToken(value)
		switch {
		case !ok:
		case d.orig:
			if equalFold(tok, "keep-alive") {
				c.keepAlive = true
			}
		case equalFold(tok, "close"):
			c.connClose = true
		case equalFold(tok, "upgrade"):
			c.upgradeConn = true
		}
	case hdrUpgrade:
		if !d.orig {
			_, _, ok := mimeToken(value)
			c.upgradeProt = ok
		}
	}
}

// isKeepAlive says value is "keep-alive" in any case, the usual value of a
// request's Connection header: its token is then all of it, which
// mimeToken need not find. It compares folded words as equalFold does,
// without the call, which would cost as much again; folding takes a CR for
// the '-', which the test of value[4] rules out.
func isKeepAlive(value []byte) bool {
	return len(value) == len("keep-alive") && value[4] == '-' &&
		binary.LittleEndian.Uint64(value)|fold64 == nKeepAlive0 && binary.LittleEndian.Uint64(value[2:])|fold64 == nKeepAlive1
}

// The folded words of "keep-alive" that isKeepAlive compares.
var nKeepAlive0, nKeepAlive1 = w8("keep-alive", 0), w8("keep-alive", 2)

// evHeader is the http_header event handler: the record of the current
// request takes the client headers http.log shows.
func (c *connState) evHeader(orig bool, kind uint8, name, value []byte) {
	if !orig {
		c.respState()
		return
	}
	r := c.reqState()
	if kind < hdrReferer {
		return
	}
	switch kind {
	case hdrReferer, hdrHost, hdrOrigin, hdrUserAgent:
		r.setClientField(kind, value)
	case hdrProxy:
		up := c.scratch[:0]
		for _, b := range name {
			if b >= 'a' && b <= 'z' {
				b -= 'a' - 'A'
			}
			up = append(up, b)
		}
		c.scratch = up[:0]
		r.addProxied(up, value)
	case hdrAuthorization:
		c.setBasicAuth(r, value)
	}
}

// setClientField sets the field of a request header that http.log shows
// as sent: Referer, Host, Origin or User-Agent, by kind.
func (r *record) setClientField(kind uint8, value []byte) {
	buf, field := r.clientField(kind)
	*field = r.set(buf, value)
}

// clientField returns the buffer and the Transaction's field of the
// request header of kind Referer, Host, Origin or User-Agent: small
// enough to inline, so that the header's copy need not cost a call more.
func (r *record) clientField(kind uint8) (buf, field *[]byte) {
	switch kind {
	case hdrReferer:
		return &r.referrer, &r.tx.Referrer
	case hdrHost:
		return &r.host, &r.tx.Host
	case hdrOrigin:
		return &r.origin, &r.tx.Origin
	}
	return &r.userAgent, &r.tx.UserAgent
}

// contentRange applies a Content-Range header of a 206 reply: the range's
// length frames the body, the larger of it and Content-Length winning.
func (m *message) contentRange(value []byte) {
	unit, end, ok := mimeToken(value)
	if !ok || string(unit) != "bytes" {
		return
	}
	// The range with spaces removed: "first-last/instance".
	var buf [64]byte
	spec := buf[:0]
	for _, b := range value[end:] {
		if b != ' ' {
			if len(spec) == len(buf) {
				return // longer than any valid range: Zeek cannot parse it either
			}
			spec = append(spec, b)
		}
	}
	slash := -1
	for i, b := range spec {
		if b == '/' {
			slash = i
			break
		}
	}
	if slash < 0 {
		return
	}
	rng := spec[:slash]
	dash := -1
	for i, b := range rng {
		if b == '-' {
			dash = i
			break
		}
	}
	if dash < 0 {
		return
	}
	first, ok1 := atoiN(rng[:dash], 10)
	last, ok2 := atoiN(rng[dash+1:], 10)
	if !ok1 || !ok2 || first < 0 || last < 0 || last < first || last-first > math.MaxInt64-1 {
		return
	}
	n := last - first + 1
	m.partialContent = true
	m.rangeLength = n
	if m.contentLength > 0 {
		if m.contentLength < n {
			m.contentLength = n
		}
	} else {
		m.contentLength = n
	}
}

// parseContentType reads a Content-Type value as MIME_Entity does and
// returns the entity's new content type; for multipart types it records the
// boundary parameter. A value Zeek cannot parse leaves the type unchanged.
func parseContentType(value []byte, cur uint8, boundary *[]byte, hasBoundary *bool) uint8 {
	if cur == typeOther && len(value) > 0 && class[value[0]]&clsMIMEToken != 0 && value[0]|0x20 != 'm' {
		// The usual case: a type other than multipart or message, which
		// leaves typeOther whether or not the rest parses.
		return typeOther
	}
	return parseContentTypeFull(value, cur, boundary, hasBoundary)
}

// parseContentTypeFull is parseContentType without its shortcut.
func parseContentTypeFull(value []byte, cur uint8, boundary *[]byte, hasBoundary *bool) uint8 {
	ty, end, ok := mimeToken(value)
	if !ok {
		return cur
	}
	rest := value[end:]
	off := skipLWSComments(rest, 0)
	if off >= len(rest) || rest[off] != '/' {
		return cur
	}
	rest = rest[off+1:]
	_, end, ok = mimeToken(rest)
	if !ok {
		return cur
	}
	params := rest[end:]
	ct := typeOther
	switch {
	case equalFold(ty, "multipart"):
		ct = typeMultipart
	case equalFold(ty, "message"):
		ct = typeMessage
	default:
		return ct
	}
	for {
		off := skipLWSComments(params, 0)
		if off >= len(params) || params[off] != ';' {
			break
		}
		params = params[off+1:]
		attr, end, ok := mimeToken(params)
		if !ok {
			break
		}
		params = params[end:]
		off = skipLWSComments(params, 0)
		if off >= len(params) || params[off] != '=' {
			continue
		}
		params = params[off+1:]
		isBoundary := ct == typeMultipart && equalFold(attr, "boundary")
		val, end, ok := mimeValue(params, isBoundary)
		if !ok {
			continue
		}
		if isBoundary {
			*boundary = appendQuotedPairs((*boundary)[:0], val)
			*hasBoundary = true
		}
		params = params[end:]
	}
	if ct == typeMultipart && !*hasBoundary {
		return typeOther
	}
	return ct
}

// mimeValue reads a parameter value, a token or a quoted string
// (MIME_get_value); the quoted string is returned with its quotes, for
// appendQuotedPairs.
func mimeValue(b []byte, isBoundary bool) (val []byte, end int, ok bool) {
	off := 0
	if !isBoundary {
		off = skipLWSComments(b, 0)
	}
	b2 := b[off:]
	if len(b2) > 0 && b2[0] == '"' {
		return quotedString(b2, off)
	}
	var tok []byte
	var e int
	if isBoundary {
		tok, e, ok = boundaryToken(b2)
	} else {
		tok, e, ok = mimeToken(b2)
	}
	return tok, off + e, ok
}

// quotedString reads "..." with backslash escapes at the start of b; base is
// b's offset in the caller's slice.
func quotedString(b []byte, base int) ([]byte, int, bool) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return b[:i+1], base + i + 1, true
		case '\\':
			i++
		}
	}
	return nil, 0, false
}

// appendQuotedPairs appends a parameter value, removing the quotes and
// backslash escapes of a quoted string.
func appendQuotedPairs(dst, v []byte) []byte {
	if len(v) < 2 || v[0] != '"' {
		return append(dst, v...)
	}
	v = v[1 : len(v)-1]
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' {
			i++
			if i >= len(v) {
				break
			}
		}
		dst = append(dst, v[i])
	}
	return dst
}

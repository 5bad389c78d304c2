package http

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/parsers"
)

// Direction states: Zeek's HTTP_ExpectRequest and HTTP_ExpectReply, plus
// stateResync, in which a direction that lost its place (a gap, an oversized
// header section) looks for the next request or status line.
const (
	stateLine    uint8 = iota // expecting a request or status line
	stateMessage              // inside a message (headers or body)
	stateNothing              // ignoring everything (Zeek: EXPECT_*_NOTHING)
	stateHTTP09               // replies only: raw HTTP/0.9 reply data
	stateResync
)

// version is an HTTP version; the zero value is Zeek's "unset / invalid"
// version 0.0.
type version struct{ major, minor uint8 }

// text returns the version as Zeek's http.log shows it, "D.D": a shared
// value, whose capacity is its length (see commonMethod).
func (v version) text() []byte {
	i := (int(v.major)*10 + int(v.minor)) * 3
	return versionTexts[i : i+3 : i+3]
}

// versionTexts holds "0.0" to "9.9", the versions parseVersion reads.
var versionTexts = func() []byte {
	b := make([]byte, 0, 300)
	for major := range byte(10) {
		for minor := range byte(10) {
			b = append(b, '0'+major, '.', '0'+minor)
		}
	}
	return b
}()

// dpdSizeLimit is DPD::ignore_violations_after: a protocol violation after
// this many bytes of a connection no longer removes the analyzer.
const dpdSizeLimit = 10 * 1024

// connState holds everything about one connection: the two directions, the
// state Zeek's HTTP_Analyzer shares between them, and the pending records.
// It implements parsers.ConnParser.
type connState struct {
	a    *Analyzer
	cfg  *config
	conn *parsers.Conn

	orig, resp direction

	// Zeek's HTTP_Analyzer state.
	reqOngoing, replyOngoing bool
	numRequests              int
	keepAlive                bool
	connClose                bool // a reply said "Connection: close" (sticky, as in Zeek)
	reqVersion, replyVersion version
	replyCode                int
	connectRequest           bool
	upgradeConn, upgradeProt bool
	// stopped is set when the connection switched protocols (Upgrade or
	// CONNECT) or DPD removed the analyzer; removed is only the latter.
	stopped, removed bool
	// confirmed is Zeek's AnalyzerConfirmation: a request line parsed,
	// or a status line answered a pending request. Zeek's DPD removes
	// only a confirmed analyzer on a violation: the corpus shows it (an
	// unconfirmed analyzer keeps logging replies after bad request lines
	// in http/methods.pcap and tls/ssl-to-http-server.pcap, while a
	// confirmed one stops at the cruft of
	// http/http-11-request-then-cruft.pcap).
	confirmed bool

	// unanswered holds, for each request not yet answered by a final reply,
	// whether its method counts as HEAD (Zeek's unanswered_requests queue).
	unanswered bitQueue

	recs records
	// uriHeld is the capacity of the records' URI buffers, which grow with
	// request lines up to the line limit (see Held).
	uriHeld int
	// cur caches the records setState last returned for requests [0] and
	// replies [1]; the analyzer's noRecord when there is none.
	cur     [2]*record
	scratch []byte
}

func newConnState(a *Analyzer) *connState {
	c := &connState{a: a, cfg: &a.cfg}
	c.orig.c, c.orig.orig = c, true
	c.resp.c = c
	return c
}

func (c *connState) open(conn *parsers.Conn) {
	c.conn = conn
	c.orig.reset()
	c.resp.reset()
	c.reqOngoing, c.replyOngoing = false, false
	c.numRequests = 0
	c.keepAlive, c.connClose = false, false
	c.reqVersion, c.replyVersion = version{}, version{}
	c.replyCode = 0
	c.connectRequest, c.upgradeConn, c.upgradeProt = false, false, false
	c.stopped, c.removed, c.confirmed = false, false, false
	c.unanswered.reset()
	c.recs.cur, c.recs.transDepth = [2]uint64{}, 0
	c.cur = [2]*record{&c.a.noRecord, &c.a.noRecord}
}

// Orig returns the parser of the requests.
func (c *connState) Orig() parsers.Parser { return &c.orig }

// Resp returns the parser of the replies.
func (c *connState) Resp() parsers.Parser { return &c.resp }

// Close ends the connection as Zeek does when it removes one: messages still
// open are ended as interrupted, every pending record is reported, and the
// state returns to the analyzer's free list.
func (c *connState) Close() {
	if !c.removed {
		c.requestMade(true)
		c.replyMade(true)
	}
	c.finalize()
	c.orig.sniffRelease()
	c.resp.sniffRelease()
	c.conn = nil
	c.orig.trimBuffers()
	c.resp.trimBuffers()
	if c.recs.large {
		for _, r := range c.recs.free {
			if r.large {
				r.trim()
			}
		}
		c.recs.large = false
	}
	c.uriHeld = 0 // what trim kept is at most maxKeptBuffer a record
	c.a.release(c)
}

// Held implements parsers.Holder: the capacity of the buffers of lines
// and headers split across chunks, which grow up to the line and header
// limits (64 KiB each by default), and of the records' URI buffers, as
// long as request lines. (The
// records' other fields are not counted: summing them after every Feed
// would cost too much of the analyzer's time.)
func (c *connState) Held() int {
	return cap(c.orig.line) + cap(c.resp.line) + cap(c.orig.msg.hdr) + cap(c.resp.msg.hdr) + c.uriHeld
}

// maxKeptBuffer is the largest line or header buffer a closed
// connection's state keeps for the next: the free list would otherwise
// hold the limits' worth for every connection that ever reached them.
// A larger line buffer goes to the analyzer's lineStore.
const maxKeptBuffer = 4 << 10

func (d *direction) trimBuffers() {
	if cap(d.line) > maxKeptBuffer {
		d.line = d.c.a.lines.trade(d.line)
	}
	if cap(d.msg.hdr) > maxKeptBuffer {
		d.msg.hdr = nil
	}
}

// setVersion records a message's version (SetVersion): any version above
// 1.0 makes the connection persistent.
func (c *connState) setVersion(v *version, nv version) {
	*v = nv
	if nv.major > 1 || (nv.major == 1 && nv.minor > 0) {
		c.keepAlive = true
	}
}

// requestLine handles a line where a request line is expected. It splits
// the line as Zeek's HTTP_RequestLine and ParseRequest do, including their
// side effect on the request version: the usual shape with
// splitRequestLine, called from here since a function between them would
// cost each request a call, any other with parseRequestLineFull.
func (c *connState) requestLine(d *direction, line []byte) {
	method, uri, v, ok := splitRequestLine(line)
	if ok && (len(uri) < 16 || uriCharsLong(uri)) {
		c.setVersion(&c.reqVersion, v)
	} else if method, uri, ok = c.parseRequestLineFull(line); !ok {
		// RequestExpected(): a bad line is only a violation where a
		// request must come; elsewhere it is crud and is skipped.
		if (c.numRequests == 0 || c.keepAlive) && len(line) > 0 {
			d.state = stateNothing
			c.violation(d)
		}
		return
	}
	c.numRequests++
	c.confirmed = true
	d.state = stateMessage
	c.reqOngoing = true
	// Whether the method counts as HEAD or as CONNECT, as Zeek's prefix
	// comparisons say (see isPrefixFold): only a method that starts with
	// an h or a c can, which the first byte tells (no other token byte
	// folds onto them).
	head := false
	switch method[0] | 0x20 {
	case 'h':
		head = isPrefixFold(method, "HEAD")
	case 'c':
		c.connectRequest = c.connectRequest || isPrefixFold(method, "CONNECT")
	}
	c.unanswered.push(head)
	c.evRequest(method, uri)
	d.startMessage(bodyMaybe)
	if c.reqVersion == (version{0, 9}) {
		// An HTTP/0.9 reply is raw data until the connection closes; a
		// reply already under way is ended first.
		if c.resp.msg.active {
			c.resp.messageDone(false)
		}
		c.resp.state = stateHTTP09
		c.resp.dropLineState()
	}
}

// parseRequestLineFull splits any request line as requestLine does, and
// returns its method and URI.
func (c *connState) parseRequestLineFull(line []byte) (method, uri []byte, ok bool) {
	m := 0
	for m < len(line) && class[line[m]]&clsToken != 0 {
		m++
	}
	if m == 0 {
		return nil, nil, false
	}
	rest := skipWhitespace(line, m)
	if rest == m {
		return nil, nil, false
	}
	r := line[rest:]
	n := len(r)
	eou := 0
	for eou < n && class[r[eou]]&clsURI != 0 {
		eou++
	}
	if eou >= n && hasPrefixFold(r, "http/") {
		eou = 0 // missing_HTTP_uri
	}
	vs := eou
	for vs < n {
		eou = vs
		vs = skipWhitespace(r, vs)
		if hasPrefixFold(r[vs:], "http/") {
			break
		}
		vs++
	}
	switch {
	case vs >= n:
		c.setVersion(&c.reqVersion, version{0, 9})
	case vs+8 <= n:
		c.setVersion(&c.reqVersion, parseVersion(r[vs+5:]))
	}
	uri = r[:eou]
	if c.reqVersion == (version{0, 9}) && (m < 3 || len(uri) == 0) {
		return nil, nil, false
	}
	return line[:m], uri, true
}

// splitRequestLine is parseRequestLineFull for the usual shape of a
// request line, which it reads the same way: a method, one space, a URI of
// URI characters, one space and "HTTP/1.1" or "HTTP/1.0". ok is false for
// any other line, except that a URI of 16 bytes or more is left for the
// caller to check with uriCharsLong (a call would cost this leaf function a
// stack frame).
func splitRequestLine(line []byte) (method, uri []byte, v version, ok bool) {
	n := len(line)
	if n < 12 || line[n-9] != ' ' {
		return nil, nil, version{}, false
	}
	if w := binary.LittleEndian.Uint64(line[n-8:]); w != http11 && w != http10 {
		return nil, nil, version{}, false
	}
	m := 3 // "GET "
	if w := binary.LittleEndian.Uint32(line); w != getSP {
		m = 4 // "POST " or "HEAD ", the next most common
		if w != post && w != head || line[4] != ' ' {
			m = 0
			for class[line[m]]&clsToken != 0 {
				m++ // stops at the space before "HTTP" at the latest
			}
		}
	}
	u, end := m+1, n-9
	if m == 0 || line[m] != ' ' || u >= end || line[u] == '\t' || line[u] == ' ' {
		return nil, nil, version{}, false
	}
	if uri := line[u:end]; len(uri) < 16 && !uriCharsGeneric(uri) {
		return nil, nil, version{}, false
	}
	return line[:m], line[u:end], version{1, line[n-1] - '0'}, true
}

var (
	http11 = binary.LittleEndian.Uint64([]byte("HTTP/1.1"))
	http10 = binary.LittleEndian.Uint64([]byte("HTTP/1.0"))
	getSP  = binary.LittleEndian.Uint32([]byte("GET "))
	post   = binary.LittleEndian.Uint32([]byte("POST"))
	head   = binary.LittleEndian.Uint32([]byte("HEAD"))
)

// uriCharsGeneric reports whether b holds URI characters only (clsURI).
// On amd64, uriCharsLong does the same for 16 bytes or more, 32 at a time
// where it can; elsewhere uriCharsLong is this function.
func uriCharsGeneric(b []byte) bool {
	for len(b) >= 4 {
		if class[b[0]]&class[b[1]]&class[b[2]]&class[b[3]]&clsURI == 0 {
			return false
		}
		b = b[4:]
	}
	for _, c := range b {
		if class[c]&clsURI == 0 {
			return false
		}
	}
	return true
}

// parseVersion reads "D.D" (HTTP_Version); anything else is version 0.0.
func parseVersion(b []byte) version {
	if len(b) >= 3 && b[0] >= '0' && b[0] <= '9' && b[1] == '.' && b[2] >= '0' && b[2] <= '9' {
		return version{b[0] - '0', b[2] - '0'}
	}
	return version{}
}

func hasPrefixFold(b []byte, lower string) bool {
	return len(b) >= len(lower) && equalFold(b[:len(lower)], lower)
}

// replyLine handles a line where a status line is expected.
func (c *connState) replyLine(d *direction, line []byte) {
	code, reason, ok := c.parseStatusLine(line)
	if !ok {
		if len(line) > 0 {
			d.state = stateNothing
			c.violation(d)
		}
		return
	}
	c.replyCode = code
	if c.unanswered.len() > 0 {
		c.confirmed = true
	}
	d.state = stateMessage
	c.replyOngoing = true
	c.evReply(c.replyVersion, code, reason)
	if c.connectRequest && code != 200 {
		c.connectRequest = false
	}
	d.startMessage(c.expectReplyBody())
}

// parseStatusLine splits a status line as HTTP_ReplyLine does, including its
// side effect on the reply version. reason is nil when the line has none.
func (c *connState) parseStatusLine(line []byte) (code int, reason []byte, ok bool) {
	if code, reason, v, ok := splitStatusLine(line); ok {
		c.setVersion(&c.replyVersion, v)
		return code, reason, true
	}
	return c.parseStatusLineFull(line)
}

// splitStatusLine is parseStatusLine for the usual shape of a status line,
// which it reads the same way: "HTTP/1.1" or "HTTP/1.0", one space, three
// digits, and either nothing or one space and a reason that does not start
// with white space. ok is false for any other line.
func splitStatusLine(line []byte) (code int, reason []byte, v version, ok bool) {
	n := len(line)
	if n < 12 || line[8] != ' ' || !isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) {
		return 0, nil, version{}, false
	}
	if w := binary.LittleEndian.Uint64(line); w != http11 && w != http10 {
		return 0, nil, version{}, false
	}
	code = int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	v = version{1, line[7] - '0'}
	switch {
	case n == 12:
		return code, nil, v, true
	case line[12] != ' ' || n > 13 && isLWS(line[13]):
		return 0, nil, version{}, false
	}
	return code, line[13:n:n], v, true
}

// parseStatusLineFull is parseStatusLine without its shortcut.
func (c *connState) parseStatusLineFull(line []byte) (code int, reason []byte, ok bool) {
	if !hasPrefixFold(line, "http/") {
		return 0, nil, false
	}
	rest := line[5:]
	c.setVersion(&c.replyVersion, parseVersion(rest))
	i := 0
	for i < len(rest) && !isLWS(rest[i]) {
		i++
	}
	if i >= len(rest) {
		return 0, nil, false
	}
	i = skipWhitespace(rest, i)
	if i+3 > len(rest) {
		return 0, nil, false
	}
	if d := rest[i : i+3]; isDigit(d[0]) && isDigit(d[1]) && isDigit(d[2]) {
		code = int(d[0]-'0')*100 + int(d[1]-'0')*10 + int(d[2]-'0')
	}
	j := i + 3
	for j < len(rest) && !isLWS(rest[j]) {
		j++
	}
	if j >= len(rest) {
		return code, nil, true
	}
	j = skipWhitespace(rest, j)
	return code, rest[j:len(rest):len(rest)], true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// expectReplyBody decides whether a reply may have a body: not for HEAD
// requests, 1xx, 204 and 304 replies.
func (c *connState) expectReplyBody() int8 {
	if head, ok := c.unanswered.front(); ok && head {
		return bodyNotExpected
	}
	if (c.replyCode >= 100 && c.replyCode < 200) || c.replyCode == 204 || c.replyCode == 304 {
		return bodyNotExpected
	}
	return bodyExpected
}

// requestMade ends the request in progress (RequestMade).
func (c *connState) requestMade(interrupted bool) {
	if !c.reqOngoing {
		return
	}
	c.reqOngoing = false
	if c.orig.msg.active {
		c.orig.messageDone(interrupted)
	}
	if c.orig.state == stateMessage || c.orig.state == stateLine {
		if interrupted {
			c.orig.state = stateNothing
		} else {
			c.orig.state = stateLine
		}
	}
}

// replyMade ends the reply in progress (ReplyMade): a final reply answers
// the oldest unanswered request, and a 101 reply to the only outstanding
// request that names a protocol switches the connection to it.
func (c *connState) replyMade(interrupted bool) {
	if !c.replyOngoing {
		return
	}
	c.replyOngoing = false
	if c.resp.msg.active {
		c.resp.messageDone(interrupted)
	}
	if c.replyCode < 100 || c.replyCode >= 200 {
		c.unanswered.pop()
	}
	upgraded := c.replyCode == 101 && c.unanswered.len() == 1 && c.upgradeConn && c.upgradeProt
	if upgraded {
		c.stopped = true
	}
	c.replyCode = 0
	c.upgradeConn, c.upgradeProt = false, false
	if c.resp.state == stateMessage || c.resp.state == stateLine {
		if interrupted || upgraded {
			c.resp.state = stateNothing
		} else {
			c.resp.state = stateLine
		}
	}
}

// violation is AnalyzerViolation: unless the analyzer is not confirmed yet
// or the connection already carried more than DPD::ignore_violations_after
// bytes, Zeek's DPD removes the analyzer, which ends both messages in
// progress.
func (c *connState) violation(d *direction) {
	c.a.stats.Violations++
	if !c.a.cfg.dpd || !c.confirmed || c.orig.pos+c.resp.pos > dpdSizeLimit {
		return
	}
	c.a.stats.Disabled++
	c.requestMade(true)
	c.replyMade(true)
	c.stopped, c.removed = true, true
}

// tunnel switches the connection to an opaque tunnel after a successful
// CONNECT: nothing more is parsed as HTTP.
func (c *connState) tunnel() { c.stopped = true }

// bitQueue is a FIFO of booleans, Zeek's unanswered_requests reduced to what
// the parser needs. It holds at most len(bits)*64 entries; beyond that the
// oldest are dropped, so a flood of unanswered requests cannot grow memory.
type bitQueue struct {
	bits       [64]uint64
	head, size uint
}

const bitQueueCap = 64 * 64

func (q *bitQueue) reset() { q.head, q.size = 0, 0 }

func (q *bitQueue) len() int { return int(q.size) }

func (q *bitQueue) push(v bool) {
	if q.size == bitQueueCap {
		q.pop()
	}
	i := (q.head + q.size) % bitQueueCap
	if v {
		q.bits[i/64] |= 1 << (i % 64)
	} else {
		q.bits[i/64] &^= 1 << (i % 64)
	}
	q.size++
}

func (q *bitQueue) front() (v, ok bool) {
	if q.size == 0 {
		return false, false
	}
	return q.bits[q.head/64]&(1<<(q.head%64)) != 0, true
}

func (q *bitQueue) pop() {
	if q.size == 0 {
		return
	}
	q.head = (q.head + 1) % bitQueueCap
	q.size--
}

// lineStore keeps the line buffers that closed connections grew past
// maxKeptBuffer, so that a line outgrowing its buffer takes one of them
// rather than growing its own anew: on a trace whose replies carry long
// lines, that is an allocation, and its garbage, per connection. The
// buffer a line gave up for a large one is kept too, for the state whose
// large buffer is taken when its connection closes. Each list holds at
// most maxSpareLines buffers, the large ones at most the line limit each.
type lineStore struct {
	large [][]byte // capacity above maxKeptBuffer
	small [][]byte // capacity maxKeptBuffer or less
}

// maxSpareLines bounds each of a lineStore's lists.
const maxSpareLines = 8

// grow returns line with room for n bytes in all: a kept large buffer that
// has it, holding line's bytes, when there is one, else line itself.
func (s *lineStore) grow(line []byte, n int) []byte {
	for i, b := range s.large {
		if cap(b) >= n {
			last := len(s.large) - 1
			s.large[i], s.large[last] = s.large[last], nil
			s.large = s.large[:last]
			s.put(line)
			return append(b, line...)
		}
	}
	return line
}

// trade takes the large buffer of a closed connection's direction and
// returns a small one for it in exchange (nil if none is kept).
func (s *lineStore) trade(line []byte) []byte {
	s.put(line)
	n := len(s.small)
	if n == 0 {
		return nil
	}
	b := s.small[n-1]
	s.small[n-1] = nil
	s.small = s.small[:n-1]
	return b
}

// put keeps b, emptied, in the list its capacity belongs to, if there is
// room.
func (s *lineStore) put(b []byte) {
	list := &s.small
	if cap(b) > maxKeptBuffer {
		list = &s.large
	}
	if cap(b) > 0 && len(*list) < maxSpareLines {
		*list = append(*list, b[:0])
	}
}

package std

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	nethttp "net/http"
	"net/textproto"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/filemagic"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// MaxHeaderBytes caps the size of one message's start line and headers,
// as net/http's server caps them (http.DefaultMaxHeaderBytes); a message
// over the cap ends parsing of its direction (counted in
// HTTPStats.HeaderLimit).
const MaxHeaderBytes = nethttp.DefaultMaxHeaderBytes

// MaxPending caps the requests of a connection waiting for their replies,
// as Zeek's HTTP::max_pending_requests does.
const MaxPending = 100

// HTTPStats counts what an HTTP analyzer did.
type HTTPStats struct {
	Requests, Replies, Transactions int64
	// Errors counts directions whose parsing stopped on input net/http
	// rejects (a malformed message, HTTP/0.9, a truncated body); Gaps
	// counts directions stopped by a gap, which net/http cannot skip;
	// HeaderLimit counts messages over MaxHeaderBytes.
	Errors, Gaps, HeaderLimit int64
	// PendingLimit counts the times MaxPending requests were waiting and
	// were reported without replies.
	PendingLimit int64
	// Violations counts request or status lines net/http rejected where
	// Zeek expects one (protocol violations); Removed counts the
	// connections whose parsing stopped because of one, as Zeek's dynamic
	// protocol detection removes the analyzer (see httpConn.violation).
	Violations, Removed int64
}

// dpdSizeLimit is Zeek's DPD::ignore_violations_after: a violation after
// this many bytes of a connection no longer removes the analyzer.
const dpdSizeLimit = 10 * 1024

// HTTP is a parsers.Analyzer that parses HTTP/1.x with net/http:
// http.ReadRequest on the originator's side, http.ReadResponse (given the
// request, for HEAD and CONNECT) on the responder's, bodies read to the end
// to count their decoded length. Each direction runs in its own goroutine
// fed through an io.Reader (see the package documentation for why).
// Requests and replies are paired by order, as Zeek pairs them.
type HTTP struct {
	sink  http.Sink
	stats HTTPStats
	// magic sniffs the bodies' MIME types (the goroutines of all
	// connections take turns, never running at once, and a Sniff call
	// never waits for input).
	magic *filemagic.Matcher
}

// NewHTTP returns an analyzer reporting transactions to sink.
func NewHTTP(sink http.Sink) *HTTP {
	return &HTTP{sink: sink}
}

// body reads a message body to its end (see bodyLen), returns its length
// and appends to types the MIME types Zeek's file analysis sniffs from the
// first bytes of its files (see http.Transaction): the body, or each part
// of a multipart or message body, read with mime/multipart and
// net/textproto (not when compressed: as by the native parser).
func (a *HTTP) body(s *httpSide, h nethttp.Header, body io.Reader, untilClose bool, types []string) (int64, []string, error) {
	coding := contentCoding(h)
	ctype := lastValue(h, "Content-Type")
	if isMIMEContainer(ctype) && coding == "" {
		s.parts.Reset()
		n, err := io.Copy(&s.parts, io.LimitReader(body, maxPartsBody))
		if m, err2 := io.Copy(io.Discard, body); err == nil {
			n, err = n+m, err2
		}
		return n, a.sniffParts(ctype, s.parts.Bytes(), 0, types), err
	}
	s.bof.reset(untilClose && coding == "")
	n, err := bodyLen(body, coding, &s.bof)
	if len(s.bof.buf) > 0 && !isMIMEContainer(ctype) {
		types = a.sniff(types, s.bof.buf)
	}
	return n, types, err
}

// maxPartsBody bounds the multipart or message body kept to read its parts
// from; parts beyond it are not sniffed.
const maxPartsBody = 1 << 20

// maxPartsDepth is MIME::max_depth: parts nested deeper are not opened.
const maxPartsDepth = 100

// sniffParts sniffs the parts of a multipart or message entity of type
// ctype whose body is data. A part's lines reach Zeek's files framework
// with CR LF ends, the last line's too, which mime/multipart leaves out.
func (a *HTTP) sniffParts(ctype string, data []byte, depth int, types []string) []string {
	if depth >= maxPartsDepth {
		return types
	}
	media, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		media = leadingToken(ctype)
	}
	if strings.HasPrefix(media, "message") {
		tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(data)))
		hdr, err := tp.ReadMIMEHeader()
		if err != nil {
			return types
		}
		rest, _ := io.ReadAll(tp.R)
		return a.sniffEntity(hdr, rest, false, depth, types)
	}
	r := multipart.NewReader(bytes.NewReader(data), params["boundary"])
	for {
		p, err := r.NextRawPart()
		if err != nil {
			return types
		}
		body, _ := io.ReadAll(p)
		types = a.sniffEntity(textproto.MIMEHeader(p.Header), body, true, depth, types)
	}
}

// sniffEntity sniffs one part: its own parts when it is multipart or a
// message, else its body.
func (a *HTTP) sniffEntity(hdr textproto.MIMEHeader, body []byte, lines bool, depth int, types []string) []string {
	ctype := lastValue(nethttp.Header(hdr), "Content-Type")
	if isMIMEContainer(ctype) {
		return a.sniffParts(ctype, body, depth+1, types)
	}
	if lines && hdr.Get("Content-Length") == "" {
		body = append(body, "\r\n"...)
	}
	if len(body) == 0 {
		return types
	}
	return a.sniff(types, body)
}

// sniff appends the type of a file whose first bytes are bof.
func (a *HTTP) sniff(types []string, bof []byte) []string {
	if len(types) >= http.MaxFiles {
		return types // a type more would not be logged
	}
	if a.magic == nil {
		a.magic = filemagic.NewMatcher(filemagic.Zeek()) // at the first body: compiling takes milliseconds
	}
	if t, ok := a.magic.Sniff(bof); ok {
		types = append(types, t)
	}
	return types
}

// lastValue returns the last value of a header, "" without one.
func lastValue(h nethttp.Header, name string) string {
	vs := h[name]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// isMIMEContainer reports whether a Content-Type is multipart or a
// message: a body read as MIME, each part a file of its own.
func isMIMEContainer(ctype string) bool {
	t := leadingToken(ctype)
	return t == "multipart" || t == "message"
}

// Stats returns the counters so far.
func (a *HTTP) Stats() HTTPStats { return a.stats }

// Open implements parsers.Analyzer.
func (a *HTTP) Open(c *parsers.Conn) parsers.ConnParser {
	hc := &httpConn{a: a, c: c}
	hc.orig.hc, hc.resp.hc = hc, hc
	hc.resp.isResp = true
	return hc
}

// httpConn is the state of one connection. Its two goroutines never run
// at the same time (each runs only while Feed waits for it), so they share
// the pending queue without locks.
type httpConn struct {
	a       *HTTP
	c       *parsers.Conn
	orig    httpSide
	resp    httpSide
	pending []*pendingTx // requests in order; replied ones are removed
	depth   int
	// stopped is set when the rest is not parsed: CONNECT or Upgrade
	// succeeded, or a violation removed the analyzer.
	stopped bool

	// What Zeek's analyzer knows for its violation rule: the requests
	// parsed; confirmed (a request parsed, or a reply answered one);
	// keepAlive (a message above HTTP/1.0, or a request asking for
	// keep-alive).
	requests  int
	confirmed bool
	keepAlive bool
}

// pendingTx is a transaction under construction.
type pendingTx struct {
	tx      http.Transaction
	reqDone bool // the request body was read to its end
}

type httpSide struct {
	hc     *httpConn
	isResp bool
	f      feeder
	done   bool
	fed    int64 // bytes passed to Feed
	// bof holds the first bytes of the body being read; parts a multipart
	// or message body, to read its parts from. They are the direction's:
	// reading a body waits for input while other connections run.
	bof   bofWriter
	parts bytes.Buffer
}

// Held implements parsers.Holder with an estimate: the capacity of
// the copies the feeders keep of the header sections being read, three
// times, as net/http's own line buffers, which it does not show, hold the
// same bytes again and grow by doubling.
func (hc *httpConn) Held() int { return 3 * (cap(hc.orig.f.rec) + cap(hc.resp.f.rec)) }

func (hc *httpConn) Orig() parsers.Parser { return &hc.orig }
func (hc *httpConn) Resp() parsers.Parser { return &hc.resp }

// Feed implements parsers.Parser.
func (s *httpSide) Feed(data []byte) {
	if s.done || s.hc.stopped || len(data) == 0 {
		return
	}
	s.fed += int64(len(data))
	if !s.f.started {
		run := s.hc.readRequests
		if s.isResp {
			run = s.hc.readReplies
		}
		s.f.start(run, data)
		return
	}
	s.f.feed(data)
}

// Gap implements parsers.Parser: net/http cannot resynchronise in a byte
// stream, so a gap ends parsing of the direction, as it would end a Go
// program reading a broken connection.
func (s *httpSide) Gap(int) {
	if s.done {
		return
	}
	if !s.f.exited {
		s.hc.a.stats.Gaps++
	}
	s.Finish()
}

// Finish implements parsers.Parser.
func (s *httpSide) Finish() {
	if s.done {
		return
	}
	s.done = true
	s.f.finish()
}

// Close implements parsers.ConnParser: transactions still waiting for a
// reply are reported, as Zeek logs them when the connection ends.
func (hc *httpConn) Close() {
	hc.orig.Finish()
	hc.resp.Finish()
	for _, p := range hc.pending {
		hc.report(p)
	}
	hc.pending = nil
}

func (hc *httpConn) report(p *pendingTx) {
	hc.a.stats.Transactions++
	hc.a.sink.HTTP(hc.c, &p.tx)
}

// readRequests is the originator's goroutine.
func (hc *httpConn) readRequests() {
	f := &hc.orig.f
	br := bufio.NewReader(f)
	for !hc.stopped {
		if _, err := br.Peek(1); err != nil {
			return // end of the direction
		}
		ts := hc.c.TS
		// Keep a copy of the header section for the Host header, which
		// net/http deletes (see requestHost): what br holds already, and
		// what ReadRequest reads.
		f.record(peekBuffered(br))
		f.setLimit(MaxHeaderBytes)
		req, err := nethttp.ReadRequest(br)
		f.setLimit(0)
		head := f.stopRecording()
		if err != nil {
			hc.fail(f)
			// RequestExpected: elsewhere Zeek skips a bad line as crud.
			if startLineError(err) && (hc.requests == 0 || hc.keepAlive) {
				hc.violation(f, br, &hc.resp)
			}
			return
		}
		hc.a.stats.Requests++
		hc.requests++
		hc.confirmed = true
		// Zeek reads the first token of the first Connection header.
		if req.ProtoAtLeast(1, 1) || leadingToken(req.Header.Get("Connection")) == "keep-alive" {
			hc.keepAlive = true
		}
		if len(hc.pending) >= MaxPending {
			// Like Zeek: too many requests without replies (one-sided
			// capture, excessive pipelining): log them and start over.
			hc.a.stats.PendingLimit++
			for _, p := range hc.pending {
				hc.report(p)
			}
			hc.pending = hc.pending[:0]
		}
		hc.depth++
		p := &pendingTx{tx: requestTx(req, head, ts, hc.depth)}
		hc.pending = append(hc.pending, p)
		n, types, err := hc.a.body(&hc.orig, req.Header, req.Body, false, p.tx.OrigMIMETypes)
		p.tx.RequestBodyLen = n
		p.tx.OrigMIMETypes = types
		p.reqDone = true
		if err != nil {
			hc.a.stats.Errors++
			return
		}
	}
}

// fail counts why a direction stopped.
func (hc *httpConn) fail(f *feeder) {
	if f.hitLimit {
		hc.a.stats.HeaderLimit++
	} else {
		hc.a.stats.Errors++
	}
}

// violation is Zeek's AnalyzerViolation, for a request or status line
// net/http rejected where one was expected. Parsing of that direction has
// stopped already (in Zeek too); Zeek's dynamic protocol detection also
// removes a confirmed analyzer unless the connection carried more than
// DPD::ignore_violations_after bytes (see violation in parsers/http):
// then the other direction stops too, and the transactions still waiting
// are reported when the connection closes. As in the native parser, the
// bytes are counted up to the end of the offending line: what ReadRequest
// or ReadResponse took from br (fed by f) and what the other direction
// was fed, whatever the chunks.
func (hc *httpConn) violation(f *feeder, br *bufio.Reader, other *httpSide) {
	hc.a.stats.Violations++
	if !hc.confirmed || f.read-int64(br.Buffered())+other.fed > dpdSizeLimit {
		return
	}
	hc.a.stats.Removed++
	hc.stopped = true
}

// startLineMessages are the beginnings of net/http's errors for a
// malformed request or status line (request.go, response.go), which Zeek
// reports as protocol violations; malformed headers and framing are only
// "weird" to Zeek. TestStartLineError pins them to net/http's wording.
var startLineMessages = []string{
	"malformed HTTP request", "invalid method", "malformed HTTP version",
	"malformed HTTP response", "malformed HTTP status code",
}

// startLineError reports whether err is net/http's rejection of a request
// or status line.
func startLineError(err error) bool {
	msg := err.Error()
	for _, m := range startLineMessages {
		if strings.HasPrefix(msg, m) {
			return true
		}
	}
	return false
}

func peekBuffered(br *bufio.Reader) []byte {
	b, _ := br.Peek(br.Buffered())
	return b
}

// requestTx fills a transaction's request fields as Zeek's http.log does.
// head is the request's header section as read.
func requestTx(req *nethttp.Request, head []byte, ts int64, depth int) http.Transaction {
	tx := http.Transaction{
		TS:         ts,
		Depth:      depth,
		HasRequest: true,
		Method:     []byte(req.Method),
		URI:        http.AppendUnescapedURI(make([]byte, 0, len(req.RequestURI)), []byte(req.RequestURI)),
		Referrer:   lastHeader(req.Header, "Referer"),
		UserAgent:  lastHeader(req.Header, "User-Agent"),
		Origin:     lastHeader(req.Header, "Origin"),
	}
	tx.Host = requestHost(req, head)
	tx.Proxied = proxied(req.Header)
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range req.Header.Values(name) {
			if user, ok := basicAuthUser(v); ok {
				tx.Username = user
			}
		}
	}
	return tx
}

// requestHost returns the Host header as Zeek logs it: the value of the
// last one, nil when there is none. net/http moves it into req.Host, where
// an absolute request target's host takes its place (RFC 9112 section
// 3.2.2), and deletes it from req.Header. When req.Host may not be the
// header (an absolute target, or no value), the header is looked up in the
// header section as read.
func requestHost(req *nethttp.Request, head []byte) []byte {
	if req.Host != "" && req.URL.Host == "" {
		return []byte(req.Host)
	}
	return hostHeader(head)
}

// hostHeader returns the value of the last Host header of a header
// section (a start line, header lines, an empty line: net/http accepted
// it), nil when there is none. Folded continuation lines are joined with
// a space, as net/textproto joins them.
func hostHeader(head []byte) []byte {
	var host []byte
	inHost := false
	for first := true; len(head) > 0; first = false {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case first:
		case len(line) == 0:
			return host
		case line[0] == ' ' || line[0] == '\t':
			if inHost {
				host = append(append(host, ' '), bytes.Trim(line, " \t")...)
			}
		default:
			inHost = len(line) >= 5 && strings.EqualFold(string(line[:5]), "host:")
			if inHost {
				host = append([]byte{}, bytes.Trim(line[5:], " \t")...)
			}
		}
	}
	return host
}

// proxyHeaders are the request headers that may show a proxy, in the
// order the elements of proxied are listed.
var proxyHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-From", "Client-Ip", "Via", "Xroxy-Connection", "Proxy-Connection"}

// proxied returns the elements of Zeek's proxied set: "NAME -> value" for
// each value of a proxy header, the name in upper case, without
// duplicates. Zeek lists them in the order it saw them; net/http's Header
// map does not keep the order of different names, so they are listed in
// the order of proxyHeaders (the same order with one such header, the
// common case).
func proxied(h nethttp.Header) [][]byte {
	var out [][]byte
	for _, name := range proxyHeaders {
		for _, v := range h[name] {
			e := []byte(strings.ToUpper(name) + " -> " + v)
			if !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, e) }) {
				out = append(out, e)
			}
		}
	}
	return out
}

// lastHeader returns the last value of a header (Zeek keeps the last one),
// nil when absent.
func lastHeader(h nethttp.Header, name string) []byte {
	vs := h[name]
	if len(vs) == 0 {
		return nil
	}
	return []byte(vs[len(vs)-1])
}

// basicAuthUser extracts the user name of a Basic Authorization value the
// way Zeek's http script does: "<problem-decoding> (VALUE)" when the
// credentials have no ':'. ok is false for other schemes.
func basicAuthUser(v string) (user []byte, ok bool) {
	if len(v) < 6 || !strings.EqualFold(v[:6], "basic ") {
		return nil, false
	}
	enc := strings.TrimLeft(v[6:], " \t")
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		dec = nil
	}
	u, _, found := strings.Cut(string(dec), ":")
	if !found {
		return []byte("<problem-decoding> (" + v + ")"), true
	}
	return []byte(u), true
}

// readReplies is the responder's goroutine.
func (hc *httpConn) readReplies() {
	f := &hc.resp.f
	br := bufio.NewReader(f)
	var info *pendingTx // the transaction a 1xx reply was for
	for !hc.stopped {
		if _, err := br.Peek(1); err != nil {
			return
		}
		ts := hc.c.TS
		p := info
		if p == nil {
			p = hc.oldestUnanswered()
		}
		method := "GET"
		if p != nil && p.tx.HasRequest {
			method = string(p.tx.Method)
		}
		f.setLimit(MaxHeaderBytes)
		resp, err := nethttp.ReadResponse(br, &nethttp.Request{Method: method})
		f.setLimit(0)
		if err != nil {
			hc.fail(f)
			if startLineError(err) {
				hc.violation(f, br, &hc.orig)
			}
			return
		}
		if p == nil {
			p = hc.replyOnly(ts)
		} else if p.tx.HasRequest {
			hc.confirmed = true
		}
		if resp.ProtoAtLeast(1, 1) {
			hc.keepAlive = true
		}
		hc.a.stats.Replies++
		p.tx.HasReply = true
		p.tx.StatusCode = resp.StatusCode
		p.tx.StatusMsg = reasonPhrase(resp.Status)
		p.tx.Version = []byte(strings.TrimPrefix(resp.Proto, "HTTP/"))
		if resp.StatusCode >= 100 && resp.StatusCode < 200 {
			// Zeek keeps the last 1xx reply, 101 included, as info.
			p.tx.InfoCode, p.tx.InfoMsg = resp.StatusCode, p.tx.StatusMsg
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != nethttp.StatusSwitchingProtocols {
			// An interim reply: the final one for the same request follows.
			info = p
			continue
		}
		info = nil
		if resp.StatusCode == nethttp.StatusSwitchingProtocols ||
			method == nethttp.MethodConnect && resp.StatusCode >= 200 && resp.StatusCode < 300 {
			// The connection is no longer HTTP (net/http would read the
			// tunnel as a body until close).
			hc.stopped = true
			hc.removePending(p)
			hc.report(p)
			return
		}
		untilClose := resp.ContentLength < 0 && len(resp.TransferEncoding) == 0
		n, types, err := hc.a.body(&hc.resp, resp.Header, resp.Body, untilClose, p.tx.RespMIMETypes)
		p.tx.ResponseBodyLen = n
		p.tx.RespMIMETypes = types
		hc.removePending(p)
		hc.report(p)
		if err != nil {
			hc.a.stats.Errors++
			return
		}
	}
}

// noReason is what Zeek logs as status_msg for a status line without a
// reason phrase.
var noReason = []byte("<empty>")

// reasonPhrase returns the reason phrase of a status as net/http gives it
// ("200 OK", after the version): what follows the code and the white
// space after it, "<empty>" when nothing follows the code.
func reasonPhrase(status string) []byte {
	if len(status) <= 3 {
		return noReason
	}
	return []byte(strings.TrimLeft(status[3:], " \t"))
}

// oldestUnanswered returns the oldest request without a reply, or nil.
func (hc *httpConn) oldestUnanswered() *pendingTx {
	for _, p := range hc.pending {
		if !p.tx.HasReply {
			return p
		}
	}
	return nil
}

// replyOnly starts a transaction for a reply without a request.
func (hc *httpConn) replyOnly(ts int64) *pendingTx {
	hc.depth++
	p := &pendingTx{tx: http.Transaction{TS: ts, Depth: hc.depth}}
	hc.pending = append(hc.pending, p)
	return p
}

func (hc *httpConn) removePending(p *pendingTx) {
	for i, q := range hc.pending {
		if q == p {
			hc.pending = append(hc.pending[:i], hc.pending[i+1:]...)
			return
		}
	}
}

package std

import (
	"bufio"
	"encoding/base64"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"

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
}

// HTTP is a parsers.Analyzer that parses HTTP/1.x with net/http:
// http.ReadRequest on the originator's side, http.ReadResponse (given the
// request, for HEAD and CONNECT) on the responder's, bodies read to the end
// to count their decoded length. Each direction runs in its own goroutine
// fed through an io.Reader (see the package documentation for why).
// Requests and replies are paired by order, as Zeek pairs them.
type HTTP struct {
	sink  http.Sink
	stats HTTPStats
}

// NewHTTP returns an analyzer reporting transactions to sink.
func NewHTTP(sink http.Sink) *HTTP {
	return &HTTP{sink: sink}
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
	stopped bool // CONNECT or Upgrade succeeded: the rest is not HTTP
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
}

func (hc *httpConn) Orig() parsers.Parser { return &hc.orig }
func (hc *httpConn) Resp() parsers.Parser { return &hc.resp }

// Feed implements parsers.Parser.
func (s *httpSide) Feed(data []byte) {
	if s.done || s.hc.stopped || len(data) == 0 {
		return
	}
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
		f.setLimit(MaxHeaderBytes)
		req, err := nethttp.ReadRequest(br)
		f.setLimit(0)
		if err != nil {
			hc.fail(f)
			return
		}
		hc.a.stats.Requests++
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
		p := &pendingTx{tx: requestTx(req, ts, hc.depth)}
		hc.pending = append(hc.pending, p)
		n, err := io.Copy(io.Discard, req.Body)
		p.tx.RequestBodyLen = n
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

// requestTx fills a transaction's request fields as Zeek's http.log does.
func requestTx(req *nethttp.Request, ts int64, depth int) http.Transaction {
	tx := http.Transaction{
		TS:         ts,
		Depth:      depth,
		HasRequest: true,
		Method:     []byte(req.Method),
		URI:        unescapeURI(req.RequestURI),
		Referrer:   lastHeader(req.Header, "Referer"),
		UserAgent:  lastHeader(req.Header, "User-Agent"),
		Origin:     lastHeader(req.Header, "Origin"),
	}
	// net/http moves the Host header into req.Host (and prefers the host
	// of an absolute request URI).
	if req.Host != "" {
		tx.Host = []byte(req.Host)
	}
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range req.Header.Values(name) {
			if user, ok := basicAuthUser(v); ok {
				tx.Username = user
			}
		}
	}
	return tx
}

// unescapeURI decodes %XX escapes of a request target as Zeek does
// before logging it (HTTP.cc's unescape_URI): a valid escape becomes its
// byte, "%%" loses its first '%', any other '%' stays.
func unescapeURI(s string) []byte {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c != '%':
			b = append(b, c)
		case i+1 < len(s) && s[i+1] == '%':
			// Zeek drops the first of two '%' (an evasion seen in the wild).
		case i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return b
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
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
			return
		}
		if p == nil {
			p = hc.replyOnly(ts)
		}
		hc.a.stats.Replies++
		msg := strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode))
		msg = strings.TrimPrefix(msg, " ")
		p.tx.HasReply = true
		p.tx.StatusCode = resp.StatusCode
		p.tx.StatusMsg = []byte(msg)
		p.tx.Version = []byte(strings.TrimPrefix(resp.Proto, "HTTP/"))
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != nethttp.StatusSwitchingProtocols {
			// An interim reply: the final one for the same request follows.
			p.tx.InfoCode, p.tx.InfoMsg = resp.StatusCode, p.tx.StatusMsg
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
		n, err := io.Copy(io.Discard, resp.Body)
		p.tx.ResponseBodyLen = n
		hc.removePending(p)
		hc.report(p)
		if err != nil {
			hc.a.stats.Errors++
			return
		}
	}
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

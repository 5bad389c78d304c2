package fasthttp

import (
	"bytes"
	"encoding/base64"
	"slices"

	"github.com/wirebench/wirebench/parsers/http"
)

// head parses a whole message head with fasthttp and starts its body.
func (s *side) head(block []byte) {
	a := s.cs.a
	a.rd.Reset(block)
	a.br.Reset(&a.rd)
	if s.resp {
		a.res.Reset()
		if err := a.res.Read(a.br); err != nil {
			s.refuse()
			return
		}
		s.reply()
		return
	}
	a.req.Reset()
	if err := a.req.Read(a.br); err != nil {
		s.refuse()
		return
	}
	s.request()
}

// refuse stops a direction whose head fasthttp refused, as a fasthttp
// server or client closes such a connection.
func (s *side) refuse() {
	s.cs.a.stats.Errors++
	s.state = stDead
}

// request records the request fasthttp parsed and starts its body.
func (s *side) request() {
	cs, h := s.cs, &s.cs.a.req
	cs.a.stats.Requests++
	r := cs.request()
	r.method = r.put(h.Method())
	r.uri = r.putUnescaped(h.RequestURI())
	if v := h.Host(); len(v) > 0 {
		r.host = r.put(v)
	}
	if v := h.Referer(); len(v) > 0 {
		r.referrer = r.put(v)
	}
	if v := h.UserAgent(); len(v) > 0 {
		r.ua = r.put(v)
	}
	r.isHead = h.IsHead()
	r.isConnect = h.IsConnect()
	for k, v := range h.AllInOrder() {
		switch {
		case bytes.EqualFold(k, []byte("Origin")):
			r.origin = r.put(v)
		case bytes.EqualFold(k, []byte("Authorization")), bytes.EqualFold(k, []byte("Proxy-Authorization")):
			r.basicAuthUser(v)
		case isProxyHeader(k):
			r.addProxied(k, v)
		}
	}
	compressed := isCompressed(h.ContentEncoding())
	switch cl := h.ContentLength(); {
	case cl == -1:
		s.startBody(r, stChunkSize, 0, compressed)
	case cl > 0:
		s.startBody(r, stBody, int64(cl), compressed)
	default:
		// No Content-Length: a request has no body.
		s.state = stHead
	}
}

// reply records the reply fasthttp parsed and starts its body.
func (s *side) reply() {
	cs, h := s.cs, &s.cs.a.res
	cs.a.stats.Replies++
	r := s.info
	if r == nil {
		r = cs.answered()
	}
	code := h.StatusCode()
	r.hasReply = true
	r.statusCode = code
	r.version = r.put(bytes.TrimPrefix(h.Protocol(), []byte("HTTP/")))
	if msg := h.StatusMessage(); len(msg) > 0 {
		r.statusMsg = r.put(msg)
	} else {
		r.statusMsg = r.put([]byte("<empty>"))
	}
	if code >= 100 && code < 200 {
		// Zeek keeps the last 1xx reply, 101 included, as info.
		r.infoCode, r.infoMsg = code, r.statusMsg
	}
	switch {
	case code == 101 || r.isConnect && code >= 200 && code < 300:
		// The connection is no longer HTTP.
		s.info = nil
		cs.done(r)
		cs.stopped = true
		return
	case code >= 100 && code < 200:
		// An interim reply: the final one for the same request follows.
		s.info = r
		return
	}
	s.info = nil
	compressed := isCompressed(h.ContentEncoding())
	switch cl := h.ContentLength(); {
	case r.isHead || code == 204 || code == 304:
		s.startBody(r, stBody, 0, false)
	case cl == -1:
		s.startBody(r, stChunkSize, 0, compressed)
	case cl == -2:
		s.startBody(r, stUntilClose, 0, compressed)
	default:
		s.startBody(r, stBody, int64(max(cl, 0)), compressed)
	}
}

// isCompressed reports whether a Content-Encoding is one whose decoded
// length Zeek counts: gzip or deflate (its first token, in any case).
func isCompressed(coding []byte) bool {
	coding = bytes.TrimLeft(coding, " \t")
	if i := bytes.IndexAny(coding, " \t,;"); i >= 0 {
		coding = coding[:i]
	}
	return bytes.EqualFold(coding, []byte("gzip")) || bytes.EqualFold(coding, []byte("x-gzip")) ||
		bytes.EqualFold(coding, []byte("deflate"))
}

// putUnescaped copies a request target into r's buffer with its escapes
// decoded as Zeek logs the uri (http.AppendUnescapedURI).
func (r *record) putUnescaped(v []byte) span {
	start := len(r.buf)
	r.buf = http.AppendUnescapedURI(r.buf, v)
	return span{start: start, end: len(r.buf), set: true}
}

// basicAuthUser sets r's username from a Basic Authorization value the way
// Zeek's http script does: "<problem-decoding> (VALUE)" when the decoded
// credentials have no ':'. Other schemes are ignored.
func (r *record) basicAuthUser(v []byte) {
	if len(v) < 6 || !bytes.EqualFold(v[:6], []byte("basic ")) {
		return
	}
	enc := bytes.TrimLeft(v[6:], " \t")
	start := len(r.buf)
	r.buf = slices.Grow(r.buf, base64.StdEncoding.DecodedLen(len(enc)))[:start+base64.StdEncoding.DecodedLen(len(enc))]
	n, err := base64.StdEncoding.Decode(r.buf[start:], enc)
	if err != nil {
		n = 0
	}
	r.buf = r.buf[:start+n]
	if i := bytes.IndexByte(r.buf[start:], ':'); i >= 0 {
		r.username = span{start: start, end: start + i, set: true}
		return
	}
	r.buf = r.buf[:start]
	r.buf = append(r.buf, "<problem-decoding> ("...)
	r.buf = append(r.buf, v...)
	r.buf = append(r.buf, ')')
	r.username = span{start: start, end: len(r.buf), set: true}
}

// proxyHeaders are the request headers that may show a proxy (Zeek's
// HTTP::proxy_headers).
var proxyHeaders = [][]byte{
	[]byte("Forwarded"), []byte("X-Forwarded-For"), []byte("X-Forwarded-From"), []byte("Client-IP"),
	[]byte("Via"), []byte("Xroxy-Connection"), []byte("Proxy-Connection"),
}

func isProxyHeader(k []byte) bool {
	for _, p := range proxyHeaders {
		if bytes.EqualFold(k, p) {
			return true
		}
	}
	return false
}

// addProxied adds "NAME -> value", the name in upper case, to r's proxied
// set, in the order first seen.
func (r *record) addProxied(k, v []byte) {
	start := len(r.buf)
	r.buf = append(r.buf, k...)
	for i := start; i < len(r.buf); i++ {
		if c := r.buf[i]; 'a' <= c && c <= 'z' {
			r.buf[i] = c - 'a' + 'A'
		}
	}
	r.buf = append(r.buf, " -> "...)
	r.buf = append(r.buf, v...)
	e := r.buf[start:]
	for _, p := range r.proxied {
		if bytes.Equal(r.buf[p.start:p.end], e) {
			r.buf = r.buf[:start]
			return
		}
	}
	r.proxied = append(r.proxied, span{start: start, end: len(r.buf), set: true})
}

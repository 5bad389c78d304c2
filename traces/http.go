package traces

import (
	"strconv"
	"time"
)

// HTTP/1.x conversations over the TCP model. A connection carries rounds:
// one request (or a pipelined batch of GET/HEAD requests) from the client,
// then the server's responses. A request with Expect: 100-continue is sent
// in three steps: headers, the server's 100 Continue, the body. When the
// requests are used up the connection ends: the client closes or resets,
// the server closes after "Connection: close", after an HTTP/1.0 reply or
// on an idle timeout, or the server resets a request it never answers.

const maxPipeline = 4

// framing is how a message's body is delimited.
type framing uint8

const (
	frNone    framing = iota // no body
	frLength                 // Content-Length
	frChunked                // Transfer-Encoding: chunked
	frClose                  // the body ends when the server closes
)

// bodyPlan is the body of one message, decided when its round is planned.
type bodyPlan struct {
	ct      contentType
	size    int64 // bytes as sent; the uncompressed size when gzip is set
	gzip    bool
	framing framing
}

// exchange is one request and the server's answer to it.
type exchange struct {
	method     string
	req        bodyPlan
	expect     bool // Expect: 100-continue
	cond       bool // conditional GET (If-None-Match)
	closeReq   bool // the request says Connection: close
	status     int
	resp       bodyPlan
	headSize   int64 // Content-Length of a HEAD reply
	closeResp  bool  // the reply says Connection: close
	unanswered bool  // the server resets instead of answering
}

// How an HTTP connection ends once its requests are used up.
const (
	endClientFIN = iota
	endClientRST
	endServerIdle
	endServerClose // the last reply says Connection: close
	endClientClose // the last request says Connection: close
	endUnanswered  // the last request is never answered: server RST
)

// Stages of a round.
const (
	stIdle = iota
	stReq
	stContinue
	stReqBody
	stResp
	stClosed
)

var methods = []string{"GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH"}
var methodWeights = []int{800, 80, 40, 20, 15, 30, 15}

// httpApp is the tcpApp of an HTTP connection.
type httpApp struct {
	g      *gen
	r      *rng
	c      *tcpConn
	v10    bool // HTTP/1.0 client
	host   string
	ua     string
	server string
	human  bool // a browser: sends Accept-Language, Referer, cookies
	gzipOK bool // sends Accept-Encoding: gzip
	cookie bool
	left   int // requests not yet planned
	ending int
	ex     [maxPipeline]exchange
	n      int
	stage  int
	path   []byte // the last request's path, for Referer
	w      httpWriter
}

func newHTTPApp(g *gen, r *rng) *httpApp {
	a := &httpApp{g: g, r: r}
	a.host = webHosts[r.intn(len(webHosts))]
	ua := r.intn(len(userAgents))
	a.ua = userAgents[ua]
	a.human = ua < 7
	a.gzipOK = a.human || r.pct(50)
	a.cookie = a.human && r.pct(60)
	a.server = serverNames[r.intn(len(serverNames))]
	a.v10 = r.pct(8)
	a.path = make([]byte, 0, 128)
	a.w.a = a
	if a.v10 {
		a.left = 1
		a.ending = endServerClose
	} else {
		a.left = 1 + int(min(r.exp(3_000), 40_000)/1000)
		a.ending = []int{endClientFIN, endClientRST, endServerIdle, endServerClose, endClientClose, endUnanswered}[r.pick([]int{45, 10, 20, 15, 5, 5})]
	}
	return a
}

// next implements tcpApp.
func (a *httpApp) next(c *tcpConn) phase {
	a.c = c
	r := a.r
	switch a.stage {
	case stIdle:
		if a.left == 0 || a.g.full() {
			return a.end()
		}
		a.plan()
		a.stage = stReq
		a.w.begin(false, 0, a.n-1, a.ex[0].expect, false)
		delay := r.between64(20_000, 3_000_000)
		if c.idx > 0 || c.lastDir == dirS {
			delay = min(r.exp(400_000_000), 8_000_000_000)
		}
		return phase{op: opSend, dir: dirC, delay: delay}
	case stReq:
		last := &a.ex[a.n-1]
		switch {
		case a.ex[0].expect:
			a.stage = stContinue
			a.w.beginContinue()
			return phase{op: opSend, dir: dirS, delay: r.between64(50_000, 2_000_000)}
		case last.unanswered:
			a.stage = stClosed
			return phase{op: opReset, dir: dirS, delay: r.between64(1_000_000, 900_000_000)}
		}
		return a.respond()
	case stContinue:
		a.stage = stReqBody
		a.w.begin(false, 0, 0, false, true)
		return phase{op: opSend, dir: dirC, delay: r.between64(10_000, 500_000)}
	case stReqBody:
		return a.respond()
	case stResp:
		a.left -= a.n
		last := &a.ex[a.n-1]
		if last.resp.framing == frClose || last.closeResp || last.closeReq || a.v10 {
			a.stage = stClosed
			delay := r.between64(20_000, 2_000_000)
			if last.resp.framing == frClose {
				delay = 0
			}
			return phase{op: opClose, dir: dirS, delay: delay}
		}
		a.stage = stIdle
		return a.next(c)
	}
	panic("traces: HTTP connection has no phase after its end")
}

func (a *httpApp) respond() phase {
	a.stage = stResp
	a.w.begin(true, 0, a.n-1, false, false)
	delay := min(a.r.exp(15_000_000), 2_000_000_000)
	return phase{op: opSend, dir: dirS, delay: delay}
}

// end returns the closing phase once all requests are answered.
func (a *httpApp) end() phase {
	a.stage = stClosed
	r := a.r
	switch a.ending {
	case endClientRST:
		return phase{op: opReset, dir: dirC, delay: r.between64(1_000_000, 3_000_000_000)}
	case endServerIdle:
		return phase{op: opClose, dir: dirS, delay: r.between64(1_000_000_000, 15_000_000_000)}
	}
	return phase{op: opClose, dir: dirC, delay: r.between64(100_000, 4_000_000_000)}
}

// plan decides the requests of the next round and the server's replies.
func (a *httpApp) plan() {
	r := a.r
	a.n = 1
	if !a.v10 && a.left >= 2 && r.pct(10) {
		a.n = r.between(2, min(a.left, maxPipeline))
	}
	for i := 0; i < a.n; i++ {
		e := &a.ex[i]
		*e = exchange{}
		if a.n > 1 {
			// Only GETs: tshark pairs pipelined replies with the last
			// request's method and would wait for the body of a HEAD reply.
			e.method = "GET"
		} else {
			e.method = methods[r.pick(methodWeights)]
		}
		lastOfConn := a.left == a.n && i == a.n-1
		a.planRequest(e)
		if lastOfConn {
			switch a.ending {
			case endUnanswered:
				e.unanswered = true
			case endClientClose:
				e.closeReq = true
			case endServerClose:
				e.closeResp = !a.v10
			}
		}
		a.planResponse(e)
		if i > 0 && e.resp.framing == frChunked {
			// tshark 4.0 cannot reassemble a chunked reply that starts in
			// the segment where a reassembled reply ends; keep pipelined
			// replies after the first to Content-Length.
			e.resp.framing = frLength
		}
	}
}

func (a *httpApp) planRequest(e *exchange) {
	r := a.r
	switch e.method {
	case "POST", "PUT", "PATCH":
		switch {
		case e.method == "PUT" || r.pct(15):
			e.req = bodyPlan{ct: ctBinary, size: heavySize(r, a.g.cfg.MaxBody/4)}
		case r.pct(50):
			e.req = bodyPlan{ct: ctForm, size: int64(r.between(10, 2000))}
		default:
			e.req = bodyPlan{ct: ctJSON, size: int64(r.between(2, 20000))}
		}
		e.req.framing = frLength
		if !a.v10 && r.pct(10) {
			e.req.framing = frChunked
		}
		e.expect = !a.v10 && a.n == 1 && e.req.size >= 1024 && r.pct(30)
	case "GET":
		e.cond = r.pct(10)
	}
}

func (a *httpApp) planResponse(e *exchange) {
	r := a.r
	type sw struct{ statuses, weights []int }
	var s sw
	switch e.method {
	case "GET":
		if e.cond {
			s = sw{[]int{304, 200}, []int{80, 20}}
		} else {
			s = sw{[]int{200, 301, 302, 404, 403, 400, 401, 429, 500, 502, 503}, []int{780, 30, 40, 60, 20, 10, 10, 5, 15, 5, 5}}
		}
	case "HEAD":
		s = sw{[]int{200, 404, 301}, []int{85, 10, 5}}
	case "POST":
		s = sw{[]int{200, 201, 204, 302, 303, 400, 401, 413, 500}, []int{45, 15, 8, 5, 5, 10, 4, 3, 5}}
	case "PUT":
		s = sw{[]int{201, 200, 204, 409, 403}, []int{40, 30, 20, 5, 5}}
	case "DELETE":
		s = sw{[]int{204, 200, 404, 405}, []int{55, 25, 15, 5}}
	case "OPTIONS":
		s = sw{[]int{204, 200}, []int{50, 50}}
	default: // PATCH
		s = sw{[]int{200, 204, 400}, []int{60, 30, 10}}
	}
	e.status = s.statuses[r.pick(s.weights)]
	noBody := e.status < 200 || e.status == 204 || e.status == 304
	switch {
	case e.method == "HEAD":
		e.headSize = heavySize(r, a.g.cfg.MaxBody)
	case noBody:
	case e.status >= 300:
		e.resp = bodyPlan{ct: ctHTML, size: int64(r.between(0, 600))}
	case e.method == "GET":
		e.resp = a.getBody()
	case e.method == "OPTIONS":
		e.resp = bodyPlan{ct: ctPlain, size: 0}
	default:
		e.resp = bodyPlan{ct: ctJSON, size: int64(r.between(2, 4000))}
	}
	if noBody || e.method == "HEAD" {
		return
	}
	if e.resp.ct.textual() && a.gzipOK && e.resp.size >= 200 && r.pct(45) {
		e.resp.gzip = true
		e.resp.size = min(e.resp.size, 512<<10)
	}
	switch {
	case a.v10 && r.pct(40):
		e.resp.framing = frClose
	case a.v10:
		e.resp.framing = frLength
	case r.pct(30):
		e.resp.framing = frChunked
	default:
		e.resp.framing = frLength
	}
}

// getBody picks the content of a successful GET.
func (a *httpApp) getBody() bodyPlan {
	r := a.r
	max := a.g.cfg.MaxBody
	switch r.pick([]int{30, 10, 12, 5, 10, 8, 10, 10, 5}) {
	case 0:
		return bodyPlan{ct: ctHTML, size: clampSize(r, 500, 300_000, max)}
	case 1:
		return bodyPlan{ct: ctCSS, size: clampSize(r, 200, 200_000, max)}
	case 2:
		return bodyPlan{ct: ctJS, size: clampSize(r, 200, 900_000, max)}
	case 3:
		return bodyPlan{ct: ctPlain, size: clampSize(r, 1, 50_000, max)}
	case 4:
		return bodyPlan{ct: ctJSON, size: clampSize(r, 2, 100_000, max)}
	case 5:
		return bodyPlan{ct: ctGIF, size: int64(len(pixelGIF))}
	case 6:
		return bodyPlan{ct: ctWebP, size: heavySize(r, max)}
	case 7:
		return bodyPlan{ct: ctBinary, size: heavySize(r, max)}
	}
	return bodyPlan{ct: ctWOFF2, size: clampSize(r, 5_000, 200_000, max)}
}

// sizeClasses give body sizes a heavy tail: most bodies are small, a few
// reach the maximum. A class is [lo, hi) with a weight; sizes are uniform
// inside a class.
var sizeClasses = []struct {
	lo, hi int64
	w      int
}{
	{0, 1, 2}, {1, 100, 6}, {100, 1000, 20}, {1000, 10_000, 34}, {10_000, 100_000, 25},
	{100_000, 1_000_000, 9}, {1_000_000, 1 << 62, 4},
}

// heavySize draws a heavy-tailed size up to max.
func heavySize(r *rng, max int64) int64 {
	var w [8]int
	n := 0
	for _, c := range sizeClasses {
		if c.lo > max {
			break
		}
		w[n] = c.w
		n++
	}
	c := sizeClasses[r.pick(w[:n])]
	return r.between64(c.lo, min(c.hi-1, max))
}

// clampSize draws a size between lo and hi, log-uniformly (by decade),
// and caps it at max.
func clampSize(r *rng, lo, hi, max int64) int64 {
	top := lo
	for top*10 <= hi && r.pct(55) {
		top *= 10
	}
	return min(r.between64(top/10+lo, min(top*10, hi)), max)
}

// Parts of a message the writer is producing.
const (
	partHeader = iota
	partBody
	partSmall // chunk framing from the small buffer
	partChunkData
	partEnd
)

// What follows the small buffer.
const (
	afterSmallData = iota
	afterSmallNextChunk
	afterSmallMsgDone
)

// httpWriter writes the messages of one send phase.
type httpWriter struct {
	a           *httpApp
	resp        bool // writing replies
	cont        bool // writing a 100 Continue
	headersOnly bool
	bodyOnly    bool
	i, last     int
	part        int
	hdr         []byte
	hpos        int
	b           body
	gz          gzipEnc
	fr          framing
	chunkLeft   int64
	small       [32]byte
	spos, slen  int
	after       int
	gapped      bool // part of the current message was lost
}

// begin starts a phase writing messages first..last: requests or replies.
func (w *httpWriter) begin(resp bool, first, last int, headersOnly, bodyOnly bool) {
	w.resp, w.cont, w.headersOnly, w.bodyOnly = resp, false, headersOnly, bodyOnly
	w.i, w.last = first, last
	w.gapped = false
	if bodyOnly {
		w.startBody(&w.a.ex[w.i].req)
		return
	}
	w.startMessage()
}

// beginContinue starts a phase holding one 100 Continue.
func (w *httpWriter) beginContinue() {
	w.resp, w.cont, w.headersOnly, w.bodyOnly = true, true, false, false
	w.i, w.last = 0, 0
	w.hdr = w.a.continueHeader(w.hdr[:0])
	w.hpos, w.part = 0, partHeader
}

func (w *httpWriter) startMessage() {
	a := w.a
	e := &a.ex[w.i]
	if w.resp {
		w.hdr = a.responseHeader(w.hdr[:0], e, &w.b, &w.gz)
	} else {
		w.hdr = a.requestHeader(w.hdr[:0], e, &w.b, &w.gz)
	}
	w.hpos, w.part, w.gapped = 0, partHeader, false
}

func (w *httpWriter) afterHeader() {
	if w.cont || w.headersOnly {
		w.messageDone()
		return
	}
	e := &w.a.ex[w.i]
	if w.resp {
		w.startBody(&e.resp)
	} else {
		w.startBody(&e.req)
	}
}

// startBody starts the body of the current message; its content was set
// up with the header (the header needs its size).
func (w *httpWriter) startBody(p *bodyPlan) {
	w.fr = p.framing
	switch {
	case p.framing == frNone || w.resp && w.a.ex[w.i].method == "HEAD":
		w.messageDone()
	case p.framing == frChunked:
		w.nextChunk()
	case w.b.left == 0:
		w.messageDone()
	default:
		w.part = partBody
	}
}

// nextChunk stages the next chunk-size line, or the last chunk.
func (w *httpWriter) nextChunk() {
	s := w.small[:0]
	if w.b.left == 0 {
		s = append(s, "0\r\n\r\n"...)
		w.after = afterSmallMsgDone
	} else {
		n := int64(w.a.r.between(1, 16384))
		if w.a.r.pct(50) {
			n = 8192
		}
		w.chunkLeft = min(n, w.b.left)
		s = strconv.AppendInt(s, w.chunkLeft, 16)
		s = append(s, "\r\n"...)
		w.after = afterSmallData
	}
	w.spos, w.slen, w.part = 0, len(s), partSmall
}

func (w *httpWriter) messageDone() {
	if w.i == w.last {
		w.part = partEnd
		return
	}
	w.i++
	w.startMessage()
}

// read implements tcpApp for the app's current phase.
func (a *httpApp) read(p []byte) (int, bool) { return a.w.read(p) }

func (w *httpWriter) read(p []byte) (int, bool) {
	n := 0
	for n < len(p) && w.part != partEnd {
		switch w.part {
		case partHeader:
			m := copy(p[n:], w.hdr[w.hpos:])
			w.hpos += m
			n += m
			if w.hpos == len(w.hdr) {
				w.afterHeader()
			}
		case partBody:
			n += w.b.read(p[n:])
			if w.b.left == 0 {
				w.messageDone()
			}
		case partSmall:
			m := copy(p[n:], w.small[w.spos:w.slen])
			if w.after == afterSmallMsgDone && w.spos+m == w.slen-1 {
				// Do not end a segment between the CR and LF that end a
				// chunked body: tshark 4.0 takes the lone CR for the end
				// and fails on the body. Send a shorter segment instead.
				w.spos += m - 1
				return n + m - 1, false
			}
			w.spos += m
			n += m
			if w.spos == w.slen {
				switch w.after {
				case afterSmallData:
					w.part = partChunkData
				case afterSmallNextChunk:
					w.nextChunk()
				default:
					w.messageDone()
				}
			}
		case partChunkData:
			lim := min(int64(len(p)-n), w.chunkLeft)
			m := w.b.read(p[n : n+int(lim)])
			w.chunkLeft -= int64(m)
			n += m
			if w.chunkLeft == 0 {
				w.small[0], w.small[1] = '\r', '\n'
				w.spos, w.slen, w.part, w.after = 0, 2, partSmall, afterSmallNextChunk
			}
		}
	}
	return n, w.part == partEnd
}

// interior implements tcpApp: only identity Content-Length bodies may be
// impaired, and never their last byte.
func (a *httpApp) interior() int64 {
	w := &a.w
	if w.part != partBody || w.fr != frLength || w.b.gz != nil {
		return 0
	}
	return w.b.left - 1
}

// lost implements tcpApp: it counts the messages that lose bytes.
func (a *httpApp) lost() {
	w := &a.w
	if w.gapped {
		return
	}
	w.gapped = true
	if w.resp {
		a.g.truth.HTTPResponsesWithGaps++
	} else {
		a.g.truth.HTTPRequestsWithGaps++
	}
}

// prepareBody sets the body content up and returns its size as sent.
func (a *httpApp) prepareBody(p *bodyPlan, b *body, gz *gzipEnc) int64 {
	if p.framing == frNone {
		*b = body{}
		return 0
	}
	if p.gzip {
		return b.initGzip(a.g.pools, p.ct, p.size, gz, a.r)
	}
	b.init(a.g.pools, p.ct, p.size, a.r)
	return p.size
}

func (a *httpApp) version() string {
	if a.v10 {
		return "HTTP/1.0"
	}
	return "HTTP/1.1"
}

// requestHeader builds the header of e's request and sets up its body.
func (a *httpApp) requestHeader(h []byte, e *exchange, b *body, gz *gzipEnc) []byte {
	r := a.r
	t := &a.g.truth
	t.HTTPRequests++
	t.HTTPMethods[e.method]++
	size := a.prepareBody(&e.req, b, gz)
	h = append(h, e.method...)
	h = append(h, ' ')
	uriStart := len(h)
	h = a.appendURI(h, e.method)
	uri := h[uriStart:]
	h = append(h, ' ')
	h = append(h, a.version()...)
	h = append(h, "\r\nHost: "...)
	h = append(h, a.host...)
	h = append(h, "\r\nUser-Agent: "...)
	h = append(h, a.ua...)
	h = append(h, "\r\nAccept: "...)
	switch {
	case !a.human:
		h = append(h, "*/*"...)
	case e.method == "GET" && r.pct(60):
		h = append(h, "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"...)
	default:
		h = append(h, "*/*"...)
	}
	h = append(h, "\r\n"...)
	if a.human {
		h = append(h, "Accept-Language: "...)
		h = append(h, acceptLanguages[len(a.host)%len(acceptLanguages)]...)
		h = append(h, "\r\n"...)
	}
	if a.gzipOK {
		h = append(h, "Accept-Encoding: gzip, deflate\r\n"...)
	}
	if a.human && len(a.path) > 0 && r.pct(70) {
		h = append(h, "Referer: http://"...)
		h = append(h, a.host...)
		h = append(h, a.path...)
		h = append(h, "\r\n"...)
	}
	a.path = append(a.path[:0], uri...)
	if a.cookie {
		h = append(h, "Cookie: sid="...)
		h = appendHex(h, r.u64())
		h = append(h, "; _ga=GA1.2."...)
		h = strconv.AppendInt(h, int64(r.intn(1_000_000_000)), 10)
		h = append(h, '.')
		h = strconv.AppendInt(h, 1700000000+int64(r.intn(10_000_000)), 10)
		h = append(h, "; lang=en\r\n"...)
	}
	if e.cond {
		h = append(h, "If-None-Match: \""...)
		h = appendHex(h, r.u64()&0xffffffffff)
		h = append(h, "\"\r\n"...)
	}
	if e.req.framing != frNone {
		h = append(h, "Content-Type: "...)
		h = append(h, mimeTypes[e.req.ct]...)
		h = append(h, "\r\n"...)
		if e.req.framing == frChunked {
			h = append(h, "Transfer-Encoding: chunked\r\n"...)
		} else {
			h = append(h, "Content-Length: "...)
			h = strconv.AppendInt(h, size, 10)
			h = append(h, "\r\n"...)
		}
	}
	if e.expect {
		h = append(h, "Expect: 100-continue\r\n"...)
	}
	switch {
	case e.closeReq:
		h = append(h, "Connection: close\r\n"...)
	case !a.v10 && r.pct(70):
		h = append(h, "Connection: keep-alive\r\n"...)
	}
	return append(h, "\r\n"...)
}

// appendURI appends a request target: a path with an extension that fits
// the method and, sometimes, a query.
func (a *httpApp) appendURI(h []byte, method string) []byte {
	r := a.r
	if method == "OPTIONS" && r.pct(30) {
		return append(h, '*')
	}
	if method == "GET" && r.pct(8) {
		return append(h, '/')
	}
	h = append(h, '/')
	for i, n := 0, r.between(1, 4); i < n; i++ {
		if i > 0 {
			h = append(h, '/')
		}
		h = append(h, word(r)...)
	}
	if method == "GET" || method == "HEAD" {
		h = append(h, pathExts[r.intn(len(pathExts))]...)
	}
	if r.pct(30) {
		h = append(h, '?')
		h = append(h, word(r)...)
		h = append(h, '=')
		h = strconv.AppendInt(h, int64(r.intn(100000)), 10)
		if r.pct(50) {
			h = append(h, "&utm_source="...)
			h = append(h, word(r)...)
		}
	}
	return h
}

func (a *httpApp) continueHeader(h []byte) []byte {
	t := &a.g.truth
	t.HTTPResponses++
	t.HTTPInterim++
	t.HTTPStatus["100"]++
	h = append(h, a.version()...)
	return append(h, " 100 Continue\r\n\r\n"...)
}

// responseHeader builds the header of e's reply and sets up its body.
func (a *httpApp) responseHeader(h []byte, e *exchange, b *body, gz *gzipEnc) []byte {
	r := a.r
	t := &a.g.truth
	t.HTTPResponses++
	t.HTTPTransactions++
	t.HTTPStatus[strconv.Itoa(e.status)]++
	size := a.prepareBody(&e.resp, b, gz)
	h = append(h, a.version()...)
	h = append(h, ' ')
	h = strconv.AppendInt(h, int64(e.status), 10)
	h = append(h, ' ')
	h = append(h, reasonPhrases[e.status]...)
	h = append(h, "\r\nDate: "...)
	h = time.Unix(0, a.c.next).UTC().AppendFormat(h, "Mon, 02 Jan 2006 15:04:05 GMT")
	h = append(h, "\r\nServer: "...)
	h = append(h, a.server...)
	h = append(h, "\r\n"...)
	if e.status >= 300 && e.status < 400 && e.status != 304 {
		h = append(h, "Location: http://"...)
		h = append(h, a.host...)
		h = a.appendURI(h, "GET")
		h = append(h, "\r\n"...)
	}
	if e.method == "OPTIONS" {
		h = append(h, "Allow: OPTIONS, GET, HEAD, POST\r\n"...)
	}
	switch {
	case e.method == "HEAD":
		h = append(h, "Content-Type: "...)
		h = append(h, mimeTypes[ctHTML]...)
		h = append(h, "\r\nContent-Length: "...)
		h = strconv.AppendInt(h, e.headSize, 10)
		h = append(h, "\r\n"...)
	case e.resp.framing != frNone:
		h = append(h, "Content-Type: "...)
		h = append(h, mimeTypes[e.resp.ct]...)
		h = append(h, "\r\n"...)
		if e.resp.gzip {
			h = append(h, "Content-Encoding: gzip\r\nVary: Accept-Encoding\r\n"...)
		}
		switch e.resp.framing {
		case frChunked:
			h = append(h, "Transfer-Encoding: chunked\r\n"...)
		case frLength:
			h = append(h, "Content-Length: "...)
			h = strconv.AppendInt(h, size, 10)
			h = append(h, "\r\n"...)
		}
	case e.status != 304 && e.status != 204 && e.status >= 200:
		h = append(h, "Content-Length: 0\r\n"...)
	}
	if e.status == 200 || e.status == 304 {
		if r.pct(60) {
			h = append(h, "ETag: \""...)
			h = appendHex(h, r.u64()&0xffffffffff)
			h = append(h, "\"\r\n"...)
		}
		h = append(h, "Cache-Control: "...)
		h = append(h, []string{"max-age=3600", "no-cache", "public, max-age=86400", "private, max-age=0"}[r.intn(4)]...)
		h = append(h, "\r\n"...)
	}
	if a.human && r.pct(10) {
		h = append(h, "Set-Cookie: sid="...)
		h = appendHex(h, r.u64())
		h = append(h, "; Path=/; HttpOnly\r\n"...)
	}
	switch {
	case e.closeResp || e.closeReq:
		h = append(h, "Connection: close\r\n"...)
	case a.v10:
		if e.resp.framing != frClose {
			h = append(h, "Connection: close\r\n"...)
		}
	case r.pct(50):
		h = append(h, "Connection: keep-alive\r\n"...)
	}
	return append(h, "\r\n"...)
}

func appendHex(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 16) }

package fasthttp

import (
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// conn is the state of one connection, recycled after Close.
type conn struct {
	a          *Analyzer
	c          *parsers.Conn
	orig, resp side
	// pending are the records not reported yet, in request order: those
	// waiting for a reply, and the one whose reply is being read.
	pending, spare []*record
	depth          int
	// stopped is set once the connection is no longer HTTP (a CONNECT or
	// an Upgrade succeeded): neither direction is parsed further.
	stopped bool
	tx      http.Transaction
	proxied [][]byte
}

// span is a field of a record: bytes of its buf, or unset.
type span struct {
	start, end int
	set        bool
}

// record is a transaction being assembled: what the request and the reply
// said, the texts copied into buf (fasthttp's header values live until its
// next parse only).
type record struct {
	ts                   int64
	depth                int
	hasRequest, hasReply bool
	method, host, uri    span
	referrer, ua, origin span
	username             span
	version, statusMsg   span
	infoMsg              span
	proxied              []span
	reqLen, respLen      int64
	statusCode, infoCode int
	isHead, isConnect    bool
	buf                  []byte
}

// keptBuf is the largest buffer a closed connection's state keeps.
const keptBuf = 16 << 10

// Held implements parsers.Holder: the head and line buffers of both
// directions and the compressed bodies kept to be decompressed.
func (cs *conn) Held() int {
	return cap(cs.orig.buf) + cap(cs.resp.buf) + cap(cs.orig.zbuf) + cap(cs.resp.zbuf)
}

func (cs *conn) Orig() parsers.Parser { return &cs.orig }
func (cs *conn) Resp() parsers.Parser { return &cs.resp }

// Close implements parsers.ConnParser: the records still waiting are
// reported, as Zeek logs them when the connection ends.
func (cs *conn) Close() {
	cs.orig.Finish()
	cs.resp.Finish()
	for _, r := range cs.pending {
		cs.report(r)
	}
	clear(cs.pending)
	cs.pending = cs.pending[:0]
	cs.c, cs.depth, cs.stopped = nil, 0, false
	cs.orig.reset()
	cs.resp.reset()
	cs.a.free = append(cs.a.free, cs)
}

// newRecord starts a record at the next depth.
func (cs *conn) newRecord() *record {
	var r *record
	if n := len(cs.spare); n > 0 {
		r, cs.spare = cs.spare[n-1], cs.spare[:n-1]
		*r = record{buf: r.buf[:0], proxied: r.proxied[:0]}
	} else {
		r = &record{}
	}
	cs.depth++
	r.depth = cs.depth
	r.ts = cs.c.TS
	return r
}

// request starts the record of a request, first reporting the waiting
// ones when MaxPending wait (Zeek's rule against a one-sided capture or
// excessive pipelining).
func (cs *conn) request() *record {
	if len(cs.pending) >= MaxPending {
		cs.a.stats.PendingLimit++
		for _, r := range cs.pending {
			cs.report(r)
		}
		clear(cs.pending)
		cs.pending = cs.pending[:0]
	}
	r := cs.newRecord()
	r.hasRequest = true
	cs.pending = append(cs.pending, r)
	return r
}

// answered returns the record a reply answers: the oldest without a
// reply, or a new reply-only record.
func (cs *conn) answered() *record {
	for _, r := range cs.pending {
		if !r.hasReply {
			return r
		}
	}
	r := cs.newRecord()
	cs.pending = append(cs.pending, r)
	return r
}

// done reports r, whose final reply ended, and removes it from pending.
func (cs *conn) done(r *record) {
	for i, p := range cs.pending {
		if p == r {
			copy(cs.pending[i:], cs.pending[i+1:])
			cs.pending[len(cs.pending)-1] = nil
			cs.pending = cs.pending[:len(cs.pending)-1]
			break
		}
	}
	cs.report(r)
}

// report hands r to the sink as a Transaction and recycles it.
func (cs *conn) report(r *record) {
	cs.a.stats.Transactions++
	b := r.buf
	get := func(s span) []byte {
		if !s.set {
			return nil
		}
		return b[s.start:s.end:s.end]
	}
	cs.proxied = cs.proxied[:0]
	for _, p := range r.proxied {
		cs.proxied = append(cs.proxied, get(p))
	}
	cs.tx = http.Transaction{
		TS:              r.ts,
		Depth:           r.depth,
		HasRequest:      r.hasRequest,
		HasReply:        r.hasReply,
		Method:          get(r.method),
		Host:            get(r.host),
		URI:             get(r.uri),
		Referrer:        get(r.referrer),
		Version:         get(r.version),
		UserAgent:       get(r.ua),
		Origin:          get(r.origin),
		RequestBodyLen:  r.reqLen,
		ResponseBodyLen: r.respLen,
		StatusCode:      r.statusCode,
		StatusMsg:       get(r.statusMsg),
		InfoCode:        r.infoCode,
		InfoMsg:         get(r.infoMsg),
		Username:        get(r.username),
	}
	if len(cs.proxied) > 0 {
		cs.tx.Proxied = cs.proxied
	}
	cs.a.sink.HTTP(cs.c, &cs.tx)
	cs.spare = append(cs.spare, r)
}

// put copies v into r's buffer and returns its span.
func (r *record) put(v []byte) span {
	start := len(r.buf)
	r.buf = append(r.buf, v...)
	return span{start: start, end: len(r.buf), set: true}
}

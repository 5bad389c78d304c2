package http

// This file mirrors the script layer of Zeek's HTTP analysis
// (scripts/base/protocols/http/main.zeek): the table of pending http.log
// records of a connection, the current_request / current_response counters
// that pair requests with replies, and the event handlers that fill the
// records and log them. The analyzer layer (conn.go, message.go) raises the
// same events, in the same order, as Zeek's HTTP analyzer does, and these
// handlers decide, as Zeek's scripts do, which record each event updates and
// when a record is logged.

// maxPendingRequests is Zeek's HTTP::max_pending_requests: when more records
// than this are pending, the next request flushes the unanswered ones.
const maxPendingRequests = 100

// maxRecords bounds the records a connection keeps. Zeek's table has no
// bound of its own; records beyond maxPendingRequests only pile up when
// messages end after their record was logged, and those stale records can no
// longer change, so they are reported early instead (Stats.EarlyReports).
const maxRecords = 128

// field is one string field of a record. set distinguishes an empty string
// from an unset field; the buffer is reused from record to record.
type field struct {
	b   []byte
	set bool
}

var empty = []byte{}

func (f *field) assign(v []byte) {
	f.b = append(f.b[:0], v...)
	f.set = true
}

// value returns the field for a Transaction: nil when unset, a non-nil
// (possibly empty) slice otherwise.
func (f *field) value() []byte {
	if !f.set {
		return nil
	}
	if len(f.b) == 0 {
		return empty
	}
	return f.b
}

// record is one pending http.log line (Zeek's HTTP::Info).
type record struct {
	key   uint64 // index in the pending table
	ts    int64
	depth int

	method, host, uri, referrer, version, userAgent, origin field
	statusMsg, infoMsg, username, password                  field
	proxied                                                 []field
	nproxied                                                int

	reqBodyLen, respBodyLen int64
	statusCode, infoCode    int
	hasStatus, hasInfo      bool
}

func (r *record) reset() {
	for _, f := range []*field{&r.method, &r.host, &r.uri, &r.referrer, &r.version, &r.userAgent,
		&r.origin, &r.statusMsg, &r.infoMsg, &r.username, &r.password} {
		f.set = false
	}
	r.nproxied = 0
	r.reqBodyLen, r.respBodyLen = 0, 0
	r.statusCode, r.infoCode = 0, 0
	r.hasStatus, r.hasInfo = false, false
}

// addProxied adds "NAME -> value" to the record's proxied set.
func (r *record) addProxied(upperName, value []byte) {
	n := len(upperName) + 4 + len(value)
	for i := 0; i < r.nproxied; i++ {
		p := r.proxied[i].b
		if len(p) == n && string(p[:len(upperName)]) == string(upperName) &&
			string(p[len(upperName):len(upperName)+4]) == " -> " && string(p[len(upperName)+4:]) == string(value) {
			return
		}
	}
	if r.nproxied == len(r.proxied) {
		r.proxied = append(r.proxied, field{})
	}
	f := &r.proxied[r.nproxied]
	r.nproxied++
	f.b = append(append(append(f.b[:0], upperName...), " -> "...), value...)
	f.set = true
}

// records is the per-connection part of Zeek's HTTP::State.
type records struct {
	live       []*record // pending records, ordered by key
	free       []*record
	curReq     uint64 // current_request
	curResp    uint64 // current_response
	transDepth int
}

func (rs *records) lookup(key uint64) *record {
	for _, r := range rs.live {
		if r.key == key {
			return r
		}
	}
	return nil
}

func (rs *records) remove(r *record) {
	for i, x := range rs.live {
		if x == r {
			copy(rs.live[i:], rs.live[i+1:])
			rs.live = rs.live[:len(rs.live)-1]
			rs.free = append(rs.free, r)
			return
		}
	}
}

// setState returns the record the current request (orig) or response
// (!orig) writes to, creating it when missing, as set_state does.
func (c *connState) setState(orig bool) *record {
	rs := &c.recs
	key := rs.curResp
	if orig {
		key = rs.curReq
	}
	if r := rs.lookup(key); r != nil {
		return r
	}
	return c.newRecord(key)
}

// newRecord starts a record (new_http_session) and inserts it in key order.
func (c *connState) newRecord(key uint64) *record {
	rs := &c.recs
	if len(rs.live) >= maxRecords {
		c.reportStale()
	}
	var r *record
	if n := len(rs.free); n > 0 {
		r = rs.free[n-1]
		rs.free = rs.free[:n-1]
		r.reset()
	} else {
		r = new(record)
	}
	r.key = key
	r.ts = c.conn.TS
	rs.transDepth++
	r.depth = rs.transDepth
	i := len(rs.live)
	for i > 0 && rs.live[i-1].key > key {
		i--
	}
	rs.live = append(rs.live, nil)
	copy(rs.live[i+1:], rs.live[i:])
	rs.live[i] = r
	return r
}

// reportStale makes room when a connection holds maxRecords records: records
// whose key lies below both counters can never change again, so they are
// reported now rather than at the end of the connection. If none is stale,
// the oldest record goes.
func (c *connState) reportStale() {
	rs := &c.recs
	low := min(rs.curReq, rs.curResp)
	for len(rs.live) > 0 && rs.live[0].key < low {
		c.a.stats.EarlyReports++
		c.report(rs.live[0])
	}
	if len(rs.live) >= maxRecords {
		c.a.stats.EarlyReports++
		c.report(rs.live[0])
	}
}

// report logs a record and removes it from the table (Log::write followed by
// delete).
func (c *connState) report(r *record) {
	tx := &c.tx
	*tx = Transaction{
		TS:              r.ts,
		Depth:           r.depth,
		HasRequest:      r.method.set,
		HasReply:        r.hasStatus,
		Method:          r.method.value(),
		Host:            r.host.value(),
		URI:             r.uri.value(),
		Referrer:        r.referrer.value(),
		Version:         r.version.value(),
		UserAgent:       r.userAgent.value(),
		Origin:          r.origin.value(),
		RequestBodyLen:  r.reqBodyLen,
		ResponseBodyLen: r.respBodyLen,
		StatusCode:      r.statusCode,
		StatusMsg:       r.statusMsg.value(),
		InfoCode:        r.infoCode,
		InfoMsg:         r.infoMsg.value(),
		Username:        r.username.value(),
		Password:        r.password.value(),
	}
	c.proxied = c.proxied[:0]
	for i := 0; i < r.nproxied; i++ {
		c.proxied = append(c.proxied, r.proxied[i].b)
	}
	if len(c.proxied) > 0 {
		tx.Proxied = c.proxied
	}
	c.recs.remove(r)
	c.a.stats.Transactions++
	c.a.sink.HTTP(c.conn, tx)
}

// evRequest is the http_request event handler. uri is the request's URI as
// sent; the record keeps it unescaped, as Zeek logs it.
func (c *connState) evRequest(method, uri []byte) {
	rs := &c.recs
	if rs.curReq < rs.curResp {
		rs.curReq = rs.curResp // HTTP_response_before_request
	}
	if len(rs.live) > maxPendingRequests {
		c.a.stats.ExcessivePipelining++
		if rs.curResp == 0 {
			rs.curResp++
		}
		for ; rs.curResp < rs.curReq; rs.curResp++ {
			if r := rs.lookup(rs.curResp); r != nil {
				c.report(r)
			}
		}
	}
	rs.curReq++
	r := c.setState(true)
	r.method.assign(method)
	r.uri.b = appendUnescapedURI(r.uri.b[:0], uri)
	r.uri.set = true
}

// evReply is the http_reply event handler. reason is nil when the status
// line has no reason phrase.
func (c *connState) evReply(version [3]byte, code int, reason []byte) {
	rs := &c.recs
	if r := rs.lookup(rs.curResp); r == nil || (r.hasStatus && !isInformational(r.statusCode)) {
		rs.curResp++
	}
	r := c.setState(false)
	r.statusCode, r.hasStatus = code, true
	if reason == nil {
		reason = noReason
	}
	r.statusMsg.assign(reason)
	r.version.assign(version[:])
	if isInformational(code) {
		r.infoCode, r.hasInfo = code, true
		r.infoMsg.assign(reason)
	}
}

// noReason is what Zeek's http_reply event carries for a status line
// without a reason phrase.
var noReason = []byte("<empty>")

func isInformational(code int) bool { return code >= 100 && code <= 199 }

// evMessageDone is the pair of http_message_done handlers: the first stores
// the body length, the second logs the record when a final reply ends.
func (c *connState) evMessageDone(orig bool, bodyLen int64) {
	r := c.setState(orig)
	if orig {
		r.reqBodyLen = bodyLen
		return
	}
	r.respBodyLen = bodyLen
	if !(r.hasStatus && isInformational(r.statusCode)) {
		c.report(r)
	}
}

// finalize is the connection removal hook: every pending record but the one
// at index 0 is logged.
func (c *connState) finalize() {
	rs := &c.recs
	for len(rs.live) > 0 {
		r := rs.live[0]
		if r.key == 0 {
			rs.remove(r)
			continue
		}
		c.report(r)
	}
}

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

var empty = []byte{}

// set copies v into the field's buffer *buf, reused from record to record,
// and returns the value for the Transaction (see present). Only the
// buffer's capacity counts, so a buffer with room for v is left as it is.
func (r *record) set(buf *[]byte, v []byte) []byte {
	if b := *buf; len(v) <= cap(b) {
		b = b[:len(v)]
		copy(b, v)
		return present(b)
	}
	b := append((*buf)[:0], v...)
	*buf = b
	r.kept(b)
	return present(b)
}

// kept notes a buffer the record now holds: one beyond maxKeptBuffer makes
// the record one that trim must look at.
func (r *record) kept(b []byte) {
	if cap(b) > maxKeptBuffer {
		r.large = true
	}
}

// present returns a set field's buffer b as the Transaction's value: never
// nil, since nil is an unset field.
func present(b []byte) []byte {
	if b == nil {
		return empty
	}
	return b
}

// record is one pending http.log line (Zeek's HTTP::Info). Its fields live
// in tx, the very Transaction report hands to the sink, whose slices point
// into the record's buffers.
type record struct {
	// key and large come first, in the cache line of the fields that
	// every transaction sets: records wait in the table long enough to
	// leave the cache (a hundred unanswered requests), and the table
	// reads key and large when a record leaves.
	key uint64 // index in the pending table; noKey once reported
	// large says a buffer may have grown beyond maxKeptBuffer: only then
	// does trim have work, which saves looking at every buffer of every
	// record each time a connection closes.
	large bool
	// tail says a field of tx from ResponseBodyLen on may be set: a
	// reply, authentication, proxy headers or MIME types. A record with
	// none, as a request waiting for its reply is, needs only the first
	// fields zeroed for reuse, which spares writing to the cache lines of
	// the others.
	tail bool
	tx   Transaction

	method, host, uri, referrer, userAgent, origin []byte
	statusMsg, infoMsg, username, password         []byte
	proxied                                        [][]byte
	origMIME, respMIME                             []string
}

// reset starts a record afresh, keeping its buffers.
func (r *record) reset() {
	if r.tail {
		r.tx, r.tail = Transaction{}, false
		return
	}
	// Only the fields before ResponseBodyLen may be set (see tail).
	t := &r.tx
	t.TS, t.Depth, t.HasRequest, t.HasReply = 0, 0, false, false
	t.Method, t.Host, t.URI, t.Referrer, t.Version, t.UserAgent, t.Origin = nil, nil, nil, nil, nil, nil, nil
	t.RequestBodyLen = 0
}

// fields returns the record's buffers.
func (r *record) fields() [10]*[]byte {
	return [10]*[]byte{&r.method, &r.host, &r.uri, &r.referrer, &r.userAgent, &r.origin,
		&r.statusMsg, &r.infoMsg, &r.username, &r.password}
}

// trim drops buffers above maxKeptBuffer bytes, so that a reported record
// kept for reuse does not hold what one long request line or header made
// it grow to. Only a large record has any.
func (r *record) trim() {
	r.large = false
	r.reset() // its Transaction points into the buffers too
	for _, f := range r.fields() {
		if cap(*f) > maxKeptBuffer {
			*f = nil
		}
	}
	for i, p := range r.proxied {
		if cap(p) > maxKeptBuffer {
			r.proxied[i] = nil
		}
	}
}

// addProxied adds "NAME -> value" to the record's proxied set.
func (r *record) addProxied(upperName, value []byte) {
	n := len(upperName) + 4 + len(value)
	for _, p := range r.tx.Proxied {
		if len(p) == n && string(p[:len(upperName)]) == string(upperName) &&
			string(p[len(upperName):len(upperName)+4]) == " -> " && string(p[len(upperName)+4:]) == string(value) {
			return
		}
	}
	i := len(r.tx.Proxied)
	if i == len(r.proxied) {
		r.proxied = append(r.proxied, nil)
	}
	r.proxied[i] = append(append(append(r.proxied[i][:0], upperName...), " -> "...), value...)
	r.kept(r.proxied[i])
	r.tx.Proxied = r.proxied[:i+1]
	r.tail = true
}

// records is the per-connection part of Zeek's HTTP::State: the pending
// records ordered by key. Records are nearly always added at the end (a new
// request) and removed at the front (its reply), so the table is a slice
// with a moving head.
type records struct {
	buf  []*record // buf[head:] are the pending records, ordered by key
	head int
	free []*record
	// large says a record in free may be large (see record.large).
	large bool
	// cur holds current_request [0] and current_response [1].
	cur        [2]uint64
	transDepth int
}

func (rs *records) live() []*record { return rs.buf[rs.head:] }

func (rs *records) len() int { return len(rs.buf) - rs.head }

// index returns the position of key in live(), or -1.
func (rs *records) index(key uint64) int {
	live := rs.live()
	n := len(live)
	if n == 0 {
		return -1
	}
	if d := key - live[0].key; d < uint64(n) && live[d].key == key {
		return int(d) // the keys are nearly always consecutive
	}
	switch {
	case key > live[n-1].key || key < live[0].key:
		return -1
	case live[n-1].key == key:
		return n - 1
	}
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if live[mid].key < key {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < n && live[lo].key == key {
		return lo
	}
	return -1
}

func (rs *records) lookup(key uint64) *record {
	if i := rs.index(key); i >= 0 {
		return rs.live()[i]
	}
	return nil
}

func (rs *records) remove(r *record) {
	i := 0
	if rs.head == len(rs.buf) || rs.buf[rs.head] != r {
		// Not the oldest record, which nearly every removal takes.
		if i = rs.index(r.key); i < 0 {
			return
		}
	}
	if i == 0 {
		rs.buf[rs.head] = nil
		rs.head++
	} else {
		live := rs.live()
		copy(live[i:], live[i+1:])
		rs.buf[len(rs.buf)-1] = nil
		rs.buf = rs.buf[:len(rs.buf)-1]
	}
	if rs.head == len(rs.buf) {
		rs.buf, rs.head = rs.buf[:0], 0
	}
	r.key = noKey
	rs.large = rs.large || r.large
	rs.free = append(rs.free, r)
}

// noKey marks a record that left the table.
const noKey = ^uint64(0)

// pushLast adds r at the end when that keeps the key order and the slice
// has room, as it nearly always does, and reports whether it did; insert
// does the rest. It is small enough to inline.
func (rs *records) pushLast(r *record) bool {
	b := rs.buf
	if len(b) == cap(b) || len(b) > rs.head && b[len(b)-1].key >= r.key {
		return false
	}
	rs.buf = append(b, r)
	return true
}

// insert adds a record in key order, reclaiming the space before the head
// when the slice is full.
func (rs *records) insert(r *record) {
	if len(rs.buf) == cap(rs.buf) && rs.head > 0 {
		n := copy(rs.buf, rs.buf[rs.head:])
		clear(rs.buf[n:])
		rs.buf, rs.head = rs.buf[:n], 0
	}
	rs.buf = append(rs.buf, r)
	live := rs.live()
	for i := len(live) - 1; i > 0 && live[i-1].key > r.key; i-- {
		live[i], live[i-1] = live[i-1], live[i]
	}
}

// setState returns the record the current request (orig) or response
// (!orig) writes to, creating it when missing, as set_state does.
func (c *connState) setState(orig bool) *record {
	if orig {
		return c.reqState()
	}
	return c.respState()
}

// reqState is setState(true), in a form that inlines: most calls find
// the request's record in the cache. A reported record's key is noKey,
// which no counter reaches.
func (c *connState) reqState() *record {
	if r := c.cur[0]; r.key == c.recs.cur[0] {
		return r
	}
	return c.setStateSlow(true)
}

// respState is setState(false), its twin for the response's record.
func (c *connState) respState() *record {
	if r := c.cur[1]; r.key == c.recs.cur[1] {
		return r
	}
	return c.setStateSlow(false)
}

// setStateSlow is setState for a record the cache does not hold.
func (c *connState) setStateSlow(orig bool) *record {
	i := 1
	if orig {
		i = 0
	}
	rs := &c.recs
	key := rs.cur[i]
	r := rs.lookup(key)
	if r == nil {
		r = c.newRecord(key)
	}
	c.cur[i] = r
	return r
}

// newRecord starts a record (new_http_session) and inserts it in key order.
func (c *connState) newRecord(key uint64) *record {
	r := c.startRecord(key)
	if rs := &c.recs; !rs.pushLast(r) {
		rs.insert(r)
	}
	return r
}

// startRecord is newRecord up to the insertion: it takes a record, from
// the free list if it can, for key, making room for it first.
func (c *connState) startRecord(key uint64) *record {
	rs := &c.recs
	if rs.len() >= maxRecords {
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
	r.tx.TS = c.conn.TS
	rs.transDepth++
	r.tx.Depth = rs.transDepth
	return r
}

// reportStale makes room when a connection holds maxRecords records: records
// whose key lies below both counters can never change again, so they are
// reported now rather than at the end of the connection. If none is stale,
// the oldest record goes.
func (c *connState) reportStale() {
	rs := &c.recs
	low := min(rs.cur[0], rs.cur[1])
	for rs.len() > 0 && rs.live()[0].key < low {
		c.a.stats.EarlyReports++
		c.report(rs.live()[0])
	}
	if rs.len() >= maxRecords {
		c.a.stats.EarlyReports++
		c.report(rs.live()[0])
	}
}

// report logs a record and removes it from the table (Log::write followed by
// delete). The sink gets the record's own Transaction: nothing is copied.
func (c *connState) report(r *record) {
	c.recs.remove(r)
	c.a.stats.Transactions++
	c.a.sink.HTTP(c.conn, &r.tx)
}

// evRequest is the http_request event handler. uri is the request's URI as
// sent; the record keeps it unescaped, as Zeek logs it.
func (c *connState) evRequest(method, uri []byte) {
	rs := &c.recs
	if rs.cur[0] < rs.cur[1] {
		rs.cur[0] = rs.cur[1] // HTTP_response_before_request
	}
	if rs.len() > maxPendingRequests {
		c.a.stats.ExcessivePipelining++
		if rs.cur[1] == 0 {
			rs.cur[1]++
		}
		for ; rs.cur[1] < rs.cur[0]; rs.cur[1]++ {
			if r := rs.lookup(rs.cur[1]); r != nil {
				c.report(r)
			}
		}
	}
	rs.cur[0]++
	// The new key is above every key so far (both counters only grow),
	// so set_state creates the record, and it goes last: only a full
	// table needs insert, which reclaims the room before its head.
	r := c.startRecord(rs.cur[0])
	if len(rs.buf) < cap(rs.buf) {
		rs.buf = append(rs.buf, r)
	} else {
		rs.insert(r)
	}
	c.cur[0] = r
	r.tx.HasRequest = true
	if m := commonMethod(method); m != nil {
		r.tx.Method = m
	} else {
		r.tx.Method = r.set(&r.method, method)
	}
	if !mayHavePercent(uri) && len(uri) <= cap(r.uri) {
		// The usual URI: nothing to unescape, and no buffer grows.
		r.tx.URI = r.set(&r.uri, uri)
		return
	}
	grown := cap(r.uri)
	if mayHavePercent(uri) {
		r.uri = AppendUnescapedURI(r.uri[:0], uri)
		r.kept(r.uri)
		r.tx.URI = present(r.uri)
	} else {
		r.tx.URI = r.set(&r.uri, uri) // nothing to unescape
	}
	c.uriHeld += cap(r.uri) - grown
}

// commonMethod returns a shared copy of method when it is one that nearly
// every request carries, which saves copying it into the record; nil
// otherwise. The copies' capacity is their length, so that a sink
// appending to a Transaction's Method cannot write into them.
func commonMethod(method []byte) []byte {
	switch string(method) {
	case "GET":
		return methodGET
	case "POST":
		return methodPOST
	case "HEAD":
		return methodHEAD
	}
	return nil
}

var (
	methodGET  = []byte("GET")[:3:3]
	methodPOST = []byte("POST")[:4:4]
	methodHEAD = []byte("HEAD")[:4:4]
)

// evReply is the http_reply event handler. reason is nil when the status
// line has no reason phrase.
func (c *connState) evReply(v version, code int, reason []byte) {
	rs := &c.recs
	r := c.cur[1]
	if r.key != rs.cur[1] {
		r = rs.lookup(rs.cur[1])
	}
	if r == nil || (r.tx.HasReply && !isInformational(r.tx.StatusCode)) {
		rs.cur[1]++
		r = c.respState()
	}
	r.tx.StatusCode, r.tx.HasReply, r.tail = code, true, true
	if reason == nil {
		reason = noReason
	}
	r.tx.StatusMsg = r.set(&r.statusMsg, reason)
	r.tx.Version = v.text()
	if isInformational(code) {
		r.tx.InfoCode = code
		r.tx.InfoMsg = r.set(&r.infoMsg, reason)
	}
}

// noReason is what Zeek's http_reply event carries for a status line
// without a reason phrase.
var noReason = []byte("<empty>")

func isInformational(code int) bool { return code >= 100 && code <= 199 }

// evReplyDone is the pair of http_message_done handlers for a reply: the
// first stores the body length, the second logs the record when a final
// reply ends. For a request, the first alone runs, inlined in messageDone.
func (c *connState) evReplyDone(bodyLen int64) {
	r := c.respState()
	r.tx.ResponseBodyLen, r.tail = bodyLen, true
	if !(r.tx.HasReply && isInformational(r.tx.StatusCode)) {
		c.report(r)
	}
}

// evFileMIME is file_sniff of base/protocols/http/entities.zeek: the
// type of a body of the current request or reply joins the record's
// orig_mime_types or resp_mime_types, up to MaxFiles of them.
func (c *connState) evFileMIME(orig bool, mime string) {
	r := c.setState(orig)
	buf, types := &r.respMIME, &r.tx.RespMIMETypes
	if orig {
		buf, types = &r.origMIME, &r.tx.OrigMIMETypes
	}
	r.tail = true
	if n := len(*types); n < MaxFiles {
		*buf = append((*buf)[:n], mime)
		*types = *buf
	}
}

// finalize is the connection removal hook: every pending record but the one
// at index 0 is logged. The records leave the table together, as report
// and remove would take them one by one.
func (c *connState) finalize() {
	rs := &c.recs
	live := rs.live()
	for _, r := range live {
		key := r.key
		r.key = noKey
		rs.large = rs.large || r.large
		if key != 0 {
			c.a.stats.Transactions++
			c.a.sink.HTTP(c.conn, &r.tx)
		}
	}
	rs.free = append(rs.free, live...)
	clear(live)
	rs.buf, rs.head = rs.buf[:0], 0
}

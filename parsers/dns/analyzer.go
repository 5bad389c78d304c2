package dns

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/parsers"
)

// Defaults of the analyzer's bounds.
const (
	// DefaultMaxPendingIDs and DefaultMaxPendingPerID are Zeek's
	// DNS::max_pending_query_ids and DNS::max_pending_msgs.
	DefaultMaxPendingIDs   = 50
	DefaultMaxPendingPerID = 50
	// DefaultMaxAnswerBytes bounds the rendered answers kept for one
	// transaction.
	DefaultMaxAnswerBytes = 64 << 10
	// maxQuestions is Zeek's dns_max_queries: a message claiming more
	// questions is not DNS worth parsing; only its header counts.
	maxQuestions = 25
)

// Option configures an Analyzer.
type Option func(*config)

type config struct {
	maxPendingIDs, maxPendingPerID int
	maxAnswerBytes                 int
}

// WithMaxPending bounds the unmatched messages kept per connection, as
// Zeek's DNS::max_pending_query_ids and DNS::max_pending_msgs do: when a
// query (or reply) with a new transaction id arrives while more than ids
// distinct ids wait, all waiting queries (or replies) are reported
// unmatched; when more than perID messages wait for one id, those are.
func WithMaxPending(ids, perID int) Option {
	return func(c *config) { c.maxPendingIDs, c.maxPendingPerID = max(ids, 1), max(perID, 1) }
}

// WithMaxAnswerBytes bounds the bytes of rendered answers one transaction
// keeps; answers past the bound are dropped and counted.
func WithMaxAnswerBytes(n int) Option {
	return func(c *config) { c.maxAnswerBytes = max(n, 0) }
}

// Stats counts what an Analyzer saw. Every counter only grows.
type Stats struct {
	Messages         int64 // messages parsed (datagrams, or framed TCP messages)
	Malformed        int64 // messages with an error after the header; what came before it counts
	Short            int64 // messages shorter than the header, ignored
	OtherOpcodes     int64 // messages with an opcode Zeek does not log (not query, notify, update)
	TooManyQuestions int64 // messages claiming more than 25 questions: header only

	Transactions int64 // transactions reported
	Unanswered   int64 // of which queries without reply
	Unsolicited  int64 // of which replies without query
	Evicted      int64 // unmatched messages reported early because the pending bounds bit

	AnswersDropped int64 // answers not kept because of the answer byte bound

	StreamGaps      int64 // gaps in TCP streams
	StreamResyncs   int64 // gaps inside a message, after which framing continued
	StreamAbandoned int64 // TCP directions given up after losing the framing
	StreamPartial   int64 // incomplete TCP messages parsed at the end of a direction
	StreamDropped   int64 // bytes ignored in abandoned directions
}

// Analyzer parses DNS over UDP (block connections) and TCP (stream
// connections) into dns.log transactions. It is not safe for concurrent use:
// one Analyzer serves one goroutine, and reuses the state of closed
// connections so that steady-state parsing allocates nothing.
type Analyzer struct {
	sink  Sink
	cfg   config
	stats Stats
	free  []*connState
	// spare holds the entries of reported transactions for the next
	// ones. Like the transaction handed to the sink, an entry serves one
	// connection only until it is reported, so the Analyzer keeps them,
	// not each connection: with thousands of connections open, as in a
	// replay, few entries and buffers are pooled instead of some for
	// every connection.
	spare []*entry
	// seen is scratch space for counting distinct pending transaction ids.
	seen [1 << 16 / 64]uint64
}

// New returns an Analyzer that reports transactions to sink.
func New(sink Sink, opts ...Option) *Analyzer {
	a := &Analyzer{sink: sink, cfg: config{
		maxPendingIDs:   DefaultMaxPendingIDs,
		maxPendingPerID: DefaultMaxPendingPerID,
		maxAnswerBytes:  DefaultMaxAnswerBytes,
	}}
	for _, o := range opts {
		o(&a.cfg)
	}
	return a
}

// Stats returns the counters so far.
func (a *Analyzer) Stats() Stats { return a.stats }

// Open starts parsing a connection.
func (a *Analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	var cs *connState
	if n := len(a.free); n > 0 {
		cs = a.free[n-1]
		a.free = a.free[:n-1]
	} else {
		cs = &connState{a: a}
		cs.pending = cs.pendingArr[:0]
		cs.orig.cs, cs.orig.role = cs, parsers.Orig
		cs.resp.cs, cs.resp.role = cs, parsers.Resp
	}
	cs.conn = c
	cs.stream = c.Kind == parsers.Stream
	resp := c.Key.Resp
	cs.multicast = resp.Addr().IsMulticast()
	cs.netbios = resp.Port() == 137 && !cs.stream
	return cs
}

// connState is the shared context of both directions of a connection.
type connState struct {
	a                          *Analyzer
	conn                       *parsers.Conn
	stream, multicast, netbios bool
	orig, resp                 dirParser
	p                          Parser
	// pending holds unmatched queries and replies in arrival order, in
	// pendingArr until they outgrow it: a connection mostly has one or
	// two, and a new connection state then needs no second allocation.
	pending    []*entry
	pendingArr [4]*entry
}

// entry is a transaction being assembled (Zeek's DNS::Info).
type entry struct {
	// tx is handed to the sink as it is, once its Query is set.
	// HasQuery and HasReply say which messages were seen; Answers are
	// slices of tx.buf, or of an array it outgrew: tx.buf only grows
	// while the entry is assembled, so those bytes stay as they were.
	// tx.buf holds the query name at [qs:tx.qe] and the answers'
	// renderings, each followed by a comma (see
	// Transaction.AnswersJoined).
	tx      Transaction
	isReply bool // pending as a reply waiting for its query
	qs      int
	// ansBytes is the size of the answers kept, for the byte bound.
	ansBytes int
}

// keptBuf is the largest message buffer a closed connection's state keeps
// for the next connection.
const keptBuf = 16 << 10

// Held implements parsers.Holder: the capacity of the buffers that hold a
// DNS-over-TCP message split across chunks (at most 2+65535 bytes each).
func (cs *connState) Held() int { return cs.orig.frame.Held() + cs.resp.frame.Held() }

func (cs *connState) Orig() parsers.Parser { return &cs.orig }
func (cs *connState) Resp() parsers.Parser { return &cs.resp }

// Close reports what is still unmatched (queries first, then replies, each
// in arrival order, like Zeek's finalize_dns) and recycles the state.
func (cs *connState) Close() {
	cs.orig.finish()
	cs.resp.finish()
	if len(cs.pending) > 0 {
		cs.flushPending(func(e *entry) bool { return !e.isReply })
		cs.flushPending(func(e *entry) bool { return e.isReply })
	}
	cs.conn = nil
	cs.orig.reset(keptBuf)
	cs.resp.reset(keptBuf)
	cs.a.free = append(cs.a.free, cs)
}

func (cs *connState) newEntry(id uint16) *entry {
	var e *entry
	a := cs.a
	if n := len(a.spare); n > 0 {
		e = a.spare[n-1]
		a.spare = a.spare[:n-1]
		buf, ans := e.tx.buf[:0], e.tx.Answers[:0]
		*e = entry{}
		e.tx.buf, e.tx.Answers = buf, ans
	} else {
		e = &entry{}
	}
	e.tx.TransID = id
	e.tx.TS = cs.conn.TS
	return e
}

func (cs *connState) recycle(e *entry) { cs.a.spare = append(cs.a.spare, e) }

// popPending removes and returns the oldest pending entry of the given kind
// with transaction id id, or nil.
func (cs *connState) popPending(id uint16, isReply bool) *entry {
	for i, e := range cs.pending {
		if e.tx.TransID == id && e.isReply == isReply {
			last := len(cs.pending) - 1
			if i < last { // mostly the one pending entry: nothing to move
				copy(cs.pending[i:], cs.pending[i+1:])
			}
			cs.pending[last] = nil
			cs.pending = cs.pending[:last]
			return e
		}
	}
	return nil
}

// pushPending queues e, first applying Zeek's bounds (enqueue_new_msg).
func (cs *connState) pushPending(e *entry) {
	a := cs.a
	e.isReply = e.tx.HasReply
	sameID := 0
	for _, p := range cs.pending {
		if p.isReply == e.isReply && p.tx.TransID == e.tx.TransID {
			sameID++
		}
	}
	if sameID == 0 {
		// Nothing pending (a connection's one query, mostly): no ids to
		// count, and nothing to evict.
		if len(cs.pending) > 0 && cs.distinctIDs(e.isReply) > a.cfg.maxPendingIDs {
			cs.evict(func(p *entry) bool { return p.isReply == e.isReply })
		}
	} else if sameID > a.cfg.maxPendingPerID {
		cs.evict(func(p *entry) bool { return p.isReply == e.isReply && p.tx.TransID == e.tx.TransID })
	}
	cs.pending = append(cs.pending, e)
}

func (cs *connState) distinctIDs(isReply bool) int {
	seen := &cs.a.seen
	n := 0
	for _, p := range cs.pending {
		if p.isReply != isReply {
			continue
		}
		w, bit := p.tx.TransID/64, uint64(1)<<(p.tx.TransID%64)
		if seen[w]&bit == 0 {
			seen[w] |= bit
			n++
		}
	}
	for _, p := range cs.pending {
		seen[p.tx.TransID/64] = 0
	}
	return n
}

func (cs *connState) evict(match func(*entry) bool) {
	before := len(cs.pending)
	cs.flushPending(match)
	cs.a.stats.Evicted += int64(before - len(cs.pending))
}

// flushPending reports and removes the pending entries match selects.
func (cs *connState) flushPending(match func(*entry) bool) {
	kept := cs.pending[:0]
	for _, e := range cs.pending {
		if match(e) {
			cs.report(e)
		} else {
			kept = append(kept, e)
		}
	}
	clear(cs.pending[len(kept):])
	cs.pending = kept
}

// report hands e to the sink as a Transaction and recycles it.
func (cs *connState) report(e *entry) {
	a := cs.a
	st := &a.stats
	st.Transactions++
	switch {
	case !e.tx.HasReply:
		st.Unanswered++
	case !e.tx.HasQuery:
		st.Unsolicited++
	}
	tx := &e.tx
	tx.NetBIOS = cs.netbios
	if tx.HasQueryName {
		tx.Query = e.tx.buf[e.qs:e.tx.qe:e.tx.qe]
	}
	a.sink.DNS(cs.conn, tx)
	cs.recycle(e)
}

// message processes one DNS message, following Zeek's DNS analyzer
// (DNS.cc) and base script (base/protocols/dns/main.zeek).
func (cs *connState) message(msg []byte) {
	a := cs.a
	st := &a.stats
	st.Messages++
	p := &cs.p
	var h Header
	if err := p.start(msg, &h); err != nil {
		st.Short++
		return
	}
	if h.Opcode != OpcodeQuery && h.Opcode != OpcodeNotify && h.Opcode != OpcodeUpdate {
		st.OtherOpcodes++
		return
	}
	isReply := h.Response

	// set_session: find or make the transaction this message belongs to.
	var e *entry
	pending := false
	if !cs.multicast {
		// A query waits for its reply, and a reply for its query.
		e = cs.popPending(h.ID, !isReply)
	}
	if e == nil {
		e = cs.newEntry(h.ID)
		pending = !cs.multicast
	}
	if isReply {
		e.tx.RCode = uint16(h.RCode)
		if h.RCode != 0 && h.QDCount == 0 {
			e.tx.Rejected = true
		}
	}
	e.tx.Opcode = h.Opcode

	// The questions and, for replies, the answers: read here rather than
	// in functions of their own, whose calls were a good part of the cost
	// of a message. A malformed message ends them.
body:
	switch {
	case h.QDCount > maxQuestions:
		st.TooManyQuestions++
	case !isReply && h.Opcode != OpcodeUpdate:
		// A query: each question's name is the query's, replacing an
		// earlier one. Zeek takes answers only from replies.
		for range h.QDCount {
			qs := len(e.tx.buf)
			if err := p.questionZeek(&e.tx); err != nil {
				st.Malformed++
				break body
			}
			e.qs = qs
			e.tx.RD, e.tx.TC, e.tx.Z = h.RecursionDesired, h.Truncated, h.Z
			if cs.netbios {
				cs.decodeNetBIOS(e)
			}
		}
	default:
		// A reply's question, or the zone section of an update (Zeek
		// raises dns_dynamic_update instead of dns_request), is only
		// read.
		for range h.QDCount {
			// A name without compression pointers, as nearly every one
			// is here, is checked as question would, without the call;
			// any other question is read by question.
			var err error
			start := p.off
			if root, wire, ok := p.plainNameRoot(start); ok && p.questionLeft() == nil {
				p.remember(start, root, wire, 0)
				_, _, err = p.questionEnd(root + 1)
			} else {
				_, _, _, err = p.question()
			}
			if err != nil {
				st.Malformed++
				break body
			}
			if isReply && h.ANCount == 0 && h.NSCount == 0 && h.ARCount == 0 {
				e.tx.Rejected = true // Zeek's dns_rejected
			}
		}
		if !isReply {
			break
		}
		if h.Opcode == OpcodeUpdate {
			if err := cs.updates(e, &h, int(h.ANCount)+int(h.NSCount)); err != nil {
				st.Malformed++
			}
			break
		}
		// The answers of a reply that is no update. A reply often holds
		// many records, mostly A or AAAA records, whose runs take a path
		// of their own. The fast paths leave doReply to this loop, which
		// calls it for the first of their answers only: for the others
		// of a message it would change nothing.
		replied := false
		for n := int(h.ANCount); n > 0; {
			// The fast paths by the type the next record has where an
			// owner name of one compression pointer would have it (its
			// low byte). k is how many records a fast path read. The
			// runs of A and AAAA records keep the answer byte bound on
			// what they render, their commas aside.
			owner, k := p.off, 0
			start, budget := len(e.tx.buf), a.cfg.maxAnswerBytes-e.ansBytes
			switch p.nextType() {
			case byte(TypeA):
				k = p.appendAnswersA(&e.tx, n, budget)
				e.ansBytes += len(e.tx.buf) - start - k
			case byte(TypeAAAA):
				k = p.appendAnswersAAAA(&e.tx, n, budget)
				e.ansBytes += len(e.tx.buf) - start - k
			case byte(TypeCNAME), byte(TypeNS), byte(TypePTR):
				if cs.nameAnswer(e) {
					k = 1
				}
			}
			if k > 0 {
				if !replied {
					// doReply, in line: its call for each reply
					// was most of its cost.
					if !e.tx.HasQueryName {
						cs.setQueryName(e, owner)
					}
					e.tx.AA, e.tx.RA = h.Authoritative, h.RecursionAvailable
					if rtt := cs.conn.TS - e.tx.TS; !e.tx.HasRTT && rtt != 0 {
						e.tx.RTT, e.tx.HasRTT = rtt, true
					}
					replied = true
				}
				n -= k
				continue
			}
			if err := p.nextRR(); err != nil {
				st.Malformed++
				break body
			}
			if p.rdEnd == p.rdStart && p.rdStart < len(msg) {
				// Zeek stops at an empty record that is not the last
				// thing in the message (DNS_zero_rdlength).
				break body
			}
			if err := cs.record(e, &h, false); err != nil {
				st.Malformed++
				break body
			}
			n--
		}
	}

	// dns_end: a transaction is logged once both sides were seen (every
	// message stands alone on multicast addresses, as with mDNS).
	if isReply {
		e.tx.HasReply = true
	} else {
		e.tx.HasQuery = true
	}
	switch {
	case cs.multicast || e.tx.HasQuery && e.tx.HasReply:
		cs.report(e)
	case pending:
		cs.pushPending(e)
	default:
		cs.report(e)
	}
}

// nameAnswer is nextRR and appendZeek in one for an answer record of
// type NS, CNAME or PTR whose owner name is a compression pointer to a
// name checked before (see pointerName) and whose data is a name that
// checks and renders in one pass (see appendCheckedName), as most are: it
// reads the record into e, leaves the parser as those would, and reports
// true; the caller calls doReply for it. It reports false, with nothing
// read, for any other record, which nextRR and appendZeek then read.
func (cs *connState) nameAnswer(e *entry) bool {
	p := &cs.p
	msg, off := p.msg, p.off
	if !p.inAnswers() || off+12 > len(msg) {
		return false
	}
	rr := (*[12]byte)(msg[off : off+12])
	typ := binary.BigEndian.Uint16(rr[2:])
	if typ != TypeCNAME && typ != TypeNS && typ != TypePTR || rr[0] < 0xc0 {
		return false
	}
	ptr := int(rr[0]&0x3f)<<8 | int(rr[1])
	if c := &p.names[nameSlot(ptr)]; int(c.key) != ptr+1 || int(c.last) >= off {
		return false
	}
	// An empty record takes the other path, where Zeek stops at it.
	rdStart := off + 12
	rdEnd := rdStart + int(binary.BigEndian.Uint16(rr[10:]))
	if rdEnd > len(msg) || rdEnd == rdStart {
		return false
	}
	start := len(e.tx.buf)
	out, nameEnd, plain, ok := p.appendCheckedName(e.tx.buf, rdStart, rdEnd)
	if !ok || nameEnd != rdEnd {
		return false
	}
	p.readRun(off, 1, typ, rdEnd-rdStart)
	p.plain = plain
	e.tx.buf = append(out, ',')
	end := len(out)
	// A name of one byte or none is rare enough not to be told apart
	// from "-" and the root.
	if n := end - start; !plain || n <= 1 || n == len("(empty)") && reservedText(out[start:end]) {
		e.tx.unjoined = true
	}
	cs.keepAnswer(e, start, end)
	return true
}

// updates reads the n prerequisite and update records of an UPDATE
// message into e as its answers.
func (cs *connState) updates(e *entry, h *Header, n int) error {
	for ; n > 0; n-- {
		if err := cs.p.nextRR(); err != nil {
			return err
		}
		if err := cs.record(e, h, true); err != nil {
			return err
		}
	}
	return nil
}

// record renders the record nextRR read into e, of the update section
// when update is set, and keeps it as an answer when Zeek logs its text.
func (cs *connState) record(e *entry, h *Header, update bool) error {
	p := &cs.p
	start := len(e.tx.buf)
	var logged Logged
	var err error
	e.tx.buf, logged, err = p.appendZeek(e.tx.buf, update, cs.netbios)
	if logged != NotLogged {
		end := len(e.tx.buf) // the query name may follow
		// The answers of other types than those of the fast paths are
		// not joined: they are few, and no comma follows them.
		e.tx.unjoined = true
		cs.doReply(e, h, p.rrName)
		if logged == LoggedText {
			cs.keepAnswer(e, start, end)
		}
	}
	return err
}

// doReply is Zeek's hook DNS::do_reply for an answer whose owner name is
// at owner: it sets e's query name to that name, unless e has one, its AA
// and RA flags, and its rtt. It only changes e the first time for a
// message. The query name may follow answers rendered after that one in
// e.tx.buf: each is a slice of its own.
func (cs *connState) doReply(e *entry, h *Header, owner int) {
	if !e.tx.HasQueryName {
		cs.setQueryName(e, owner)
	}
	e.tx.AA, e.tx.RA = h.Authoritative, h.RecursionAvailable
	if !e.tx.HasRTT {
		if rtt := cs.conn.TS - e.tx.TS; rtt != 0 {
			e.tx.RTT, e.tx.HasRTT = rtt, true
		}
	}
}

// keepAnswer adds the rendering of the current record, e.tx.buf[start:end],
// to e's answers, unless that passes the answer byte bound. A comma
// follows the rendering, unless e's answers are unjoined.
func (cs *connState) keepAnswer(e *entry, start, end int) {
	if e.ansBytes+end-start > cs.a.cfg.maxAnswerBytes {
		cs.a.stats.AnswersDropped++
		e.tx.unjoined = true
		return
	}
	e.ansBytes += end - start
	e.tx.Answers = append(e.tx.Answers, Answer{Data: e.tx.buf[start:end:end], TTL: cs.p.rrTTL, Plain: cs.p.plain})
}

// reservedText reports whether s, a rendering, is one of the texts Zeek's
// logs reserve for unset and empty values: "", "-" and "(empty)".
func reservedText(s []byte) bool {
	switch len(s) {
	case 0:
		return true
	case 1:
		return s[0] == '-'
	case len("(empty)"):
		return string(s) == "(empty)"
	}
	return false
}

// setQueryName renders the name at off as e's query, replacing an earlier
// one.
func (cs *connState) setQueryName(e *entry, off int) {
	e.tx.unjoined = true // answers may follow the name
	e.qs = len(e.tx.buf)
	e.tx.buf, e.tx.QueryPlain = Name{msg: cs.p.msg, off: off}.appendZeekPlain(e.tx.buf)
	e.tx.qe = len(e.tx.buf)
	e.tx.HasQueryName = true
}

// decodeNetBIOS replaces e's query name, just set from a query's question
// on 137/udp, by its NetBIOS decoding where Zeek's dns_request decodes it
// (see NetBIOSName). A 32-letter name has nothing escaped, so its rendering
// is the name as it came. The name is decoded before anything is
// appended, so it may be overwritten in place.
func (cs *connState) decodeNetBIOS(e *entry) {
	if out, plain, ok := AppendNetBIOSName(e.tx.buf[:e.qs], e.tx.buf[e.qs:e.tx.qe]); ok {
		e.tx.buf, e.tx.qe, e.tx.QueryPlain = out, len(out), plain
	}
}

package gopacketdns

import (
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// conn is the state of one connection, recycled after Close.
type conn struct {
	a                          *Analyzer
	c                          *parsers.Conn
	stream, multicast, netbios bool
	orig, resp                 side
	// pending holds unmatched queries and replies in arrival order; spare
	// the entries to reuse.
	pending, spare []*entry
	tx             dns.Transaction
	answers        []dns.Answer
}

// entry is a transaction being assembled (Zeek's DNS::Info).
type entry struct {
	ts, rtt                  int64
	hasRTT                   bool
	id                       uint16
	isReply                  bool // pending as a reply waiting for its query
	sawQuery, sawReply       bool
	hasQuestion, hasQName    bool
	qclass, qtype            uint16
	rcode, opcode            uint8
	aa, tc, rd, ra, rejected bool
	z                        uint8
	// buf holds the query name at [qs:qe] and the answers' renderings.
	buf      []byte
	qs, qe   int
	qPlain   bool
	ansBytes int
	answers  []ansRef
}

type ansRef struct {
	start, end int
	ttl        uint32
	plain      bool
}

// keptBuf is the largest TCP message buffer a closed connection's state
// keeps for the next connection.
const keptBuf = 16 << 10

// Held implements parsers.Holder: the buffers holding DNS-over-TCP
// messages split across chunks (at most 2+65535 bytes each).
func (cs *conn) Held() int { return cs.orig.frame.Held() + cs.resp.frame.Held() }

func (cs *conn) Orig() parsers.Parser { return &cs.orig }
func (cs *conn) Resp() parsers.Parser { return &cs.resp }

// Close reports what is still unmatched, queries first, then replies,
// each in arrival order (Zeek's finalize_dns), and recycles the state.
func (cs *conn) Close() {
	cs.orig.Finish()
	cs.resp.Finish()
	cs.flushPending(func(e *entry) bool { return !e.isReply })
	cs.flushPending(func(e *entry) bool { return e.isReply })
	cs.c = nil
	for _, s := range []*side{&cs.orig, &cs.resp} {
		s.frame.Reset(keptBuf)
		s.done = false
	}
	cs.a.free = append(cs.a.free, cs)
}

func (cs *conn) newEntry(id uint16) *entry {
	var e *entry
	if n := len(cs.spare); n > 0 {
		e, cs.spare = cs.spare[n-1], cs.spare[:n-1]
		*e = entry{buf: e.buf[:0], answers: e.answers[:0]}
	} else {
		e = &entry{}
	}
	e.id = id
	e.ts = cs.c.TS
	return e
}

// popPending removes and returns the oldest pending entry with
// transaction id id that waits as a reply (isReply) or a query, or nil.
func (cs *conn) popPending(id uint16, isReply bool) *entry {
	for i, e := range cs.pending {
		if e.id == id && e.isReply == isReply {
			copy(cs.pending[i:], cs.pending[i+1:])
			cs.pending[len(cs.pending)-1] = nil
			cs.pending = cs.pending[:len(cs.pending)-1]
			return e
		}
	}
	return nil
}

// pushPending queues e, first applying Zeek's bounds (enqueue_new_msg):
// a new id past maxPendingIDs reports every waiting message of e's kind,
// an id past maxPendingPerID messages reports those of that id.
func (cs *conn) pushPending(e *entry) {
	e.isReply = e.sawReply
	sameID := 0
	for _, p := range cs.pending {
		if p.isReply == e.isReply && p.id == e.id {
			sameID++
		}
	}
	switch {
	case sameID == 0 && cs.pendingIDsExceed(e.isReply, maxPendingIDs):
		cs.evict(func(p *entry) bool { return p.isReply == e.isReply })
	case sameID > maxPendingPerID:
		cs.evict(func(p *entry) bool { return p.isReply == e.isReply && p.id == e.id })
	}
	cs.pending = append(cs.pending, e)
}

// pendingIDsExceed reports whether more than limit distinct ids wait as
// replies (isReply) or queries. It stops counting past limit; the queue is
// short (its bounds are Zeek's), so the quadratic scan costs less than a
// set.
func (cs *conn) pendingIDsExceed(isReply bool, limit int) bool {
	ids := 0
	for i, p := range cs.pending {
		if p.isReply != isReply || !cs.firstOfID(i) {
			continue
		}
		if ids++; ids > limit {
			return true
		}
	}
	return false
}

// firstOfID reports whether pending entry i is the first of its kind and
// id: counting those counts the distinct ids.
func (cs *conn) firstOfID(i int) bool {
	p := cs.pending[i]
	for _, q := range cs.pending[:i] {
		if q.isReply == p.isReply && q.id == p.id {
			return false
		}
	}
	return true
}

func (cs *conn) evict(match func(*entry) bool) {
	before := len(cs.pending)
	cs.flushPending(match)
	cs.a.stats.Evicted += int64(before - len(cs.pending))
}

// flushPending reports and removes the pending entries match selects.
func (cs *conn) flushPending(match func(*entry) bool) {
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
func (cs *conn) report(e *entry) {
	cs.a.stats.Transactions++
	ans := cs.answers[:0]
	for _, r := range e.answers {
		ans = append(ans, dns.Answer{Data: e.buf[r.start:r.end:r.end], TTL: r.ttl, Plain: r.plain})
	}
	cs.answers = ans
	tx := &cs.tx
	*tx = dns.Transaction{
		TS:           e.ts,
		RTT:          e.rtt,
		HasRTT:       e.hasRTT,
		HasQuery:     e.sawQuery,
		HasReply:     e.sawReply,
		TransID:      e.id,
		HasQueryName: e.hasQName,
		HasQuestion:  e.hasQuestion,
		QClass:       e.qclass,
		QType:        e.qtype,
		RCode:        uint16(e.rcode),
		AA:           e.aa,
		TC:           e.tc,
		RD:           e.rd,
		RA:           e.ra,
		Z:            e.z,
		Answers:      ans,
		Rejected:     e.rejected,
		Opcode:       e.opcode,
		NetBIOS:      cs.netbios,
	}
	if e.hasQName {
		tx.Query = e.buf[e.qs:e.qe:e.qe]
		tx.QueryPlain = e.qPlain
	}
	cs.a.sink.DNS(cs.c, tx)
	cs.spare = append(cs.spare, e)
}

// side is the Parser of one direction. On UDP every Feed is a message; on
// TCP a dns.Framer splits the stream into its messages, as the native
// parser does.
type side struct {
	cs    *conn
	frame dns.Framer
	done  bool
}

// Feed implements parsers.Parser.
func (s *side) Feed(data []byte) {
	cs := s.cs
	if !cs.stream {
		cs.message(data)
		return
	}
	for msg, rest := s.frame.Next(data); msg != nil; msg, rest = s.frame.Next(rest) {
		cs.message(msg)
	}
}

// Gap implements parsers.Parser: a gap inside a message of known length
// costs that message only, and framing goes on after it; a gap that takes
// a length prefix loses the framing, and the direction is given up.
func (s *side) Gap(n int) {
	if !s.cs.stream {
		return
	}
	switch s.frame.Gap(n) {
	case dns.GapNone:
	case dns.GapLost:
		s.cs.a.stats.StreamGaps++
		s.cs.a.stats.StreamAbandoned++
	default:
		s.cs.a.stats.StreamGaps++
	}
}

// Finish implements parsers.Parser. As Zeek does when a TCP connection
// closes, an incomplete message is decoded for what it holds.
func (s *side) Finish() {
	if s.done {
		return
	}
	s.done = true
	if !s.cs.stream {
		return
	}
	if p := s.frame.Partial(); p != nil {
		s.cs.a.stats.StreamPartial++
		s.cs.message(p)
	}
}

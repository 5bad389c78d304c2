// Package gopacketdns is a DNS implementation for wirebench built on
// gopacket's DNS decoder (layers.DNS), written as any module outside
// wirebench would write one: through the public API only. Importing the
// package registers it under [Name]; a replay binary then picks it with
// "--parsers gopacket" (see cmd/dns-gopacket-parser).
//
// Every message, a UDP datagram or a DNS-over-TCP message taken out of its
// 2-byte length framing, is decoded with layers.DNS.DecodeFromBytes into
// one DNS layer the analyzer reuses, so gopacket keeps its slices of
// questions and records and its buffer of names from message to message.
// What gopacket decodes is then turned into the transactions of Zeek's
// dns.log as wirebench's native parser turns its own messages into them:
// queries and replies are paired by transaction id, first in first out,
// with Zeek's bounds on what waits unmatched, and answers are rendered as
// Zeek's base scripts render them. The README says where the two differ
// and why.
package gopacketdns

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// Name is the implementation's name for --parsers.
const Name = "gopacket"

func init() {
	if err := dns.Register(Name, func(s dns.Sink) parsers.Analyzer { return New(s) }); err != nil {
		panic(err)
	}
}

// Zeek's bounds, as the native analyzer applies them: the distinct
// transaction ids and the messages per id that may wait unmatched
// (DNS::max_pending_query_ids, DNS::max_pending_msgs), the questions a
// message may claim before only its header counts (dns_max_queries), and
// the rendered answers one transaction keeps.
const (
	maxPendingIDs   = dns.DefaultMaxPendingIDs
	maxPendingPerID = dns.DefaultMaxPendingPerID
	maxQuestions    = 25
	maxAnswerBytes  = dns.DefaultMaxAnswerBytes
)

// Stats counts what an [Analyzer] saw. Every counter only grows.
type Stats struct {
	Messages int64 // messages decoded (datagrams, or framed TCP messages)
	// Malformed counts messages gopacket refused after their header;
	// Panics counts those of them on which gopacket's decoder panicked
	// (it reads past the end of truncated questions and records).
	Malformed, Panics int64
	Short             int64 // messages shorter than the header, ignored
	OtherOpcodes      int64 // messages with an opcode Zeek does not log
	TooManyQuestions  int64 // messages claiming more than 25 questions: header only

	Transactions int64 // transactions reported
	Evicted      int64 // unmatched messages reported early by the pending bounds

	AnswersDropped int64 // answers not kept because of the answer byte bound

	StreamGaps      int64 // gaps in TCP streams
	StreamAbandoned int64 // TCP directions given up after a gap lost the framing
	StreamPartial   int64 // incomplete TCP messages parsed at the end of a direction
}

// Analyzer parses DNS over UDP and TCP with gopacket into dns.log
// transactions for a [dns.Sink]. It is not safe for concurrent use, and it
// reuses the state of closed connections.
type Analyzer struct {
	sink  dns.Sink
	stats Stats
	// layer is the one DNS layer every message is decoded into.
	layer layers.DNS
	free  []*conn
}

// New returns an Analyzer reporting to sink.
func New(sink dns.Sink) *Analyzer { return &Analyzer{sink: sink} }

// Stats returns the counters so far.
func (a *Analyzer) Stats() Stats { return a.stats }

// Open implements parsers.Analyzer.
func (a *Analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	var cs *conn
	if n := len(a.free); n > 0 {
		cs, a.free = a.free[n-1], a.free[:n-1]
	} else {
		cs = &conn{a: a}
		cs.orig.cs, cs.resp.cs = cs, cs
	}
	cs.c = c
	cs.stream = c.Kind == parsers.Stream
	cs.multicast = c.Key.Resp.Addr().IsMulticast()
	cs.netbios = c.Key.Resp.Port() == 137 && !cs.stream
	return cs
}

// decode decodes msg into the analyzer's layer. gopacket's decoder reads
// the fixed fields of questions and records without checking that they
// fit: given a slice with room beyond its length, it takes the bytes that
// follow the message (the next message of a TCP segment, say), so it is
// given msg capped at its length, where it panics instead. Such a panic
// is a malformed message like any other, and the record being decoded
// when it happened, which gopacket appended before decoding it, is
// dropped.
func (a *Analyzer) decode(msg []byte) (panicked bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked, err = true, errPanic
			d := &a.layer
			for _, sec := range []*[]layers.DNSResourceRecord{&d.Additionals, &d.Authorities, &d.Answers} {
				if n := len(*sec); n > 0 {
					*sec = (*sec)[:n-1]
					break
				}
			}
		}
	}()
	return false, a.layer.DecodeFromBytes(msg[:len(msg):len(msg)], gopacket.NilDecodeFeedback)
}

type decodeError string

func (e decodeError) Error() string { return string(e) }

const errPanic = decodeError("gopacket panicked decoding the message")

// message turns one decoded DNS message into its transaction, following
// Zeek's DNS analyzer and base script as the native analyzer does.
func (cs *conn) message(msg []byte) {
	a := cs.a
	st := &a.stats
	st.Messages++
	if len(msg) < 12 {
		st.Short++
		return
	}
	panicked, err := a.decode(msg)
	d := &a.layer
	op := uint8(d.OpCode)
	if op != dns.OpcodeQuery && op != dns.OpcodeNotify && op != dns.OpcodeUpdate {
		st.OtherOpcodes++
		return
	}
	// gopacket reads the authority and additional sections too, which Zeek
	// (and so dns.log) skips but for the updates of an UPDATE: an error
	// there leaves what is logged whole, and the message counts as sound.
	whole := len(d.Questions) == int(d.QDCount) && len(d.Answers) == int(d.ANCount) &&
		(d.OpCode != layers.DNSOpCodeUpdate || len(d.Authorities) == int(d.NSCount))
	if err != nil && !whole {
		st.Malformed++
		if panicked {
			st.Panics++
		}
	}
	// The header fields as the message has them: gopacket folds an OPT
	// record's extended rcode into ResponseCode, Zeek logs the header's 4
	// bits.
	id := uint16(msg[0])<<8 | uint16(msg[1])
	isReply := msg[2]&0x80 != 0
	rcode := msg[3] & 0xf

	var e *entry
	pending := false
	switch {
	case cs.multicast:
		e = cs.newEntry(id)
	default:
		if e = cs.popPending(id, !isReply); e == nil {
			e = cs.newEntry(id)
			pending = true
		}
	}
	if isReply {
		e.rcode = rcode
		if rcode != 0 && d.QDCount == 0 {
			e.rejected = true
		}
	}
	e.opcode = op
	if d.QDCount > maxQuestions {
		st.TooManyQuestions++
	} else {
		cs.body(e, d, isReply)
	}
	if isReply {
		e.sawReply = true
	} else {
		e.sawQuery = true
	}
	switch {
	case cs.multicast || e.sawQuery && e.sawReply:
		cs.report(e)
	case pending:
		cs.pushPending(e)
	default:
		cs.report(e)
	}
}

// body takes the questions and, from replies, the answers gopacket decoded
// (all of them, or those before a malformed record).
func (cs *conn) body(e *entry, d *layers.DNS, isReply bool) {
	update := d.OpCode == layers.DNSOpCodeUpdate
	for _, q := range d.Questions {
		switch {
		case !isReply:
			if update {
				break // the zone section: Zeek raises dns_dynamic_update instead
			}
			e.rd, e.tc, e.z = d.RD, d.TC, d.Z
			e.qclass, e.qtype, e.hasQuestion = uint16(q.Class), uint16(q.Type), true
			cs.setQueryName(e, q.Name)
			if cs.netbios {
				cs.decodeNetBIOS(e)
			}
		case d.ANCount == 0 && d.NSCount == 0 && d.ARCount == 0:
			e.rejected = true // Zeek's dns_rejected
		}
	}
	if !isReply || len(d.Questions) < int(d.QDCount) {
		return
	}
	if !update {
		cs.readRecords(e, d, d.Answers, sectionAnswer)
		return
	}
	// Zeek reads an UPDATE reply's prerequisites (the answer section) and
	// updates (the authority section) as answers.
	cs.readRecords(e, d, d.Answers, sectionPrereq)
	if len(d.Answers) == int(d.ANCount) {
		cs.readRecords(e, d, d.Authorities, sectionUpdate)
	}
}

// readRecords renders records into e (hook DNS::do_reply).
func (cs *conn) readRecords(e *entry, d *layers.DNS, records []layers.DNSResourceRecord, sec section) {
	for i := range records {
		rr := &records[i]
		if len(rr.Data) == 0 && sec == sectionAnswer && !endsMessage(rr) {
			// Zeek stops at an empty record that is not the last thing in
			// the message (DNS_zero_rdlength).
			return
		}
		start := len(e.buf)
		var logged dns.Logged
		e.buf, logged = appendRecord(e.buf, rr, sec, cs.netbios)
		end := len(e.buf)
		if logged == dns.NotLogged {
			continue
		}
		if !e.hasQName {
			cs.setQueryName(e, rr.Name)
		}
		e.aa, e.ra = d.AA, d.RA
		if !e.hasRTT {
			if rtt := cs.c.TS - e.ts; rtt != 0 {
				e.rtt, e.hasRTT = rtt, true
			}
		}
		if logged != dns.LoggedText {
			continue
		}
		if e.ansBytes+end-start > maxAnswerBytes {
			cs.a.stats.AnswersDropped++
			e.buf = e.buf[:start]
			continue
		}
		e.ansBytes += end - start
		e.answers = append(e.answers, ansRef{start: start, end: end, ttl: rr.TTL, plain: plainText(e.buf[start:end])})
	}
}

// endsMessage reports whether rr's data ends the message: decode gave
// gopacket the message capped at its length, so the data of the last
// record has no room beyond it.
func endsMessage(rr *layers.DNSResourceRecord) bool { return cap(rr.Data) == len(rr.Data) }

// setQueryName renders name (gopacket's dotted form) as e's query,
// replacing an earlier one.
func (cs *conn) setQueryName(e *entry, name []byte) {
	e.qs = len(e.buf)
	e.buf = appendZeekName(e.buf, name)
	e.qe = len(e.buf)
	e.qPlain = plainText(e.buf[e.qs:e.qe])
	e.hasQName = true
}

// decodeNetBIOS replaces e's query name, just set from a query's question
// on 137/udp, by its NetBIOS decoding where Zeek's dns_request decodes it.
func (cs *conn) decodeNetBIOS(e *entry) {
	if out, plain, ok := dns.AppendNetBIOSName(e.buf[:e.qs], e.buf[e.qs:e.qe]); ok {
		e.buf, e.qe, e.qPlain = out, len(out), plain
	}
}

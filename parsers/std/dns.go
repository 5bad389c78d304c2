package std

import (
	"encoding/binary"
	"slices"
	"strconv"
	"unicode/utf8"

	mdns "github.com/miekg/dns"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// DNS limits, as Zeek's DNS::max_pending_msgs and
// DNS::max_pending_query_ids: beyond them unmatched messages are reported
// unpaired.
const (
	MaxPendingPerID = 50
	MaxPendingIDs   = 50
)

// DNSStats counts what a DNS analyzer did.
type DNSStats struct {
	Messages, Transactions int64
	// Malformed counts messages miekg/dns could not unpack; Ignored
	// messages with an opcode Zeek does not log (other than query,
	// notify and update).
	Malformed, Ignored int64
	// Gaps counts TCP directions stopped by a gap; PendingLimit the
	// times unmatched messages were flushed because of the limits.
	Gaps, PendingLimit int64
}

// DNS is a parsers.Analyzer that parses DNS messages with miekg/dns
// (Msg.Unpack), over UDP (one message per Feed) or TCP (2-byte length
// framing reassembled here), and pairs queries and replies by transaction
// id per connection as Zeek's dns script does.
type DNS struct {
	sink  dns.Sink
	stats DNSStats
}

// NewDNS returns an analyzer reporting transactions to sink.
func NewDNS(sink dns.Sink) *DNS { return &DNS{sink: sink} }

// Stats returns the counters so far.
func (a *DNS) Stats() DNSStats { return a.stats }

// Open implements parsers.Analyzer.
func (a *DNS) Open(c *parsers.Conn) parsers.ConnParser {
	dc := &dnsConn{a: a, c: c, queries: map[uint16][]*dnsTx{}, replies: map[uint16][]*dnsTx{}}
	resp := c.Key.Resp
	dc.multicast = resp.Addr().IsMulticast()
	dc.netbios = resp.Port() == 137 && c.Kind == parsers.Block
	dc.orig.dc, dc.resp.dc = dc, dc
	return dc
}

type dnsConn struct {
	a          *DNS
	c          *parsers.Conn
	orig, resp dnsSide
	// Unmatched queries and replies by transaction id, oldest first.
	queries, replies map[uint16][]*dnsTx
	seq              int64
	// On multicast addresses (mDNS) every message stands alone, as in
	// Zeek; NetBIOS name service names some codes differently.
	multicast, netbios bool
}

type dnsTx struct {
	tx  dns.Transaction
	seq int64
}

// dnsSide is one direction; in TCP it reassembles length-framed messages.
type dnsSide struct {
	dc   *dnsConn
	buf  []byte // a partial TCP message (bounded: at most 2+65535 bytes)
	dead bool
}

func (dc *dnsConn) Orig() parsers.Parser { return &dc.orig }
func (dc *dnsConn) Resp() parsers.Parser { return &dc.resp }

// Feed implements parsers.Parser.
func (s *dnsSide) Feed(data []byte) {
	if s.dead {
		return
	}
	if s.dc.c.Kind == parsers.Block {
		s.dc.message(data)
		return
	}
	// TCP: each message is preceded by its length in two bytes.
	if len(s.buf) > 0 {
		s.buf = append(s.buf, data...)
		data = s.buf
	}
	for len(data) >= 2 {
		n := int(binary.BigEndian.Uint16(data))
		if len(data) < 2+n {
			break
		}
		s.dc.message(data[2 : 2+n])
		data = data[2+n:]
	}
	s.buf = append(s.buf[:0], data...)
}

// Gap implements parsers.Parser: a TCP direction stops, as the framing
// cannot be recovered reliably.
func (s *dnsSide) Gap(int) {
	if !s.dead && s.dc.c.Kind == parsers.Stream {
		s.dc.a.stats.Gaps++
		s.dead = true
		s.buf = nil
	}
}

// Finish implements parsers.Parser.
func (s *dnsSide) Finish() {
	s.buf = nil
}

// Close implements parsers.ConnParser: unmatched queries, then unmatched
// replies, are reported in the order they arrived.
func (dc *dnsConn) Close() {
	dc.flush(dc.queries)
	dc.flush(dc.replies)
}

func (dc *dnsConn) flush(m map[uint16][]*dnsTx) {
	var all []*dnsTx
	for id, q := range m {
		all = append(all, q...)
		delete(m, id)
	}
	slices.SortFunc(all, func(a, b *dnsTx) int { return int(a.seq - b.seq) })
	for _, t := range all {
		dc.report(t)
	}
}

func (dc *dnsConn) report(t *dnsTx) {
	dc.a.stats.Transactions++
	dc.a.sink.DNS(dc.c, &t.tx)
}

// message handles one DNS message following Zeek's DNS::set_session.
func (dc *dnsConn) message(b []byte) {
	var m mdns.Msg
	if err := m.Unpack(b); err != nil {
		dc.a.stats.Malformed++
		return
	}
	dc.a.stats.Messages++
	// Zeek logs standard queries, notifies and dynamic updates.
	if m.Opcode != mdns.OpcodeQuery && m.Opcode != mdns.OpcodeNotify && m.Opcode != mdns.OpcodeUpdate {
		dc.a.stats.Ignored++
		return
	}
	id := m.Id
	if dc.multicast {
		t := dc.newTx(&m)
		if m.Response {
			dc.applyReply(t, &m, b)
		} else {
			dc.applyQuery(t, &m)
		}
		dc.report(t)
		return
	}
	if !m.Response {
		t := dc.pop(dc.replies, id)
		if t == nil {
			t = dc.newTx(&m)
			dc.applyQuery(t, &m)
			dc.push(dc.queries, id, t)
			return
		}
		dc.applyQuery(t, &m)
		dc.report(t)
		return
	}
	t := dc.pop(dc.queries, id)
	if t == nil {
		t = dc.newTx(&m)
		dc.applyReply(t, &m, b)
		dc.push(dc.replies, id, t)
		return
	}
	dc.applyReply(t, &m, b)
	dc.report(t)
}

func (dc *dnsConn) newTx(m *mdns.Msg) *dnsTx {
	dc.seq++
	return &dnsTx{seq: dc.seq, tx: dns.Transaction{TS: dc.c.TS, TransID: m.Id, Opcode: uint8(m.Opcode), NetBIOS: dc.netbios}}
}

func (dc *dnsConn) pop(m map[uint16][]*dnsTx, id uint16) *dnsTx {
	q := m[id]
	if len(q) == 0 {
		return nil
	}
	t := q[0]
	if len(q) == 1 {
		delete(m, id)
	} else {
		m[id] = q[1:]
	}
	return t
}

// push queues an unmatched message, first flushing what Zeek would flush
// when its limits are reached.
func (dc *dnsConn) push(m map[uint16][]*dnsTx, id uint16, t *dnsTx) {
	if q, ok := m[id]; ok && len(q) > MaxPendingPerID {
		dc.a.stats.PendingLimit++
		for _, old := range q {
			dc.report(old)
		}
		delete(m, id)
	} else if !ok && len(m) > MaxPendingIDs {
		dc.a.stats.PendingLimit++
		dc.flush(m)
	}
	m[id] = append(m[id], t)
}

// applyQuery sets what Zeek takes from a query (its dns_request event):
// flags and the question. An update's zone section is not a question.
func (dc *dnsConn) applyQuery(t *dnsTx, m *mdns.Msg) {
	t.tx.HasQuery = true
	t.tx.Opcode = uint8(m.Opcode)
	if len(m.Question) == 0 || m.Opcode == mdns.OpcodeUpdate {
		return
	}
	q := m.Question[len(m.Question)-1] // Zeek reports each; the last one stays
	t.tx.RD = m.RecursionDesired
	t.tx.TC = m.Truncated
	t.tx.Z = zBits(m)
	t.tx.QClass = q.Qclass
	t.tx.QType = q.Qtype
	t.tx.HasQuestion = true
	t.tx.Query = appendZeekName(t.tx.Query[:0], q.Name)
	t.tx.HasQueryName = true
	if dc.netbios {
		// Zeek's dns_request decodes NetBIOS names (decode_netbios_name).
		// The name is decoded before anything is appended, so it may be
		// overwritten in place.
		if out, _, ok := dns.AppendNetBIOSName(t.tx.Query[:0], t.tx.Query); ok {
			t.tx.Query = out
		}
	}
}

// zBits is Zeek's Z: the three header bits after RA (Z, AD, CD).
func zBits(m *mdns.Msg) uint8 {
	var z uint8
	if m.Zero {
		z |= 4
	}
	if m.AuthenticatedData {
		z |= 2
	}
	if m.CheckingDisabled {
		z |= 1
	}
	return z
}

// applyReply sets what Zeek takes from a reply: the header's rcode (Zeek
// does not extend it with EDNS0), rejected, and the rendered answers. Only
// records Zeek's script logs (hook DNS::do_reply) set the query name, AA,
// RA and the rtt. In a dynamic update the prerequisite (answer) and update
// (authority) sections are the answers.
func (dc *dnsConn) applyReply(t *dnsTx, m *mdns.Msg, raw []byte) {
	t.tx.HasReply = true
	t.tx.Opcode = uint8(m.Opcode)
	t.tx.RCode = uint16(binary.BigEndian.Uint16(raw[2:]) & 0xf)
	if t.tx.RCode != 0 && len(m.Question) == 0 ||
		len(m.Question) > 0 && len(m.Answer) == 0 && len(m.Ns) == 0 && len(m.Extra) == 0 {
		t.tx.Rejected = true
	}
	if m.Opcode == mdns.OpcodeUpdate {
		for _, rr := range m.Answer {
			dc.answer(t, m, rr, renderPrerequisite(rr), dns.LoggedText)
		}
		for _, rr := range m.Ns {
			data, logged := renderUpdate(rr)
			dc.answer(t, m, rr, data, logged)
		}
		return
	}
	for _, rr := range m.Answer {
		data, logged := renderAnswer(rr)
		dc.answer(t, m, rr, data, logged)
	}
}

// answer applies one rendered answer record to t (Zeek's DNS::do_reply).
func (dc *dnsConn) answer(t *dnsTx, m *mdns.Msg, rr mdns.RR, data []byte, logged dns.Logged) {
	if logged == dns.NotLogged {
		return
	}
	h := rr.Header()
	if !t.tx.HasQueryName {
		t.tx.Query = appendZeekName(t.tx.Query[:0], h.Name)
		t.tx.HasQueryName = true
	}
	t.tx.AA = m.Authoritative
	t.tx.RA = m.RecursionAvailable
	if !t.tx.HasRTT {
		// Zeek: the time since the transaction began, unknown when 0
		// (a reply without its query).
		t.tx.RTT = dc.c.TS - t.tx.TS
		t.tx.HasRTT = t.tx.RTT != 0
	}
	if logged == dns.LoggedText {
		t.tx.Answers = append(t.tx.Answers, dns.Answer{Data: data, TTL: h.Ttl})
	}
}

// renderAnswer renders an answer record as Zeek's dns script does, and says
// whether and how Zeek logs it.
func renderAnswer(rr mdns.RR) ([]byte, dns.Logged) {
	var b []byte
	switch r := rr.(type) {
	case *mdns.A:
		return []byte(r.A.String()), dns.LoggedText
	case *mdns.AAAA:
		return []byte(r.AAAA.String()), dns.LoggedText
	case *mdns.NS:
		return appendZeekName(b, r.Ns), dns.LoggedText
	case *mdns.CNAME:
		return appendZeekName(b, r.Target), dns.LoggedText
	case *mdns.PTR:
		return appendZeekName(b, r.Ptr), dns.LoggedText
	case *mdns.MX:
		return appendZeekName(b, r.Mx), dns.LoggedText
	case *mdns.SOA:
		return appendZeekName(b, r.Ns), dns.LoggedText
	case *mdns.SRV:
		return appendZeekName(b, r.Target), dns.LoggedText
	case *mdns.TXT:
		return appendStrings(b, "TXT", r.Txt), dns.LoggedText
	case *mdns.SPF:
		return appendStrings(b, "SPF", r.Txt), dns.LoggedText
	case *mdns.NAPTR:
		return appendNAPTR(b, r), dns.LoggedText
	case *mdns.DNSKEY:
		return strconv.AppendUint(append(b, "DNSKEY "...), uint64(r.Algorithm), 10), dns.LoggedText
	case *mdns.DS:
		b = strconv.AppendUint(append(b, "DS "...), uint64(r.Algorithm), 10)
		return strconv.AppendUint(append(b, ' '), uint64(r.DigestType), 10), dns.LoggedText
	case *mdns.RRSIG:
		b = strconv.AppendUint(append(b, "RRSIG "...), uint64(r.TypeCovered), 10)
		b = append(b, ' ')
		if signer := appendZeekName(nil, r.SignerName); len(signer) > 0 {
			return append(b, signer...), dns.LoggedText
		}
		return append(b, "<Root>"...), dns.LoggedText
	case *mdns.NSEC:
		b = appendZeekName(append(b, "NSEC "...), r.Hdr.Name)
		return appendZeekName(append(b, ' '), r.NextDomain), dns.LoggedText
	case *mdns.NSEC3:
		return []byte("NSEC3"), dns.LoggedText
	case *mdns.NSEC3PARAM:
		return []byte("NSEC3PARAM"), dns.LoggedText
	case *mdns.SSHFP:
		return append([]byte("SSHFP: "), r.FingerPrint...), dns.LoggedText
	case *mdns.LOC:
		b = strconv.AppendUint(append(b, "LOC:  "...), uint64(r.Size), 10)
		b = strconv.AppendUint(append(b, ' '), uint64(r.HorizPre), 10)
		return strconv.AppendUint(append(b, ' '), uint64(r.VertPre), 10), dns.LoggedText
	}
	switch t := rr.Header().Rrtype; t {
	case 11: // WKS: Zeek's event carries no data, but the record counts as an answer
		return nil, dns.LoggedEmpty
	case mdns.TypeHINFO, mdns.TypeCAA, mdns.TypeSVCB, mdns.TypeHTTPS,
		mdns.TypeTKEY, mdns.TypeTSIG, mdns.TypeOPT, 38 /* A6 */ :
		return nil, dns.NotLogged // parsed by Zeek, but its script logs nothing for them
	case 65534:
		return []byte("BIND9 signing signal"), dns.LoggedText
	default:
		return append(strconv.AppendUint(append(b, "<unknown type="...), uint64(t), 10), '>'), dns.LoggedText
	}
}

// appendNAPTR renders "NAPTR order preference flags service regexp
// replacement" as Zeek does, leaving out an empty regexp and a root
// replacement.
func appendNAPTR(b []byte, r *mdns.NAPTR) []byte {
	b = strconv.AppendUint(append(b, "NAPTR "...), uint64(r.Order), 10)
	b = strconv.AppendUint(append(b, ' '), uint64(r.Preference), 10)
	b = appendZeekEscaped(append(b, ' '), unescapePresentation(nil, r.Flags))
	b = appendZeekEscaped(append(b, ' '), unescapePresentation(nil, r.Service))
	b = appendZeekEscaped(append(b, ' '), unescapePresentation(nil, r.Regexp))
	if r.Replacement != "." && r.Replacement != "" {
		if r.Regexp != "" {
			b = append(b, ' ')
		}
		b = appendZeekName(b, r.Replacement)
	}
	return b
}

// renderPrerequisite renders a record of a dynamic update's prerequisite
// section as Zeek does (RFC 2136 section 2.4): "pre: NameInUse owner",
// "pre: NameNotInUse owner", "pre: NoRRSet TYPE owner" or "pre: RRSetExists
// TYPE owner".
func renderPrerequisite(rr mdns.RR) []byte {
	h := rr.Header()
	b := []byte("pre: ")
	switch {
	case h.Class == mdns.ClassNONE && h.Rrtype == mdns.TypeANY:
		b = append(b, "NameNotInUse "...)
	case h.Class == mdns.ClassANY && h.Rrtype == mdns.TypeANY:
		b = append(b, "NameInUse "...)
	case h.Class == mdns.ClassNONE:
		b = append(append(b, "NoRRSet "...), dns.TypeName(h.Rrtype)...)
		b = append(b, ' ')
	default:
		b = append(append(b, "RRSetExists "...), dns.TypeName(h.Rrtype)...)
		b = append(b, ' ')
	}
	return appendZeekName(b, h.Name)
}

// renderUpdate renders a record of a dynamic update's update section as
// Zeek does (RFC 2136 section 2.5): deletions as "del: RRSet * owner",
// "del: RRSet TYPE" or "del: RR TYPE owner", additions as the record's
// usual rendering after "add: ", naming the type and owner of addresses.
func renderUpdate(rr mdns.RR) ([]byte, dns.Logged) {
	h := rr.Header()
	switch {
	case h.Class == mdns.ClassANY && h.Rrtype == mdns.TypeANY:
		return appendZeekName([]byte("del: RRSet * "), h.Name), dns.LoggedText
	case h.Class == mdns.ClassNONE:
		b := append([]byte("del: RR "), dns.TypeName(h.Rrtype)...)
		return appendZeekName(append(b, ' '), h.Name), dns.LoggedText
	case h.Class == mdns.ClassANY:
		return append([]byte("del: RRSet "), dns.TypeName(h.Rrtype)...), dns.LoggedText
	}
	data, logged := renderAnswer(rr)
	if logged != dns.LoggedText {
		return nil, logged
	}
	b := []byte("add: ")
	switch h.Rrtype {
	case mdns.TypeA, mdns.TypeAAAA, 38 /* A6 */ :
		b = append(append(b, dns.TypeName(h.Rrtype)...), ' ')
		b = append(appendZeekName(b, h.Name), ' ')
	}
	return append(b, data...), dns.LoggedText
}

// appendStrings renders TXT or SPF strings as Zeek does: "TXT 5 hello"
// per string, joined by spaces.
func appendStrings(b []byte, kind string, strs []string) []byte {
	for i, s := range strs {
		if i > 0 {
			b = append(b, ' ')
		}
		raw := unescapePresentation(nil, s)
		b = append(b, kind...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(raw)), 10)
		b = append(b, ' ')
		b = appendZeekEscaped(b, raw)
	}
	return b
}

// appendZeekName renders a domain name given in miekg/dns's presentation
// format (escaped, with a trailing dot) the way Zeek logs it: the raw label
// bytes joined by dots, no trailing dot, ASCII letters in lower case,
// non-printable bytes and backslashes as \xNN. The root is empty.
func appendZeekName(b []byte, name string) []byte {
	raw := unescapePresentation(nil, name)
	if n := len(raw); n > 0 && raw[n-1] == '.' && !escapedDotAt(name) {
		raw = raw[:n-1]
	}
	for i, c := range raw {
		if 'A' <= c && c <= 'Z' {
			raw[i] = c + 'a' - 'A'
		}
	}
	return appendZeekEscaped(b, raw)
}

// escapedDotAt reports whether name's final dot is an escaped one (part
// of a label, not the root).
func escapedDotAt(name string) bool {
	n := len(name)
	bs := 0
	for i := n - 2; i >= 0 && name[i] == '\\'; i-- {
		bs++
	}
	return bs%2 == 1
}

// unescapePresentation undoes miekg/dns's escaping of names and strings:
// \DDD is the byte DDD, \X is X.
func unescapePresentation(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b = append(b, c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			b = append(b, byte((int(s[i+1]-'0')*100+int(s[i+2]-'0')*10+int(s[i+3]-'0'))&0xff))
			i += 3
			continue
		}
		b = append(b, s[i+1])
		i++
	}
	return b
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

const hexDigits = "0123456789abcdef"

// appendZeekEscaped escapes as Zeek's log writer does: control bytes, DEL,
// the backslash and invalid UTF-8 as \xNN; printable ASCII and valid UTF-8
// as they are.
func appendZeekEscaped(b, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size <= 1 {
				b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
				i++
				continue
			}
			b = append(b, raw[i:i+size]...)
			i += size
			continue
		}
		if c < 0x20 || c == 0x7f || c == '\\' {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		} else {
			b = append(b, c)
		}
		i++
	}
	return b
}

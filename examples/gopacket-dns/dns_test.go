package gopacketdns

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// collect is a dns.Sink keeping every transaction as one line of text.
type collect struct{ lines []string }

func (c *collect) DNS(_ *parsers.Conn, tx *dns.Transaction) {
	var b strings.Builder
	fmt.Fprintf(&b, "id=%d q=%t r=%t", tx.TransID, tx.HasQuery, tx.HasReply)
	if tx.HasQueryName {
		fmt.Fprintf(&b, " query=%q", tx.Query)
	}
	if tx.HasQuestion {
		fmt.Fprintf(&b, " qclass=%d qtype=%d", tx.QClass, tx.QType)
	}
	fmt.Fprintf(&b, " rcode=%d op=%d aa=%t tc=%t rd=%t ra=%t z=%d rejected=%t rtt=%t/%d",
		tx.RCode, tx.Opcode, tx.AA, tx.TC, tx.RD, tx.RA, tx.Z, tx.Rejected, tx.HasRTT, tx.RTT)
	for _, a := range tx.Answers {
		fmt.Fprintf(&b, " [%q ttl=%d]", a.Data, a.TTL)
	}
	c.lines = append(c.lines, b.String())
}

var (
	native = func(s dns.Sink) parsers.Analyzer { return dns.New(s) }
	peer   = func(s dns.Sink) parsers.Analyzer { return New(s) }
)

// message is one DNS message of a test connection.
type message struct {
	reply bool
	wire  []byte
}

// resp is the responder of the test connections: port 53, unicast.
var resp = netip.AddrPortFrom(netip.MustParseAddr("192.0.2.53"), 53)

// run feeds msgs to a new connection of an analyzer impl makes: as UDP
// datagrams, or (stream) as a TCP stream each way cut into chunks of
// chunk bytes. It returns the transactions.
func run(impl func(dns.Sink) parsers.Analyzer, stream bool, chunk int, msgs []message) []string {
	sink := &collect{}
	c := &parsers.Conn{ID: "test", Kind: parsers.Block, Key: connid.Key{Resp: resp}}
	if stream {
		c.Kind = parsers.Stream
	}
	cp := impl(sink).Open(c)
	var streams [2][]byte
	for i, m := range msgs {
		c.TS = int64(i+1) * 1000
		p := cp.Orig()
		if m.reply {
			p = cp.Resp()
		}
		if !stream {
			p.Feed(m.wire)
			continue
		}
		s := &streams[b2i(m.reply)]
		*s = binary.BigEndian.AppendUint16(*s, uint16(len(m.wire)))
		*s = append(*s, m.wire...)
	}
	for i, p := range []parsers.Parser{cp.Orig(), cp.Resp()} {
		for b := streams[i]; len(b) > 0; {
			n := min(chunk, len(b))
			p.Feed(b[:n])
			b = b[n:]
		}
		p.Finish()
	}
	cp.Close()
	return sink.lines
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rr is a resource record to pack; data is its RDATA as sent.
type rr struct {
	name  string
	typ   uint16
	class uint16
	ttl   uint32
	data  []byte
}

// pack builds a message: id, flags (the header's second 16 bits), one
// question of qname and qtype (none when qname is "-") and the answers.
func pack(id, flags uint16, qname string, qtype uint16, answers ...rr) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = binary.BigEndian.AppendUint16(b, flags)
	qd := uint16(1)
	if qname == "-" {
		qd = 0
	}
	for _, n := range []uint16{qd, uint16(len(answers)), 0, 0} {
		b = binary.BigEndian.AppendUint16(b, n)
	}
	if qd == 1 {
		b = appendName(b, qname)
		b = binary.BigEndian.AppendUint16(b, qtype)
		b = binary.BigEndian.AppendUint16(b, 1)
	}
	for _, r := range answers {
		if r.name == "" {
			b = append(b, 0xc0, 12) // the question's name
		} else {
			b = appendName(b, r.name)
		}
		class := r.class
		if class == 0 {
			class = 1
		}
		b = binary.BigEndian.AppendUint16(b, r.typ)
		b = binary.BigEndian.AppendUint16(b, class)
		b = binary.BigEndian.AppendUint32(b, r.ttl)
		b = binary.BigEndian.AppendUint16(b, uint16(len(r.data)))
		b = append(b, r.data...)
	}
	return b
}

// appendName appends an uncompressed name ("" or "." is the root).
func appendName(b []byte, name string) []byte {
	for _, l := range strings.Split(strings.Trim(name, "."), ".") {
		if l != "" {
			b = append(append(b, byte(len(l))), l...)
		}
	}
	return append(b, 0)
}

func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }

func str(s string) []byte { return append([]byte{byte(len(s))}, s...) }

const (
	query  = 0x0100 // RD
	answer = 0x8580 // QR AA RD RA
)

// exchanges are conversations on which gopacket must give native's
// transactions: every record type Zeek renders, the pairing rules, and
// malformed messages whose damage lies where both parsers see it alike.
var exchanges = []struct {
	name string
	msgs []message
}{
	{"a-aaaa", []message{
		{false, pack(1, query, "Example.COM", dns.TypeA)},
		{true, pack(1, answer, "Example.COM", dns.TypeA,
			rr{typ: dns.TypeA, ttl: 60, data: []byte{192, 0, 2, 1}},
			rr{typ: dns.TypeAAAA, ttl: 61, data: netip.MustParseAddr("2001:db8::1").AsSlice()})},
	}},
	{"names", []message{
		{false, pack(2, query, "www.example.com", dns.TypeCNAME)},
		{true, pack(2, answer, "www.example.com", dns.TypeCNAME,
			rr{typ: dns.TypeCNAME, ttl: 1, data: appendName(nil, "Edge.example.net")},
			rr{name: "example.com", typ: dns.TypeNS, ttl: 2, data: appendName(nil, "ns1.example.com")},
			rr{name: "1.2.0.192.in-addr.arpa", typ: dns.TypePTR, ttl: 3, data: appendName(nil, "host.example")},
			rr{typ: dns.TypeMX, ttl: 4, data: cat(u16(10), appendName(nil, "mail.example.com"))},
			rr{typ: dns.TypeSRV, ttl: 5, data: cat(u16(1), u16(2), u16(443), appendName(nil, "svc.example.com"))},
			rr{typ: dns.TypeSOA, ttl: 6, data: cat(appendName(nil, "ns.example.com"), appendName(nil, "admin.example.com"), make([]byte, 20))})},
	}},
	{"txt-escapes", []message{
		{false, pack(3, query, "t.example", dns.TypeTXT)},
		{true, pack(3, answer, "t.example", dns.TypeTXT,
			rr{typ: dns.TypeTXT, ttl: 7, data: cat(str("v=spf1 -all"), str("a\\b\x01,c"))},
			rr{typ: dns.TypeSPF, ttl: 8, data: str("spf")})},
	}},
	{"dnssec-and-others", []message{
		{false, pack(4, query, "sec.example", dns.TypeANY)},
		{true, pack(4, answer, "sec.example", dns.TypeANY,
			rr{typ: dns.TypeDNSKEY, ttl: 9, data: cat(u16(257), []byte{3, 8}, []byte("key"))},
			rr{typ: dns.TypeDS, ttl: 10, data: cat(u16(1), []byte{8, 2}, []byte("digest"))},
			rr{typ: dns.TypeRRSIG, ttl: 11, data: cat(u16(dns.TypeA), []byte{8, 2}, make([]byte, 14), appendName(nil, "Signer.example"), []byte("sig"))},
			rr{typ: dns.TypeRRSIG, ttl: 11, data: cat(u16(dns.TypeA), []byte{8, 2}, make([]byte, 14), appendName(nil, ""), []byte("sig"))},
			rr{typ: dns.TypeNSEC, ttl: 12, data: cat(appendName(nil, "next.example"), []byte{0, 1, 0x40})},
			rr{typ: dns.TypeNSEC3, ttl: 13, data: []byte{1, 0, 0, 1, 0, 0}},
			rr{typ: dns.TypeNSEC3PARAM, ttl: 14, data: []byte{1, 0, 0, 1, 0}},
			rr{typ: dns.TypeSSHFP, ttl: 15, data: []byte{1, 2, 0xde, 0xad}},
			rr{typ: dns.TypeLOC, ttl: 16, data: cat([]byte{0, 0x12, 0x16, 0x13}, make([]byte, 12))},
			rr{typ: dns.TypeNAPTR, ttl: 17, data: cat(u16(100), u16(10), str("S"), str("SIP+D2U"), str(""), appendName(nil, "_sip._udp.example"))},
			rr{typ: dns.TypeWKS, ttl: 18, data: []byte{192, 0, 2, 1, 6}},
			rr{typ: dns.TypeHINFO, ttl: 19, data: cat(str("cpu"), str("os"))},
			rr{typ: dns.TypeCAA, ttl: 20, data: cat([]byte{0}, str("issue"), []byte("ca.example"))},
			rr{typ: dns.TypeBINDS, ttl: 21, data: []byte{8, 0, 1, 0, 0}},
			rr{typ: 4242, ttl: 22, data: []byte("?")})},
	}},
	{"reply-first-and-unanswered", []message{
		{true, pack(5, answer, "late.example", dns.TypeA, rr{typ: dns.TypeA, data: []byte{10, 0, 0, 1}})},
		{false, pack(5, query, "late.example", dns.TypeA)},
		{false, pack(6, query, "lost.example", dns.TypeA)},
		{false, pack(7, query, "again.example", dns.TypeAAAA)},
		{false, pack(7, query, "again.example", dns.TypeAAAA)},
		{true, pack(7, answer, "again.example", dns.TypeAAAA)},
	}},
	{"rejected-and-nxdomain", []message{
		{false, pack(8, query, "nx.example", dns.TypeA)},
		{true, pack(8, 0x8183, "nx.example", dns.TypeA)},
		{false, pack(9, query, "refused.example", dns.TypeA)},
		{true, pack(9, 0x8185, "-", 0)},
		{false, pack(10, query, ".", dns.TypeNS)},
	}},
	{"question-in-reply-only", []message{
		{true, pack(11, answer, "-", 0, rr{name: "Owner.Example", typ: dns.TypeA, data: []byte{10, 0, 0, 2}})},
	}},
	{"notify-update-other-opcodes", []message{
		{false, pack(12, 0x2000, "zone.example", dns.TypeSOA)},     // notify
		{true, pack(12, 0xa400, "zone.example", dns.TypeSOA)},      // notify reply
		{false, pack(13, 0x0800, "inverse.example", dns.TypeA)},    // iquery: not logged
		{false, pack(14, 0x2800, "zone.example", dns.TypeSOA)},     // update
		{true, pack(14, 0xa800, "zone.example", dns.TypeSOA)},      // update reply
		{false, pack(15, 0x1800, "status.example", dns.TypeA)},     // opcode 3: not logged
		{true, pack(16, answer|0x0070, "z.example", dns.TypeA)},    // Z bits set in a reply
		{false, pack(17, query|0x0070, "zq.example", dns.TypeA)},   // and in a query
		{false, pack(18, query|0x0200, "tc.example", dns.TypeTXT)}, // TC
	}},
	{"malformed-record", []message{
		{false, pack(19, query, "bad.example", dns.TypeA)},
		{true, pack(19, answer, "bad.example", dns.TypeA,
			rr{typ: dns.TypeA, data: []byte{10, 0, 0, 3}},
			rr{typ: dns.TypeCNAME, data: []byte{7, 'b', 'r', 'o'}})},
	}},
	{"empty-record-mid-message", []message{
		{false, pack(20, query, "e.example", dns.TypeA)},
		{true, pack(20, answer, "e.example", dns.TypeA,
			rr{typ: dns.TypeA, data: []byte{10, 0, 0, 4}},
			rr{typ: dns.TypeTXT},
			rr{typ: dns.TypeA, data: []byte{10, 0, 0, 5}})},
	}},
	{"short", []message{
		{false, []byte{0, 21, 1, 0}},
		{false, pack(22, query, "after.example", dns.TypeA)},
	}},
}

// TestAgreesWithNative checks every exchange over UDP and over TCP in
// chunks of every size from 1 to 40 bytes.
func TestAgreesWithNative(t *testing.T) {
	for _, ex := range exchanges {
		t.Run(ex.name, func(t *testing.T) {
			want := run(native, false, 0, ex.msgs)
			if got := run(peer, false, 0, ex.msgs); !slices.Equal(got, want) {
				t.Errorf("UDP:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
			for chunk := 1; chunk <= 40; chunk++ {
				want := run(native, true, chunk, ex.msgs)
				if got := run(peer, true, chunk, ex.msgs); !slices.Equal(got, want) {
					t.Fatalf("TCP in chunks of %d:\n got %s\nwant %s", chunk, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
				}
			}
		})
	}
}

// TestTruncated feeds every prefix of a reply: gopacket's decoder reads
// past the end of some (a question's type and class, a record's fixed
// fields), which must count as malformed, never crash the replay.
func TestTruncated(t *testing.T) {
	reply := pack(30, answer, "cut.example", dns.TypeA,
		rr{typ: dns.TypeA, data: []byte{10, 0, 0, 6}},
		rr{typ: dns.TypeMX, data: cat(u16(5), appendName(nil, "mx.example"))})
	a := New(&collect{})
	cp := a.Open(&parsers.Conn{ID: "cut", Kind: parsers.Block, Key: connid.Key{Resp: resp}})
	for n := range len(reply) {
		cp.Resp().Feed(reply[:n])
	}
	cp.Resp().Finish()
	cp.Orig().Finish()
	cp.Close()
	st := a.Stats()
	if st.Short != 12 || st.Malformed != int64(len(reply)-12) {
		t.Errorf("stats %+v: want 12 short messages and %d malformed", st, len(reply)-12)
	}
	if st.Panics == 0 {
		t.Logf("gopacket no longer panics on truncated messages: the recovery in decode can go")
	}
}

// TestNoAllocs checks that a query and its reply, once the analyzer warmed
// up, cost no allocation: one DNS layer is reused for every message.
func TestNoAllocs(t *testing.T) {
	q := pack(40, query, "alloc.example", dns.TypeA)
	r := pack(40, answer, "alloc.example", dns.TypeA,
		rr{typ: dns.TypeA, data: []byte{10, 0, 0, 7}},
		rr{typ: dns.TypeCNAME, data: appendName(nil, "other.example")})
	exchange := exchanger(New(&countSink{}), q, r)
	exchange()
	if n := testing.AllocsPerRun(100, exchange); n != 0 {
		t.Errorf("%.1f allocations per connection, want 0", n)
	}
}

// countSink counts transactions.
type countSink struct{ n int }

func (s *countSink) DNS(*parsers.Conn, *dns.Transaction) { s.n++ }

// exchanger returns a function that opens a UDP connection of a, feeds it
// query q and reply r, and closes it.
func exchanger(a parsers.Analyzer, q, r []byte) func() {
	c := &parsers.Conn{ID: "exchange", Kind: parsers.Block, Key: connid.Key{Resp: resp}}
	return func() {
		cp := a.Open(c)
		cp.Orig().Feed(q)
		cp.Resp().Feed(r)
		cp.Orig().Finish()
		cp.Resp().Finish()
		cp.Close()
	}
}

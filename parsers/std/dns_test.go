package std

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// dnsRec is a dns.Transaction copied out of the sink call.
type dnsRec struct {
	TS, RTT            int64
	HasQuery, HasReply bool
	ID                 uint16
	Query              string
	QClass, QType      uint16
	RCode              uint16
	Flags              string // AA TC RD RA as letters
	Z, Opcode          uint8
	Answers            string
	Rejected           bool
}

type dnsSink struct{ recs []dnsRec }

func (s *dnsSink) DNS(c *parsers.Conn, tx *dns.Transaction) {
	flags := ""
	for i, f := range []bool{tx.AA, tx.TC, tx.RD, tx.RA} {
		if f {
			flags += []string{"AA", "TC", "RD", "RA"}[i]
		}
	}
	var ans []string
	for _, a := range tx.Answers {
		ans = append(ans, fmt.Sprintf("%s/%d", a.Data, a.TTL))
	}
	rtt := int64(-1) // unset
	if tx.HasRTT {
		rtt = tx.RTT
	}
	q := "-"
	if tx.HasQueryName {
		q = string(tx.Query)
	}
	s.recs = append(s.recs, dnsRec{tx.TS, rtt, tx.HasQuery, tx.HasReply, tx.TransID, q,
		tx.QClass, tx.QType, tx.RCode, flags, tx.Z, tx.Opcode, strings.Join(ans, ","), tx.Rejected})
}

func rr(t *testing.T, s string) mdns.RR {
	t.Helper()
	r, err := mdns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func query(id uint16, name string, qtype uint16) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetQuestion(name, qtype)
	m.Id = id
	return m
}

func reply(q *mdns.Msg, rcode int, answers ...mdns.RR) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetRcode(q, rcode)
	m.RecursionAvailable = true
	m.Answer = answers
	return m
}

func pack(t *testing.T, m *mdns.Msg) []byte {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type dnsMsg struct {
	side byte // 'o' or 'r'
	ts   int64
	data []byte
}

// runDNS feeds messages to one connection (UDP, or TCP with length
// framing split into chunks of at most chunk bytes; 0: whole).
func runDNS(t *testing.T, msgs []dnsMsg, kind parsers.Kind, chunk int) ([]dnsRec, DNSStats) {
	t.Helper()
	return runDNSSized(t, msgs, kind, func() int {
		if chunk <= 0 {
			return 1 << 30
		}
		return chunk
	})
}

// runDNSSized is runDNS with TCP chunks of the sizes next returns.
func runDNSSized(t *testing.T, msgs []dnsMsg, kind parsers.Kind, next func() int) ([]dnsRec, DNSStats) {
	t.Helper()
	sink := &dnsSink{}
	a := NewDNS(sink)
	c := &parsers.Conn{ID: "c", Kind: kind}
	cp := a.Open(c)
	for _, m := range msgs {
		p := cp.Orig()
		if m.side == 'r' {
			p = cp.Resp()
		}
		c.TS = m.ts
		if kind == parsers.Block {
			p.Feed(append([]byte(nil), m.data...))
			continue
		}
		framed := binary.BigEndian.AppendUint16(nil, uint16(len(m.data)))
		feedSized(p, append(framed, m.data...), next)
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	return sink.recs, a.Stats()
}

// dnsCase is a conversation and the transactions the std parser reports.
type dnsCase struct {
	name string
	msgs []dnsMsg
	want []dnsRec
}

// dnsCases are the cases of TestDNS and TestChunkingInvariance.
func dnsCases(t *testing.T) []dnsCase {
	q1 := query(100, "WWW.Example.COM.", mdns.TypeA)
	q1.AuthenticatedData = true
	r1 := reply(q1, mdns.RcodeSuccess, rr(t, "www.example.com. 300 IN CNAME web.example.net."), rr(t, "web.example.net. 60 IN A 192.0.2.1"))
	r1.Authoritative = true
	q2 := query(200, "example.org.", mdns.TypeTXT)
	r2 := reply(q2, mdns.RcodeSuccess, rr(t, `example.org. 10 IN TXT "v=spf1 -all" "a\\b\"c"`))
	q3 := query(300, "nx.example.", mdns.TypeAAAA)
	r3 := reply(q3, mdns.RcodeNameError)
	r3.Ns = []mdns.RR{rr(t, "example. 5 IN SOA ns.example. host.example. 1 2 3 4 5")}
	q4 := query(400, "refused.example.", mdns.TypeSOA)
	r4 := reply(q4, mdns.RcodeRefused)
	q5 := query(500, "sig.example.", mdns.TypeDS)
	r5 := reply(q5, mdns.RcodeSuccess,
		rr(t, "sig.example. 5 IN DS 60485 5 1 2BB183AF5F22588179A53B0A98631FAD1A292118"),
		rr(t, "sig.example. 5 IN RRSIG DS 5 2 86400 20260101000000 20250101000000 12345 . AAAA"),
		rr(t, "sig.example. 5 IN DNSKEY 257 3 8 AwEAAQ=="),
		rr(t, "sig.example. 5 IN NSEC next.example. A RRSIG"),
		rr(t, "sig.example. 5 IN SSHFP 1 1 A6B95F9EBA1104A7272A362E8BFBCBEBD5726DCF"),
		rr(t, "sig.example. 5 IN HINFO cpu os"),
		rr(t, "sig.example. 5 IN TYPE4242 \\# 2 abcd"),
		rr(t, "sig.example. 5 IN MX 10 mail\\009x.example."),
	)
	root := query(600, ".", mdns.TypeNS)
	q6 := query(700, "sip.example.", mdns.TypeNAPTR)
	r6 := reply(q6, mdns.RcodeSuccess,
		rr(t, `sip.example. 30 IN NAPTR 100 10 "S" "SIP+D2T" "" _sip._tcp.example.`),
		rr(t, `sip.example. 30 IN NAPTR 10 0 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .`))
	// Records Zeek's script does not log leave no trace, not even the
	// query name; a WKS record counts as an answer without text.
	r7 := reply(query(800, "svc.example.", mdns.TypeHTTPS), mdns.RcodeSuccess, rr(t, "svc.example. 60 IN HTTPS 1 . alpn=h2"))
	r7.Question = nil
	r8 := reply(query(900, "wks.example.", 11), mdns.RcodeSuccess, rr(t, `wks.example. 60 IN TYPE11 \# 6 C000020106FF`))
	r8.Question = nil
	// A dynamic update (RFC 2136) and its reply, which repeats its
	// prerequisite and update sections.
	up := new(mdns.Msg)
	up.SetUpdate("example.")
	up.Id = 1000
	up.NameUsed([]mdns.RR{rr(t, "used.example. 0 IN A 0.0.0.0")})
	up.NameNotUsed([]mdns.RR{rr(t, "free.example. 0 IN A 0.0.0.0")})
	up.RRsetNotUsed([]mdns.RR{rr(t, "host.example. 0 IN CNAME x.")})
	up.RRsetUsed([]mdns.RR{rr(t, "host.example. 0 IN MX 0 x.")})
	up.RemoveName([]mdns.RR{rr(t, "gone.example. 0 IN A 0.0.0.0")})
	up.RemoveRRset([]mdns.RR{rr(t, "host.example. 0 IN AAAA ::")})
	up.Remove([]mdns.RR{rr(t, "host.example. 0 IN TXT old")})
	up.Insert([]mdns.RR{rr(t, "host.example. 1200 IN A 192.0.2.7"), rr(t, "host.example. 1200 IN MX 5 mx.example."), rr(t, "host.example. 1200 IN HINFO a b")})
	upReply := up.Copy()
	upReply.Response = true

	return []dnsCase{{
		name: "query and reply",
		msgs: []dnsMsg{{'o', 1000, pack(t, q1)}, {'r', 1500, pack(t, r1)}},
		want: []dnsRec{{1000, 500, true, true, 100, "www.example.com", 1, 1, 0, "AARDRA", 2, 0, "web.example.net/300,192.0.2.1/60", false}},
	}, {
		name: "TXT strings",
		msgs: []dnsMsg{{'o', 1, pack(t, q2)}, {'r', 2, pack(t, r2)}},
		want: []dnsRec{{1, 1, true, true, 200, "example.org", 1, 16, 0, "RDRA", 0, 0, `TXT 11 v=spf1 -all TXT 5 a\x5cb"c/10`, false}},
	}, {
		name: "NXDOMAIN with authority is not rejected, no answers no rtt",
		msgs: []dnsMsg{{'o', 1, pack(t, q3)}, {'r', 9, pack(t, r3)}},
		want: []dnsRec{{1, -1, true, true, 300, "nx.example", 1, 28, 3, "RD", 0, 0, "", false}},
	}, {
		name: "a reply without any record is rejected",
		msgs: []dnsMsg{{'o', 1, pack(t, q4)}, {'r', 9, pack(t, r4)}},
		want: []dnsRec{{1, -1, true, true, 400, "refused.example", 1, 6, 5, "RD", 0, 0, "", true}},
	}, {
		name: "DNSSEC and other renderings",
		msgs: []dnsMsg{{'o', 1, pack(t, q5)}, {'r', 2, pack(t, r5)}},
		want: []dnsRec{{1, 1, true, true, 500, "sig.example", 1, 43, 0, "RDRA", 0, 0,
			`DS 5 1/5,RRSIG 43 <Root>/5,DNSKEY 8/5,NSEC sig.example next.example/5,SSHFP: a6b95f9eba1104a7272a362e8bfbcbebd5726dcf/5,<unknown type=4242>/5,mail\x09x.example/5`, false}},
	}, {
		name: "unanswered query and unsolicited reply, at close",
		msgs: []dnsMsg{{'o', 1, pack(t, q1)}, {'r', 2, pack(t, r2)}},
		want: []dnsRec{
			{1, -1, true, false, 100, "www.example.com", 1, 1, 0, "RD", 2, 0, "", false},
			{2, -1, false, true, 200, "example.org", 0, 0, 0, "RA", 0, 0, `TXT 11 v=spf1 -all TXT 5 a\x5cb"c/10`, false},
		},
	}, {
		name: "two replies to one query",
		msgs: []dnsMsg{{'o', 1, pack(t, q1)}, {'r', 2, pack(t, r1)}, {'r', 3, pack(t, r1)}},
		want: []dnsRec{
			{1, 1, true, true, 100, "www.example.com", 1, 1, 0, "AARDRA", 2, 0, "web.example.net/300,192.0.2.1/60", false},
			{3, -1, false, true, 100, "www.example.com", 0, 0, 0, "AARA", 0, 0, "web.example.net/300,192.0.2.1/60", false},
		},
	}, {
		name: "reply before its query",
		msgs: []dnsMsg{{'r', 5, pack(t, r1)}, {'o', 6, pack(t, q1)}},
		want: []dnsRec{{5, -1, true, true, 100, "www.example.com", 1, 1, 0, "AARDRA", 2, 0, "web.example.net/300,192.0.2.1/60", false}},
	}, {
		name: "NAPTR",
		msgs: []dnsMsg{{'o', 1, pack(t, q6)}, {'r', 2, pack(t, r6)}},
		want: []dnsRec{{1, 1, true, true, 700, "sip.example", 1, 35, 0, "RDRA", 0, 0,
			`NAPTR 100 10 S SIP+D2T _sip._tcp.example/30,NAPTR 10 0 U E2U+sip !^.*$!sip:info@example.com!/30`, false}},
	}, {
		name: "unlogged record types",
		msgs: []dnsMsg{{'r', 2, pack(t, r7)}, {'r', 3, pack(t, r8)}},
		want: []dnsRec{
			{2, -1, false, true, 800, "-", 0, 0, 0, "", 0, 0, "", false},
			{3, -1, false, true, 900, "wks.example", 0, 0, 0, "RA", 0, 0, "", false},
		},
	}, {
		name: "dynamic update",
		msgs: []dnsMsg{{'o', 1, pack(t, up)}, {'r', 4, pack(t, upReply)}},
		want: []dnsRec{{1, 3, true, true, 1000, "used.example", 0, 0, 0, "", 0, 5,
			"pre: NameInUse used.example/0,pre: NameNotInUse free.example/0,pre: NoRRSet CNAME host.example/0," +
				"pre: RRSetExists MX host.example/0,del: RRSet * gone.example/0,del: RRSet AAAA/0," +
				"del: RR TXT host.example/0,add: A host.example 192.0.2.7/1200,add: mx.example/1200", false}},
	}, {
		name: "root query, malformed message skipped",
		msgs: []dnsMsg{{'o', 1, pack(t, root)}, {'o', 2, []byte{1, 2, 3}}},
		want: []dnsRec{{1, -1, true, false, 600, "", 1, 2, 0, "RD", 0, 0, "", false}},
	}}
}

func TestDNS(t *testing.T) {
	for _, tt := range dnsCases(t) {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runDNS(t, tt.msgs, parsers.Block, 0)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("UDP:\n%+v\nwant\n%+v", got, tt.want)
			}
			got, _ = runDNS(t, tt.msgs, parsers.Stream, 0)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("TCP:\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestDNSOpcodes(t *testing.T) {
	notify := query(7, "zone.example.", mdns.TypeSOA)
	notify.Opcode = mdns.OpcodeNotify
	status := query(8, "x.example.", mdns.TypeA)
	status.Opcode = mdns.OpcodeStatus
	recs, st := runDNS(t, []dnsMsg{{'o', 1, pack(t, notify)}, {'o', 2, pack(t, status)}}, parsers.Block, 0)
	if len(recs) != 1 || recs[0].Opcode != 4 || recs[0].Query != "zone.example" || st.Ignored != 1 {
		t.Errorf("recs = %+v, stats = %+v", recs, st)
	}
}

func TestDNSPendingLimits(t *testing.T) {
	var msgs []dnsMsg
	for i := range MaxPendingIDs + 10 {
		msgs = append(msgs, dnsMsg{'o', int64(i + 1), pack(t, query(uint16(i), "a.example.", mdns.TypeA))})
	}
	recs, st := runDNS(t, msgs, parsers.Block, 0)
	if len(recs) != MaxPendingIDs+10 || st.PendingLimit == 0 {
		t.Errorf("%d transactions, stats %+v", len(recs), st)
	}
}

func TestDNSGapStopsTCP(t *testing.T) {
	sink := &dnsSink{}
	a := NewDNS(sink)
	cp := a.Open(&parsers.Conn{Kind: parsers.Stream})
	b := pack(t, query(1, "a.example.", mdns.TypeA))
	framed := append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)
	cp.Orig().Feed(framed[:5])
	cp.Orig().Gap(3)
	cp.Orig().Feed(framed)
	cp.Close()
	if len(sink.recs) != 0 || a.Stats().Gaps != 1 {
		t.Errorf("recs %v, stats %+v", sink.recs, a.Stats())
	}
}

func TestZeekName(t *testing.T) {
	tests := []struct{ in, want string }{
		{".", ""},
		{"Example.COM.", "example.com"},
		{`a\.b.example.`, "a.b.example"},
		{`sp\032ace.`, "sp ace"},
		{`bin\000\255.`, `bin\x00\xff`},
		{`back\\slash.`, `back\x5cslash`},
		{`dot\.`, "dot."},
		{"no-dot", "no-dot"},
	}
	for _, tt := range tests {
		if got := string(appendZeekName(nil, tt.in)); got != tt.want {
			t.Errorf("appendZeekName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// What miekg/dns writes for a raw label comes back unchanged.
	ip := net.ParseIP("192.0.2.1")
	if got := string(appendZeekEscaped(nil, []byte(ip.String()))); got != "192.0.2.1" {
		t.Errorf("escaping an address: %q", got)
	}
}

func FuzzDNS(f *testing.F) {
	q := query(1, "www.example.com.", mdns.TypeA)
	qb, _ := q.Pack()
	rb, _ := reply(q, 0, &mdns.A{Hdr: mdns.RR_Header{Name: "www.example.com.", Rrtype: mdns.TypeA, Class: 1, Ttl: 5}, A: net.IPv4(1, 2, 3, 4)}).Pack()
	f.Add(qb, rb, uint8(1))
	f.Add([]byte{0, 0, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0}, []byte{0xc0, 0x0c}, uint8(3))
	f.Fuzz(func(t *testing.T, a, b []byte, chunk uint8) {
		msgs := []dnsMsg{{'o', 1, a}, {'r', 2, b}}
		runDNS(t, msgs, parsers.Block, 0)
		whole, _ := runDNS(t, msgs, parsers.Stream, 0)
		parts, _ := runDNS(t, msgs, parsers.Stream, int(chunk)+1)
		if fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Errorf("whole and chunked TCP input disagree:\n%+v\n%+v", whole, parts)
		}
	})
}

// TestDNSNetBIOS: on 137/udp a query's name is logged decoded, as the
// native parser and Zeek's dns_request log it; a scope ID keeps it as it is.
func TestDNSNetBIOS(t *testing.T) {
	for _, tt := range []struct{ name, want string }{
		{"ENDFDHCNFEEFFCFCFJCACACACACACAAA.", "M57-TERRY"},
		{"ENDFDHCNFEEFFCFCFJCACACACACACAAA.corp.", "endfdhcnfeeffcfcfjcacacacacacaaa.corp"},
	} {
		sink := &dnsSink{}
		c := &parsers.Conn{Kind: parsers.Block, Key: flow.Key{
			Orig: netip.MustParseAddrPort("192.0.2.1:137"), Resp: netip.MustParseAddrPort("192.0.2.255:137"), Proto: flow.ProtoUDP}}
		cp := NewDNS(sink).Open(c)
		cp.Orig().Feed(pack(t, query(1, tt.name, 32)))
		cp.Close()
		if len(sink.recs) != 1 || sink.recs[0].Query != tt.want {
			t.Errorf("%s: %+v, want query %q", tt.name, sink.recs, tt.want)
		}
	}
}

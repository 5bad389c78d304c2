package dns

import (
	"bytes"
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// rec is a Transaction copied out of the sink call, in a comparable form.
type rec struct {
	TS, RTT            int64
	HasRTT             bool
	HasQuery, HasReply bool
	ID                 uint16
	Query              string // "-" when unset
	QClass, QType      int    // -1 when unset
	RCode              int    // -1 when no reply
	AA, TC, RD, RA     bool
	Z                  uint8
	Answers            string // "a,b" with TTLs in brackets
	Rejected           bool
	Opcode             uint8
}

type recorder struct {
	got []rec
	// notPlain lists the texts marked plain that are not.
	notPlain []string
}

// checkPlain notes s when it is marked plain but holds a byte other than
// printable ASCII, or the comma.
func (r *recorder) checkPlain(s []byte, plain bool) {
	if plain && bytes.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c > 0x7e || c == ',' }) {
		r.notPlain = append(r.notPlain, string(s))
	}
}

func (r *recorder) DNS(c *parsers.Conn, tx *Transaction) {
	x := rec{TS: tx.TS, RTT: tx.RTT, HasRTT: tx.HasRTT, HasQuery: tx.HasQuery, HasReply: tx.HasReply,
		ID: tx.TransID, Query: "-", QClass: -1, QType: -1, RCode: -1,
		AA: tx.AA, TC: tx.TC, RD: tx.RD, RA: tx.RA, Z: tx.Z, Rejected: tx.Rejected, Opcode: tx.Opcode}
	if tx.HasQueryName {
		x.Query = string(tx.Query)
	}
	r.checkPlain(tx.Query, tx.QueryPlain)
	if tx.HasQuestion {
		x.QClass, x.QType = int(tx.QClass), int(tx.QType)
	}
	if tx.HasReply {
		x.RCode = int(tx.RCode)
	}
	var parts []string
	for _, a := range tx.Answers {
		parts = append(parts, fmt.Sprintf("%s[%d]", a.Data, a.TTL))
		r.checkPlain(a.Data, a.Plain)
	}
	x.Answers = strings.Join(parts, ",")
	if bad := badJoined(tx); bad != "" {
		r.notPlain = append(r.notPlain, bad)
	}
	r.got = append(r.got, x)
}

// badJoined describes how tx.AnswersJoined differs from the Data of the
// answers joined by commas, when it is set; it is empty when it does not.
func badJoined(tx *Transaction) string {
	joined := tx.AnswersJoined()
	if joined == nil {
		return ""
	}
	var parts [][]byte
	for _, a := range tx.Answers {
		if !a.Plain || reservedText(a.Data) {
			return fmt.Sprintf("joined answers %q with %q, not plain or reserved", joined, a.Data)
		}
		parts = append(parts, a.Data)
	}
	if want := bytes.Join(parts, []byte(",")); !bytes.Equal(joined, want) {
		return fmt.Sprintf("joined answers %q, want %q", joined, want)
	}
	return ""
}

var (
	client = netip.MustParseAddrPort("192.0.2.10:40000")
	server = netip.MustParseAddrPort("192.0.2.53:53")
)

// event is one thing that happens on a connection in a test.
type event struct {
	ts   int64
	role parsers.Role
	msg  []byte
}

func run(t testing.TB, a *Analyzer, kind parsers.Kind, resp netip.AddrPort, evs ...event) {
	t.Helper()
	c := &parsers.Conn{ID: "c1", Kind: kind, Key: flow.Key{Orig: client, Resp: resp, Proto: flow.ProtoUDP}}
	cp := a.Open(c)
	for _, e := range evs {
		c.TS = e.ts
		p := cp.Orig()
		if e.role == parsers.Resp {
			p = cp.Resp()
		}
		if kind == parsers.Stream {
			p.Feed(frame(e.msg))
		} else {
			p.Feed(e.msg)
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
}

func frame(msg []byte) []byte { return append([]byte{byte(len(msg) >> 8), byte(len(msg))}, msg...) }

func query(t testing.TB, id uint16, name string, qtype uint16) []byte {
	return pack(t, id, name, qtype)
}

func TestAnalyzerPairs(t *testing.T) {
	q := query(t, 21140, "WWW.CMU.edu", mdns.TypeA)
	r := pack(t, 21140, "www.cmu.edu", mdns.TypeA,
		"www.cmu.edu. 86400 IN CNAME www-cmu.andrew.cmu.edu.", "www-cmu.andrew.cmu.edu. 21600 IN A 128.2.10.163")
	r2 := append([]byte(nil), r...)
	r2[2] |= 0x04 // AA
	tests := []struct {
		name string
		evs  []event
		want []rec
	}{
		{"query and reply", []event{{1000, parsers.Orig, q}, {1214, parsers.Resp, r}}, []rec{{
			TS: 1000, RTT: 214, HasRTT: true, HasQuery: true, HasReply: true, ID: 21140, Query: "www.cmu.edu",
			QClass: 1, QType: 1, RCode: 0, RD: true, RA: true,
			Answers: "www-cmu.andrew.cmu.edu[86400],128.2.10.163[21600]"}}},
		// Zeek's duplicate-responses baseline: the second reply is logged
		// on its own at the end, without question fields or rtt.
		{"two replies", []event{{1000, parsers.Orig, q}, {1214, parsers.Resp, r2}, {1300, parsers.Resp, r2}}, []rec{
			{TS: 1000, RTT: 214, HasRTT: true, HasQuery: true, HasReply: true, ID: 21140, Query: "www.cmu.edu",
				QClass: 1, QType: 1, RCode: 0, AA: true, RD: true, RA: true,
				Answers: "www-cmu.andrew.cmu.edu[86400],128.2.10.163[21600]"},
			{TS: 1300, HasReply: true, ID: 21140, Query: "www.cmu.edu", QClass: -1, QType: -1, RCode: 0, AA: true, RA: true,
				Answers: "www-cmu.andrew.cmu.edu[86400],128.2.10.163[21600]"}}},
		{"retransmitted query, no reply", []event{{1, parsers.Orig, q}, {2, parsers.Orig, q}}, []rec{
			{TS: 1, HasQuery: true, ID: 21140, Query: "www.cmu.edu", QClass: 1, QType: 1, RCode: -1, RD: true},
			{TS: 2, HasQuery: true, ID: 21140, Query: "www.cmu.edu", QClass: 1, QType: 1, RCode: -1, RD: true}}},
		{"reply before query", []event{{5, parsers.Resp, r}, {9, parsers.Orig, q}}, []rec{{
			TS: 5, HasQuery: true, HasReply: true, ID: 21140, Query: "www.cmu.edu",
			QClass: 1, QType: 1, RCode: 0, RD: true, RA: true,
			Answers: "www-cmu.andrew.cmu.edu[86400],128.2.10.163[21600]"}}},
		{"replies pair first in first out per id", []event{
			{1, parsers.Orig, query(t, 1, "a.example", 1)}, {2, parsers.Orig, query(t, 2, "b.example", 1)},
			{3, parsers.Orig, query(t, 1, "c.example", 1)}, {4, parsers.Resp, pack(t, 1, "x", 1, "x. 1 IN A 192.0.2.1")},
			{5, parsers.Resp, pack(t, 1, "y", 1, "y. 1 IN A 192.0.2.2")}}, []rec{
			{TS: 1, RTT: 3, HasRTT: true, HasQuery: true, HasReply: true, ID: 1, Query: "a.example", QClass: 1, QType: 1, RCode: 0, RD: true, RA: true, Answers: "192.0.2.1[1]"},
			{TS: 3, RTT: 2, HasRTT: true, HasQuery: true, HasReply: true, ID: 1, Query: "c.example", QClass: 1, QType: 1, RCode: 0, RD: true, RA: true, Answers: "192.0.2.2[1]"},
			{TS: 2, HasQuery: true, ID: 2, Query: "b.example", QClass: 1, QType: 1, RCode: -1, RD: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			a := New(&r)
			run(t, a, parsers.Block, server, tt.evs...)
			if !reflect.DeepEqual(r.got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", r.got, tt.want)
			}
		})
	}
}

// plainRecorder keeps the plain flags of the transactions it gets.
type plainRecorder struct {
	recorder
	plain []string // "query:flag" and "answer:flag"
}

func (r *plainRecorder) DNS(c *parsers.Conn, tx *Transaction) {
	r.recorder.DNS(c, tx)
	r.plain = append(r.plain, fmt.Sprintf("%s:%v", tx.Query, tx.QueryPlain))
	for _, a := range tx.Answers {
		r.plain = append(r.plain, fmt.Sprintf("%s:%v", a.Data, a.Plain))
	}
}

// TestPlainFlags checks which texts the analyzer marks plain: addresses,
// names and TXT strings without bytes to escape or commas; not those with
// a comma or an escaped byte, nor text of other types.
func TestPlainFlags(t *testing.T) {
	q := query(t, 7, "Www.Example.com", mdns.TypeA)
	r := pack(t, 7, "www.example.com", mdns.TypeA,
		"www.example.com. 60 IN CNAME a\\,b.example.",
		"www.example.com. 60 IN CNAME a\\000b.example.",
		"www.example.com. 60 IN CNAME c.example.",
		"c.example. 60 IN A 192.0.2.1",
		"c.example. 60 IN AAAA 2001:db8::1",
		"c.example. 60 IN MX 10 mail.example.",
		"c.example. 60 IN TXT \"v=1\" \"x\"",
		"c.example. 60 IN TXT \"a,b\"",
		"c.example. 60 IN TXT \"a\\\\b\"",
		"c.example. 60 IN SPF \"v=spf1\"",
		"c.example. 60 IN HINFO \"cpu\" \"os\"")
	var rec plainRecorder
	run(t, New(&rec), parsers.Block, server, event{1, parsers.Orig, q}, event{2, parsers.Resp, r})
	want := []string{"www.example.com:true", `a,b.example:false`, `a\x00b.example:false`, "c.example:true",
		"192.0.2.1:true", "2001:db8::1:true", "mail.example:true",
		"TXT 3 v=1 TXT 1 x:true", "TXT 3 a,b:false", `TXT 3 a\x5cb:false`, "SPF 6 v=spf1:true"}
	if !reflect.DeepEqual(rec.plain, want) {
		t.Errorf("plain flags\n%q\nwant\n%q", rec.plain, want)
	}
	if len(rec.notPlain) > 0 {
		t.Errorf("texts marked plain are not: %q", rec.notPlain)
	}
}

func TestAnalyzerZeekRules(t *testing.T) {
	nx := new(mdns.Msg)
	nx.SetQuestion("nope.example.", mdns.TypeAAAA)
	nx.Id = 0
	nx.Response, nx.Rcode, nx.Authoritative = true, mdns.RcodeNameError, true
	refused := new(mdns.Msg)
	refused.Id = 9
	refused.Response, refused.Rcode = true, mdns.RcodeRefused
	iq := query(t, 3, "a.example", 1)
	iq[2] |= 1 << 3 // opcode 1: inverse query
	many := query(t, 4, "a.example", 1)
	many[5] = 26 // qdcount 26
	trunc := pack(t, 5, "t.example", 1, "t.example. 7 IN A 192.0.2.5", "t.example. 7 IN A 192.0.2.6")
	trunc = trunc[:len(trunc)-2]
	noNS := pack(t, 6, "n.example", 1, `n.example. 7 IN HINFO "a" "b"`)

	tests := []struct {
		name string
		resp netip.AddrPort
		evs  []event
		want []rec
	}{
		{"rejected: question and no records", server, []event{{1, parsers.Resp, packMsg(t, nx)}}, []rec{
			{TS: 1, HasReply: true, Query: "-", QClass: -1, QType: -1, RCode: 3, Rejected: true}}},
		{"rejected: rcode and no question", server, []event{{1, parsers.Resp, packMsg(t, refused)}}, []rec{
			{TS: 1, HasReply: true, ID: 9, Query: "-", QClass: -1, QType: -1, RCode: 5, Rejected: true}}},
		{"inverse query not logged", server, []event{{1, parsers.Orig, iq}}, nil},
		{"more than 25 questions: header only", server, []event{{1, parsers.Orig, many}}, []rec{
			{TS: 1, HasQuery: true, ID: 4, Query: "-", QClass: -1, QType: -1, RCode: -1}}},
		{"truncated reply keeps the answers before the damage", server, []event{{1, parsers.Resp, trunc}}, []rec{
			{TS: 1, HasReply: true, ID: 5, Query: "t.example", QClass: -1, QType: -1, RCode: 0, RA: true, Answers: "192.0.2.5[7]"}}},
		{"records Zeek ignores leave AA, RA and query unset", server, []event{{1, parsers.Resp, noNS}}, []rec{
			{TS: 1, HasReply: true, ID: 6, Query: "-", QClass: -1, QType: -1, RCode: 0}}},
		{"multicast: every message alone", netip.MustParseAddrPort("224.0.0.251:5353"), []event{
			{1, parsers.Orig, query(t, 0, "a.local", 1)}, {2, parsers.Resp, pack(t, 0, "a.local", 1, "a.local. 120 IN A 192.0.2.2")}}, []rec{
			{TS: 1, HasQuery: true, Query: "a.local", QClass: 1, QType: 1, RCode: -1, RD: true},
			{TS: 2, HasReply: true, Query: "a.local", QClass: -1, QType: -1, RCode: 0, RA: true, Answers: "192.0.2.2[120]"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			a := New(&r)
			run(t, a, parsers.Block, tt.resp, tt.evs...)
			if !reflect.DeepEqual(r.got, tt.want) {
				t.Errorf("got\n%+v\nwant\n%+v", r.got, tt.want)
			}
		})
	}
}

// TestDynamicUpdate follows Zeek's dynamic-update baseline.
func TestDynamicUpdate(t *testing.T) {
	m := new(mdns.Msg)
	m.SetUpdate("stratolab.org.")
	m.Id = 47952
	cname, _ := mdns.NewRR("nwin2.stratolab.org. 0 IN CNAME x.")
	m.RRsetNotUsed([]mdns.RR{cname})
	aaaa, _ := mdns.NewRR("nwin2.stratolab.org. 0 IN AAAA ::1")
	a4, _ := mdns.NewRR("nwin2.stratolab.org. 0 IN A 192.0.2.1")
	m.RemoveRRset([]mdns.RR{aaaa, a4})
	add, _ := mdns.NewRR("nwin2.stratolab.org. 1200 IN A 192.168.1.106")
	m.Insert([]mdns.RR{add})
	q := packMsg(t, m)
	m.Response, m.Rcode = true, mdns.RcodeRefused
	r := packMsg(t, m)
	var rc recorder
	run(t, New(&rc), parsers.Block, server, event{1000, parsers.Orig, q}, event{2000, parsers.Resp, r})
	want := []rec{{TS: 1000, RTT: 1000, HasRTT: true, HasQuery: true, HasReply: true, ID: 47952, Query: "nwin2.stratolab.org",
		QClass: -1, QType: -1, RCode: 5, Opcode: 5,
		Answers: "pre: NoRRSet CNAME nwin2.stratolab.org[0],del: RRSet AAAA[0],del: RRSet A[0],add: A nwin2.stratolab.org 192.168.1.106[1200]"}}
	if !reflect.DeepEqual(rc.got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", rc.got, want)
	}
}

func TestPendingBounds(t *testing.T) {
	var r recorder
	a := New(&r, WithMaxPending(5, 3))
	var evs []event
	for i := 0; i < 20; i++ {
		evs = append(evs, event{int64(i + 1), parsers.Orig, query(t, uint16(i), "a.example", 1)})
	}
	for i := 0; i < 10; i++ { // one id, many retransmissions
		evs = append(evs, event{100, parsers.Orig, query(t, 999, "b.example", 1)})
	}
	for i := 0; i < 12; i++ { // unsolicited replies, bounded the same way
		evs = append(evs, event{200, parsers.Resp, pack(t, uint16(1000+i), "c.example", 1, "c.example. 1 IN A 192.0.2.1")})
	}
	run(t, a, parsers.Block, server, evs...)
	if len(r.got) != 42 {
		t.Fatalf("%d transactions, want every message once (42)", len(r.got))
	}
	st := a.Stats()
	if st.Evicted < 20 || st.Unanswered != 30 || st.Unsolicited != 12 {
		t.Errorf("stats %+v", st)
	}
}

// conversation is a DNS over TCP exchange: queries and replies of several
// kinds, one of them split by the test at any byte.
func conversation(t testing.TB) (orig, resp []byte) {
	for i := 0; i < 6; i++ {
		orig = append(orig, frame(query(t, uint16(i), fmt.Sprintf("h%d.example", i), 1))...)
		resp = append(resp, frame(pack(t, uint16(i), fmt.Sprintf("h%d.example", i), 1,
			fmt.Sprintf("h%d.example. 60 IN CNAME c%d.example.", i, i), fmt.Sprintf("c%d.example. 60 IN A 192.0.2.%d", i, i)))...)
	}
	return orig, resp
}

func feedChunks(p parsers.Parser, data []byte, cuts []int) {
	prev := 0
	for _, c := range cuts {
		p.Feed(data[prev:c])
		prev = c
	}
	p.Feed(data[prev:])
}

// TestStreamChunking: any chunking of the streams gives what feeding them
// whole gives.
func TestStreamChunking(t *testing.T) {
	orig, resp := conversation(t)
	analyze := func(oc, rc []int) []rec {
		var r recorder
		a := New(&r)
		c := &parsers.Conn{Kind: parsers.Stream, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoTCP}}
		cp := a.Open(c)
		feedChunks(cp.Orig(), orig, oc)
		feedChunks(cp.Resp(), resp, rc)
		cp.Orig().Finish()
		cp.Resp().Finish()
		cp.Close()
		if st := a.Stats(); st.Malformed+st.Short+st.StreamPartial != 0 {
			t.Fatalf("stats %+v", st)
		}
		return r.got
	}
	whole := analyze(nil, nil)
	if len(whole) != 6 {
		t.Fatalf("%d transactions, want 6", len(whole))
	}
	every := func(n int) (cuts []int) {
		for i := 1; i < n; i++ {
			cuts = append(cuts, i)
		}
		return cuts
	}
	if got := analyze(every(len(orig)), every(len(resp))); !reflect.DeepEqual(got, whole) {
		t.Errorf("byte by byte: %+v", got)
	}
	rng := rand.New(rand.NewSource(1))
	random := func(n int) (cuts []int) {
		for c := rng.Intn(8); c < n; c += 1 + rng.Intn(40) {
			cuts = append(cuts, c)
		}
		return cuts
	}
	for i := 0; i < 300; i++ {
		oc, rc := random(len(orig)), random(len(resp))
		if got := analyze(oc, rc); !reflect.DeepEqual(got, whole) {
			t.Fatalf("cuts %v / %v: got %+v", oc, rc, got)
		}
	}
}

func TestStreamGaps(t *testing.T) {
	orig, resp := conversation(t)
	first := 2 + int(resp[0])<<8 | int(resp[1])
	tests := []struct {
		name              string
		gapAt, gap        int // in resp
		replies           int // transactions with a reply
		resyncs, abandons int64
	}{
		{"inside the first reply", 20, 10, 5, 1, 0},
		{"rest of the first reply", 20, first - 20, 5, 1, 0},
		{"across a length prefix", first - 1, 3, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			a := New(&r)
			cp := a.Open(&parsers.Conn{Kind: parsers.Stream, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoTCP}})
			cp.Orig().Feed(orig)
			cp.Resp().Feed(resp[:tt.gapAt])
			cp.Resp().Gap(tt.gap)
			cp.Resp().Feed(resp[tt.gapAt+tt.gap:])
			cp.Close()
			replies := 0
			for _, x := range r.got {
				if x.HasReply {
					replies++
				}
			}
			st := a.Stats()
			if len(r.got) != 6 || replies != tt.replies || st.StreamResyncs != tt.resyncs || st.StreamAbandoned != tt.abandons {
				t.Errorf("%d transactions, %d replies, stats %+v", len(r.got), replies, st)
			}
		})
	}
}

// TestSteadyStateAllocs: once warm, a connection's query and reply, their
// pairing and reporting, and the connection itself allocate nothing.
func TestSteadyStateAllocs(t *testing.T) {
	q := query(t, 77, "www.example.com", 1)
	r := pack(t, 77, "www.example.com", 1, "www.example.com. 60 IN CNAME edge.example.net.",
		"edge.example.net. 60 IN A 192.0.2.1", "edge.example.net. 60 IN A 192.0.2.2")
	fq := len(frame(q))
	framed := append(frame(q), frame(r)[:30]...)
	rest := frame(r)[30:]
	a := New(discard{})
	conn := &parsers.Conn{Kind: parsers.Block, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoUDP}}
	tcp := &parsers.Conn{Kind: parsers.Stream, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoTCP}}
	cycle := func() {
		cp := a.Open(conn)
		cp.Orig().Feed(q)
		cp.Resp().Feed(r)
		cp.Orig().Feed(q) // unanswered, reported at Close
		cp.Close()
		cp = a.Open(tcp)
		cp.Orig().Feed(framed[:fq])
		cp.Resp().Feed(framed[fq:])
		cp.Resp().Feed(rest)
		cp.Close()
	}
	if n := testing.AllocsPerRun(200, cycle); n != 0 {
		t.Errorf("%v allocations per cycle, want 0", n)
	}
	if st := a.Stats(); st.Transactions == 0 || st.Malformed != 0 {
		t.Errorf("stats %+v", st)
	}
}

type discard struct{}

func (discard) DNS(*parsers.Conn, *Transaction) {}

// joinedRecorder keeps the joined answers of the transactions it gets.
type joinedRecorder struct {
	recorder
	joined []string
}

func (r *joinedRecorder) DNS(c *parsers.Conn, tx *Transaction) {
	r.recorder.DNS(c, tx)
	r.joined = append(r.joined, fmt.Sprintf("%q", tx.AnswersJoined()))
}

// TestAnswersJoined checks that the answers of the fast paths are joined,
// and that those of other records, answers not plain or reserved, and
// answers after a query name taken from an answer are not.
func TestAnswersJoined(t *testing.T) {
	q := query(t, 7, "www.example.com", mdns.TypeA)
	joined := pack(t, 7, "www.example.com", mdns.TypeA,
		"www.example.com. 60 IN CNAME c.example.",
		"c.example. 60 IN A 192.0.2.1",
		"c.example. 60 IN A 192.0.2.2",
		"c.example. 60 IN AAAA 2001:db8::1")
	notPlain := pack(t, 8, "www.example.com", mdns.TypeA,
		"www.example.com. 60 IN CNAME a\\,b.example.",
		"a\\,b.example. 60 IN A 192.0.2.1")
	other := pack(t, 9, "www.example.com", mdns.TypeMX, "www.example.com. 60 IN MX 10 mail.example.")
	reserved := pack(t, 10, "www.example.com", mdns.TypeA, "www.example.com. 60 IN CNAME -.")
	var rec joinedRecorder
	run(t, New(&rec), parsers.Block, server,
		event{1, parsers.Orig, q}, event{2, parsers.Resp, joined},
		event{3, parsers.Orig, query(t, 8, "www.example.com", mdns.TypeA)}, event{4, parsers.Resp, notPlain},
		event{5, parsers.Orig, query(t, 9, "www.example.com", mdns.TypeMX)}, event{6, parsers.Resp, other},
		event{7, parsers.Orig, query(t, 10, "www.example.com", mdns.TypeA)}, event{8, parsers.Resp, reserved},
		event{9, parsers.Resp, joined})
	want := []string{`"c.example,192.0.2.1,192.0.2.2,2001:db8::1"`, `""`, `""`, `""`, `""`}
	if !reflect.DeepEqual(rec.joined, want) {
		t.Errorf("joined answers\n%v\nwant\n%v", rec.joined, want)
	}
	if len(rec.notPlain) > 0 {
		t.Errorf("%q", rec.notPlain)
	}
}

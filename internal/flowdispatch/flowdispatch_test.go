package flowdispatch

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// recAnalyzer is a test analyzer that logs every call it gets.
type recAnalyzer struct {
	name  string
	log   *[]string
	opens int
}

type recConn struct {
	a          *recAnalyzer
	id         string
	c          *parsers.Conn
	orig, resp recParser
}

type recParser struct {
	rc   *recConn
	side string
}

func (a *recAnalyzer) Open(c *parsers.Conn) parsers.ConnParser {
	a.opens++
	rc := &recConn{a: a, id: fmt.Sprintf("%s#%d", a.name, a.opens), c: c}
	rc.orig, rc.resp = recParser{rc, "orig"}, recParser{rc, "resp"}
	kind := map[parsers.Kind]string{parsers.Stream: "stream", parsers.Block: "block"}[c.Kind]
	*a.log = append(*a.log, fmt.Sprintf("open %s %s %s", rc.id, c.ID, kind))
	return rc
}

func (rc *recConn) Orig() parsers.Parser { return &rc.orig }
func (rc *recConn) Resp() parsers.Parser { return &rc.resp }
func (rc *recConn) Close()               { rc.logf("close") }
func (rc *recConn) logf(format string, args ...any) {
	*rc.a.log = append(*rc.a.log, rc.id+" "+fmt.Sprintf(format, args...))
}

func (p *recParser) Feed(data []byte) { p.rc.logf("%s feed %q ts=%d", p.side, data, p.rc.c.TS) }
func (p *recParser) Gap(n int)        { p.rc.logf("%s gap %d", p.side, n) }
func (p *recParser) Finish()          { p.rc.logf("%s finish", p.side) }

// newTestDispatcher returns a dispatcher over a registry of HTTP on 80/tcp
// and DNS on 53/udp whose analyzers log into the returned slice.
func newTestDispatcher(t *testing.T, cfg Config) (*Dispatcher, *parsers.Registry, *[]string) {
	t.Helper()
	log := new([]string)
	httpA, dnsA := &recAnalyzer{name: "http", log: log}, &recAnalyzer{name: "dns", log: log}
	r := parsers.NewRegistry()
	must(t, r.Register("HTTP::Requests", httpA, parsers.Orig))
	must(t, r.Register("HTTP::Replies", httpA, parsers.Resp))
	must(t, r.Register("DNS::Message", dnsA, parsers.Both))
	must(t, r.SetPort(parsers.Port{Num: 80, Proto: flow.ProtoTCP}, "HTTP::Requests", "HTTP::Replies"))
	must(t, r.SetPort(parsers.Port{Num: 53, Proto: flow.ProtoUDP}, "DNS::Message", "DNS::Message"))
	return New(r, cfg), r, log
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// nopAnalyzer parses nothing; it lets the allocation test measure the
// dispatcher alone.
type nopAnalyzer struct{}
type nopConn struct{}

func (nopAnalyzer) Open(*parsers.Conn) parsers.ConnParser { return nopConn{} }
func (nopConn) Orig() parsers.Parser                      { return nopConn{} }
func (nopConn) Resp() parsers.Parser                      { return nopConn{} }
func (nopConn) Close()                                    {}
func (nopConn) Feed([]byte)                               {}
func (nopConn) Gap(int)                                   {}
func (nopConn) Finish()                                   {}

func TestDataDoesNotAllocate(t *testing.T) {
	reg := parsers.NewRegistry()
	must(t, reg.Register("Nop", nopAnalyzer{}, parsers.Both))
	must(t, reg.SetPort(parsers.Port{Num: 80, Proto: flow.ProtoTCP}, "Nop", "Nop"))
	d := New(reg, Config{})
	c := &flow.Conn{Key: flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1"), Resp: netip.MustParseAddrPort("10.0.0.2:80"), Proto: flow.ProtoTCP}}
	d.BeginConn(c)
	data := []byte("data")
	allocs := testing.AllocsPerRun(1000, func() {
		d.Data(c, flow.Orig, data)
		d.Data(c, flow.Resp, data)
	})
	if allocs != 0 {
		t.Errorf("Data events allocate %v times per run, want 0", allocs)
	}
}

func TestFlowHandler(t *testing.T) {
	d, reg, log := newTestDispatcher(t, Config{})
	must(t, reg.AddAlias("8080/tcp%orig=HTTP::Requests"))
	ap := netip.MustParseAddrPort
	httpConn := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1234"), Resp: ap("10.0.0.2:80"), Proto: flow.ProtoTCP}, Start: 100, Last: 100}
	dnsConn := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:999"), Resp: ap("10.0.0.3:53"), Proto: flow.ProtoUDP}, Start: 150, Last: 150}
	halfConn := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1235"), Resp: ap("10.0.0.2:8080"), Proto: flow.ProtoTCP}, Start: 160, Last: 160}
	otherConn := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1236"), Resp: ap("10.0.0.2:22"), Proto: flow.ProtoTCP}, Start: 170, Last: 170}

	d.BeginConn(httpConn)
	d.BeginConn(dnsConn)
	d.BeginConn(halfConn)
	d.BeginConn(otherConn)
	httpConn.Last = 200
	d.Data(httpConn, flow.Orig, []byte("GET"))
	httpConn.Last = 300
	d.Data(httpConn, flow.Resp, []byte("200"))
	d.Gap(httpConn, flow.Resp, 4)
	dnsConn.Last = 400
	d.Data(dnsConn, flow.Resp, []byte("r"))
	d.Data(halfConn, flow.Orig, []byte("o"))
	d.Data(halfConn, flow.Resp, []byte("skipped"))
	d.Data(otherConn, flow.Orig, []byte("skipped"))
	d.EndConn(otherConn)
	d.EndConn(httpConn)
	d.EndConn(dnsConn)
	d.End() // halfConn: the engine never ended it

	uid := parsers.UIDFromKey(httpConn.Key, 100, 0)
	want := []string{
		"open http#1 " + uid + " stream",
		"open dns#1 " + parsers.UIDFromKey(dnsConn.Key, 150, 0) + " block",
		"open http#2 " + parsers.UIDFromKey(halfConn.Key, 160, 0) + " stream",
		`http#1 orig feed "GET" ts=200`,
		`http#1 resp feed "200" ts=300`,
		"http#1 resp gap 4",
		`dns#1 resp feed "r" ts=400`,
		`http#2 orig feed "o" ts=160`,
		"http#1 orig finish",
		"http#1 resp finish",
		"http#1 close",
		"dns#1 orig finish",
		"dns#1 resp finish",
		"dns#1 close",
		"http#2 orig finish",
		"http#2 close",
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(want, "\n"))
	}
	if httpConn.User != nil || halfConn.User != nil {
		t.Error("EndConn or End left the dispatcher's state in flow.Conn.User")
	}
	d.EndConn(halfConn) // the engine ending it after End: nothing happens
	if got := len(*log); got != len(want) {
		t.Errorf("EndConn after End made %d more calls", got-len(want))
	}
	if s := d.Stats(); s.SkippedFlows != 3 || s.Flows != 5 || s.SkippedBytes != 14 || s.Bytes != 8 {
		t.Errorf("stats = %+v", s)
	}
}

// TestDispatcherUIDFunc checks that Config.UID names the connections.
func TestUIDFunc(t *testing.T) {
	var asked []*flow.Conn
	d, _, log := newTestDispatcher(t, Config{UID: func(c *flow.Conn) string {
		asked = append(asked, c)
		return "Cgiven"
	}})
	c := &flow.Conn{Key: flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:80"), Proto: flow.ProtoTCP}}
	d.BeginConn(c)
	d.EndConn(c)
	if len(asked) != 1 || asked[0] != c || len(*log) == 0 || (*log)[0] != "open http#1 Cgiven stream" {
		t.Errorf("UID asked for %v; calls %q", asked, *log)
	}
}

// TestDispatcherEndStream checks that a direction's end finishes its parser
// once, before the connection's end finishes the other.
func TestEndStream(t *testing.T) {
	d, _, log := newTestDispatcher(t, Config{})
	ap := netip.MustParseAddrPort
	c := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1234"), Resp: ap("10.0.0.2:80"), Proto: flow.ProtoTCP}, Start: 100, Last: 100}
	d.BeginConn(c)
	d.Data(c, flow.Orig, []byte("GET"))
	c.Last = 200
	d.EndStream(c, flow.Orig)
	d.EndStream(c, flow.Orig) // a second time: nothing
	d.Data(c, flow.Orig, []byte("late"))
	d.Data(c, flow.Resp, []byte("200"))
	d.EndConn(c)
	want := []string{
		"open http#1 " + parsers.UIDFromKey(c.Key, 100, 0) + " stream",
		`http#1 orig feed "GET" ts=100`,
		"http#1 orig finish",
		`http#1 resp feed "200" ts=200`,
		"http#1 resp finish",
		"http#1 close",
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(want, "\n"))
	}
}

func TestAttach(t *testing.T) {
	d, reg, log := newTestDispatcher(t, Config{})
	ap := netip.MustParseAddrPort
	c := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1234"), Resp: ap("10.0.0.2:7777"), Proto: flow.ProtoTCP}, Start: 100, Last: 100}
	d.BeginConn(c)
	if d.Parsing(c) {
		t.Fatal("a connection to a port without parsers is parsed")
	}
	d.Data(c, flow.Orig, []byte("early"))
	if err := d.Attach(c, "HTTP::Requests", "nonsense"); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Fatalf("Attach with an unknown name: %v", err)
	}
	if err := d.Attach(c, "HTTP::Requests", "HTTP::Replies"); err != nil {
		t.Fatal(err)
	}
	if !d.Parsing(c) {
		t.Fatal("Attach did not give the connection parsers")
	}
	if err := d.Attach(c, "HTTP::Requests", "HTTP::Replies"); err == nil {
		t.Error("a second Attach succeeded")
	}
	d.Data(c, flow.Orig, []byte("GET"))
	d.EndConn(c)
	want := []string{
		"open http#1 " + parsers.UIDFromKey(c.Key, 100, 0) + " stream",
		`http#1 orig feed "GET" ts=100`,
		"http#1 orig finish",
		"http#1 resp finish",
		"http#1 close",
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(want, "\n"))
	}
	if s := d.Stats(); s.SkippedFlows != 0 || s.Flows != 2 || s.SkippedBytes != 5 {
		t.Errorf("stats = %+v", s)
	}

	reg.RemovePort(parsers.Port{Num: 80, Proto: flow.ProtoTCP})
	c80 := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1235"), Resp: ap("10.0.0.2:80"), Proto: flow.ProtoTCP}, Start: 200, Last: 200}
	d.BeginConn(c80)
	if d.Parsing(c80) {
		t.Error("a removed port is still parsed")
	}
}

// TestState checks a connection whose parsers its driver keeps: its
// events reach them as through the flow.Handler methods, and the
// Dispatcher keeps nothing of it.
func TestState(t *testing.T) {
	d, _, log := newTestDispatcher(t, Config{})
	ap := netip.MustParseAddrPort
	c := &flow.Conn{Key: flow.Key{Orig: ap("10.0.0.1:1234"), Resp: ap("10.0.0.2:80"), Proto: flow.ProtoTCP}, Start: 100, Last: 100}
	var s State
	e, ok := d.Entries(c)
	d.OpenIn(&s, c, e, ok, "Cgiven")
	d.DataIn(&s, c, flow.Orig, []byte("GET"))
	c.Last = 200
	d.GapIn(&s, c, flow.Resp, 4)
	d.EndStreamIn(&s, c, flow.Orig)
	d.EndConnIn(&s, c)
	d.End() // nothing left open
	want := []string{
		"open http#1 Cgiven stream",
		`http#1 orig feed "GET" ts=100`,
		"http#1 resp gap 4",
		"http#1 orig finish",
		"http#1 resp finish",
		"http#1 close",
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(want, "\n"))
	}
	if c.User != nil {
		t.Error("OpenIn set flow.Conn.User")
	}

	var zero State
	d.DataIn(&zero, c, flow.Orig, []byte("skipped"))
	if got, err := d.AttachIn(&zero, c, "HTTP::Requests", ""); err != nil || !got {
		t.Fatalf("AttachIn = %v, %v", got, err)
	}
	d.DataIn(&zero, c, flow.Orig, []byte("x"))
	d.DataIn(&zero, c, flow.Resp, []byte("unparsed"))
	if st := d.Stats(); st.Flows != 3 || st.SkippedFlows != 1 || st.SkippedBytes != 15 || st.Bytes != 4 {
		t.Errorf("stats = %+v", st)
	}
}

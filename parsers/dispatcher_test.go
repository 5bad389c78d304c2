package parsers

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/flow"
)

// recAnalyzer is a test analyzer that logs every call it gets.
type recAnalyzer struct {
	name  string
	log   *[]string
	opens int
}

type recConn struct {
	a    *recAnalyzer
	id   string
	c    *Conn
	orig recParser
	resp recParser
	fed  int
}

type recParser struct {
	rc   *recConn
	side string
}

func (a *recAnalyzer) logf(format string, args ...any) {
	if a.log != nil {
		*a.log = append(*a.log, fmt.Sprintf(format, args...))
	}
}

func (a *recAnalyzer) Open(c *Conn) ConnParser {
	a.opens++
	rc := &recConn{a: a, id: fmt.Sprintf("%s#%d", a.name, a.opens), c: c}
	rc.orig = recParser{rc, "orig"}
	rc.resp = recParser{rc, "resp"}
	kind := "stream"
	if c.Kind == Block {
		kind = "block"
	}
	a.logf("open %s %s %s", rc.id, c.ID, kind)
	return rc
}

// Buffered implements Buffering: the test parsers hold every byte fed.
func (rc *recConn) Held() int { return rc.fed }

func (rc *recConn) Orig() Parser { return &rc.orig }
func (rc *recConn) Resp() Parser { return &rc.resp }
func (rc *recConn) Close()       { rc.a.logf("%s close", rc.id) }

func (p *recParser) Feed(data []byte) {
	p.rc.fed += len(data)
	if p.rc.c.TS != 0 {
		p.rc.a.logf("%s %s feed %q ts=%d", p.rc.id, p.side, data, p.rc.c.TS)
		return
	}
	p.rc.a.logf("%s %s feed %q", p.rc.id, p.side, data)
}
func (p *recParser) Gap(n int) { p.rc.a.logf("%s %s gap %d", p.rc.id, p.side, n) }
func (p *recParser) Finish()   { p.rc.a.logf("%s %s finish", p.rc.id, p.side) }

// newTestDispatcher returns a dispatcher over the test registry whose
// analyzers log into the returned slice.
func newTestDispatcher(t *testing.T, cfg Config) (*Dispatcher, *Registry, *[]string) {
	t.Helper()
	reg, httpA, dnsA := testRegistry(t)
	log := new([]string)
	httpA.log, dnsA.log = log, log
	d, err := NewDispatcher(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, reg, log
}

// records builds batch records from a compact text form: one command per
// line as in a batch file, with @data's payload after the size instead of on
// the next line.
func records(t *testing.T, text string) []batch.Record {
	t.Helper()
	var out []batch.Record
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		r := batch.Record{Line: i + 2, ID: []byte(f[1])}
		kind := func(s string) batch.Kind {
			if s == "block" {
				return batch.Block
			}
			return batch.Stream
		}
		switch f[0] {
		case "@begin-conn":
			r.Op, r.Kind = batch.BeginConn, kind(f[2])
			r.OrigID, r.OrigParser, r.RespID, r.RespParser = []byte(f[3]), []byte(f[4]), []byte(f[5]), []byte(f[6])
			r.DerivedFlowIDs = f[3] == f[1]+"-orig" && f[5] == f[1]+"-resp"
		case "@begin-flow":
			r.Op, r.Kind, r.Parser = batch.BeginFlow, kind(f[2]), []byte(f[3])
		case "@data":
			r.Op = batch.Data
			r.Data = []byte(strings.Join(f[2:], " "))
		case "@gap":
			r.Op = batch.Gap
			fmt.Sscan(f[2], &r.Size)
		case "@end-flow":
			r.Op = batch.EndFlow
		case "@end-conn":
			r.Op = batch.EndConn
		default:
			t.Fatalf("bad test record %q", line)
		}
		out = append(out, r)
	}
	return out
}

func dispatchAll(t *testing.T, d *Dispatcher, recs []batch.Record) {
	t.Helper()
	for i := range recs {
		if err := d.Record(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	d.End()
}

func TestDispatcher(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		input string
		want  []string
	}{{
		name: "conn",
		input: `
@begin-conn c1 stream c1-orig 80/tcp%orig c1-resp 80/tcp%resp
@data c1-orig GET
@data c1-resp 200
@gap c1-resp 10
@end-flow c1-orig
@data c1-orig late
@end-conn c1
@data c1-resp late`,
		want: []string{
			"open http#1 c1 stream",
			`http#1 orig feed "GET"`,
			`http#1 resp feed "200"`,
			"http#1 resp gap 10",
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
		},
	}, {
		name: "begin-conn twice is ignored",
		input: `
@begin-conn c1 stream c1-orig HTTP::Requests c1-resp HTTP::Replies
@data c1-orig a
@begin-conn c1 stream c1-orig HTTP::Requests c1-resp HTTP::Replies
@data c1-orig b
@end-conn c1`,
		want: []string{
			"open http#1 c1 stream",
			`http#1 orig feed "a"`,
			`http#1 orig feed "b"`,
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
		},
	}, {
		name: "begin-flow alone",
		input: `
@begin-flow f1 block 53/udp
@data f1 q1
@gap f1 0
@end-flow f1
@data f1 late`,
		want: []string{
			"open dns#1 f1 block",
			`dns#1 orig feed "q1"`,
			"dns#1 orig finish",
			"dns#1 close",
		},
	}, {
		name: "begin-flow of the reply side",
		input: `
@begin-flow f1 stream HTTP::Replies
@data f1 x`,
		want: []string{
			"open http#1 f1 stream",
			`http#1 resp feed "x"`,
			"http#1 resp finish",
			"http#1 close",
		},
	}, {
		name: "DNS::Message reads the side of its flow",
		input: `
@begin-conn u block u-orig 53/udp%orig u-resp 53/udp%resp
@data u-resp r1
@data u-orig q1
@end-flow u-orig
@end-flow u-resp`,
		want: []string{
			"open dns#1 u block",
			`dns#1 resp feed "r1"`,
			`dns#1 orig feed "q1"`,
			"dns#1 orig finish",
			"dns#1 resp finish",
			"dns#1 close",
		},
	}, {
		name: "same side twice opens two parsers",
		input: `
@begin-conn c stream c-a HTTP::Requests c-b HTTP::Requests
@data c-a a
@data c-b b
@end-conn c`,
		want: []string{
			"open http#1 c stream",
			"open http#2 c stream",
			`http#1 orig feed "a"`,
			`http#2 orig feed "b"`,
			"http#1 orig finish",
			"http#2 orig finish",
			"http#1 close",
			"http#2 close",
		},
	}, {
		name: "unknown parsers are skipped with their data",
		input: `
@begin-flow f1 stream Nope::X
@data f1 skipped
@begin-conn c stream c-o 80/tcp%orig c-r 9999/tcp%resp
@data c-o skipped
@data c-r skipped
@data never-begun skipped
@gap f1 5
@end-flow f1
@end-conn c`,
		want: nil,
	}, {
		name: "the fallback parses unknown flows",
		cfg:  Config{Fallback: "HTTP::Requests"},
		input: `
@begin-flow f1 stream Nope::X
@data f1 raw`,
		want: []string{
			"open http#1 f1 stream",
			`http#1 orig feed "raw"`,
			"http#1 orig finish",
			"http#1 close",
		},
	}, {
		name: "end of input closes in order of opening",
		input: `
@begin-conn c1 stream c1-o 80/tcp%orig c1-r 80/tcp%resp
@begin-flow f2 block 53/udp
@begin-conn c3 stream c3-o 80/tcp%orig c3-r 80/tcp%resp
@end-flow c3-r
@data c1-o x`,
		want: []string{
			"open http#1 c1 stream",
			"open dns#1 f2 block",
			"open http#2 c3 stream",
			"http#2 resp finish",
			`http#1 orig feed "x"`,
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
			"dns#1 orig finish",
			"dns#1 close",
			"http#2 orig finish",
			"http#2 close",
		},
	}, {
		name: "both flows ended closes the connection",
		input: `
@begin-conn c1 stream c1-o 80/tcp%orig c1-r 80/tcp%resp
@end-flow c1-r
@end-flow c1-o
@end-conn c1
@begin-conn c1 stream c1-o 80/tcp%orig c1-r 80/tcp%resp`,
		want: []string{
			"open http#1 c1 stream",
			"http#1 resp finish",
			"http#1 orig finish",
			"http#1 close",
			"open http#2 c1 stream",
			"http#2 orig finish",
			"http#2 resp finish",
			"http#2 close",
		},
	}, {
		// c1's flow ids are dropped when it closes and their memory
		// serves c3's: x-o must still lead to c2.
		name: "a flow id taken over by a later connection",
		input: `
@begin-conn c1 stream x-o 80/tcp%orig c1-r 80/tcp%resp
@begin-conn c2 stream x-o 80/tcp%orig c2-r 80/tcp%resp
@end-conn c1
@begin-conn c3 stream yy 80/tcp%orig c3-r 80/tcp%resp
@data x-o a
@end-conn c2`,
		want: []string{
			"open http#1 c1 stream",
			"open http#2 c2 stream",
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
			"open http#3 c3 stream",
			`http#2 orig feed "a"`,
			"http#2 orig finish",
			"http#2 resp finish",
			"http#2 close",
			"http#3 orig finish",
			"http#3 resp finish",
			"http#3 close",
		},
	}, {
		// c1's flow ids derive from its id; c2 takes one over.
		name: "a derived flow id taken over by a later connection",
		input: `
@begin-conn c1 stream c1-orig 80/tcp%orig c1-resp 80/tcp%resp
@begin-conn c2 stream c1-orig 80/tcp%orig c2-r 80/tcp%resp
@data c1-orig a
@end-conn c2
@data c1-orig b
@data c1-resp c
@end-conn c1`,
		want: []string{
			"open http#1 c1 stream",
			"open http#2 c2 stream",
			"http#2 orig feed \"a\"",
			"http#2 orig finish",
			"http#2 resp finish",
			"http#2 close",
			"http#1 resp feed \"c\"",
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
		},
	}, {
		name: "derived flow ids take over others",
		input: `
@begin-conn c1 stream c2-orig 80/tcp%orig c1-r 80/tcp%resp
@begin-flow c2-resp stream 80/tcp%resp
@begin-conn c2 stream c2-orig 80/tcp%orig c2-resp 80/tcp%resp
@data c2-orig a
@data c2-resp b
@end-conn c2
@data c2-orig c
@data c2-resp d
@end-conn c1`,
		want: []string{
			"open http#1 c1 stream",
			"open http#2 c2-resp stream",
			"open http#3 c2 stream",
			"http#3 orig feed \"a\"",
			"http#3 resp feed \"b\"",
			"http#3 orig finish",
			"http#3 resp finish",
			"http#3 close",
			"http#1 orig finish",
			"http#1 resp finish",
			"http#1 close",
			"http#2 resp finish",
			"http#2 close",
		},
	}, {
		name: "derived flow ids end one by one",
		input: `
@begin-conn c1 block c1-orig 53/udp%orig c1-resp 53/udp%resp
@begin-flow c1-orig block 53/udp
@data c1-orig a
@end-flow c1-orig
@data c1-orig b
@data c1-resp c
@gap c1-resp 5
@end-flow c1-resp
@data c1-resp d
@begin-flow c1-resp block 53/udp
@data c1-resp e`,
		want: []string{
			"open dns#1 c1 block",
			"dns#1 orig feed \"a\"",
			"dns#1 orig finish",
			"dns#1 resp feed \"c\"",
			"dns#1 resp gap 5",
			"dns#1 resp finish",
			"dns#1 close",
			"open dns#2 c1-resp block",
			"dns#2 orig feed \"e\"",
			"dns#2 orig finish",
			"dns#2 close",
		},
	}, {
		// The connection the latest derived id led to is remembered: it
		// must be forgotten when it closes, its state serving the next.
		name: "derived flow ids of closed and reopened connections",
		input: `
@begin-conn c1 block c1-orig 53/udp%orig c1-resp 53/udp%resp
@data c1-orig a
@end-conn c1
@data c1-orig b
@begin-conn c2 block c2-orig 53/udp%orig c2-resp 53/udp%resp
@data c1-orig c
@data c2-resp d
@begin-conn c1 block c1-orig 53/udp%orig c1-resp 53/udp%resp
@data c2-orig e
@data c1-resp f
@end-flow c1-resp
@data c1-resp g
@data c1-orig h`,
		want: []string{
			"open dns#1 c1 block",
			"dns#1 orig feed \"a\"",
			"dns#1 orig finish",
			"dns#1 resp finish",
			"dns#1 close",
			"open dns#2 c2 block",
			"dns#2 resp feed \"d\"",
			"open dns#3 c1 block",
			"dns#2 orig feed \"e\"",
			"dns#3 resp feed \"f\"",
			"dns#3 resp finish",
			"dns#3 orig feed \"h\"",
			"dns#2 orig finish",
			"dns#2 resp finish",
			"dns#2 close",
			"dns#3 orig finish",
			"dns#3 close",
		},
	}, {
		// The connection idle the longest is compared first: one of a
		// @begin-flow with the id is not the connection of the id.
		name: "end-conn of an id that a begin-flow has too",
		cfg:  Config{MaxConns: 10},
		input: `
@begin-flow c1 block 53/udp
@begin-conn c1 block c1-orig 53/udp%orig c1-resp 53/udp%resp
@end-conn c1
@data c1 x`,
		want: []string{
			"open dns#1 c1 block",
			"open dns#2 c1 block",
			"dns#2 orig finish",
			"dns#2 resp finish",
			"dns#2 close",
			`dns#1 orig feed "x"`,
			"dns#1 orig finish",
			"dns#1 close",
		},
	}, {
		// Ids of eight bytes and more are remembered by their middle
		// bytes too; a closed connection must be forgotten there.
		name: "derived flow ids of interleaved connections",
		input: `
@begin-conn 10.0.0.1-1-10.0.0.9-53-udp block 10.0.0.1-1-10.0.0.9-53-udp-orig 53/udp%orig 10.0.0.1-1-10.0.0.9-53-udp-resp 53/udp%resp
@begin-conn 10.0.0.2-2-10.0.0.9-53-udp block 10.0.0.2-2-10.0.0.9-53-udp-orig 53/udp%orig 10.0.0.2-2-10.0.0.9-53-udp-resp 53/udp%resp
@data 10.0.0.1-1-10.0.0.9-53-udp-orig a
@data 10.0.0.2-2-10.0.0.9-53-udp-orig b
@end-conn 10.0.0.1-1-10.0.0.9-53-udp
@data 10.0.0.1-1-10.0.0.9-53-udp-resp c
@begin-flow 10.0.0.1-1-10.0.0.9-53-udp-resp block 53/udp
@data 10.0.0.2-2-10.0.0.9-53-udp-resp d`,
		want: []string{
			"open dns#1 10.0.0.1-1-10.0.0.9-53-udp block",
			"open dns#2 10.0.0.2-2-10.0.0.9-53-udp block",
			"dns#1 orig feed \"a\"",
			"dns#2 orig feed \"b\"",
			"dns#1 orig finish",
			"dns#1 resp finish",
			"dns#1 close",
			"open dns#3 10.0.0.1-1-10.0.0.9-53-udp-resp block",
			"dns#2 resp feed \"d\"",
			"dns#2 orig finish",
			"dns#2 resp finish",
			"dns#2 close",
			"dns#3 orig finish",
			"dns#3 close",
		},
	}}
	for _, tt := range tests {
		// Records as a Reader makes them, and as built by hand,
		// without DerivedFlowIDs.
		for _, read := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/read=%v", tt.name, read), func(t *testing.T) {
				d, _, log := newTestDispatcher(t, tt.cfg)
				recs := records(t, tt.input)
				if !read {
					for i := range recs {
						recs[i].DerivedFlowIDs = false
					}
				}
				dispatchAll(t, d, recs)
				if !slices.Equal(*log, tt.want) {
					t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(tt.want, "\n"))
				}
			})
		}
	}
}

func TestDispatcherStats(t *testing.T) {
	d, _, _ := newTestDispatcher(t, Config{})
	dispatchAll(t, d, records(t, `
@begin-conn c1 stream c1-o 80/tcp%orig c1-r 80/tcp%resp
@begin-conn c1 stream c1-o 80/tcp%orig c1-r 80/tcp%resp
@begin-flow f2 stream Nope
@data c1-o abc
@data f2 xy
@gap c1-r 7
@end-conn c1`))
	want := Stats{Records: 7, Bytes: 3, SkippedBytes: 2, Flows: 2, SkippedFlows: 1, Conns: 1, DuplicateConns: 1, Gaps: 1, GapBytes: 7}
	if got := d.Stats(); got != want {
		t.Errorf("Stats() = %+v\nwant %+v", got, want)
	}
}

func TestDispatcherConnContext(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noUIDs bool
		keyUse KeyUse
	}{
		{"uids", false, KeyAll},
		{"no uids", true, KeyAll},
		{"responder's key", false, KeyResp},
		{"no key", false, KeyNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, reg, _ := newTestDispatcher(t, Config{UIDSeed: 3, NoUIDs: tc.noUIDs, KeyUse: tc.keyUse})
			var got []*Conn
			capture := &ctxAnalyzer{conns: &got}
			must(t, reg.Register("Ctx", capture, Both))
			dispatchAll(t, d, records(t, `
@begin-conn 10.0.0.1-1234-10.0.0.2-80-tcp stream a Ctx b Ctx
@data a x
@begin-flow cid1 block Ctx
@data cid1 x`))
			if len(got) != 2 {
				t.Fatalf("got %d feeds, want 2", len(got))
			}
			uid := func(id string) string {
				if tc.noUIDs {
					return ""
				}
				return UIDFromID(id, 3)
			}
			c := got[0]
			wantKey := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:80"), Proto: flow.ProtoTCP}
			switch tc.keyUse {
			case KeyResp:
				wantKey.Orig = netip.AddrPort{}
			case KeyNone:
				wantKey = flow.Key{}
			}
			if c.ID != "10.0.0.1-1234-10.0.0.2-80-tcp" || c.Key != wantKey || c.Kind != Stream || c.UID != uid(c.ID) || c.TS != 0 {
				t.Errorf("conn = %+v", c)
			}
			c = got[1]
			if c.ID != "cid1" || c.Key != (flow.Key{}) || c.Kind != Block || c.UID != uid("cid1") {
				t.Errorf("flow conn = %+v", c)
			}
		})
	}
}

type ctxAnalyzer struct{ conns *[]*Conn }

type ctxParser struct {
	a *ctxAnalyzer
	c *Conn
}

func (a *ctxAnalyzer) Open(c *Conn) ConnParser { return &ctxParser{a, c} }
func (p *ctxParser) Orig() Parser              { return p }
func (p *ctxParser) Resp() Parser              { return p }
func (p *ctxParser) Close()                    {}
func (p *ctxParser) Gap(int)                   {}
func (p *ctxParser) Finish()                   {}
func (p *ctxParser) Feed([]byte) {
	c := *p.c
	*p.a.conns = append(*p.a.conns, &c)
}

func TestDispatcherUnknownOp(t *testing.T) {
	d, _, _ := newTestDispatcher(t, Config{})
	err := d.Record(&batch.Record{Op: 99, Line: 12})
	if err == nil || !strings.Contains(err.Error(), "line 12") {
		t.Errorf("err = %v, want one naming line 12", err)
	}
	if _, err := NewDispatcher(NewRegistry(), Config{Fallback: "Nope"}); err == nil {
		t.Error("NewDispatcher accepted an unknown fallback parser")
	}
}

// nopAnalyzer parses nothing; it lets the allocation test measure the
// dispatcher alone.
type nopAnalyzer struct{}
type nopConn struct{}

func (nopAnalyzer) Open(*Conn) ConnParser { return nopConn{} }
func (nopConn) Orig() Parser              { return nopConn{} }
func (nopConn) Resp() Parser              { return nopConn{} }
func (nopConn) Close()                    {}
func (nopConn) Feed([]byte)               {}
func (nopConn) Gap(int)                   {}
func (nopConn) Finish()                   {}

func TestDispatcherDataDoesNotAllocate(t *testing.T) {
	reg := NewRegistry()
	must(t, reg.Register("Nop", nopAnalyzer{}, Both))
	d, err := NewDispatcher(reg, Config{})
	must(t, err)
	recs := records(t, `
@begin-conn 10.0.0.1-1234-10.0.0.2-80-tcp stream a Nop b Nop
@data a hello
@data b world
@gap b 3
@data unknown-flow x`)
	for i := range recs {
		must(t, d.Record(&recs[i]))
	}
	hot := recs[1:]
	allocs := testing.AllocsPerRun(1000, func() {
		for i := range hot {
			d.Record(&hot[i])
		}
	})
	if allocs != 0 {
		t.Errorf("dispatching @data/@gap records allocates %v times per run, want 0", allocs)
	}
}

func BenchmarkDispatchData(b *testing.B) {
	reg := NewRegistry()
	if err := reg.Register("Nop", nopAnalyzer{}, Both); err != nil {
		b.Fatal(err)
	}
	d, _ := NewDispatcher(reg, Config{})
	begin := batch.Record{Op: batch.BeginConn, ID: []byte("c"), Kind: batch.Stream, OrigID: []byte("192.168.100.100-54321-10.20.30.40-80-tcp-orig"), OrigParser: []byte("Nop"), RespID: []byte("r"), RespParser: []byte("Nop")}
	d.Record(&begin)
	r := batch.Record{Op: batch.Data, ID: begin.OrigID, Data: make([]byte, 1460)}
	b.SetBytes(int64(len(r.Data)))
	b.ReportAllocs()
	for b.Loop() {
		d.Record(&r)
	}
}

// TestDispatcherCaps fills the caps on open connections and on the bytes
// their parsers hold: the connection idle the longest is ended first (its
// parsers finish and close), its later records are skipped, and the
// counters say so.
// TestDispatcherConnsAllocate checks what connections that open and end
// for ever allocate once their states are reused: only the arena's
// chunks for the ids and uids parsers see, a chunk per some twenty
// connections; their flow ids and the tables make no garbage.
func TestDispatcherConnsAllocate(t *testing.T) {
	reg := NewRegistry()
	must(t, reg.Register("Nop", nopAnalyzer{}, Both))
	d, err := NewDispatcher(reg, Config{})
	must(t, err)
	const perRun, runs = 100, 50
	var text strings.Builder
	for c := range (runs + 2) * perRun {
		cid := fmt.Sprintf("10.0.%d.%d-%d-10.0.0.2-53-udp", c/256%256, c%256, 1024+c)
		fmt.Fprintf(&text, "@begin-conn %[1]s block %[1]s-orig Nop %[1]s-resp Nop\n@data %[1]s-orig q\n@data %[1]s-resp r\n@end-conn %[1]s\n", cid)
	}
	recs := records(t, text.String())
	next := 0
	replay := func() {
		for range perRun * 4 {
			must(t, d.Record(&recs[next]))
			next++
		}
	}
	replay() // the states and tables to reuse
	allocs := testing.AllocsPerRun(runs, replay)
	idBytes := len(recs[0].ID) + maxUIDLen
	if want := float64(perRun*idBytes/idChunkSize + 1); allocs > want {
		t.Errorf("%d connections allocate %v times, want at most %v (arena chunks)", perRun, allocs, want)
	}
}

func TestDispatcherCaps(t *testing.T) {
	for _, tt := range []struct {
		name  string
		cfg   Config
		input string
		want  []string
		stats func(s Stats) bool
	}{{
		name: "connections",
		cfg:  Config{MaxConns: 2},
		input: `
@begin-conn c1 stream c1o 80/tcp%orig c1r 80/tcp%resp
@begin-conn c2 stream c2o 80/tcp%orig c2r 80/tcp%resp
@data c1o a
@begin-conn c3 stream c3o 80/tcp%orig c3r 80/tcp%resp
@data c2o skipped
@data c3o b
@begin-conn c4 stream c4o 80/tcp%orig c4r 80/tcp%resp
@end-conn c2`,
		want: []string{
			"open http#1 c1 stream", "open http#2 c2 stream",
			"http#1 orig feed \"a\"",
			// c2 is idle the longest (c1 got data since).
			"http#2 orig finish", "http#2 resp finish", "http#2 close",
			"open http#3 c3 stream",
			"http#3 orig feed \"b\"",
			"http#1 orig finish", "http#1 resp finish", "http#1 close",
			"open http#4 c4 stream",
			"http#3 orig finish", "http#3 resp finish", "http#3 close",
			"http#4 orig finish", "http#4 resp finish", "http#4 close",
		},
		stats: func(s Stats) bool { return s.EvictedConns == 2 && s.Conns == 4 && s.SkippedBytes == 7 },
	}, {
		// The caps keep the connections in the order they got records;
		// End still ends them in the order they were opened.
		name: "end in opened order",
		cfg:  Config{MaxConns: 10, MaxBuffered: 100},
		input: `
@begin-conn c1 stream c1o 80/tcp%orig c1r 80/tcp%resp
@begin-conn c2 stream c2o 80/tcp%orig c2r 80/tcp%resp
@begin-conn c3 stream c3o 80/tcp%orig c3r 80/tcp%resp
@data c2o b
@data c1o a
@end-conn c3`,
		want: []string{
			"open http#1 c1 stream", "open http#2 c2 stream", "open http#3 c3 stream",
			"http#2 orig feed \"b\"", "http#1 orig feed \"a\"",
			"http#3 orig finish", "http#3 resp finish", "http#3 close",
			"http#1 orig finish", "http#1 resp finish", "http#1 close",
			"http#2 orig finish", "http#2 resp finish", "http#2 close",
		},
		stats: func(s Stats) bool { return s.EvictedConns == 0 && s.Conns == 3 },
	}, {
		name: "buffered bytes",
		cfg:  Config{MaxBuffered: 10},
		input: `
@begin-conn c1 stream c1o 80/tcp%orig c1r 80/tcp%resp
@begin-conn c2 stream c2o 80/tcp%orig c2r 80/tcp%resp
@data c1o aaaa
@data c2o bbbbbb
@data c1o cc
@data c2o skipped
@end-conn c1`,
		want: []string{
			"open http#1 c1 stream", "open http#2 c2 stream",
			"http#1 orig feed \"aaaa\"", "http#2 orig feed \"bbbbbb\"", "http#1 orig feed \"cc\"",
			// 12 bytes held: c2, idle the longest, goes.
			"http#2 orig finish", "http#2 resp finish", "http#2 close",
			"http#1 orig finish", "http#1 resp finish", "http#1 close",
		},
		stats: func(s Stats) bool {
			return s.BufferEvictions == 1 && s.PeakBuffered == 12 && s.Buffered == 0 && s.SkippedBytes == 7
		},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			d, _, log := newTestDispatcher(t, tt.cfg)
			dispatchAll(t, d, records(t, tt.input))
			if !slices.Equal(*log, tt.want) {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(tt.want, "\n"))
			}
			if !tt.stats(d.Stats()) {
				t.Errorf("stats %+v", d.Stats())
			}
		})
	}
}

// TestIDArena checks that the arena's strings are the ids and uids they
// were made from, and never change however many are made after them, a
// garbage collection in between.
func TestIDArena(t *testing.T) {
	var a idArena
	var h idHasher
	h.seed(5)
	const n = 40 * idChunkSize / 32 // many chunks
	ids := make([]string, n)
	held := make([]string, 0, 2*n)
	for i := range ids {
		ids[i] = fmt.Sprintf("10.0.%d.%d-%d-192.0.2.1-53-udp", i/256, i%256, 1024+i)
		if i%97 == 0 {
			ids[i] += strings.Repeat("x", maxArenaID) // too long for the arena
		}
		held = append(held, a.str([]byte(ids[i])), a.uid(&h, ids[i]))
		if i%(n/8) == 0 {
			runtime.GC()
		}
	}
	for i, id := range ids {
		if held[2*i] != id || held[2*i+1] != UIDFromID(id, 5) {
			t.Fatalf("id %d: arena holds %q, %q; want %q, %q", i, held[2*i], held[2*i+1], id, UIDFromID(id, 5))
		}
	}
	if s := a.str(nil); s != "" {
		t.Errorf("str(nil) = %q", s)
	}
}

// TestDispatcherNamesChange checks that the parser names a dispatcher
// remembers follow the registry: an alias added or redirected after the
// dispatcher was made applies to the connections begun after it.
func TestDispatcherNamesChange(t *testing.T) {
	d, reg, _ := newTestDispatcher(t, Config{})
	begin := func(id, orig, resp string) {
		t.Helper()
		recs := records(t, "@begin-conn "+id+" stream "+id+"o "+orig+" "+id+"r "+resp)
		if err := d.Record(&recs[0]); err != nil {
			t.Fatal(err)
		}
	}
	begin("c1", "8080/tcp%orig", "8080/tcp%resp") // unknown names: skipped
	must(t, reg.Alias("8080/tcp%orig", "HTTP::Requests"))
	must(t, reg.Alias("8080/tcp%resp", "HTTP::Replies"))
	begin("c2", "8080/tcp%orig", "8080/tcp%resp")
	must(t, reg.Alias("8080/tcp%resp", "DNS::Message")) // redirected
	begin("c3", "8080/tcp%orig", "8080/tcp%resp")
	if st := d.Stats(); st.Conns != 2 || st.SkippedFlows != 2 {
		t.Fatalf("stats %+v, want 2 connections and 2 skipped flows", st)
	}
	n, _ := d.conns.get(d.conns.hash([]byte("c3")), []byte("c3"))
	if cp := n.Value.b.sides[Resp].cp; cp == n.Value.b.sides[Orig].cp {
		t.Errorf("c3's responder side shares the HTTP parser; the alias now names DNS::Message")
	}
}

// TestDispatcherDispatch checks that Dispatch makes the calls and counts
// that Record makes for each record of a Reader, calls check as often
// as asked, and stops at its error or the Reader's.
func TestDispatcherDispatch(t *testing.T) {
	const file = "!spicy-batch v2\n" +
		"@begin-conn c1 stream c1-orig 80/tcp%orig c1-resp 80/tcp%resp\n" +
		"@begin-flow f2 stream 80/tcp%orig\n" +
		"@data c1-orig 3\nGET\n" +
		"@data f2 2\nxy\n" +
		"@gap c1-resp 7\n" +
		"@end-flow f2\n" +
		"@data c1-resp 3\n200\n" +
		"@end-conn c1\n"
	want, wantLog := func() (Stats, []string) {
		d, _, log := newTestDispatcher(t, Config{})
		r := batch.NewReader(strings.NewReader(file))
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			if err := d.Record(rec); err != nil {
				t.Fatal(err)
			}
		}
		return d.Stats(), *log
	}()
	for _, every := range []int{0, 1, 3, 100} {
		d, _, log := newTestDispatcher(t, Config{})
		checks := 0
		err := d.Dispatch(batch.NewReader(strings.NewReader(file)), every, func() error { checks++; return nil })
		if err != nil {
			t.Fatalf("every %d: Dispatch: %v", every, err)
		}
		if got := d.Stats(); got != want {
			t.Errorf("every %d: Stats() = %+v\nwant %+v", every, got, want)
		}
		if !slices.Equal(*log, wantLog) {
			t.Errorf("every %d: calls\n%s\nwant\n%s", every, strings.Join(*log, "\n"), strings.Join(wantLog, "\n"))
		}
		if wantChecks := int(want.Records) / max(every, 1); every > 0 && checks != wantChecks || every == 0 && checks != 0 {
			t.Errorf("every %d: %d checks, want %d", every, checks, wantChecks)
		}
	}

	stop := fmt.Errorf("stop")
	d, _, _ := newTestDispatcher(t, Config{})
	if err := d.Dispatch(batch.NewReader(strings.NewReader(file)), 2, func() error { return stop }); err != stop {
		t.Errorf("Dispatch with a check that fails = %v, want its error", err)
	}
	if got := d.Stats().Records; got != 2 {
		t.Errorf("Dispatch with a check that fails dispatched %d records, want 2", got)
	}
	var perr *batch.ParseError
	d, _, _ = newTestDispatcher(t, Config{})
	if err := d.Dispatch(batch.NewReader(strings.NewReader(file+"@bogus\n")), 0, nil); !errors.As(err, &perr) || perr.Line != 13 {
		t.Errorf("Dispatch of a malformed file = %v, want a ParseError of line 13", err)
	}
}

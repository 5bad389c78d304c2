package parsers

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/flow"
)

// interopFile opens a sample of Spicy's batch files, or skips the test
// when they are absent.
func interopFile(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join(corpustest.InteropDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func replayFile(t *testing.T, d *Dispatcher, name string) {
	t.Helper()
	r := batch.NewReader(interopFile(t, name))
	r.Name = name
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Record(rec); err != nil {
			t.Fatal(err)
		}
	}
	d.End()
}

// count returns how many logged calls start with prefix.
func count(log []string, prefix string) int {
	n := 0
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func indexOf(log []string, s string) int {
	for i, l := range log {
		if l == s {
			return i
		}
	}
	return -1
}

func TestInteropContext(t *testing.T) {
	// Two connections whose flows share a parsing context
	// (Test::Requests and Test::Replies of one analyzer).
	log := new([]string)
	a := &recAnalyzer{name: "ctx", log: log}
	reg := NewRegistry()
	must(t, reg.Register("Test::Requests", a, Orig))
	must(t, reg.Register("Test::Replies", a, Resp))
	d, _ := NewDispatcher(reg, Config{})
	replayFile(t, d, "context-input.dat")
	l := *log
	if a.opens != 2 || count(l, "open ctx#1 cid1 stream") != 1 || count(l, "open ctx#2 cid2 stream") != 1 {
		t.Fatalf("want one ConnParser per connection:\n%s", strings.Join(l, "\n"))
	}
	for prefix, want := range map[string]int{"ctx#1 orig feed": 4, "ctx#1 resp feed": 4, "ctx#2 orig feed": 2, "ctx#2 resp feed": 2, "ctx#1 close": 1, "ctx#2 close": 1} {
		if got := count(l, prefix); got != want {
			t.Errorf("%q: %d calls, want %d", prefix, got, want)
		}
	}
	// cid1 ends before cid2's last data.
	if indexOf(l, "ctx#1 close") > indexOf(l, `ctx#2 resp feed "`+lastFeed(l, "ctx#2 resp feed ")+`"`) {
		t.Errorf("cid1 closed after cid2's last data:\n%s", strings.Join(l, "\n"))
	}
	if s := d.Stats(); s.Conns != 2 || s.Flows != 4 || s.Bytes != 48 || s.SkippedFlows != 0 {
		t.Errorf("stats %+v", s)
	}
}

func lastFeed(log []string, prefix string) string {
	last := ""
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			last = strings.Trim(strings.TrimPrefix(l, prefix), `"`)
		}
	}
	return last
}

func TestInteropFlows(t *testing.T) {
	for _, tt := range []struct {
		file string
		want []string
	}{{
		file: "spicy-driver-batch.dat",
		want: []string{
			"open port#1 id1 stream", "open mime#1 id2 block",
			`port#1 orig feed "ab"`, `mime#1 orig feed "12"`, `port#1 orig feed "cd"`, `mime#1 orig feed "34"`,
			`port#1 orig feed "ef"`, `mime#1 orig feed "56"`,
			"port#1 orig finish", "port#1 close", "mime#1 orig finish", "mime#1 close",
		},
	}, {
		file: "spicy-driver-batch-gap.dat",
		want: []string{
			"open port#1 id1 block", "open mime#1 id2 block",
			"port#1 orig gap 1024", `port#1 orig feed "AB"`, `mime#1 orig feed "ab"`, `port#1 orig feed "CD"`,
			`mime#1 orig feed "cd"`, "mime#1 orig gap 1024", `port#1 orig feed "EF"`, `mime#1 orig feed "ef"`,
			"port#1 orig finish", "port#1 close", "mime#1 orig finish", "mime#1 close",
		},
	}} {
		t.Run(tt.file, func(t *testing.T) {
			log := new([]string)
			port := &recAnalyzer{name: "port", log: log}
			mime := &recAnalyzer{name: "mime", log: log}
			reg := NewRegistry()
			must(t, reg.Register("Test::X", port, Both))
			must(t, reg.Register("Test::Y", mime, Both))
			must(t, reg.Alias("80/tcp", "Test::X"))
			must(t, reg.Alias("application/foo", "Test::Y"))
			d, _ := NewDispatcher(reg, Config{})
			replayFile(t, d, tt.file)
			if strings.Join(*log, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(*log, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestInteropTFTP(t *testing.T) {
	// A Zeek recording of a TFTP read request: no parser is registered
	// for 69/udp or 50618/udp, so everything is skipped, unless a fallback
	// parser is given.
	d, _, log := newTestDispatcher(t, Config{})
	replayFile(t, d, "tftp_rrq.dat")
	if s := d.Stats(); len(*log) != 0 || s.SkippedFlows != 4 || s.Flows != 0 || s.SkippedBytes == 0 {
		t.Errorf("calls %v, stats %+v; want everything skipped", *log, s)
	}

	var conns []*Conn
	reg := NewRegistry()
	must(t, reg.Register("Ctx", &ctxAnalyzer{conns: &conns}, Both))
	d, _ = NewDispatcher(reg, Config{Fallback: "Ctx"})
	replayFile(t, d, "tftp_rrq.dat")
	if len(conns) != 99 {
		t.Errorf("%d datagrams fed, want 99", len(conns))
	}
	want := flow.Key{Orig: netip.MustParseAddrPort("192.168.0.253:50618"), Resp: netip.MustParseAddrPort("192.168.0.10:69"), Proto: flow.ProtoUDP}
	if len(conns) > 0 && (conns[0].Key != want || conns[0].Kind != Block) {
		t.Errorf("first connection %+v, want key %v and block kind", conns[0], want)
	}
}

package analyzer

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// synFlood passes n bare SYNs from distinct clients to port to a, each a
// new connection that never carries data.
func synFlood(t *testing.T, a *Analyzer, n int, port uint16) {
	for i := range n {
		f := seg(fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff), "10.255.0.1", uint16(1024+i%60000), port, uint32(i), 0, "S", "")
		p := &capture.Packet{TS: t0 + int64(i)*1000, Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}
		if err := a.Frame(p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoParserStateBeforeData checks that a connection gets its parsers
// (or dynamic protocol detection) only once it carries data: a flood of
// bare SYNs to HTTP's port and to another port costs the flow engine's
// connection and conn.log's state only. The HTTP parsers of each SYN used
// to take 2.8 KB.
func TestNoParserStateBeforeData(t *testing.T) {
	const n = 20000
	for _, port := range []uint16{80, 8081} {
		a, err := New(Config{Parsers: builtin.Native}, Output{Conn: io.Discard, Logs: map[string]io.Writer{"http": io.Discard, "dns": io.Discard}})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		synFlood(t, a, n, port)
		runtime.GC()
		runtime.ReadMemStats(&after)
		perConn := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
		t.Logf("port %d: %d bytes of heap per bare SYN", port, perConn)
		if d := a.Stats().Dispatch; d.Flows != 0 {
			t.Errorf("port %d: %d flows opened with parsers for connections without data", port, d.Flows)
		}
		// The flow engine's connection, its table slot and conn.log's
		// state (uid included) take about 1 KB.
		if perConn > 1500 {
			t.Errorf("port %d: %d bytes of heap per bare SYN, want at most 1500", port, perConn)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConnMemory checks that what the analyzer counts against the flow
// engine's budget for a connection covers the heap it takes: a budget that
// undercounts does not hold.
func TestConnMemory(t *testing.T) {
	const n = 5000
	for _, tc := range []struct {
		name   string
		frames func(i int) [][]byte
	}{
		{"http", func(i int) [][]byte {
			c := fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
			return [][]byte{
				seg(c, "10.255.0.1", 40000, 80, 100, 0, "S", ""),
				seg(c, "10.255.0.1", 40000, 80, 101, 0, "PA", "GET / HTTP/1.1\r\nHost: a\r\n"),
			}
		}},
		{"dns", func(i int) [][]byte {
			c := fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
			return [][]byte{udp(c, "10.255.0.53", 40000, 53, innerDNS())}
		}},
	} {
		a, err := New(Config{Parsers: builtin.Native}, Output{Conn: io.Discard, Logs: map[string]io.Writer{"http": io.Discard, "dns": io.Discard}})
		if err != nil {
			t.Fatal(err)
		}
		var frames [][]byte
		for i := range n {
			frames = append(frames, tc.frames(i)...)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i, f := range frames {
			if err := a.Frame(&capture.Packet{TS: t0 + int64(i)*1000, Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
		counted := a.Stats().Flow.Memory / n
		t.Logf("%s: %d bytes of heap per connection, %d counted", tc.name, heap, counted)
		if heap > counted {
			t.Errorf("%s: %d bytes of heap per connection, but only %d counted against the budget", tc.name, heap, counted)
		}
		runtime.KeepAlive(frames)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPartialLinesBudget opens connections that each send a long request
// line without its end, all at once: the parsers' line buffers count
// against the memory budget, and the connections idle longest are evicted
// to keep within it. Nothing counted them before.
func TestPartialLinesBudget(t *testing.T) {
	const conns, lineLen, mss, budget = 400, 32 << 10, 1448, 8 << 20
	a, err := New(Config{Parsers: builtin.Native, Flow: flow.Config{MaxMemory: budget}},
		Output{Conn: io.Discard, Logs: map[string]io.Writer{"http": io.Discard, "dns": io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	ts := t0
	frame := func(f []byte) {
		ts += 1000
		if err := a.Frame(&capture.Packet{TS: ts, Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(i int) string { return fmt.Sprintf("10.1.%d.%d", i>>8&0xff, i&0xff) }
	line := "GET /" + strings.Repeat("a", mss-5)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for off := 0; off < lineLen; off += mss {
		for i := range conns {
			frame(seg(cli(i), "10.255.0.1", 40000, 80, uint32(101+off), 1, "PA", line[:mss]))
			if off == 0 {
				line = strings.Repeat("a", mss)
			}
		}
		line = strings.Repeat("a", mss)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := a.Stats().Flow
	if st.PeakMemory > budget+streamParserCost+64<<10 {
		t.Errorf("peak memory counted %d, above the budget %d", st.PeakMemory, budget)
	}
	if st.MemoryEvictions == 0 {
		t.Errorf("%d connections with %d-byte partial lines within a %d-byte budget: no eviction", conns, lineLen, budget)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 2*budget {
		t.Errorf("the heap grew by %d bytes, more than twice the budget %d", grown, budget)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
}

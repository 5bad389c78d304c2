package http

import (
	"runtime"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// TestHeld checks that a connection reports the buffer a request line
// split across chunks takes, and that a closed connection's state does not
// keep a buffer grown to the line limit for the next one.
func TestHeld(t *testing.T) {
	a := New(&countSink{})
	cp := a.Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
	h, ok := cp.(parsers.Holder)
	if !ok {
		t.Fatal("the HTTP ConnParser is no parsers.Holder")
	}
	cp.Orig().Feed([]byte("GET /"))
	chunk := []byte(strings.Repeat("a", 1000))
	for range 40 {
		cp.Orig().Feed(chunk)
	}
	if got := h.Held(); got < 40_000 {
		t.Errorf("Held = %d after 40 KB of a request line, want at least 40000", got)
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	next := a.Open(&parsers.Conn{ID: "d", Kind: parsers.Stream})
	if got := next.(parsers.Holder).Held(); got > maxKeptBuffer*4 {
		t.Errorf("a new connection's state holds %d bytes, want at most %d", got, maxKeptBuffer*4)
	}
}

// TestClosedKeepsLittle closes connections whose records took long
// fields: the states on the free list must not keep those buffers (their
// Transactions pointed into them too).
func TestClosedKeepsLittle(t *testing.T) {
	long := strings.Repeat("a", 60_000)
	for _, tc := range []struct{ name, req string }{
		{"uri", "GET /" + long + " HTTP/1.1\r\n\r\n"},
		{"user-agent", "GET / HTTP/1.1\r\nUser-Agent: " + long + "\r\n\r\n"},
		{"authorization", "GET / HTTP/1.1\r\nAuthorization: Basic " + long + "\r\n\r\n"},
		{"proxied", "GET / HTTP/1.1\r\nVia: " + long + "\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const conns = 200
			a := New(&countSink{})
			line := []byte(tc.req)
			cps := make([]parsers.ConnParser, conns)
			for i := range cps {
				cps[i] = a.Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
				cps[i].Orig().Feed(line)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for _, cp := range cps {
				cp.Orig().Finish()
				cp.Resp().Finish()
				cp.Close()
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc) + conns*60_000; kept > conns*8<<10 {
				t.Errorf("closed connections keep %d bytes each, want at most %d", kept/conns, 8<<10)
			}
			runtime.KeepAlive(a)
		})
	}
}

// TestLongLinesReuseBuffers: connections one after another whose replies
// hold lines, split across chunks, that outgrow the buffer a closed state
// keeps (a multipart body is read as lines) take the large buffers earlier
// connections left instead of allocating their own.
func TestLongLinesReuseBuffers(t *testing.T) {
	a := New(&countSink{})
	req := []byte("GET / HTTP/1.1\r\n\r\n")
	head := []byte("HTTP/1.1 200 OK\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\r\n")
	piece := []byte(strings.Repeat("a", 1000))
	c := &parsers.Conn{ID: "c", Kind: parsers.Stream}
	conn := func() {
		cp := a.Open(c)
		cp.Orig().Feed(req)
		cp.Resp().Feed(head)
		for range 12 {
			cp.Resp().Feed(piece)
		}
		cp.Orig().Finish()
		cp.Resp().Finish()
		cp.Close()
	}
	conn()
	if n := testing.AllocsPerRun(50, conn); n != 0 {
		t.Errorf("%v allocations per connection, want 0", n)
	}
}

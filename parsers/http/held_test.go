package http

import (
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

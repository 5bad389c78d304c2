package http

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// countSink counts transactions and the bytes of a few fields, touching
// them so that the compiler cannot drop the work; it allocates nothing.
type countSink struct {
	n, bytes int
}

func (s *countSink) HTTP(_ *parsers.Conn, tx *Transaction) {
	s.n++
	s.bytes += len(tx.Method) + len(tx.URI) + len(tx.Host) + len(tx.UserAgent) + len(tx.StatusMsg)
}

// allocWorkload is one connection's traffic: pipelined requests with
// headers, a chunked request, replies with Content-Length, chunked bodies,
// a 100 Continue, gzip, and Basic authentication, fed in uneven chunks.
var allocWorkload = [][2]string{
	{"GET /a?x=%41 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Mozilla/5.0 (X11)\r\nReferer: http://r/\r\nAccept: */*\r\n\r\nGET /b HTTP/1.1\r\nHost: example.com\r\nAuthorization: Basic dXNlcjpwYXNz\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n", ""},
	{"POST /c HTTP/1.1\r\nHost: example.com\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", ""},
	{"", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nContent-Type: text/html\r\n\r\n0123456789HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n"},
	{"lo\r\n0\r\n\r\n", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Encoding: gzip\r\nContent-Length: 28\r\n\r\n"},
	{"", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\xcb\x48\xcd\xc9\xc9\x57\xc8\x40\x27\x01\xe3\x51\x3d\x8d\x17\x00\x00\x00"},
}

// allocSteps is allocWorkload as byte slices, so that feeding it converts
// nothing.
var allocSteps = func() (steps [][2][]byte) {
	for _, s := range allocWorkload {
		steps = append(steps, [2][]byte{[]byte(s[0]), []byte(s[1])})
	}
	return steps
}()

func feedWorkload(a *Analyzer, conn *parsers.Conn) {
	cp := a.Open(conn)
	for _, step := range allocSteps {
		for dir, p := range [2]parsers.Parser{cp.Orig(), cp.Resp()} {
			// Uneven chunks, so that lines get split and carried over.
			for b := step[dir]; len(b) > 0; {
				n := min(len(b), 37)
				p.Feed(b[:n])
				b = b[n:]
			}
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
}

// TestNoAllocations proves that, once warmed up, a connection with its
// transactions costs no allocation: connection state comes from the free
// list and every buffer is reused.
func TestNoAllocations(t *testing.T) {
	s := &countSink{}
	a := New(s)
	conn := &parsers.Conn{ID: "c", Kind: parsers.Stream}
	// The workload as separate byte slices, built once.
	for range 3 {
		feedWorkload(a, conn)
	}
	if s.n != 3*3 {
		t.Fatalf("warm-up reported %d transactions, want %d", s.n, 3*3)
	}
	allocs := testing.AllocsPerRun(100, func() { feedWorkload(a, conn) })
	if allocs != 0 {
		t.Errorf("%v allocations per connection of 3 transactions, want 0", allocs)
	}
}

// TestNoAllocationsPerTransaction runs many transactions through one long
// connection.
func TestNoAllocationsPerTransaction(t *testing.T) {
	s := &countSink{}
	a := New(s)
	conn := &parsers.Conn{ID: "c", Kind: parsers.Stream}
	cp := a.Open(conn)
	reqs := []byte("GET /index.html HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test\r\n\r\n" +
		"POST /form HTTP/1.1\r\nHost: example.com\r\nContent-Length: 4\r\n\r\nabcd")
	reps := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" +
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	round := func() {
		cp.Orig().Feed(reqs[:30])
		cp.Orig().Feed(reqs[30:])
		cp.Resp().Feed(reps[:50])
		cp.Resp().Feed(reps[50:])
	}
	for range 10 {
		round()
	}
	allocs := testing.AllocsPerRun(1000, round)
	if allocs != 0 {
		t.Errorf("%v allocations per 2 transactions, want 0", allocs)
	}
	cp.Close()
	if s.n != 2*(10+1001) {
		t.Errorf("reported %d transactions, want %d", s.n, 2*(10+1001))
	}
}

// TestNoAllocationsInflating runs replies with compressed bodies in dynamic
// blocks, whose code tables are borrowed for the body, through one
// connection: one whole, one cut short by its Content-Length and one
// corrupt; every way a stream ends gives the tables back.
func TestNoAllocationsInflating(t *testing.T) {
	z := compressed(t, "gzip", 6, sample(rand.New(rand.NewPCG(17, 18)), 20000))
	bad := append([]byte(nil), z...)
	bad[len(bad)/2] ^= 0x55
	reply := func(body []byte, length int) []byte {
		return fmt.Appendf(nil, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", length, body[:length])
	}
	reps := [][]byte{reply(z, len(z)), reply(z, len(z)/3), reply(bad, len(bad))}
	req := []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	s := &countSink{}
	a := New(s)
	cp := a.Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
	round := func() {
		for i, rep := range reps {
			cp.Orig().Feed(req)
			for p := rep; len(p) > 0; p = p[min(1460, len(p)):] {
				cp.Resp().Feed(p[:min(1460, len(p))])
			}
			if n := len(a.tables.free); n != 1 {
				t.Fatalf("after reply %d: %d code tables in the pool, want the one all replies share", i, n)
			}
		}
	}
	for range 3 {
		round()
	}
	if allocs := testing.AllocsPerRun(100, round); allocs != 0 {
		t.Errorf("%v allocations per 3 compressed replies, want 0", allocs)
	}
	cp.Close()
}

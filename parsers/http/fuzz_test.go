package http

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// Fuzz targets. Seed corpora live in testdata/fuzz/<Target>/; run one with
//
//	go test -run '^$' -fuzz '^FuzzRequests$' -fuzztime 60s ./parsers/http

// checkSink checks every reported transaction for invariants that hold
// whatever the input.
type checkSink struct {
	t     *testing.T
	lines []string
	limit int
}

func (s *checkSink) HTTP(_ *parsers.Conn, tx *Transaction) {
	if tx.Depth < 1 || tx.RequestBodyLen < 0 || tx.ResponseBodyLen < 0 {
		s.t.Fatalf("bad transaction: depth %d, body lengths %d/%d", tx.Depth, tx.RequestBodyLen, tx.ResponseBodyLen)
	}
	for _, f := range [][]byte{tx.Method, tx.URI, tx.Host, tx.Referrer, tx.UserAgent, tx.Origin, tx.StatusMsg, tx.InfoMsg} {
		if len(f) > s.limit {
			s.t.Fatalf("a field of %d bytes, above the limit of %d", len(f), s.limit)
		}
	}
	s.lines = append(s.lines, formatTx(tx))
}

// fuzzLimits keeps lines short so that the fuzzer reaches the limits.
var fuzzLimits = WithLimits(300, 2000)

func fuzzRun(t *testing.T, events []event, opts ...Option) []string {
	s := &checkSink{t: t, limit: 65536 + 300}
	a := New(s, append([]Option{fuzzLimits}, opts...)...)
	runOn(a, events)
	return s.lines
}

// FuzzRequests feeds arbitrary bytes as the client side of a connection
// whose server answers every request with a short reply.
func FuzzRequests(f *testing.F) {
	for _, tt := range parseTests {
		var b strings.Builder
		for _, e := range tt.conv {
			if !e.resp {
				b.WriteString(e.data)
			}
		}
		f.Add([]byte(b.String()))
	}
	reply := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	f.Fuzz(func(t *testing.T, data []byte) {
		half := len(data) / 2
		fuzzRun(t, conv(
			req(string(data[:half])), rep(reply), req(string(data[half:])), rep(reply+reply),
			reqFin(), repFin(),
		))
	})
}

// FuzzReplies feeds arbitrary bytes as the server side of a connection
// with a few pipelined requests.
func FuzzReplies(f *testing.F) {
	for _, tt := range parseTests {
		var b strings.Builder
		for _, e := range tt.conv {
			if e.resp {
				b.WriteString(e.data)
			}
		}
		f.Add([]byte(b.String()))
	}
	requests := "GET /a HTTP/1.1\r\nHost: h\r\n\r\nHEAD /b HTTP/1.1\r\n\r\nPOST /c HTTP/1.1\r\nContent-Length: 1\r\n\r\nx"
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRun(t, conv(req(requests), rep(string(data)), repFin(), reqFin()))
	})
}

// fuzzConversation turns fuzz input into a conversation: pieces separated
// by 0xff alternate between client and server; a piece starting with 0xfe
// is a gap as long as the piece.
func fuzzConversation(data []byte) []event {
	var out []event
	for i, p := range bytes.Split(data, []byte{0xff}) {
		e := event{resp: i%2 == 1}
		if len(p) > 0 && p[0] == 0xfe {
			e.gap = len(p)
		} else {
			e.data = string(p)
		}
		out = append(out, e)
	}
	return append(out, bothFin()...)
}

// FuzzChunking checks that feeding a conversation in pieces of random
// sizes reports the same transactions as feeding each part whole.
func FuzzChunking(f *testing.F) {
	for _, tc := range chunkingCases() {
		var pieces [][]byte
		for _, e := range tc.conv {
			if e.fin {
				continue
			}
			dir := 0
			if e.resp {
				dir = 1
			}
			for len(pieces)%2 != dir {
				pieces = append(pieces, nil) // an empty piece keeps the direction
			}
			if e.gap > 0 {
				pieces = append(pieces, append([]byte{0xfe}, make([]byte, e.gap-1)...))
			} else {
				pieces = append(pieces, []byte(e.data))
			}
		}
		b := bytes.Join(pieces, []byte{0xff})
		f.Add(b, uint64(len(b)))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		events := fuzzConversation(data)
		for _, opts := range [][]Option{nil, {WithGapPolicy(StopOnGap), WithDPD(false)}} {
			want := fuzzRun(t, events, opts...)
			rng := rand.New(rand.NewPCG(seed, seed>>1))
			got := fuzzRun(t, rechunk(events, func() int { return 1 + rng.IntN(16) }), opts...)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("chunked:\n%q\nwhole:\n%q", got, want)
			}
		}
	})
}

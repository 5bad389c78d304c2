package http

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// rechunk splits every data event into pieces whose sizes next returns,
// keeping the order of events and directions.
func rechunk(events []event, next func() int) []event {
	var out []event
	for _, e := range events {
		if e.fin || e.gap > 0 || len(e.data) == 0 {
			out = append(out, e)
			continue
		}
		for s := e.data; len(s) > 0; {
			n := min(max(next(), 1), len(s))
			out = append(out, event{resp: e.resp, data: s[:n]})
			s = s[n:]
		}
	}
	return out
}

// chunkingCases are the conversations the property is checked on: every
// table test plus streams that stress line ends and bodies at chunk edges.
func chunkingCases() []struct {
	name string
	conv []event
	opts []Option
} {
	var cases []struct {
		name string
		conv []event
		opts []Option
	}
	for _, tt := range parseTests {
		cases = append(cases, struct {
			name string
			conv []event
			opts []Option
		}{tt.name, tt.conv, tt.opts})
	}
	extra := map[string][]event{
		"crlf everywhere": conv(
			req("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"),
			rep("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
		),
		"cr only and lf only": conv(
			req("GET /a HTTP/1.1\rHost: x\r\rGET /b HTTP/1.1\nHost: y\n\n"),
			rep("HTTP/1.1 200 OK\rContent-Length: 1\r\rxHTTP/1.1 200 OK\nContent-Length: 1\n\ny"),
		),
		"folded header over many lines": conv(
			req("GET / HTTP/1.1\r\nUser-Agent: a\r\n b\r\n\tc\r\n d\r\nHost: h\r\n\r\n"),
		),
		"multipart with crlf-only parts": conv(
			req("POST / HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=--x\r\nContent-Length: 200\r\n\r\n"+
				"----x\r\nContent-Disposition: form-data\r\n\r\na\rb\nc\r\n----x\r\nX: y\r\n\r\n\r\n----x--\r\n"),
			rep("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		),
		"lone CR before a request line, then a folded line": conv(
			req("\n\rGET /a HTTP/1.1\n folded\r\nHost: h\r\n\r\n"),
		),
		"multipart ending mid-line": conv(
			req("POST / HTTP/1.1\r\nContent-Type: multipart/form-data; boundary=x\r\nContent-Length: 20\r\n\r\n--x\r\n\r\n0123456789ABCDEFGET /n HTTP/1.1\r\n\r\n"),
		),
	}
	for name, c := range extra {
		cases = append(cases, struct {
			name string
			conv []event
			opts []Option
		}{name, c, nil})
	}
	return cases
}

// TestChunkingInvariance checks that feeding a conversation in chunks of
// every size, and in random chunks, reports the same transactions as
// feeding each piece whole.
func TestChunkingInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range chunkingCases() {
		t.Run(tc.name, func(t *testing.T) {
			want, _ := run(tc.conv, tc.opts...)
			longest := 0
			for _, e := range tc.conv {
				longest = max(longest, len(e.data))
			}
			for size := 1; size <= longest; size++ {
				got, _ := run(rechunk(tc.conv, func() int { return size }), tc.opts...)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("chunks of %d bytes:\n got: %q\nwant: %q", size, got, want)
				}
			}
			for i := range 50 {
				got, _ := run(rechunk(tc.conv, func() int { return 1 + rng.IntN(12) }), tc.opts...)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("random chunking %d:\n got: %q\nwant: %q", i, got, want)
				}
			}
		})
	}
}

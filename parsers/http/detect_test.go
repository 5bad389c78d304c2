package http

import (
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		side  parsers.Role
		start string
		want  parsers.Verdict
	}{
		{parsers.Orig, "", parsers.Undecided},
		{parsers.Orig, " \r\n", parsers.Undecided},
		{parsers.Orig, "GE", parsers.Undecided},
		{parsers.Orig, "GET / HTTP/1.1\r\n", parsers.Matched},
		{parsers.Orig, "\r\n  POST /x", parsers.Matched},
		{parsers.Orig, "MKREDIRECTREF", parsers.Matched},
		{parsers.Orig, "BASELINE-CONT", parsers.Undecided},
		{parsers.Orig, "get / HTTP/1.1", parsers.Failed}, // methods are case-sensitive
		{parsers.Orig, "SSH-2.0-OpenSSH", parsers.Failed},
		{parsers.Resp, "", parsers.Undecided},
		{parsers.Resp, "HTTP/", parsers.Undecided},
		{parsers.Resp, "HTTP/1.1 200 OK", parsers.Matched},
		{parsers.Resp, "http/1.0 404", parsers.Matched},
		{parsers.Resp, "HTTP/x", parsers.Failed},
		{parsers.Resp, " HTTP/1.1", parsers.Failed},
		{parsers.Resp, "SSH-2.0", parsers.Failed},
		{parsers.Resp, "Http/1.0 200", parsers.Matched},
		{parsers.Resp, "HTTPS", parsers.Failed},
		{parsers.Orig, "HTTP/1", parsers.Failed},
		{parsers.Resp, "GET", parsers.Failed},
	} {
		if got := Protocol.Detect(tt.side, []byte(tt.start)); got != tt.want {
			t.Errorf("Detect(%v, %q) = %d, want %d", tt.side, tt.start, got, tt.want)
		}
	}
}

// FuzzDetect checks the DPD signatures: a verdict never changes once
// given as more bytes of the stream arrive.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{"GET / HTTP/1.1\r\n", "  POST", "HTTP/1.1 200 OK", "http/1.0", "SSH-2.0", "BASELINE-CONTROL"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, side := range []parsers.Role{parsers.Orig, parsers.Resp} {
			final := detect(side, b)
			for i := range len(b) {
				if v := detect(side, b[:i]); v != parsers.Undecided && v != final {
					t.Fatalf("side %v: verdict %d on %q, but %d on %q", side, v, b[:i], final, b)
				}
			}
		}
	})
}

package fasthttp

import (
	"slices"
	"strings"
	"testing"
)

// FuzzAnalyzer: no pair of streams makes the analyzer panic or loop, and
// its transactions do not depend on how the streams are cut into chunks
// (whole, or in pieces of 7 bytes, with a gap between two of them when
// gap is set). The seeds are the exchanges of TestAgreesWithNative, also
// committed in testdata/fuzz/FuzzAnalyzer.
func FuzzAnalyzer(f *testing.F) {
	for _, ex := range exchanges {
		var orig, resp strings.Builder
		for _, c := range ex.chunks {
			if c.resp {
				resp.WriteString(c.data)
			} else {
				orig.WriteString(c.data)
			}
		}
		f.Add([]byte(orig.String()), []byte(resp.String()), uint8(0))
	}
	f.Fuzz(func(t *testing.T, orig, resp []byte, gap uint8) {
		chunks := []chunk{{data: string(orig)}, {resp: true, data: string(resp)}}
		if gap > 0 {
			half := len(resp) / 2
			chunks = []chunk{{data: string(orig)}, {resp: true, data: string(resp[:half])}, {resp: true, gap: int(gap)}, {resp: true, data: string(resp[half:])}}
		}
		whole := run(peer, 1<<30, chunks)
		if pieces := run(peer, 7, chunks); !slices.Equal(whole, pieces) {
			t.Fatalf("whole:\n%s\nin pieces:\n%s", strings.Join(whole, "\n"), strings.Join(pieces, "\n"))
		}
	})
}

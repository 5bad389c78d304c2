package std

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// TestChunkingInvariance checks that feeding every case of TestHTTP and
// TestDNS (DNS over TCP, whose length framing crosses chunks) in chunks of
// every size from 1 byte to the longest message, and in random chunks,
// reports the same transactions as feeding each message whole.
func TestChunkingInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func() int { return 1 + rng.IntN(16) }
	for _, tc := range httpCases() {
		t.Run("http/"+tc.name, func(t *testing.T) {
			want, _ := runHTTP(t, tc.ex, 0)
			longest := 0
			for _, m := range tc.ex {
				longest = max(longest, len(m.data))
			}
			for size := 1; size <= longest; size++ {
				got, _ := runHTTP(t, tc.ex, size)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("chunks of %d bytes:\n%+v\nwant\n%+v", size, got, want)
				}
			}
			for i := range 20 {
				got, _ := runHTTPSized(t, tc.ex, random)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("random chunking %d:\n%+v\nwant\n%+v", i, got, want)
				}
			}
		})
	}
	for _, tc := range dnsCases(t) {
		t.Run("dns/"+tc.name, func(t *testing.T) {
			want, _ := runDNS(t, tc.msgs, parsers.Stream, 0)
			longest := 0
			for _, m := range tc.msgs {
				longest = max(longest, 2+len(m.data))
			}
			for size := 1; size <= longest; size++ {
				got, _ := runDNS(t, tc.msgs, parsers.Stream, size)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("chunks of %d bytes:\n%+v\nwant\n%+v", size, got, want)
				}
			}
			for i := range 20 {
				got, _ := runDNSSized(t, tc.msgs, parsers.Stream, random)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("random chunking %d:\n%+v\nwant\n%+v", i, got, want)
				}
			}
		})
	}
}

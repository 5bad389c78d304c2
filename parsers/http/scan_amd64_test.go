//go:build !purego

package http

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScanHeadSSE2 checks the SSE2 scanner on its own, since scanHead
// prefers AVX2 where the processor has it.
func TestScanHeadSSE2(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	buf := make([]byte, 256)
	for n := 16; n <= 200; n++ {
		for range 500 {
			b := randomHead(rng, buf, n)
			maxLine := 1 + rng.IntN(40)
			var got, want [scanLines]uint64
			n := scanHeadSSE2(b, &got, maxLine)
			wn := scanHeadGeneric(b, &want, maxLine)
			if n != wn || !slices.Equal(got[:n], want[:wn]) {
				t.Fatalf("scanHeadSSE2(%q) = %d %x; want %d %x", b, n, got[:n], wn, want[:wn])
			}
		}
	}
}

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
	alphabet := []byte("aZ-:( \t\r\n\r\n\r\n\x00\x1f\x20\x21\x7e\x7f\x80\xff")
	buf := make([]byte, 256)
	for n := 16; n <= 200; n++ {
		for range 500 {
			off := rng.IntN(16)
			b := buf[off : off+n]
			for i := range b {
				switch r := rng.IntN(20); {
				case r < 3:
					b[i] = alphabet[rng.IntN(len(alphabet))]
				case r < 5 && i > 0:
					b[i], b[i-1] = '\n', '\r'
				default:
					b[i] = 'a' + byte(rng.IntN(26))
				}
			}
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

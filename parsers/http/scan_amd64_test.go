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

// TestURICharsAVX2 checks the assembly against uriCharsGeneric for every
// byte value at every position of URIs of 16 to 80 bytes, where the
// processor has AVX2.
func TestURICharsAVX2(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2")
	}
	const chars = "abcXYZ019:/?#[]@!$&'()*+,;=-_.~%"
	for n := 16; n <= 80; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[i%len(chars)]
		}
		if !uriCharsAVX2(b) {
			t.Fatalf("uriCharsAVX2(%q) = false, want true", b)
		}
		for i := range n {
			for c := range 256 {
				keep := b[i]
				b[i] = byte(c)
				if got, want := uriCharsAVX2(b), uriCharsGeneric(b); got != want {
					t.Fatalf("uriCharsAVX2 with %#x at %d of %d bytes = %v, want %v", c, i, n, got, want)
				}
				b[i] = keep
			}
		}
	}
}

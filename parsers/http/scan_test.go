package http

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func checkScanHead(t *testing.T, b []byte, maxLine int) {
	t.Helper()
	var got, want [scanLines]uint64
	n := scanHead(b, &got, maxLine)
	wn := scanHeadGeneric(b, &want, maxLine)
	if n != wn || !slices.Equal(got[:n], want[:wn]) {
		t.Fatalf("scanHead(%q) = %d %x; want %d %x", b, n, got[:n], wn, want[:wn])
	}
}

// TestScanHead checks scanHead (the assembly one on amd64) against
// scanHeadGeneric on random heads made of the bytes that matter, of every
// length up to 200, at every alignment.
func TestScanHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	buf := make([]byte, 256)
	for n := range 201 {
		for range 500 {
			checkScanHead(t, randomHead(rng, buf, n), 1+rng.IntN(40))
		}
	}
	for _, s := range []string{"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", typicalReply(10), browserRequest,
		"a\rb\n", "0123456789abcde\r\n", "0123456789abcdef\r\nx\r\n", "0123456789abcde\r", "\n\n\n"} {
		checkScanHead(t, []byte(s), 30)
	}
}

// randomHead fills n bytes of buf, at a random alignment, with the bytes
// that matter to the scanner (line ends, lone CRs, colons, spaces, control
// and non-ASCII bytes) among letters, and returns them.
func randomHead(rng *rand.Rand, buf []byte, n int) []byte {
	const alphabet = "aZ-:( \t\r\n\r\n\r\n\x00\x1f\x20\x21\x7e\x7f\x80\xff"
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
	return b
}

// FuzzScanHead compares scanHead with scanHeadGeneric on any input.
func FuzzScanHead(f *testing.F) {
	f.Add([]byte("Host: example.com\r\n"), uint8(100))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), uint8(20))
	f.Add([]byte("a\rb\n"), uint8(10))
	f.Fuzz(func(t *testing.T, b []byte, maxLine uint8) { checkScanHead(t, b, int(maxLine)) })
}

// TestLineEnds checks lineEnds against lineEndsGeneric on bytes rich in
// CRs and LFs, at every length around the block sizes.
func TestLineEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("\r\n\r\nab")
	buf := make([]byte, 200)
	for n := range len(buf) {
		for range 200 {
			b := buf[:n]
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if got, want := lineEnds(b), lineEndsGeneric(b); got != want {
				t.Fatalf("lineEnds(%q) = %d; want %d", b, got, want)
			}
		}
	}
}

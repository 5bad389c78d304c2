package http

import (
	"math/rand/v2"
	"testing"
)

// TestScanLine checks scanLine (the assembly one on amd64) against
// scanLineGeneric on random lines of the bytes that matter, of every
// length up to 80, at every alignment.
func TestScanLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte("aZ-:( \t\r\n\x00\x1f\x20\x21\x7e\x7f\x80\xff")
	buf := make([]byte, 128)
	for n := range 81 {
		for range 2000 {
			off := rng.IntN(16)
			b := buf[off : off+n]
			for i := range b {
				if rng.IntN(6) == 0 {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				} else {
					b[i] = 'a' + byte(rng.IntN(26))
				}
			}
			lf, cr, name := scanLine(b)
			wlf, wcr, wname := scanLineGeneric(b)
			if lf != wlf || cr != wcr || name != wname {
				t.Fatalf("scanLine(%q) = %d, %d, %d; want %d, %d, %d", b, lf, cr, name, wlf, wcr, wname)
			}
		}
	}
}

// FuzzScanLine compares scanLine with scanLineGeneric on any input.
func FuzzScanLine(f *testing.F) {
	f.Add([]byte("Host: example.com\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	f.Add([]byte("a\rb\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		lf, cr, name := scanLine(b)
		wlf, wcr, wname := scanLineGeneric(b)
		if lf != wlf || cr != wcr || name != wname {
			t.Fatalf("scanLine(%q) = %d, %d, %d; want %d, %d, %d", b, lf, cr, name, wlf, wcr, wname)
		}
	})
}

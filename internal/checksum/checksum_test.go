package checksum

import (
	"math/rand/v2"
	"testing"
)

// reference is RFC 1071's algorithm, 16 bits at a time.
func reference(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

func TestOf(t *testing.T) {
	// RFC 1071's example: the words 0001 f203 f4f5 f6f7 sum to ddf2.
	if got := Of([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != ^uint16(0xddf2) {
		t.Errorf("RFC 1071 example: %#04x, want %#04x", got, ^uint16(0xddf2))
	}
	// An IPv4 header with its checksum (b861) filled in sums to 0.
	hdr := []byte{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7}
	if got := Of(hdr); got != 0 {
		t.Errorf("a correct IPv4 header: %#04x, want 0", got)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		if n%7 == 0 {
			for i := range b {
				b[i] = 0xff // the largest words: carries everywhere
			}
		}
		if got, want := Of(b), reference(b); got != want {
			t.Errorf("%d bytes: %#04x, want %#04x", n, got, want)
		}
		if half := n / 2 &^ 1; Fold(Add(Add(0, b[:half]), b[half:])) != ^reference(b) {
			t.Errorf("%d bytes summed in two pieces differ", n)
		}
	}
}

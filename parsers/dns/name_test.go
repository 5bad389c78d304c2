package dns

import (
	"math/rand/v2"
	"testing"
)

// TestAppendZeekMatchesLabelByLabel renders random names, compressed and
// not, of printable and other bytes, with AppendZeek's fast path and with
// the label-by-label rendering it must agree with.
func TestAppendZeekMatchesLabelByLabel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
		"aZ09-_ .,\\\x7f\x00\x1f\x80\xff",
	}
	label := func(alpha string) []byte {
		n := 1 + rng.IntN(20)
		if rng.IntN(8) == 0 {
			n = 63
		}
		l := []byte{byte(n)}
		for range n {
			l = append(l, alpha[rng.IntN(len(alpha))])
		}
		return l
	}
	for i := range 20000 {
		alpha := alphabets[i%len(alphabets)]
		msg := make([]byte, HeaderLen)
		var offs []int
		for range 1 + rng.IntN(4) { // names that later ones may point to
			offs = append(offs, len(msg))
			for range rng.IntN(4) {
				msg = append(msg, label(alpha)...)
			}
			if len(offs) > 1 && rng.IntN(2) == 0 {
				ptr := offs[rng.IntN(len(offs)-1)]
				msg = append(msg, 0xc0|byte(ptr>>8), byte(ptr))
			} else {
				msg = append(msg, 0)
			}
		}
		dst := []byte("prefix")
		if rng.IntN(2) == 0 {
			dst = nil
		}
		for _, off := range offs {
			n := Name{msg: msg, off: off}
			got := string(n.AppendZeek(dst))
			want := string(n.appendZeekSlow(dst))
			if got != want {
				t.Fatalf("name at %d of %q: AppendZeek = %q, want %q", off, msg, got, want)
			}
		}
	}
}

// TestAppendZeekTruncated renders names cut off inside a label, whose
// rendering stops where their bytes end.
func TestAppendZeekTruncated(t *testing.T) {
	msg := []byte{3, 'W', 'w', 'w', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0}
	for cut := range len(msg) + 1 {
		n := Name{msg: msg[:cut]}
		if got, want := string(n.AppendZeek(nil)), string(n.appendZeekSlow(nil)); got != want {
			t.Errorf("cut at %d: AppendZeek = %q, want %q", cut, got, want)
		}
	}
}

package http

import (
	"strings"
	"testing"
)

// TestEqualFold checks the word-at-a-time equalFold against the byte loop
// it replaces, for every length up to 24 and a difference (or a change of
// case) at each position.
func TestEqualFold(t *testing.T) {
	bytewise := func(b []byte, lower string) bool {
		if len(b) != len(lower) {
			return false
		}
		for i := range b {
			if b[i]|0x20 != lower[i] {
				return false
			}
		}
		return true
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz-0123456789"
	for n := 0; n <= 24; n++ {
		lower := strings.Repeat(alphabet, 1)[:min(n, len(alphabet))]
		lower += strings.Repeat("k", n-len(lower))
		cases := [][]byte{[]byte(lower), []byte(strings.ToUpper(lower)), []byte(lower + "x")}
		if n > 0 {
			cases = append(cases, []byte(lower[:n-1]))
		}
		for i := range n {
			for _, c := range []byte{'x', '-', '\r', 'Q' &^ 0x20, lower[i] &^ 0x20, lower[i] ^ 1} {
				b := []byte(lower)
				b[i] = c
				cases = append(cases, b)
			}
		}
		for _, b := range cases {
			if got, want := equalFold(b, lower), bytewise(b, lower); got != want {
				t.Errorf("equalFold(%q, %q) = %v, want %v", b, lower, got, want)
			}
		}
	}
}

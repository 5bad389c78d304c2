package ipv4text

import (
	"net/netip"
	"testing"
)

// TestAppendDotted checks every value of every octet position against
// netip, after text already in the buffer, with and without spare room.
func TestAppendDotted(t *testing.T) {
	for pos := range 4 {
		for v := range 256 {
			a := [4]byte{1, 22, 133, 4}
			a[pos] = byte(v)
			want := "x" + netip.AddrFrom4(a).String() + "."
			for _, room := range []int{0, 32} {
				b := append(make([]byte, 0, 1+room), 'x')
				if got := string(AppendDotted(b, a)); got != want {
					t.Fatalf("AppendDotted(%v) with room %d = %q, want %q", a, room, got, want)
				}
			}
		}
	}
}

func TestAppendDottedAllocs(t *testing.T) {
	b := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { b = AppendDotted(b[:0], [4]byte{192, 168, 100, 200}) }); n != 0 {
		t.Errorf("AppendDotted allocates %v times with room in the buffer, want 0", n)
	}
}

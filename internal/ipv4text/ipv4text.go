// Package ipv4text renders IPv4 addresses in dotted decimal from a table
// of the decimal forms of 0 to 255, for the log writers and parsers that
// render one per record: per-digit division (strconv, netip) was most of
// the cost of an address there.
package ipv4text

import (
	"slices"
	"strconv"
)

// AppendDotted appends a in dotted decimal followed by a dot ("10.0.0.1."),
// which the caller drops or overwrites with its separator. The octets are
// written straight into b's spare capacity, with no staging buffer.
func AppendDotted(b []byte, a [4]byte) []byte {
	l := len(b)
	b = slices.Grow(b, Room)
	return b[:l+PutDotted((*[Room]byte)(b[l:l+Room]), a)]
}

// Room is the room PutDotted writes in.
const Room = 20

// PutDotted stores a in dotted decimal followed by a dot in d and returns
// how many bytes that takes; it overwrites the rest of d. It is small
// enough to be inlined (its cost is at the inliner's budget: keep it so),
// for a loop that renders many addresses into room it made once (a call
// per address, and the reloads after it, were much of such a loop's cost).
func PutDotted(d *[Room]byte, a [4]byte) int {
	// Each octet is stored as four bytes, its digits and a dot, of which
	// the first lens[v] count: the next octet overwrites the rest. The
	// offsets are masked to 15 in the window of 20 bytes, so that the
	// stores need no bounds checks (an offset is at most 12).
	*(*[4]byte)(d[:]) = texts[a[0]]
	n := lens[a[0]]
	*(*[4]byte)(d[n&15:]) = texts[a[1]]
	n += lens[a[1]]
	*(*[4]byte)(d[n&15:]) = texts[a[2]]
	n += lens[a[2]]
	*(*[4]byte)(d[n&15:]) = texts[a[3]]
	return n + lens[a[3]]
}

// texts holds, for each byte value, its decimal digits followed by a dot
// (and zeros after), and lens their number with the dot. The lengths are
// ints so that PutDotted needs no conversions, which would take it over
// the inliner's budget.
var texts, lens = octetTables()

func octetTables() (texts [256][4]byte, lens [256]int) {
	for v := range 256 {
		d := strconv.AppendUint(nil, uint64(v), 10)
		d = append(d, '.')
		copy(texts[v][:], d)
		lens[v] = len(d)
	}
	return texts, lens
}

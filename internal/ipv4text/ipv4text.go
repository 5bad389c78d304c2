// Package ipv4text renders IPv4 addresses in dotted decimal from a table
// of the decimal forms of 0 to 255, for the log writers and parsers that
// render one per record: per-digit division (strconv, netip) was most of
// the cost of an address there.
package ipv4text

import (
	"encoding/binary"
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
// enough to be inlined, for a loop that renders many addresses into room
// it made once (a call per address, and the reloads after it, were much
// of such a loop's cost).
func PutDotted(d *[Room]byte, a [4]byte) int {
	// Each octet is stored as four bytes, its digits and a dot, of which
	// the first n+1 count: the next octet overwrites the rest. The
	// offsets are masked to 15 in the window of 20 bytes, so that the
	// stores need no bounds checks (an offset is at most 12).
	e0, e1, e2, e3 := octets[a[0]], octets[a[1]], octets[a[2]], octets[a[3]]
	n1 := e0 >> 32
	n2 := n1 + e1>>32
	n3 := n2 + e2>>32
	binary.LittleEndian.PutUint32(d[:], uint32(e0))
	binary.LittleEndian.PutUint32(d[n1&15:], uint32(e1))
	binary.LittleEndian.PutUint32(d[n2&15:], uint32(e2))
	binary.LittleEndian.PutUint32(d[n3&15:], uint32(e3))
	return int(n3 + e3>>32)
}

// octets holds, for each byte value, its decimal digits followed by a dot
// in the low four bytes, and their number (with the dot) above.
var octets = func() (t [256]uint64) {
	for v := range 256 {
		d := strconv.AppendUint(nil, uint64(v), 10)
		d = append(d, '.')
		var e uint64
		for i, c := range d {
			e |= uint64(c) << (8 * i)
		}
		t[v] = e | uint64(len(d))<<32
	}
	return t
}()

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
	b = slices.Grow(b, 16)
	// Each octet is stored as four bytes, its digits and a dot, of which
	// the first n+1 count: the next octet overwrites the rest.
	d := b[l : l+16]
	n := 0
	for _, o := range a {
		e := octets[o]
		binary.LittleEndian.PutUint32(d[n:n+4], uint32(e))
		n += int(e >> 32)
	}
	return b[:l+n]
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

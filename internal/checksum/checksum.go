// Package checksum computes the Internet checksum (RFC 1071) of IPv4
// headers and of TCP, UDP and ICMP segments: the ones' complement of the
// ones' complement sum of big-endian 16-bit words.
//
// [Add] accumulates a sum 8 bytes at a time, so that a header and a
// payload can be summed in pieces (pieces of even length but the last),
// [Fold] reduces it to 16 bits, and [Of] is the checksum of one buffer. A
// buffer that holds its own correct checksum has Of(b) == 0.
package checksum

import (
	"encoding/binary"
	"math/bits"
)

// Add adds b to the ones' complement sum, kept in 64 bits, and returns
// it. All pieces but the last must have an even length. The result stays
// below 2^33, so that a caller may add a few 16-bit values (a
// pseudo-header's protocol and length) to it without overflow.
func Add(sum uint64, b []byte) uint64 {
	var c uint64
	for len(b) >= 32 {
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[0:]), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[8:]), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[16:]), c)
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b[24:]), c)
		b = b[32:]
	}
	for len(b) >= 8 {
		sum, c = bits.Add64(sum, binary.BigEndian.Uint64(b), c)
		b = b[8:]
	}
	var tail uint64
	for i, x := range b {
		tail |= uint64(x) << (56 - 8*uint(i))
	}
	sum, c = bits.Add64(sum, tail, c)
	// Fold the end-around carry and keep the result small.
	return (sum >> 32) + (sum & 0xffffffff) + c
}

// Fold reduces a 64-bit ones' complement sum to 16 bits.
func Fold(s uint64) uint16 {
	s = (s >> 32) + (s & 0xffffffff)
	s = (s >> 32) + (s & 0xffffffff)
	s = (s >> 16) + (s & 0xffff)
	s = (s >> 16) + (s & 0xffff)
	return uint16(s)
}

// Of returns the Internet checksum of b.
func Of(b []byte) uint16 { return ^Fold(Add(0, b)) }

package flow

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/internal/capture"
)

// checksumOK verifies the TCP, UDP or ICMP checksum of p. Packets whose
// segment was not captured whole cannot be checked and pass, as in Zeek.
func checksumOK(p *capture.Packet) bool {
	b := p.IPPayload
	if p.Truncated {
		return true
	}
	var sum uint32
	switch p.Proto {
	case ProtoUDP:
		if p.IPVersion == 4 && binary.BigEndian.Uint16(b[6:8]) == 0 {
			return true // no checksum (IPv4 only)
		}
		sum = pseudoHeader(p, len(b))
	case ProtoTCP, ProtoICMPv6:
		sum = pseudoHeader(p, len(b))
	case ProtoICMP:
	default:
		return true
	}
	return fold(onesSum(sum, b)) == 0xffff
}

func pseudoHeader(p *capture.Packet, n int) uint32 {
	var sum uint32
	if p.IPVersion == 4 {
		s, d := p.Src.As4(), p.Dst.As4()
		sum = onesSum(sum, s[:])
		sum = onesSum(sum, d[:])
	} else {
		s, d := p.Src.As16(), p.Dst.As16()
		sum = onesSum(sum, s[:])
		sum = onesSum(sum, d[:])
	}
	return sum + uint32(p.Proto) + uint32(n>>16) + uint32(n&0xffff)
}

// onesSum adds b, as big-endian 16-bit words, to sum.
func onesSum(sum uint32, b []byte) uint32 {
	s := uint64(sum)
	for len(b) >= 8 {
		s += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:]))
		b = b[8:]
	}
	for len(b) >= 2 {
		s += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint64(b[0]) << 8
	}
	for s>>32 != 0 {
		s = s&0xffffffff + s>>32
	}
	return uint32(s)
}

func fold(sum uint32) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

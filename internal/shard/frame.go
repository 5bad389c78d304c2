package shard

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/tunnel"
)

// FrameHash returns Hash of a frame not decoded yet (p.Data and
// p.LinkType set) for the common frames it reads without the decoder:
// Ethernet with up to two VLAN tags, and raw IP, carrying IPv4 or IPv6
// without extension headers, or no IP at all (ARP, LLDP). For any other frame, or a header it would
// have to judge, it returns false: decode the frame and call Hash. A
// reader that only routes frames then leaves decoding to the workers.
func FrameHash(p *capture.Packet, seed uint64) (uint64, bool) {
	b := p.Data
	// The common frame, ahead of the switches and calls: untagged
	// Ethernet and IPv4 without options, carrying anything but a UDP
	// datagram that might be Teredo. It is ipv4Hash written out for a
	// header of 20 bytes, whose tests it passes when its total length
	// covers it.
	if p.LinkType == capture.LinkTypeEthernet && len(b) >= 34 && binary.BigEndian.Uint32(b[12:16])>>8 == 0x080045 &&
		binary.BigEndian.Uint16(b[16:18]) >= 20 && (b[23] != udp || notTeredo20(b)) {
		return hashPair4(binary.BigEndian.Uint64(b[26:34]), seed), true
	}
	return frameHash(p, seed)
}

// notTeredo20 reports, for the frame of FrameHash's common case carrying
// UDP, that it cannot be Teredo by udpTeredoSide's cheapest tests: a
// fragment, or a datagram away from Teredo's port whose payload starts
// neither as an IPv6 packet nor as a Teredo header. The payload starts at
// byte 42 of the frame, however long the IP and UDP headers say it is; a
// payload they cut short of 40 bytes is not Teredo either, so that its
// first two bytes decide wherever the lengths end it.
func notTeredo20(b []byte) bool {
	if binary.BigEndian.Uint16(b[20:22])&0x3fff != 0 {
		return true // a fragment: hashed by its pair
	}
	if len(b) < 44 || binary.BigEndian.Uint16(b[16:18]) < 30 {
		return false // the payload's first bytes are not in the datagram
	}
	sport, dport := binary.BigEndian.Uint16(b[34:36]), binary.BigEndian.Uint16(b[36:38])
	return sport != teredoPort && dport != teredoPort && b[42]>>4 != 6 && binary.BigEndian.Uint16(b[42:44]) > 1
}

// frameHash is FrameHash of any frame.
func frameHash(p *capture.Packet, seed uint64) (uint64, bool) {
	b := p.Data
	switch p.LinkType {
	case capture.LinkTypeEthernet:
		if len(b) < 14 {
			return 0, false
		}
		t := binary.BigEndian.Uint16(b[12:14])
		b = b[14:]
		for tags := 0; (t == 0x8100 || t == 0x88a8) && tags < 2; tags++ {
			if len(b) < 4 {
				return 0, false
			}
			t = binary.BigEndian.Uint16(b[2:4])
			b = b[4:]
		}
		switch t {
		case 0x0800:
			return ipv4Hash(b, seed)
		case 0x86dd:
			return ipv6Hash(b, seed)
		case 0x8100, 0x88a8, 0x8847, 0x8848, 0x6558:
			// More tags, MPLS, bridged Ethernet: the decoder follows them.
		default:
			if t >= 0x600 {
				return 0, true // ARP, LLDP, ...: no IP packet, which the decoder sees too
			}
		}
	case capture.LinkTypeRaw, capture.LinkTypeRawDLT12, capture.LinkTypeRawDLT14, capture.LinkTypeIPv4, capture.LinkTypeIPv6:
		if len(b) == 0 {
			return 0, false
		}
		switch v := b[0] >> 4; {
		case v == 4 && p.LinkType != capture.LinkTypeIPv6:
			return ipv4Hash(b, seed)
		case v == 6 && p.LinkType != capture.LinkTypeIPv4:
			return ipv6Hash(b, seed)
		}
	}
	return 0, false
}

// ipv4Hash is FrameHash of an IPv4 packet whose header is sound.
func ipv4Hash(b []byte, seed uint64) (uint64, bool) {
	// A version of 4 and a header of 20 to 60 bytes in one test.
	if len(b) < 20 || b[0]-0x45 > 0x4f-0x45 {
		return 0, false
	}
	hl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	if hl > len(b) || total < hl {
		return 0, false
	}
	src, dst := uint64(binary.BigEndian.Uint32(b[12:16])), uint64(binary.BigEndian.Uint32(b[16:20]))
	if b[9] == udp && binary.BigEndian.Uint16(b[6:8])&0x3fff == 0 {
		switch udpTeredoSide(b[hl:min(total, len(b))]) {
		case fromClient:
			dst = src
		case toClient:
			src = dst
		}
	}
	return hash4(src, dst, seed), true
}

// ipv6Hash is FrameHash of an IPv6 packet without extension headers.
func ipv6Hash(b []byte, seed uint64) (uint64, bool) {
	if len(b) < 40 || b[0]>>4 != 6 {
		return 0, false
	}
	plen := int(binary.BigEndian.Uint16(b[4:6]))
	src, dst := b[8:24], b[24:40]
	switch next := b[6]; {
	case plen == 0:
		return 0, false // a jumbogram, or an unfilled length
	case next == udp:
		switch udpTeredoSide(b[40:min(40+plen, len(b))]) {
		case fromClient:
			dst = src
		case toClient:
			src = dst
		}
	case next == 0 || next == 43 || next == 44 || next == 51 || next == 60 || next == 135 || next == 139 || next == 140:
		return 0, false // an extension header: the decoder walks them
	}
	return addr16Hash(src, dst, seed), true
}

// udpTeredoSide is teredoSide of a UDP datagram given its IP payload as
// the decoder would see it.
func udpTeredoSide(ip []byte) side {
	if len(ip) < 8 {
		return notTeredo // no transport fields: not Teredo
	}
	sport, dport := binary.BigEndian.Uint16(ip[0:2]), binary.BigEndian.Uint16(ip[2:4])
	payload := ip[8:]
	if n := int(binary.BigEndian.Uint16(ip[4:6])); n >= 8 && n <= len(ip) {
		payload = ip[8:n]
	}
	// teredoSide's cheapest test first, here, where it runs for every UDP
	// datagram: nearly all of them are not Teredo.
	if sport != teredoPort && dport != teredoPort && !tunnel.DetectTeredo(payload) {
		return notTeredo
	}
	return teredoSide(sport, dport, payload)
}

func addr16Hash(a, b []byte, seed uint64) uint64 {
	return hash16(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(a[8:16]), binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:16]), seed)
}

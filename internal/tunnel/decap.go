package tunnel

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/internal/capture"
)

// DecodeTeredo decapsulates a Teredo UDP payload (RFC 4380): optional
// authentication and origin indication headers, then an IPv6 packet whose
// length must match the rest of the payload exactly, except for bubbles
// (no next header, no payload), which may carry trailing bytes.
func DecodeTeredo(b []byte) (Inner, error) {
	var origin, auth bool
	for {
		if len(b) < 2 {
			return Inner{}, ErrTruncated
		}
		tag := binary.BigEndian.Uint16(b)
		switch {
		case tag == 0: // origin indication: 8 bytes
			if origin {
				return Inner{}, ErrBadHeader
			}
			if len(b) < 8 {
				return Inner{}, ErrTruncated
			}
			b, origin = b[8:], true
		case tag == 1: // authentication: id and auth lengths, nonce, confirmation
			if origin || auth {
				return Inner{}, ErrBadHeader
			}
			if len(b) < 4 {
				return Inner{}, ErrTruncated
			}
			n := 4 + int(b[2]) + int(b[3]) + 8 + 1
			if len(b) < n {
				return Inner{}, ErrTruncated
			}
			b, auth = b[n:], true
		case tag>>12 == 6:
			if len(b) < 40 {
				return Inner{}, ErrTruncated
			}
			switch parseIP(b, 6) {
			case ipOK:
			case ipTooLarge:
				if b[6] != 59 || binary.BigEndian.Uint16(b[4:6]) != 0 {
					return Inner{}, ErrInnerLength
				}
				// A bubble with data after it: Zeek lets it pass.
			default:
				return Inner{}, ErrInnerTrunc
			}
			return rawIP(b), nil
		default:
			return Inner{}, ErrBadHeader
		}
	}
}

// teredoPrefix is the Teredo IPv6 prefix 2001:0000::/32.
var teredoPrefix = [4]byte{0x20, 0x01, 0x00, 0x00}

// DetectTeredo reports whether a UDP payload on a port without a tunnel
// analyzer looks like Teredo, as Zeek's TeredoAnalyzer::DetectProtocol
// decides: an IPv6 header with a Teredo source or destination address, or
// an origin indication (possibly after an authentication header) followed
// by an IPv6 header.
//
// The first test, which rejects nearly every datagram of other protocols
// (DNS's start with a random transaction id), is small enough to be
// inlined into the caller, which asks for every UDP datagram.
func DetectTeredo(b []byte) bool {
	return len(b) >= 40 && (b[0]>>4 == 6 || binary.BigEndian.Uint16(b) <= 1) && detectTeredo(b)
}

func detectTeredo(b []byte) bool {
	if b[0]>>4 == 6 && ([4]byte(b[8:12]) == teredoPrefix || [4]byte(b[24:28]) == teredoPrefix) {
		return true
	}
	val := uint16(b[1])
	if val == 1 {
		n := 13 + int(b[2]) + int(b[3])
		if len(b) < n {
			return false
		}
		b = b[n:]
		if len(b) < 40 {
			return false
		}
		val = binary.BigEndian.Uint16(b)
	}
	if val == 0 {
		if len(b) < 8 {
			return false
		}
		b = b[8:]
		return len(b) >= 40 && b[0]>>4 == 6
	}
	return false
}

// DecodeAYIYA decapsulates an AYIYA UDP payload ("Anything In Anything"):
// an 8-byte header, the identity and the signature, then an IPv4 or IPv6
// packet as the header's next-header field says. Only forwarding messages
// (opcode 1) carry a packet.
func DecodeAYIYA(b []byte) (Inner, error) {
	if len(b) < 8 {
		return Inner{}, ErrTruncated
	}
	idLen := 1 << (b[0] >> 4)
	sigLen := int(b[1]>>4) * 4
	op, next := b[2]&0x0f, b[3]
	n := 8 + idLen + sigLen
	if len(b) < n {
		return Inner{}, ErrTruncated
	}
	if op != 1 {
		return Inner{}, ErrNoInnerPacket
	}
	want := ipVersionOf(next)
	if want == 0 {
		return Inner{}, ErrUnsupported
	}
	inner := b[n:]
	if err := ipError(parseIP(inner, want)); err != nil {
		return Inner{}, err
	}
	return rawIP(inner), nil
}

// DecodeVXLAN decapsulates a VXLAN UDP payload (RFC 7348): an 8-byte
// header with the I flag (a valid VNI) set, then an Ethernet frame. A
// header with nothing after it gives ErrNoInnerPacket, as a valid header:
// see HeaderValid.
func DecodeVXLAN(b []byte) (Inner, error) {
	switch {
	case len(b) < 8:
		return Inner{}, ErrTruncated
	case b[0]&0x08 == 0:
		return Inner{}, ErrBadHeader
	case len(b) == 8:
		return Inner{}, ErrNoInnerPacket
	}
	return Inner{Data: b[8:], LinkType: capture.LinkTypeEthernet}, nil
}

// Protocol types of Geneve's header that Zeek's Geneve analyzer follows.
const (
	geneveEthernet = 0x6558 // transparent Ethernet bridging
	geneveIPv4     = 0x0800
	// geneveIP is what Zeek's scripts register as the IPv6 EtherType
	// (0x86dd is meant): packets marked 0x08dd reach Zeek's IP analyzer,
	// and those marked 0x86dd no analyzer, so it is the same here.
	geneveIP = 0x08dd
)

// DecodeGeneve decapsulates a Geneve UDP payload (RFC 8926): an 8-byte
// header of version 0 and its options, then the frame its protocol type
// announces: Ethernet (0x6558), or an IP packet (0x0800, and 0x08dd as
// Zeek has it). Other protocol types (ARP, IPv6's 0x86dd, ...) give
// ErrUnsupported and a header with nothing after it ErrNoInnerPacket;
// both are valid headers (HeaderValid).
func DecodeGeneve(b []byte) (Inner, error) {
	if len(b) < 8 {
		return Inner{}, ErrTruncated
	}
	if b[0]>>6 != 0 {
		return Inner{}, ErrBadHeader
	}
	n := 8 + int(b[0]&0x3f)*4
	if len(b) < n {
		return Inner{}, ErrTruncated
	}
	inner := b[n:]
	if len(inner) == 0 {
		return Inner{}, ErrNoInnerPacket
	}
	switch binary.BigEndian.Uint16(b[2:4]) {
	case geneveEthernet:
		return Inner{Data: inner, LinkType: capture.LinkTypeEthernet}, nil
	case geneveIPv4, geneveIP:
		return rawIP(inner), nil
	}
	return Inner{}, ErrUnsupported
}

// DecodeGTPv1 decapsulates a GTPv1-U UDP payload: a G-PDU (message type
// 255) of GTP version 1 carries an IPv4 or IPv6 packet, which must fill
// the message exactly. Other messages (echo, control) have no inner packet
// (ErrNoInnerPacket); GTP' (protocol type 0) and other versions are not
// GTPv1 (ErrBadHeader).
func DecodeGTPv1(b []byte) (Inner, error) {
	if len(b) < 8 {
		return Inner{}, ErrTruncated
	}
	flags, msgType := b[0], b[1]
	if flags>>5 != 1 || flags&0x10 == 0 {
		return Inner{}, ErrBadHeader
	}
	// The length counts the bytes after the mandatory 8-byte header.
	if end := 8 + int(binary.BigEndian.Uint16(b[2:4])); end < len(b) {
		b = b[:end]
	}
	n := 8
	if flags&0x07 != 0 {
		// Sequence number, N-PDU number and the next extension header type.
		if len(b) < 12 {
			return Inner{}, ErrTruncated
		}
		n = 12
		for next := b[11]; next != 0 && flags&0x04 != 0; {
			if len(b) <= n {
				return Inner{}, ErrTruncated
			}
			l := int(b[n]) * 4
			if l == 0 {
				return Inner{}, ErrBadHeader
			}
			if len(b) < n+l {
				return Inner{}, ErrTruncated
			}
			n += l
			next = b[n-1]
		}
	}
	if msgType != 0xff {
		return Inner{}, ErrNoInnerPacket
	}
	inner := b[n:]
	if err := ipError(parseIP(inner, 0)); err != nil {
		return Inner{}, err
	}
	return rawIP(inner), nil
}

// GRE flag bits (RFC 2784, RFC 2890; RFC 2637 for version 1).
const (
	greChecksum = 0x8000
	greRouting  = 0x4000
	greKey      = 0x2000
	greSeq      = 0x1000
	greAck      = 0x0080 // version 1 (enhanced GRE)
)

// EtherTypes a GRE header may announce.
const (
	etherIPv4     = 0x0800
	etherIPv6     = 0x86dd
	etherBridging = 0x6558 // transparent Ethernet bridging
	etherERSPAN2  = 0x88be // ERSPAN type I (no sequence number) or II
	etherERSPAN3  = 0x22eb
	etherPPP      = 0x880b // PPTP
)

// DecodeGRE decapsulates a GRE payload (IP protocol 47, or UDP 4754 per
// RFC 8086). Version 0 carries IPv4, IPv6, a bridged Ethernet frame or an
// ERSPAN-mirrored frame; version 1 (PPTP's enhanced GRE) carries PPP, of
// which IPv4 and IPv6 frames are followed. Other payloads (PPP control
// messages, acknowledgments without data) give ErrUnsupported or
// ErrNoInnerPacket.
func DecodeGRE(b []byte) (Inner, error) {
	if len(b) < 4 {
		return Inner{}, ErrTruncated
	}
	flags := binary.BigEndian.Uint16(b)
	version := flags & 0x07
	proto := binary.BigEndian.Uint16(b[2:4])
	if version > 1 {
		return Inner{}, ErrBadHeader
	}
	if flags&greRouting != 0 {
		return Inner{}, ErrUnsupported
	}
	n := 4
	if flags&greChecksum != 0 {
		n += 4
	}
	if flags&greKey != 0 {
		n += 4
	}
	if flags&greSeq != 0 {
		n += 4
	}
	if version == 1 && flags&greAck != 0 {
		n += 4
	}
	if len(b) < n {
		return Inner{}, ErrTruncated
	}
	payload := b[n:]
	if version == 1 {
		if proto != etherPPP || flags&greKey == 0 {
			return Inner{}, ErrBadHeader
		}
		return decodePPP(payload)
	}
	switch proto {
	case etherIPv4, etherIPv6:
		if len(payload) == 0 {
			return Inner{}, ErrNoInnerPacket
		}
		return rawIP(payload), nil
	case etherBridging:
		return ethernet(payload)
	case etherERSPAN2:
		if flags&greSeq == 0 {
			return ethernet(payload) // type I: no ERSPAN header
		}
		if len(payload) < 8 {
			return Inner{}, ErrTruncated
		}
		return ethernet(payload[8:])
	case etherERSPAN3:
		if len(payload) < 12 {
			return Inner{}, ErrTruncated
		}
		h := 12
		if payload[11]&0x01 != 0 { // optional platform-specific subheader
			h += 8
		}
		if len(payload) < h {
			return Inner{}, ErrTruncated
		}
		return ethernet(payload[h:])
	}
	return Inner{}, ErrUnsupported
}

// decodePPP takes the IP packet out of a PPP frame (with or without the
// HDLC address and control bytes, with a one- or two-byte protocol).
func decodePPP(b []byte) (Inner, error) {
	if len(b) == 0 {
		return Inner{}, ErrNoInnerPacket // an acknowledgment without data
	}
	if len(b) >= 2 && b[0] == 0xff && b[1] == 0x03 {
		b = b[2:]
	}
	if len(b) == 0 {
		return Inner{}, ErrTruncated
	}
	var proto uint16
	if b[0]&1 == 1 { // protocol field compression: one byte
		proto, b = uint16(b[0]), b[1:]
	} else {
		if len(b) < 2 {
			return Inner{}, ErrTruncated
		}
		proto, b = binary.BigEndian.Uint16(b), b[2:]
	}
	if proto != 0x0021 && proto != 0x0057 {
		return Inner{}, ErrUnsupported
	}
	if len(b) == 0 {
		return Inner{}, ErrTruncated
	}
	return rawIP(b), nil
}

func ethernet(b []byte) (Inner, error) {
	if len(b) < 14 {
		return Inner{}, ErrTruncated
	}
	return Inner{Data: b, LinkType: capture.LinkTypeEthernet}, nil
}

// DecodeIPinIP decapsulates the payload of an IP packet of protocol 4
// (IPv4 in IP) or 41 (IPv6 in IP, 6in4). As in Zeek, an inner packet
// shorter than the payload (trailing bytes) is accepted; one whose header
// is cut short or of the wrong version is not.
func DecodeIPinIP(proto uint8, b []byte) (Inner, error) {
	want := ipVersionOf(proto)
	if want == 0 {
		return Inner{}, ErrUnsupported
	}
	switch r := parseIP(b, want); r {
	case ipOK, ipTooLarge:
		return rawIP(b), nil
	default:
		return Inner{}, ipError(r)
	}
}

// ipVersionOf returns the IP version of the packets an IP protocol number
// announces: 4 for 4 (IPv4 in IP), 6 for 41 (IPv6 in IP), 0 for others.
func ipVersionOf(proto uint8) uint8 {
	switch proto {
	case 4:
		return 4
	case 41:
		return 6
	}
	return 0
}

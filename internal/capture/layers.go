package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// The link-layer headers are decoded as gopacket 1.1.19's layers
// (Ethernet, Dot1Q, LLC, SNAP, Loopback) and DecodingLayerParser decode
// them, by hand: importing gopacket's layers package costs every program
// tens of milliseconds of start-up (it fills tables of 65,536 entries),
// and its decoders cost an interface call, a deferred recover and a
// layer-type lookup per header. TestDecodeMatchesGopacket and FuzzDecode
// hold this decoder to gopacket's, header by header and error by error.
// Where gopacket 1.1.19 has no decoder or gets one wrong for this use, the
// decoder differs on purpose:
//
//   - Linux cooked capture v2 (SLL2) has no layer in gopacket;
//   - layers.LinuxSLL slices its address with the header's unchecked
//     address length and panics on a damaged frame; its address is not
//     needed here;
//   - layers.FDDI and layers.MPLS are not DecodingLayers;
//   - layers.IPv4 fails packets whose options are malformed (that BPF and
//     tcpdump still match), layers.IPv6 allocates every hop-by-hop option
//     it decodes, and both hand their payload to the next layer, which
//     would decode tunnelled packets over the outer header. The IP
//     decoders below fill the Packet directly and end the header chain:
//     wirebench, like tcpdump, classifies by the outer IP header.
//
// Errors are preallocated values so that a damaged frame costs no
// allocation (but for an invalid loopback family, which names it).
var (
	//lint:ignore ST1005 the text of gopacket's error, which TestDecodeMatchesGopacket compares
	errEthernet = errors.New("Ethernet packet too small")
	errLLC      = errors.New("LLC header too small")
	errSNAP     = errors.New("SNAP header too small")
	//lint:ignore ST1005 the text of gopacket's error, which TestDecodeMatchesGopacket compares
	errLoopback = errors.New("Loopback packet too small")
	errDot1Q    = [4]error{
		errors.New("802.1Q tag length 0 too short"),
		errors.New("802.1Q tag length 1 too short"),
		errors.New("802.1Q tag length 2 too short"),
		errors.New("802.1Q tag length 3 too short"),
	}
	errSLL     = errors.New("packet shorter than the 16 bytes of a Linux cooked capture header")
	errSLL2    = errors.New("packet shorter than the 20 bytes of a Linux cooked capture v2 header")
	errFDDI    = errors.New("FDDI header shorter than 13 bytes")
	errIPv4Ver = errors.New("IPv4 header with another IP version")
	errIPv4IHL = errors.New("IPv4 header length below 20 bytes")
	errIPv4Len = errors.New("IPv4 total length shorter than its header")
	errIPv6Ver = errors.New("IPv6 header with another IP version")
)

// header is a kind of header in the chain a frame is decoded along.
type header uint8

const (
	hdrNone header = iota // nothing more is decoded
	hdrEthernet
	hdrDot1Q
	hdrLLC
	hdrSNAP
	hdrLoopback
	hdrFDDI
	hdrSLL
	hdrSLL2
	hdrMPLS
	hdrIPv4
	hdrIPv6
	// hdrRawIP starts the frames of the raw IP link types: Decode turns
	// it into hdrIPv4 or hdrIPv6 by the version field.
	hdrRawIP
)

// etherNext returns the header that an EtherType announces, as gopacket's
// EthernetType.LayerType does for the layers decoded here: 0 is its
// pseudo-type for LLC (what 802.3 frames carry), 0x6558 is a bridged
// Ethernet frame, and ARP, PPPoE, LLDP and the like end the chain.
func etherNext(t uint16) header {
	switch t {
	case 0x0800:
		return hdrIPv4
	case 0x86dd:
		return hdrIPv6
	case 0x8100, 0x88a8: // 802.1Q, 802.1ad
		return hdrDot1Q
	case 0x8847, 0x8848: // MPLS unicast, multicast
		return hdrMPLS
	case 0x6558: // transparent Ethernet bridging
		return hdrEthernet
	case 0:
		return hdrLLC
	}
	return hdrNone
}

// cookedNext returns the header that follows a Linux cooked capture header
// carrying the EtherType-like protocol value proto: values below 0x600 are
// not EtherTypes, and 4 is Linux's ETH_P_802_2 (an LLC header follows).
func cookedNext(proto uint16) header {
	switch {
	case proto == 4:
		return hdrLLC
	case proto < 0x600:
		return hdrNone
	}
	return etherNext(proto)
}

// familyNext returns the header that a BSD loopback address family
// announces: AF_INET, or AF_INET6 as NetBSD and OpenBSD (24), FreeBSD
// (28), macOS (30) and Linux (10) number it.
func familyNext(af uint32) header {
	switch af {
	case 2:
		return hdrIPv4
	case 10, 24, 28, 30:
		return hdrIPv6
	}
	return hdrNone
}

// decodeLink decodes the chain of headers of a frame starting with h, down
// to the IP header, into p. It reports whether the frame was cut short,
// and returns the error of an invalid header. As gopacket's
// DecodingLayerParser, it always decodes the first header and stops
// without a word when a header leaves nothing after it.
func decodeLink(p *Packet, h header, data []byte) (truncated bool, err error) {
	for first := true; ; first = false {
		if len(data) == 0 && !first {
			return truncated, nil
		}
		switch h {
		case hdrEthernet:
			if len(data) < 14 {
				return truncated, errEthernet
			}
			t := binary.BigEndian.Uint16(data[12:14])
			data = data[14:]
			if t < 0x600 {
				// IEEE 802.3: a length, and an LLC header follows;
				// bytes after the length are padding.
				if len(data) < int(t) {
					truncated = true
				} else {
					data = data[:t]
				}
				h = hdrLLC
			} else {
				h = etherNext(t)
			}
		case hdrDot1Q:
			if len(data) < 4 {
				return true, errDot1Q[len(data)]
			}
			h = etherNext(binary.BigEndian.Uint16(data[2:4]))
			data = data[4:]
		case hdrLLC:
			if len(data) < 3 {
				return truncated, errLLC
			}
			dsap, ssap, n := data[0]&0xfe, data[1]&0xfe, 3
			if c := data[2]; c&1 == 0 || c&3 == 1 { // I and S frames: 2 control bytes
				if len(data) < 4 {
					return truncated, errLLC
				}
				n = 4
			}
			data = data[n:]
			h = hdrNone // spanning tree and the rest carry no IP
			if dsap == 0xaa && ssap == 0xaa {
				h = hdrSNAP
			}
		case hdrSNAP:
			if len(data) < 5 {
				return truncated, errSNAP
			}
			h = etherNext(binary.BigEndian.Uint16(data[3:5]))
			data = data[5:]
		case hdrLoopback:
			if len(data) < 4 {
				return truncated, errLoopback
			}
			// The family is in the writer's byte order; it is below 256,
			// so zero first bytes mean big-endian.
			var af uint32
			if data[0] == 0 && data[1] == 0 {
				af = binary.BigEndian.Uint32(data[:4])
			} else {
				af = binary.LittleEndian.Uint32(data[:4])
			}
			if af > 0xff {
				//lint:ignore ST1005 the text of gopacket's error, which TestDecodeMatchesGopacket compares
				return truncated, fmt.Errorf("Invalid loopback protocol %q", data[:4])
			}
			h = familyNext(af)
			data = data[4:]
		case hdrFDDI:
			// Frame control (1), destination (6), source (6). LLC frames
			// with 48-bit addresses (frame control xLFFzzzz with L=1,
			// FF=01), which are what captures hold, carry an LLC header
			// next; other frames (station management, tokens) carry no
			// IP.
			if len(data) < 13 {
				return true, errFDDI
			}
			h = hdrNone
			if data[0]&0x70 == 0x50 {
				h = hdrLLC
			}
			data = data[13:]
		case hdrSLL:
			// Linux cooked capture v1: 16 bytes, the protocol in the
			// last two.
			if len(data) < 16 {
				return true, errSLL
			}
			h = cookedNext(binary.BigEndian.Uint16(data[14:16]))
			data = data[16:]
		case hdrSLL2:
			// Linux cooked capture v2: protocol (2), reserved (2),
			// interface index (4), ARPHRD type (2), packet type (1),
			// address length (1), address (8).
			if len(data) < 20 {
				return true, errSLL2
			}
			h = cookedNext(binary.BigEndian.Uint16(data[0:2]))
			data = data[20:]
		case hdrMPLS:
			// Walk the label stack to its bottom entry and guess the
			// payload from the IP version nibble, as tcpdump and
			// Wireshark do (MPLS does not say what it carries).
			n := 0
			for {
				if len(data) < n+4 {
					// Stack cut short: nothing after it can be decoded.
					return true, nil
				}
				bottom := data[n+2]&1 != 0
				n += 4
				if bottom {
					break
				}
			}
			data = data[n:]
			h = hdrNone
			if len(data) > 0 {
				switch data[0] >> 4 {
				case 4:
					h = hdrIPv4
				case 6:
					h = hdrIPv6
				}
			}
		case hdrIPv4:
			t, err := decodeIPv4(p, data)
			return truncated || t, err
		case hdrIPv6:
			t, err := decodeIPv6(p, data)
			return truncated || t, err
		default:
			return truncated, nil
		}
	}
}

// decodeIPv4 decodes an IPv4 header into p; it reports whether the packet
// was cut short. The chain ends here: the transport header is decoded by
// Packet.DecodeTransport, and tunnels are not followed.
func decodeIPv4(p *Packet, data []byte) (truncated bool, err error) {
	if len(data) < 20 {
		return true, nil
	}
	if data[0]>>4 != 4 {
		return false, errIPv4Ver
	}
	hl := int(data[0]&0x0f) * 4
	if hl < 20 {
		return false, errIPv4IHL
	}
	total := int(binary.BigEndian.Uint16(data[2:4]))
	if total == 0 {
		// Captured before TCP segmentation offload split the packet:
		// the length is left for the hardware to fill in.
		total = len(data)
	}
	if total < hl {
		return false, errIPv4Len
	}
	p.IPVersion = 4
	p.Src = netip.AddrFrom4([4]byte(data[12:16]))
	p.Dst = netip.AddrFrom4([4]byte(data[16:20]))
	p.IPLen = total
	p.TTL = data[8]
	p.Proto = data[9]
	ff := binary.BigEndian.Uint16(data[6:8])
	p.MoreFrags = ff&0x2000 != 0
	p.FragOffset = int(ff&0x1fff) * 8
	p.Fragment = p.MoreFrags || p.FragOffset > 0
	p.FragID = uint32(binary.BigEndian.Uint16(data[4:6]))
	p.IPOffset = offsetIn(p.Data, data)
	p.IPPayloadOffset = p.IPOffset + min(hl, len(data))
	if len(data) < hl {
		return true, nil
	}
	if total > len(data) {
		truncated = true
		total = len(data)
	}
	// Bytes after the total length are link-layer padding, not payload.
	p.IPPayload = data[hl:total]
	return truncated, nil
}

// decodeIPv6 decodes an IPv6 header into p and walks the extension headers
// (hop-by-hop, routing, destination options, fragment, authentication,
// mobility, HIP, shim6) to the upper-layer header; it reports whether the
// packet was cut short.
func decodeIPv6(p *Packet, data []byte) (truncated bool, err error) {
	if len(data) < 40 {
		return true, nil
	}
	if data[0]>>4 != 6 {
		return false, errIPv6Ver
	}
	plen := int(binary.BigEndian.Uint16(data[4:6]))
	payload := data[40:]
	if plen == 0 {
		// A jumbogram (the length is in a hop-by-hop option) or a
		// packet captured before segmentation offload: take what is
		// there.
		plen = len(payload)
	}
	p.IPVersion = 6
	p.Src = netip.AddrFrom16([16]byte(data[8:24]))
	p.Dst = netip.AddrFrom16([16]byte(data[24:40]))
	p.IPLen = 40 + plen
	p.TTL = data[7]
	p.IPOffset = offsetIn(p.Data, data)
	if plen > len(payload) {
		truncated = true
		plen = len(payload)
	}
	payload = payload[:plen]
	next := data[6]
walk:
	for {
		var n int // length of the extension header at payload[0]
		switch next {
		case 0, 43, 60, 135, 139, 140: // hop-by-hop, routing, destination, mobility, HIP, shim6
			n = 2
			if len(payload) >= 2 {
				n = (int(payload[1]) + 1) * 8
			}
		case 51: // authentication header: length in 4-byte units, minus 2
			n = 2
			if len(payload) >= 2 {
				n = (int(payload[1]) + 2) * 4
			}
		case 44: // fragment
			n = 8
		default:
			break walk
		}
		if n > len(payload) {
			// The extension header is cut off: what follows is unknown.
			p.Proto = next
			p.IPPayloadOffset = offsetIn(p.Data, payload)
			return true, nil
		}
		h := payload[:n]
		payload = payload[n:]
		if next == 44 {
			off := binary.BigEndian.Uint16(h[2:4])
			more, fragOff := off&1 != 0, int(off>>3)*8
			// An atomic fragment (offset 0, no more fragments; RFC 6946)
			// is a whole packet: keep walking.
			if more || fragOff > 0 {
				p.Fragment, p.MoreFrags, p.FragOffset = true, more, fragOff
				p.FragID = binary.BigEndian.Uint32(h[4:8])
				// IPPayload is the fragmentable part, which fragment
				// offsets count from; Proto is the header it starts with.
				next = h[0]
				break walk
			}
		}
		next = h[0]
	}
	p.Proto = next
	p.IPPayload = payload
	p.IPPayloadOffset = offsetIn(p.Data, payload)
	return truncated, nil
}

// offsetIn returns the offset of sub in frame, sub being frame or a slice
// of it (every header slices its input forward, so the two end at the same
// place of the same array).
func offsetIn(frame, sub []byte) int { return cap(frame) - cap(sub) }

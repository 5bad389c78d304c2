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
//     wirebench, like tcpdump, classifies by the outer IP header;
//   - PPP, Cisco HDLC, IEEE 802.11, radiotap and NFLOG were added after
//     gopacket was left: they follow Zeek's packet analyzers and tcpdump
//     (see decodePPP, decodeDot11, decodeNFLOG) and are held to tshark.
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

	errPPP          = errors.New("PPP header too short for its protocol field")
	errCHDLC        = errors.New("HDLC header shorter than 4 bytes (Cisco HDLC: address, control, protocol)")
	errDot11        = errors.New("IEEE 802.11 data frame header cut short")
	errAMSDU        = errors.New("IEEE 802.11 A-MSDU subframe header shorter than 14 bytes")
	errRadiotap     = errors.New("radiotap header shorter than 8 bytes")
	errRadiotapLen  = errors.New("radiotap header length beyond the frame or below 8 bytes")
	errNFLOG        = errors.New("NFLOG header shorter than 4 bytes")
	errNFLOGVersion = errors.New("NFLOG header with a version other than 0")
	errNFLOGTLV     = errors.New("NFLOG TLV cut short or shorter than its 4-byte header")
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
	hdrPPP      // PPP, with or without ff 03 (link types 9 and 50)
	hdrPPPHDLC  // link type 50: PPP, or Cisco HDLC when the address says so
	hdrCHDLC    // Cisco HDLC
	hdrDot11    // IEEE 802.11
	hdrRadiotap // radiotap, then IEEE 802.11
	hdrNFLOG    // Linux netfilter log
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

// chdlcNext returns the header that a Cisco HDLC protocol field announces:
// an EtherType, 0x0800 and 0x86dd for IP (values below 0x600, which
// Ethernet uses for lengths and LLC, are none of Cisco's).
func chdlcNext(t uint16) header {
	if t < 0x600 {
		return hdrNone
	}
	return etherNext(t)
}

// pppNext returns the header that a PPP protocol number announces: IPv4,
// IPv6, or MPLS (unicast and multicast), as Zeek's PPP analyzers dispatch
// them. Van Jacobson compressed TCP and the control protocols (LCP, IPCP,
// ...) carry no IP header.
func pppNext(proto uint16) header {
	switch proto {
	case 0x0021:
		return hdrIPv4
	case 0x0057:
		return hdrIPv6
	case 0x0281, 0x0283:
		return hdrMPLS
	}
	return hdrNone
}

// nflogNext returns the header of the packet an NFLOG record of address
// family af carries: AF_INET and Linux's AF_INET6 (10); bridge and ARP
// records carry none.
func nflogNext(af uint8) header {
	switch af {
	case 2:
		return hdrIPv4
	case 10:
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
		case hdrPPP:
			if h, data, err = decodePPP(data); err != nil {
				return truncated, err
			}
		case hdrPPPHDLC, hdrCHDLC:
			// LINKTYPE_PPP_HDLC holds PPP in HDLC-like framing or, told
			// by the address byte, Cisco PPP with HDLC framing (RFC
			// 1547), which is Cisco HDLC: address (0x0f unicast, 0x8f
			// broadcast), control, and an EtherType.
			if h == hdrPPPHDLC && (len(data) == 0 || data[0] != 0x0f && data[0] != 0x8f) {
				if h, data, err = decodePPP(data); err != nil {
					return truncated, err
				}
				break
			}
			if len(data) < 4 {
				return truncated, errCHDLC
			}
			h = chdlcNext(binary.BigEndian.Uint16(data[2:4]))
			data = data[4:]
		case hdrRadiotap:
			// Version, pad, length (little-endian, all of the radiotap
			// header), then the present bitmaps. The only field read is
			// Flags, for its data-pad bit; it follows TSFT, the one field
			// before it, aligned to 8 bytes.
			if len(data) < 8 {
				return truncated, errRadiotap
			}
			n := int(binary.LittleEndian.Uint16(data[2:4]))
			if n < 8 || n > len(data) {
				return truncated, errRadiotapLen
			}
			present, off := binary.LittleEndian.Uint32(data[4:8]), 8
			for word := present; word&(1<<31) != 0 && off+4 <= n; off += 4 {
				word = binary.LittleEndian.Uint32(data[off:])
			}
			padded := false // the 802.11 header is padded to 32 bits
			if present&2 != 0 {
				if present&1 != 0 {
					off = (off+7)&^7 + 8
				}
				padded = off < n && data[off]&0x20 != 0
			}
			if h, data, truncated, err = decodeDot11(data[n:], padded, truncated); err != nil {
				return truncated, err
			}
		case hdrDot11:
			if h, data, truncated, err = decodeDot11(data, false, truncated); err != nil {
				return truncated, err
			}
		case hdrNFLOG:
			h, data, truncated, err = decodeNFLOG(data, truncated)
			if err != nil {
				return truncated, err
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

// decodePPP decodes a PPP header: "ff 03" when the frame kept its
// HDLC-like framing (RFC 1662), then the protocol field, one byte when
// compressed (RFC 1661: the first byte of a protocol number is even, the
// last odd), as tcpdump reads it. (Zeek reads two bytes and so does not
// decode compressed protocol fields.)
func decodePPP(data []byte) (header, []byte, error) {
	if len(data) >= 2 && data[0] == 0xff && data[1] == 0x03 {
		data = data[2:]
	}
	switch {
	case len(data) >= 1 && data[0]&1 == 1:
		return pppNext(uint16(data[0])), data[1:], nil
	case len(data) >= 2:
		return pppNext(binary.BigEndian.Uint16(data[:2])), data[2:], nil
	}
	return hdrNone, data, errPPP
}

// decodeDot11 decodes the header of an IEEE 802.11 frame and returns what
// follows it: the LLC header of a data frame, or hdrNone for frames that
// carry no readable packet (management and control frames, data subtypes
// without a body, protected frames). padded says the header is padded to
// a multiple of 4 bytes (radiotap's data-pad flag).
//
// Zeek's 802.11 analyzer decodes the same frames but for these: it reads
// no HT Control field (present in QoS data frames with the order bit set,
// which it then fails to decode); it takes frames of the reserved type 3
// for data frames too, and looks for the protected bit in QoS frames
// only; and it decodes every subframe of an A-MSDU, where a Decoder, which
// gives one packet per frame, decodes the first.
func decodeDot11(data []byte, padded, truncated bool) (header, []byte, bool, error) {
	if len(data) < 24 {
		return hdrNone, data, truncated, errDot11
	}
	fc, flags := data[0], data[1]
	if fc&0x0c != 0x08 || fc&0x40 != 0 || flags&0x40 != 0 {
		return hdrNone, data[len(data):], truncated, nil
	}
	n := 24
	if flags&0x03 == 0x03 { // to and from the distribution system: a fourth address
		n = 30
	}
	amsdu := false
	if fc&0x80 != 0 { // QoS data: a QoS control field
		if len(data) < n+2 {
			return hdrNone, data, truncated, errDot11
		}
		amsdu = data[n]&0x80 != 0
		n += 2
		if flags&0x80 != 0 {
			n += 4
		}
	}
	if padded {
		n = (n + 3) &^ 3
	}
	if len(data) < n {
		return hdrNone, data, truncated, errDot11
	}
	data = data[n:]
	if amsdu {
		// Destination, source, length of the subframe's MSDU.
		if len(data) < 14 {
			return hdrNone, data, truncated, errAMSDU
		}
		l := int(binary.BigEndian.Uint16(data[12:14]))
		data = data[14:]
		if len(data) < l {
			truncated = true
		} else {
			data = data[:l]
		}
	}
	return hdrLLC, data, truncated, nil
}

// decodeNFLOG decodes the header and TLVs of a Linux netfilter log record
// and returns the packet of its payload TLV (type 9), or hdrNone when the
// record holds none. The TLVs' type and length are in the byte order of
// the host that captured them; as types are below 256, a zero first byte
// means big-endian. Each TLV is padded to 4 bytes, its length not
// counting the padding.
func decodeNFLOG(data []byte, truncated bool) (header, []byte, bool, error) {
	if len(data) < 4 {
		return hdrNone, data, truncated, errNFLOG
	}
	if data[1] != 0 {
		return hdrNone, data, truncated, errNFLOGVersion
	}
	next := nflogNext(data[0])
	data = data[4:]
	for len(data) > 0 {
		if len(data) < 4 {
			return hdrNone, data, truncated, errNFLOGTLV
		}
		var order binary.ByteOrder = binary.LittleEndian
		if data[2] == 0 && data[3] != 0 {
			order = binary.BigEndian
		}
		n, typ := int(order.Uint16(data[0:2])), order.Uint16(data[2:4])
		if n < 4 {
			return hdrNone, data, truncated, errNFLOGTLV
		}
		if typ == 9 {
			if n > len(data) {
				truncated, n = true, len(data)
			}
			return next, data[4:n], truncated, nil
		}
		n = (n + 3) &^ 3
		if n > len(data) {
			return hdrNone, data, truncated, errNFLOGTLV
		}
		data = data[n:]
	}
	return hdrNone, data, truncated, nil
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

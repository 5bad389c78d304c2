package capture

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Decoder decodes frames into Packets without allocating. It keeps no
// state between frames; it is a type so that decoders with state (caches,
// counters) can come without changing callers. A Decoder is not safe for
// concurrent use; use one per goroutine.
//
// The header chain follows the link header (after a radiotap header, an
// NFLOG header and TLVs, or the PPP framing) through 802.1Q and 802.1ad
// VLAN tags (any number), LLC/SNAP and MPLS label stacks to the first IP
// header, which ends it: tunnels (IP in IP, GRE, Teredo, VXLAN, ...) are
// not followed, as tcpdump's port filters do not follow them.
type Decoder struct{}

// NewDecoder returns a Decoder for every link type SupportedLinkType
// accepts.
func NewDecoder() *Decoder { return &Decoder{} }

// Decode decodes p.Data, a frame of link type p.LinkType, into p's other
// fields, which it resets first. The transport header (TCP, UDP, ICMP) is
// decoded with DecodeTransport for packets that are not fragments; for
// fragments, IPPayload and the fragment fields are set and the flow
// engine reassembles.
//
// A frame that carries no IP packet (ARP, spanning tree, ...) leaves
// IPVersion 0 and is not an error. A frame cut short by the snap length
// is decoded as far as it goes and sets Truncated. Decode returns a
// *LinkTypeError for a link type it cannot decode, and an error
// describing the header for a frame whose headers are invalid; p then
// holds what was decoded before the invalid header.
func (d *Decoder) Decode(p *Packet) error {
	// Most captures are made of Ethernet frames carrying a whole IPv4
	// packet that is not a fragment and has no options, with a whole TCP
	// or UDP header. Those are decoded here, every field but those Next
	// set once: the general path, decode, clears the Packet first, walks
	// the header chain and calls a function for each layer, which costs
	// twice as much. It decodes every other frame, and would decode these
	// to the same fields (TestDecodeEtherIPv4 holds the two to each
	// other).
	data := p.Data
	if p.LinkType != LinkTypeEthernet || len(data) < 14+20 || binary.BigEndian.Uint16(data[12:14]) != 0x0800 {
		return d.decode(p)
	}
	ip := data[14:]
	total := int(binary.BigEndian.Uint16(ip[2:4]))
	// Version 4 with a 20-byte header; not a fragment (no MF, offset 0);
	// the total length within the frame and covering the header.
	if ip[0] != 0x45 || total < 20 || total > len(ip) || binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0 {
		return d.decode(p)
	}
	// The transport fields are set as soon as they are known, which keeps
	// fewer values in registers: a fallback to decode below clears them.
	b := ip[20:total]
	proto := ip[9]
	switch proto {
	case 6:
		if len(b) < 20 {
			return d.decode(p)
		}
		off := int(b[12]>>4) * 4
		if off < 20 || off > len(b) {
			return d.decode(p)
		}
		p.SrcPort = binary.BigEndian.Uint16(b[0:2])
		p.DstPort = binary.BigEndian.Uint16(b[2:4])
		p.Seq = binary.BigEndian.Uint32(b[4:8])
		p.Ack = binary.BigEndian.Uint32(b[8:12])
		p.TCPFlags = b[13]
		p.Window = binary.BigEndian.Uint16(b[14:16])
		p.Payload = b[off:]
	case 17:
		if len(b) < 8 {
			return d.decode(p)
		}
		n := int(binary.BigEndian.Uint16(b[4:6]))
		if n < 8 || n > len(b) {
			return d.decode(p)
		}
		p.SrcPort = binary.BigEndian.Uint16(b[0:2])
		p.DstPort = binary.BigEndian.Uint16(b[2:4])
		p.Seq, p.Ack, p.TCPFlags, p.Window = 0, 0, 0, 0
		p.Payload = b[8:n]
	default:
		return d.decode(p)
	}
	p.IPVersion = 4
	// The addresses and the payload are stored together, with nothing
	// read between: their pointers then share one write barrier test.
	src, dst := netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20]))
	p.Src, p.Dst, p.IPPayload = src, dst, b
	p.IPLen = total
	p.TTL = ip[8]
	p.Fragment, p.MoreFrags, p.FragOffset = false, false, 0
	p.FragID = uint32(binary.BigEndian.Uint16(ip[4:6]))
	p.Proto = proto
	p.IPOffset, p.IPPayloadOffset = 14, 14+20
	p.ICMPType, p.ICMPCode = 0, 0
	p.Truncated = false
	return nil
}

// decode is Decode for every frame: the walk of the header chain.
func (d *Decoder) decode(p *Packet) error {
	// Clearing p in place and setting back what Next set, rather than
	// assigning p a literal built from its own fields, saves copying the
	// whole Packet through the stack twice.
	ts, data, lease, origLen, lt := p.TS, p.Data, p.Lease, p.OrigLen, p.LinkType
	*p = Packet{}
	p.TS, p.Data, p.Lease, p.OrigLen, p.LinkType = ts, data, lease, origLen, lt
	first := firstHeader(p.LinkType)
	switch first {
	case hdrNone:
		return &LinkTypeError{LinkType: p.LinkType, Interface: -1}
	case hdrRawIP:
		if len(p.Data) == 0 {
			p.Truncated = p.OrigLen > 0
			return nil
		}
		switch v := p.Data[0] >> 4; v {
		case 4:
			first = hdrIPv4
		case 6:
			first = hdrIPv6
		default:
			return fmt.Errorf("raw IP frame with IP version %d", v)
		}
	}
	var truncated bool
	var err error
	if data := p.Data; first == hdrEthernet && len(data) > 14 && binary.BigEndian.Uint16(data[12:14]) == 0x0800 {
		// IPv4 in Ethernet, what most frames are: decodeLink decodes the
		// same, after a walk of its chain of headers.
		truncated, err = decodeIPv4(p, data[14:])
	} else {
		truncated, err = decodeLink(p, first, data)
	}
	p.Truncated = truncated
	if err != nil {
		if !p.Truncated && len(p.Data) >= p.OrigLen {
			// A header that is invalid rather than cut short.
			return fmt.Errorf("%s frame: %w", LinkTypeName(p.LinkType), err)
		}
		p.Truncated = true
	}
	if p.IPVersion != 0 && !p.Fragment {
		p.decodeTransport(p.Proto, p.IPPayload)
	}
	return nil
}

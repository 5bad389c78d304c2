package capture

import (
	"encoding/binary"
	"fmt"
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
	// Clearing p in place and setting back what Next set, rather than
	// assigning p a literal built from its own fields, saves copying the
	// whole Packet through the stack twice.
	ts, data, origLen, lt := p.TS, p.Data, p.OrigLen, p.LinkType
	*p = Packet{}
	p.TS, p.Data, p.OrigLen, p.LinkType = ts, data, origLen, lt
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

package capture

import (
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// Decoder decodes frames into Packets with gopacket DecodingLayerParsers
// over layers it allocates once: decoding a packet allocates nothing. A
// Decoder is not safe for concurrent use; use one per goroutine.
//
// The layer chain follows the link header through 802.1Q and 802.1ad VLAN
// tags (any number), LLC/SNAP and MPLS label stacks to the first IP
// header, which ends it: tunnels (IP in IP, GRE, Teredo, VXLAN, ...) are
// not followed, as tcpdump's port filters do not follow them.
type Decoder struct {
	eth   layers.Ethernet
	dot1q layers.Dot1Q
	llc   layers.LLC
	snap  layers.SNAP
	loop  layers.Loopback
	fddi  fddiLayer
	sll   sllLayer
	sll2  sll2Layer
	mpls  mplsLayer
	ip4   ipv4Layer
	ip6   ipv6Layer

	// One parser per first layer; they share the layers above.
	ethP, loopP, fddiP, sllP, sll2P, ip4P, ip6P *gopacket.DecodingLayerParser
	decoded                                     []gopacket.LayerType
}

// NewDecoder returns a Decoder for every link type SupportedLinkType
// accepts.
func NewDecoder() *Decoder {
	d := &Decoder{decoded: make([]gopacket.LayerType, 0, 16)}
	var dlc gopacket.DecodingLayerContainer = gopacket.DecodingLayerSparse(nil)
	for _, l := range []gopacket.DecodingLayer{
		&d.eth, &d.dot1q, &d.llc, &d.snap, &d.loop, &d.fddi, &d.sll, &d.sll2, &d.mpls, &d.ip4, &d.ip6,
	} {
		dlc = dlc.Put(l)
	}
	parser := func(first gopacket.LayerType) *gopacket.DecodingLayerParser {
		p := gopacket.NewDecodingLayerParser(first)
		p.SetDecodingLayerContainer(dlc)
		// A layer nobody decodes (ARP, TCP after the IP layer, ...) ends
		// the chain; it is not an error.
		p.IgnoreUnsupported = true
		return p
	}
	d.ethP = parser(layers.LayerTypeEthernet)
	d.loopP = parser(layers.LayerTypeLoopback)
	d.fddiP = parser(layers.LayerTypeFDDI)
	d.sllP = parser(layers.LayerTypeLinuxSLL)
	d.sll2P = parser(LayerTypeLinuxSLL2)
	d.ip4P = parser(layers.LayerTypeIPv4)
	d.ip6P = parser(layers.LayerTypeIPv6)
	return d
}

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
	*p = Packet{TS: p.TS, Data: p.Data, OrigLen: p.OrigLen, LinkType: p.LinkType}
	var dlp *gopacket.DecodingLayerParser
	switch p.LinkType {
	case LinkTypeEthernet:
		dlp = d.ethP
	case LinkTypeNull, LinkTypeLoop:
		dlp = d.loopP
	case LinkTypeFDDI:
		dlp = d.fddiP
	case LinkTypeLinuxSLL:
		dlp = d.sllP
	case LinkTypeLinuxSLL2:
		dlp = d.sll2P
	case LinkTypeIPv4:
		dlp = d.ip4P
	case LinkTypeIPv6:
		dlp = d.ip6P
	case LinkTypeRaw, LinkTypeRawDLT12, LinkTypeRawDLT14:
		if len(p.Data) == 0 {
			p.Truncated = p.OrigLen > 0
			return nil
		}
		switch v := p.Data[0] >> 4; v {
		case 4:
			dlp = d.ip4P
		case 6:
			dlp = d.ip6P
		default:
			return fmt.Errorf("raw IP frame with IP version %d", v)
		}
	default:
		return &LinkTypeError{LinkType: p.LinkType, Interface: -1}
	}
	d.ip4.p, d.ip6.p = p, p
	err := dlp.DecodeLayers(p.Data, &d.decoded)
	p.Truncated = dlp.Truncated
	if err != nil {
		if !p.Truncated && len(p.Data) >= p.OrigLen {
			// A header that is invalid rather than cut short.
			return fmt.Errorf("%s frame: %w", LinkTypeName(p.LinkType), err)
		}
		p.Truncated = true
	}
	if p.IPVersion != 0 && !p.Fragment {
		p.DecodeTransport(p.Proto, p.IPPayload)
	}
	return nil
}

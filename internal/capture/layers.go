package capture

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// The decoding layers gopacket 1.1.19 lacks or gets wrong for this use:
//
//   - Linux cooked capture v2 (SLL2) has no layer at all;
//   - layers.LinuxSLL slices its address with the header's unchecked
//     address length and panics on a damaged frame; its address is not
//     needed here;
//   - layers.FDDI and layers.MPLS are not DecodingLayers;
//   - layers.IPv4 fails packets whose options are malformed (that BPF and
//     tcpdump still match), layers.IPv6 allocates every hop-by-hop option
//     it decodes, and both hand their payload to the next layer, which
//     would decode tunnelled packets over the outer header. The IP layers below fill
//     the Packet directly and end the layer chain: wirebench, like
//     tcpdump, classifies by the outer IP header.
//
// Errors are preallocated values so that a damaged frame costs no
// allocation.
var (
	errSLL     = errors.New("Linux cooked capture header shorter than 16 bytes")
	errSLL2    = errors.New("Linux cooked capture v2 header shorter than 20 bytes")
	errFDDI    = errors.New("FDDI header shorter than 13 bytes")
	errIPv4Ver = errors.New("IPv4 header with another IP version")
	errIPv4IHL = errors.New("IPv4 header length below 20 bytes")
	errIPv4Len = errors.New("IPv4 total length shorter than its header")
	errIPv6Ver = errors.New("IPv6 header with another IP version")
)

// LayerTypeLinuxSLL2 is the gopacket layer type of Linux cooked capture v2
// headers (LINKTYPE_LINUX_SLL2), numbered 1000 + the link type.
var LayerTypeLinuxSLL2 = gopacket.RegisterLayerType(1276, gopacket.LayerTypeMetadata{
	Name:    "LinuxSLL2",
	Decoder: gopacket.DecodeFunc(decodeSLL2),
})

// ethernetNext returns the layer that follows a link header carrying the
// EtherType-like protocol value proto: values below 0x600 are not
// EtherTypes, and 4 is Linux's ETH_P_802_2 (an LLC header follows).
func ethernetNext(proto uint16) gopacket.LayerType {
	switch {
	case proto == 4:
		return layers.LayerTypeLLC
	case proto < 0x600:
		return gopacket.LayerTypeZero
	}
	return layers.EthernetType(proto).LayerType()
}

// sllLayer decodes Linux cooked capture v1 headers: 16 bytes, the protocol
// in the last two.
type sllLayer struct {
	layers.BaseLayer
	proto uint16
}

func (l *sllLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 16 {
		df.SetTruncated()
		return errSLL
	}
	l.proto = binary.BigEndian.Uint16(data[14:16])
	l.BaseLayer = layers.BaseLayer{Contents: data[:16], Payload: data[16:]}
	return nil
}

func (l *sllLayer) CanDecode() gopacket.LayerClass    { return layers.LayerTypeLinuxSLL }
func (l *sllLayer) NextLayerType() gopacket.LayerType { return ethernetNext(l.proto) }

// sll2Layer decodes Linux cooked capture v2 headers (20 bytes): protocol
// (2), reserved (2), interface index (4), ARPHRD type (2), packet type (1),
// address length (1), address (8).
type sll2Layer struct {
	layers.BaseLayer
	proto uint16
}

func (l *sll2Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 20 {
		df.SetTruncated()
		return errSLL2
	}
	l.proto = binary.BigEndian.Uint16(data[0:2])
	l.BaseLayer = layers.BaseLayer{Contents: data[:20], Payload: data[20:]}
	return nil
}

func (l *sll2Layer) CanDecode() gopacket.LayerClass    { return LayerTypeLinuxSLL2 }
func (l *sll2Layer) NextLayerType() gopacket.LayerType { return ethernetNext(l.proto) }

// LayerType makes sll2Layer a gopacket.Layer, for decodeSLL2.
func (l *sll2Layer) LayerType() gopacket.LayerType { return LayerTypeLinuxSLL2 }

// decodeSLL2 lets gopacket.NewPacket decode SLL2 frames too.
func decodeSLL2(data []byte, p gopacket.PacketBuilder) error {
	l := &sll2Layer{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	next := l.NextLayerType()
	if next == gopacket.LayerTypeZero {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return p.NextDecoder(next)
}

// fddiLayer decodes FDDI headers: frame control (1), destination (6),
// source (6). LLC frames with 48-bit addresses (frame control bits
// xLFFzzzz with L=1, FF=01), which are what captures hold, carry an LLC
// header next; other frames (station management, tokens) carry no IP.
type fddiLayer struct {
	layers.BaseLayer
	next gopacket.LayerType
}

func (l *fddiLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 13 {
		df.SetTruncated()
		return errFDDI
	}
	l.next = gopacket.LayerTypeZero
	if data[0]&0x70 == 0x50 {
		l.next = layers.LayerTypeLLC
	}
	l.BaseLayer = layers.BaseLayer{Contents: data[:13], Payload: data[13:]}
	return nil
}

func (l *fddiLayer) CanDecode() gopacket.LayerClass    { return layers.LayerTypeFDDI }
func (l *fddiLayer) NextLayerType() gopacket.LayerType { return l.next }

// mplsLayer walks an MPLS label stack to its bottom entry and guesses the
// payload from the IP version nibble, as tcpdump and Wireshark do (MPLS
// does not say what it carries).
type mplsLayer struct {
	layers.BaseLayer
	next gopacket.LayerType
}

func (l *mplsLayer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	n := 0
	for {
		if len(data) < n+4 {
			// Stack cut short: nothing after it can be decoded.
			df.SetTruncated()
			l.next = gopacket.LayerTypeZero
			l.BaseLayer = layers.BaseLayer{Contents: data, Payload: data[len(data):]}
			return nil
		}
		bottom := data[n+2]&1 != 0
		n += 4
		if bottom {
			break
		}
	}
	l.BaseLayer = layers.BaseLayer{Contents: data[:n], Payload: data[n:]}
	l.next = gopacket.LayerTypeZero
	if len(l.Payload) > 0 {
		switch l.Payload[0] >> 4 {
		case 4:
			l.next = layers.LayerTypeIPv4
		case 6:
			l.next = layers.LayerTypeIPv6
		}
	}
	return nil
}

func (l *mplsLayer) CanDecode() gopacket.LayerClass    { return layers.LayerTypeMPLS }
func (l *mplsLayer) NextLayerType() gopacket.LayerType { return l.next }

// ipv4Layer decodes an IPv4 header into the Packet p.
type ipv4Layer struct {
	p *Packet
}

func (l *ipv4Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	p := l.p
	if len(data) < 20 {
		df.SetTruncated()
		return nil
	}
	if data[0]>>4 != 4 {
		return errIPv4Ver
	}
	hl := int(data[0]&0x0f) * 4
	if hl < 20 {
		return errIPv4IHL
	}
	total := int(binary.BigEndian.Uint16(data[2:4]))
	if total == 0 {
		// Captured before TCP segmentation offload split the packet:
		// the length is left for the hardware to fill in.
		total = len(data)
	}
	if total < hl {
		return errIPv4Len
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
		df.SetTruncated()
		return nil
	}
	if total > len(data) {
		df.SetTruncated()
		total = len(data)
	}
	// Bytes after the total length are link-layer padding, not payload.
	p.IPPayload = data[hl:total]
	return nil
}

func (l *ipv4Layer) CanDecode() gopacket.LayerClass { return layers.LayerTypeIPv4 }

// NextLayerType ends the layer chain: the transport header is decoded by
// Packet.DecodeTransport, and tunnels are not followed.
func (l *ipv4Layer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (l *ipv4Layer) LayerPayload() []byte              { return nil }

// ipv6Layer decodes an IPv6 header into the Packet p and walks the
// extension headers (hop-by-hop, routing, destination options, fragment,
// authentication, mobility, HIP, shim6) to the upper-layer header.
type ipv6Layer struct {
	p *Packet
}

func (l *ipv6Layer) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	p := l.p
	if len(data) < 40 {
		df.SetTruncated()
		return nil
	}
	if data[0]>>4 != 6 {
		return errIPv6Ver
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
		df.SetTruncated()
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
			df.SetTruncated()
			p.Proto = next
			p.IPPayloadOffset = offsetIn(p.Data, payload)
			return nil
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
	return nil
}

func (l *ipv6Layer) CanDecode() gopacket.LayerClass    { return layers.LayerTypeIPv6 }
func (l *ipv6Layer) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (l *ipv6Layer) LayerPayload() []byte              { return nil }

// offsetIn returns the offset of sub in frame, sub being frame or a slice
// of it (every layer slices its input forward, so the two end at the same
// place of the same array).
func offsetIn(frame, sub []byte) int { return cap(frame) - cap(sub) }

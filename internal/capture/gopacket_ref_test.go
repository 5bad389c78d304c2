package capture

import (
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// refDecoder is the decoder as it was written over gopacket's layers and
// DecodingLayerParser, kept as the reference that Decoder, which decodes
// the same headers by hand, must agree with (TestDecodeMatchesGopacket,
// FuzzDecode). The IP headers are decoded by the same functions in both.
type refDecoder struct {
	eth   layers.Ethernet
	dot1q layers.Dot1Q
	llc   layers.LLC
	snap  layers.SNAP
	loop  layers.Loopback
	fddi  refFDDI
	sll   refSLL
	sll2  refSLL2
	mpls  refMPLS
	ip4   refIPv4
	ip6   refIPv6

	ethP, loopP, fddiP, sllP, sll2P, ip4P, ip6P *gopacket.DecodingLayerParser
	decoded                                     []gopacket.LayerType
}

// refLayerTypeSLL2 is the gopacket layer type of Linux cooked capture v2
// headers, numbered 1000 + the link type.
var refLayerTypeSLL2 = gopacket.RegisterLayerType(1276, gopacket.LayerTypeMetadata{Name: "LinuxSLL2"})

func newRefDecoder() *refDecoder {
	d := &refDecoder{decoded: make([]gopacket.LayerType, 0, 16)}
	var dlc gopacket.DecodingLayerContainer = gopacket.DecodingLayerSparse(nil)
	for _, l := range []gopacket.DecodingLayer{
		&d.eth, &d.dot1q, &d.llc, &d.snap, &d.loop, &d.fddi, &d.sll, &d.sll2, &d.mpls, &d.ip4, &d.ip6,
	} {
		dlc = dlc.Put(l)
	}
	parser := func(first gopacket.LayerType) *gopacket.DecodingLayerParser {
		p := gopacket.NewDecodingLayerParser(first)
		p.SetDecodingLayerContainer(dlc)
		p.IgnoreUnsupported = true
		return p
	}
	d.ethP = parser(layers.LayerTypeEthernet)
	d.loopP = parser(layers.LayerTypeLoopback)
	d.fddiP = parser(layers.LayerTypeFDDI)
	d.sllP = parser(layers.LayerTypeLinuxSLL)
	d.sll2P = parser(refLayerTypeSLL2)
	d.ip4P = parser(layers.LayerTypeIPv4)
	d.ip6P = parser(layers.LayerTypeIPv6)
	return d
}

// Decode is Decoder.Decode as it was.
func (d *refDecoder) Decode(p *Packet) error {
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
			return fmt.Errorf("%s frame: %w", LinkTypeName(p.LinkType), err)
		}
		p.Truncated = true
	}
	if p.IPVersion != 0 && !p.Fragment {
		p.DecodeTransport(p.Proto, p.IPPayload)
	}
	return nil
}

// refCookedNext is how the gopacket decoder followed a cooked capture
// header's protocol: through gopacket's own EtherType table.
func refCookedNext(proto uint16) gopacket.LayerType {
	switch {
	case proto == 4:
		return layers.LayerTypeLLC
	case proto < 0x600:
		return gopacket.LayerTypeZero
	}
	return layers.EthernetType(proto).LayerType()
}

type refSLL struct {
	layers.BaseLayer
	proto uint16
}

func (l *refSLL) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 16 {
		df.SetTruncated()
		return errSLL
	}
	l.proto = uint16(data[14])<<8 | uint16(data[15])
	l.BaseLayer = layers.BaseLayer{Contents: data[:16], Payload: data[16:]}
	return nil
}

func (l *refSLL) CanDecode() gopacket.LayerClass    { return layers.LayerTypeLinuxSLL }
func (l *refSLL) NextLayerType() gopacket.LayerType { return refCookedNext(l.proto) }

type refSLL2 struct {
	layers.BaseLayer
	proto uint16
}

func (l *refSLL2) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < 20 {
		df.SetTruncated()
		return errSLL2
	}
	l.proto = uint16(data[0])<<8 | uint16(data[1])
	l.BaseLayer = layers.BaseLayer{Contents: data[:20], Payload: data[20:]}
	return nil
}

func (l *refSLL2) CanDecode() gopacket.LayerClass    { return refLayerTypeSLL2 }
func (l *refSLL2) NextLayerType() gopacket.LayerType { return refCookedNext(l.proto) }

type refFDDI struct {
	layers.BaseLayer
	next gopacket.LayerType
}

func (l *refFDDI) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
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

func (l *refFDDI) CanDecode() gopacket.LayerClass    { return layers.LayerTypeFDDI }
func (l *refFDDI) NextLayerType() gopacket.LayerType { return l.next }

type refMPLS struct {
	layers.BaseLayer
	next gopacket.LayerType
}

func (l *refMPLS) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	n := 0
	for {
		if len(data) < n+4 {
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

func (l *refMPLS) CanDecode() gopacket.LayerClass    { return layers.LayerTypeMPLS }
func (l *refMPLS) NextLayerType() gopacket.LayerType { return l.next }

type refIPv4 struct{ p *Packet }

func (l *refIPv4) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	t, err := decodeIPv4(l.p, data)
	if t {
		df.SetTruncated()
	}
	return err
}

func (l *refIPv4) CanDecode() gopacket.LayerClass    { return layers.LayerTypeIPv4 }
func (l *refIPv4) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (l *refIPv4) LayerPayload() []byte              { return nil }

type refIPv6 struct{ p *Packet }

func (l *refIPv6) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	t, err := decodeIPv6(l.p, data)
	if t {
		df.SetTruncated()
	}
	return err
}

func (l *refIPv6) CanDecode() gopacket.LayerClass    { return layers.LayerTypeIPv6 }
func (l *refIPv6) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }
func (l *refIPv6) LayerPayload() []byte              { return nil }

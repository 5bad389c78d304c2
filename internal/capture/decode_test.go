package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// decoded is the part of a Packet that a decode test checks.
type decoded struct {
	IPVersion        uint8
	Src, Dst         string
	IPLen            int
	Proto            uint8
	SrcPort, DstPort uint16
	Payload          string
	Fragment         bool
	MoreFrags        bool
	FragOffset       int
	FragID           uint32
	ICMPType         uint8
	Truncated        bool
}

func project(p *capture.Packet) decoded {
	d := decoded{
		IPVersion: p.IPVersion, IPLen: p.IPLen, Proto: p.Proto, SrcPort: p.SrcPort, DstPort: p.DstPort,
		Payload: string(p.Payload), Fragment: p.Fragment, MoreFrags: p.MoreFrags, FragOffset: p.FragOffset,
		FragID: p.FragID, ICMPType: p.ICMPType, Truncated: p.Truncated,
	}
	if p.Src.IsValid() {
		d.Src, d.Dst = p.Src.String(), p.Dst.String()
	}
	return d
}

const (
	v4a, v4b = "192.0.2.1", "198.51.100.2"
	v6a, v6b = "2001:db8::1", "2001:db8::2"
)

// tcp4 returns the decoded form of the segments built by ipv4TCP.
func tcp4(payload string) decoded {
	return decoded{IPVersion: 4, Src: v4a, Dst: v4b, IPLen: 40 + len(payload), FragID: 0x1234, Proto: 6, SrcPort: 40000, DstPort: 80, Payload: payload}
}

func udp4(payload string) decoded {
	return decoded{IPVersion: 4, Src: v4a, Dst: v4b, IPLen: 28 + len(payload), FragID: 0x1234, Proto: 17, SrcPort: 5353, DstPort: 53, Payload: payload}
}

func tcp6(payload string, ext int) decoded {
	return decoded{IPVersion: 6, Src: v6a, Dst: v6b, IPLen: 60 + ext + len(payload), Proto: 6, SrcPort: 40000, DstPort: 80, Payload: payload}
}

func udp6(payload string, ext int) decoded {
	return decoded{IPVersion: 6, Src: v6a, Dst: v6b, IPLen: 48 + ext + len(payload), Proto: 17, SrcPort: 5353, DstPort: 53, Payload: payload}
}

// Layer stacks above the link header.
func ipv4TCP(payload string) []gopacket.SerializableLayer {
	ip := ct.IPv4(v4a, v4b, layers.IPProtocolTCP)
	return []gopacket.SerializableLayer{ip, ct.TCP(40000, 80, ip), gopacket.Payload(payload)}
}

func ipv4UDP(payload string) []gopacket.SerializableLayer {
	ip := ct.IPv4(v4a, v4b, layers.IPProtocolUDP)
	return []gopacket.SerializableLayer{ip, ct.UDP(5353, 53, ip), gopacket.Payload(payload)}
}

// ipv6 builds IPv6 before a TCP or UDP header, with the extension headers
// ext in between, the first of type first.
func ipv6(udp bool, payload string, first layers.IPProtocol, ext ...ct.Header) []gopacket.SerializableLayer {
	proto := layers.IPProtocolTCP
	if udp {
		proto = layers.IPProtocolUDP
	}
	ip := ct.IPv6(v6a, v6b, proto)
	ls := []gopacket.SerializableLayer{ip}
	if len(ext) > 0 {
		ip.NextHeader = first
	}
	for _, e := range ext {
		ls = append(ls, e)
	}
	if udp {
		ls = append(ls, ct.UDP(5353, 53, ip))
	} else {
		ls = append(ls, ct.TCP(40000, 80, ip))
	}
	return append(ls, gopacket.Payload(payload))
}

func build(link []gopacket.SerializableLayer, rest []gopacket.SerializableLayer) []byte {
	return ct.Serialize(append(link, rest...)...)
}

func eth(t layers.EthernetType) []gopacket.SerializableLayer {
	return []gopacket.SerializableLayer{ct.Ether(t)}
}

func TestDecode(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	v4tcp := ipv4TCP("GET / HTTP/1.1\r\n")
	want4 := tcp4("GET / HTTP/1.1\r\n")
	raw4 := ct.Serialize(v4tcp...)
	raw6 := ct.Serialize(ipv6(false, "x", 0)...)
	llc, snap := ct.LLCSNAP(layers.EthernetTypeIPv4)
	mpls := func(label uint32, bottom bool) *layers.MPLS {
		return &layers.MPLS{Label: label, StackBottom: bottom, TTL: 64}
	}
	hbh := ct.IPv6Ext(0, layers.IPProtocolTCP, 0)
	// padded is a UDP frame that Ethernet pads to 60 bytes, plus a
	// 4-byte frame check sequence: neither is payload.
	padded := append(build(eth(layers.EthernetTypeIPv4), ipv4UDP("q")), 0xde, 0xad, 0xbe, 0xef)
	tsoTCP := build(eth(layers.EthernetTypeIPv4), ipv4TCP("abcdefghij"))
	tsoTCP[14+2], tsoTCP[14+3] = 0, 0
	withOpts := func() []byte {
		ip := ct.IPv4(v4a, v4b, layers.IPProtocolUDP)
		ip.Options = []layers.IPv4Option{{OptionType: 0x94, OptionLength: 4, OptionData: []byte{0, 0}}} // router alert
		return ct.Serialize(ct.Ether(layers.EthernetTypeIPv4), ip, ct.UDP(5353, 53, ip), gopacket.Payload("opt"))
	}()
	badOpts := func() []byte {
		b := bytes.Clone(withOpts)
		b[14+21] = 40 // option length beyond the header: BPF and tcpdump still match
		return b
	}()
	big := build(eth(layers.EthernetTypeIPv4), ipv4TCP(strings.Repeat("y", 100)))
	big6 := build(eth(layers.EthernetTypeIPv6), ipv6(false, "z", 0, ct.IPv6Ext(0, layers.IPProtocolTCP, 2)))
	udpDatagram := build(eth(layers.EthernetTypeIPv4), ipv4UDP(strings.Repeat("d", 50)))
	frags4 := ct.Fragment4(udpDatagram, 14, 24)
	udp6Datagram := build(eth(layers.EthernetTypeIPv6), ipv6(true, strings.Repeat("e", 50), 0))
	frags6 := ct.Fragment6(udp6Datagram, 14, 24, 0xabcdef)
	icmp := func() []byte {
		ip := ct.IPv4(v4a, v4b, layers.IPProtocolICMPv4)
		return ct.Serialize(ct.Ether(layers.EthernetTypeIPv4), ip, &layers.ICMPv4{TypeCode: layers.CreateICMPv4TypeCode(8, 0)}, gopacket.Payload("ping"))
	}()
	arp := ct.Serialize(ct.Ether(layers.EthernetTypeARP), &layers.ARP{AddrType: layers.LinkTypeEthernet, Protocol: layers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: make([]byte, 6), SourceProtAddress: make([]byte, 4),
		DstHwAddress: make([]byte, 6), DstProtAddress: make([]byte, 4)})

	// IEEE 802.11 frames: an 802.11 header (after a radiotap one for
	// link type 127), LLC/SNAP, IP.
	llc6, snap6 := ct.LLCSNAP(layers.EthernetTypeIPv6)
	wifi := func(o ct.Dot11, rest ...gopacket.SerializableLayer) []byte {
		return build([]gopacket.SerializableLayer{ct.Dot11Header(o), llc, snap}, rest)
	}
	wifi6 := build([]gopacket.SerializableLayer{ct.Dot11Header(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x02}), llc6, snap6}, ipv6(true, "w6", 0))
	amsdu := func() []byte {
		msdu := build([]gopacket.SerializableLayer{llc, snap}, v4tcp)
		h := append(ct.Dot11Header(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x01, AMSDU: true}), ct.AMSDUSubframe(len(msdu))...)
		second := append(ct.AMSDUSubframe(len(msdu)), msdu...)
		return slices.Concat([]byte(h), msdu, make([]byte, (4-len(msdu)%4)%4), second)
	}()
	qos := wifi(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x01}, v4tcp...)
	radiotap := func(flags byte, frame []byte) []byte { return append(ct.Radiotap(flags), frame...) }
	// The data-pad flag: the 26-byte QoS header is padded to 28 bytes.
	padded11 := radiotap(0x20, slices.Concat(qos[:26], []byte{0, 0}, qos[26:]))
	fcs := radiotap(0x10, append(bytes.Clone(qos), 0xde, 0xad, 0xbe, 0xef))
	badRadiotap := radiotap(0, qos)
	badRadiotap[2] = 0xff
	nflog := func(af byte, o binary.AppendByteOrder, pkt []byte) []byte {
		return append(ct.NFLOG(af, len(pkt), o), pkt...)
	}
	noPayload := ct.NFLOG(2, 0, le)[:4+16]
	nflogV1 := nflog(2, le, raw4)
	nflogV1[1] = 1
	nflogBadTLV := nflog(2, le, raw4)
	nflogBadTLV[4] = 2 // a TLV shorter than its header

	tests := []struct {
		name     string
		linkType uint16
		data     []byte
		origLen  int // 0: len(data)
		want     decoded
		err      string // error substring
	}{
		{"ethernet ipv4 tcp", 1, build(eth(layers.EthernetTypeIPv4), v4tcp), 0, want4, ""},
		{"ethernet ipv4 udp", 1, build(eth(layers.EthernetTypeIPv4), ipv4UDP("query")), 0, udp4("query"), ""},
		{"ethernet ipv6 tcp", 1, build(eth(layers.EthernetTypeIPv6), ipv6(false, "hello", 0)), 0, tcp6("hello", 0), ""},
		{"vlan", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeDot1Q), ct.VLAN(10, layers.EthernetTypeIPv4)}, v4tcp), 0, want4, ""},
		{"qinq 802.1ad", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeQinQ), ct.VLAN(10, layers.EthernetTypeDot1Q), ct.VLAN(20, layers.EthernetTypeIPv6)}, ipv6(true, "q6", 0)), 0, udp6("q6", 0), ""},
		{"three vlan tags", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeDot1Q), ct.VLAN(1, layers.EthernetTypeDot1Q), ct.VLAN(2, layers.EthernetTypeQinQ), ct.VLAN(3, layers.EthernetTypeIPv4)}, v4tcp), 0, want4, ""},
		{"802.3 llc snap", 1, build([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeLLC}, llc, snap}, v4tcp), 0, want4, ""},
		{"mpls", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeMPLSUnicast), mpls(100, true)}, v4tcp), 0, want4, ""},
		{"mpls stack in vlan", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeDot1Q), ct.VLAN(7, layers.EthernetTypeMPLSUnicast), mpls(100, false), mpls(200, true)}, ipv6(false, "m", 0)), 0, tcp6("m", 0), ""},
		{"fddi llc snap", 10, build([]gopacket.SerializableLayer{ct.FDDI(), llc, snap}, v4tcp), 0, want4, ""},
		{"null little-endian AF_INET", 0, append(ct.Loopback(2, le), raw4...), 0, want4, ""},
		{"null big-endian AF_INET", 0, append(ct.Loopback(2, be), raw4...), 0, want4, ""},
		{"null AF_INET6 24 (NetBSD, OpenBSD)", 0, append(ct.Loopback(24, le), raw6...), 0, tcp6("x", 0), ""},
		{"null AF_INET6 28 (FreeBSD)", 0, append(ct.Loopback(28, le), raw6...), 0, tcp6("x", 0), ""},
		{"null AF_INET6 30 (macOS)", 0, append(ct.Loopback(30, le), raw6...), 0, tcp6("x", 0), ""},
		{"null AF_INET6 30 big-endian", 0, append(ct.Loopback(30, be), raw6...), 0, tcp6("x", 0), ""},
		{"loop AF_INET", 108, append(ct.Loopback(2, be), raw4...), 0, want4, ""},
		{"loop AF_INET6", 108, append(ct.Loopback(24, be), raw6...), 0, tcp6("x", 0), ""},
		{"linux sll", 113, append(ct.SLL(0x0800), raw4...), 0, want4, ""},
		{"linux sll llc", 113, build([]gopacket.SerializableLayer{ct.SLL(4), llc, snap}, v4tcp), 0, want4, ""},
		{"linux sll2 ipv6", 276, append(ct.SLL2(0x86dd), raw6...), 0, tcp6("x", 0), ""},
		{"linux sll2 vlan", 276, build([]gopacket.SerializableLayer{ct.SLL2(0x8100), ct.VLAN(5, layers.EthernetTypeIPv4)}, v4tcp), 0, want4, ""},
		{"raw 101 ipv4", 101, raw4, 0, want4, ""},
		{"raw 101 ipv6", 101, raw6, 0, tcp6("x", 0), ""},
		{"raw DLT 12", 12, raw4, 0, want4, ""},
		{"raw DLT 14", 14, raw6, 0, tcp6("x", 0), ""},
		{"raw ipv4 228", 228, raw4, 0, want4, ""},
		{"raw ipv6 229", 229, raw6, 0, tcp6("x", 0), ""},
		{"ipv6 hop-by-hop", 1, build(eth(layers.EthernetTypeIPv6), ipv6(false, "h", 0, hbh)), 0, tcp6("h", 8), ""},
		{"ipv6 routing", 1, build(eth(layers.EthernetTypeIPv6), ipv6(true, "r", 43, ct.IPv6Ext(43, layers.IPProtocolUDP, 2))), 0, udp6("r", 24), ""},
		{"ipv6 destination options", 1, build(eth(layers.EthernetTypeIPv6), ipv6(false, "d", 60, ct.IPv6Ext(60, layers.IPProtocolTCP, 1))), 0, tcp6("d", 16), ""},
		{"ipv6 chain", 1, build(eth(layers.EthernetTypeIPv6), ipv6(true, "c", 0,
			ct.IPv6Ext(0, 43, 0), ct.IPv6Ext(43, 60, 1), ct.IPv6Ext(60, 51, 0), ct.IPv6AH(layers.IPProtocolUDP))), 0, udp6("c", 8+16+8+24), ""},
		{"ipv6 atomic fragment", 1, build(eth(layers.EthernetTypeIPv6), ipv6(false, "a", 44, ct.IPv6Frag(layers.IPProtocolTCP, 0, false, 9))), 0, tcp6("a", 8), ""},
		{"ipv4 options", 1, withOpts, 0, decoded{IPVersion: 4, FragID: 0x1234, Src: v4a, Dst: v4b, IPLen: 35, Proto: 17, SrcPort: 5353, DstPort: 53, Payload: "opt"}, ""},
		{"ipv4 malformed options", 1, badOpts, 0, decoded{IPVersion: 4, FragID: 0x1234, Src: v4a, Dst: v4b, IPLen: 35, Proto: 17, SrcPort: 5353, DstPort: 53, Payload: "opt"}, ""},
		{"ethernet padding and FCS", 1, padded, 0, udp4("q"), ""},
		{"ipv4 length 0 (segmentation offload)", 1, tsoTCP, 0, tcp4("abcdefghij"), ""},
		{"icmp", 1, icmp, 0, decoded{IPVersion: 4, FragID: 0x1234, Src: v4a, Dst: v4b, IPLen: 32, Proto: 1, ICMPType: 8, Payload: "\x00\x00\x00\x00ping"}, ""},
		{"arp is not ip", 1, arp, 0, decoded{}, ""},
		{"ipv4 first fragment", 1, frags4[0], 0, decoded{IPVersion: 4, Src: v4a, Dst: v4b, IPLen: 44, Proto: 17, Fragment: true, MoreFrags: true, FragID: 0x1234}, ""},
		{"ipv4 middle fragment", 1, frags4[1], 0, decoded{IPVersion: 4, Src: v4a, Dst: v4b, IPLen: 44, Proto: 17, Fragment: true, MoreFrags: true, FragOffset: 24, FragID: 0x1234}, ""},
		{"ipv4 last fragment", 1, frags4[2], 0, decoded{IPVersion: 4, Src: v4a, Dst: v4b, IPLen: 30, Proto: 17, Fragment: true, FragOffset: 48, FragID: 0x1234}, ""},
		{"ipv6 first fragment", 1, frags6[0], 0, decoded{IPVersion: 6, Src: v6a, Dst: v6b, IPLen: 72, Proto: 17, Fragment: true, MoreFrags: true, FragID: 0xabcdef}, ""},
		{"ipv6 last fragment", 1, frags6[2], 0, decoded{IPVersion: 6, Src: v6a, Dst: v6b, IPLen: 58, Proto: 17, Fragment: true, FragOffset: 48, FragID: 0xabcdef}, ""},
		{"cut in ethernet header", 1, big[:10], len(big), decoded{Truncated: true}, ""},
		{"cut in ipv4 header", 1, big[:30], len(big), decoded{Truncated: true}, ""},
		{"cut after ipv4 header", 1, big[:34], len(big), decoded{IPVersion: 4, FragID: 0x1234, Src: v4a, Dst: v4b, IPLen: 140, Proto: 6, Truncated: true}, ""},
		{"cut in tcp header", 1, big[:40], len(big), decoded{IPVersion: 4, FragID: 0x1234, Src: v4a, Dst: v4b, IPLen: 140, Proto: 6, Truncated: true}, ""},
		{"cut in payload", 1, big[:64], len(big), func() decoded { d := tcp4(strings.Repeat("y", 10)); d.IPLen = 140; d.Truncated = true; return d }(), ""},
		{"cut in ipv6 extension header", 1, big6[:14+40+12], len(big6), decoded{IPVersion: 6, Src: v6a, Dst: v6b, IPLen: 40 + 24 + 20 + 1, Proto: 0, Truncated: true}, ""},
		{"cut in vlan tag", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeDot1Q), ct.VLAN(10, layers.EthernetTypeIPv4)}, v4tcp)[:16], 80, decoded{Truncated: true}, ""},
		{"802.11 data to DS", 105, wifi(ct.Dot11{FC: ct.Dot11Data, Flags: 0x01}, v4tcp...), 0, want4, ""},
		{"802.11 QoS data from DS ipv6", 105, wifi6, 0, udp6("w6", 0), ""},
		{"802.11 four addresses", 105, wifi(ct.Dot11{FC: ct.Dot11Data, Flags: 0x03}, v4tcp...), 0, want4, ""},
		{"802.11 QoS data with HT control", 105, wifi(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x81, HTControl: true}, v4tcp...), 0, want4, ""},
		{"802.11 A-MSDU: the first subframe", 105, amsdu, 0, want4, ""},
		{"802.11 protected", 105, wifi(ct.Dot11{FC: ct.Dot11Data, Flags: 0x41}, v4tcp...), 0, decoded{}, ""},
		{"802.11 null data", 105, ct.Dot11Header(ct.Dot11{FC: ct.Dot11Null, Flags: 0x01}), 0, decoded{}, ""},
		{"802.11 beacon", 105, append(ct.Dot11Header(ct.Dot11{FC: ct.Dot11Beacon}), make([]byte, 12)...), 0, decoded{}, ""},
		{"802.11 cut in header", 105, qos[:20], len(qos), decoded{Truncated: true}, ""},
		{"802.11 header too short", 105, qos[:20], 0, decoded{}, "IEEE 802.11 data frame header cut short"},
		{"802.11 QoS header too short", 105, qos[:25], 0, decoded{}, "IEEE 802.11 data frame header cut short"},
		{"radiotap", 127, radiotap(0, qos), 0, want4, ""},
		{"radiotap data pad", 127, padded11, 0, want4, ""},
		{"radiotap with FCS", 127, fcs, 0, want4, ""},
		{"radiotap length beyond the frame", 127, badRadiotap, 0, decoded{}, "radiotap header length beyond the frame or below 8 bytes"},
		{"radiotap cut", 127, radiotap(0, qos)[:6], 200, decoded{Truncated: true}, ""},
		{"nflog ipv4 little-endian", 239, nflog(2, le, raw4), 0, want4, ""},
		{"nflog ipv6 big-endian", 239, nflog(10, be, raw6), 0, tcp6("x", 0), ""},
		{"nflog without payload", 239, noPayload, 0, decoded{}, ""},
		{"nflog version 1", 239, nflogV1, 0, decoded{}, "NFLOG header with a version other than 0"},
		{"nflog bad tlv length", 239, nflogBadTLV, 0, decoded{}, "NFLOG TLV cut short or shorter than its 4-byte header"},
		{"nflog cut in payload", 239, nflog(2, le, raw4)[:30], 100, decoded{Truncated: true}, ""},
		{"ppp framed ipv4", 9, append(ct.PPP(0x21, true), raw4...), 0, want4, ""},
		{"ppp unframed ipv6", 9, append(ct.PPP(0x57, false), raw6...), 0, tcp6("x", 0), ""},
		{"ppp compressed protocol", 9, append([]byte{0xff, 0x03, 0x21}, raw4...), 0, want4, ""},
		{"ppp lcp", 9, append(ct.PPP(0xc021, true), 1, 1, 0, 4), 0, decoded{}, ""},
		{"ppp empty after framing", 9, []byte{0xff, 0x03}, 0, decoded{}, "PPP header too short for its protocol field"},
		{"ppp hdlc", 50, append(ct.PPP(0x21, true), raw4...), 0, want4, ""},
		{"ppp hdlc mpls", 50, build([]gopacket.SerializableLayer{ct.PPP(0x281, true), mpls(16, true)}, v4tcp), 0, want4, ""},
		{"ppp hdlc, cisco framing", 50, append(ct.CHDLC(0x86dd), raw6...), 0, tcp6("x", 0), ""},
		{"cisco hdlc ipv4", 104, append(ct.CHDLC(0x0800), raw4...), 0, want4, ""},
		{"cisco hdlc slarp", 104, append(ct.CHDLC(0x8035), make([]byte, 20)...), 0, decoded{}, ""},
		{"cisco hdlc too short", 104, []byte{0x0f, 0}, 0, decoded{}, "HDLC header shorter than 4 bytes"},
		{"unsupported link type", 119, raw4, 0, decoded{}, "link type 119 (IEEE 802.11 Prism) is not supported"},
		{"ipv4 header length below 20", 1, func() []byte { b := bytes.Clone(padded); b[14] = 0x43; return b }(), 0, decoded{}, "IPv4 header length below 20 bytes"},
		{"ipv4 ethertype with ipv6 inside", 1, append(bytes.Clone(padded[:14]), raw6...), 0, decoded{}, "IPv4 header with another IP version"},
		{"raw ip version 5", 101, append([]byte{0x50}, raw4[1:]...), 0, decoded{}, "raw IP frame with IP version 5"},
		{"null with unknown family", 0, append(ct.Loopback(99, le), raw4...), 0, decoded{}, ""},
		{"empty raw frame", 101, nil, 0, decoded{}, ""},
	}
	d := capture.NewDecoder()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := capture.Packet{Data: tt.data, OrigLen: tt.origLen, LinkType: tt.linkType, TS: 42}
			if p.OrigLen == 0 {
				p.OrigLen = len(tt.data)
			}
			// Stale fields from a previous packet must not survive.
			p.SrcPort, p.Fragment, p.Truncated, p.Payload = 1, true, true, []byte("stale")
			err := d.Decode(&p)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Decode: %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Decode error %v, want %q", err, tt.err)
			}
			if got := project(&p); got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if p.TS != 42 || p.LinkType != tt.linkType || len(p.Data) != len(tt.data) {
				t.Errorf("Decode changed the frame fields")
			}
			checkOffsets(t, &p)
		})
	}
}

// checkOffsets checks that IPOffset and IPPayloadOffset point where the
// decoded headers and payload are.
func checkOffsets(t *testing.T, p *capture.Packet) {
	t.Helper()
	if p.IPVersion == 0 {
		return
	}
	if p.Data[p.IPOffset]>>4 != p.IPVersion {
		t.Errorf("IPOffset %d does not point at an IPv%d header", p.IPOffset, p.IPVersion)
	}
	if p.IPPayloadOffset < p.IPOffset || p.IPPayloadOffset > len(p.Data) {
		t.Fatalf("IPPayloadOffset %d out of range", p.IPPayloadOffset)
	}
	if len(p.IPPayload) > 0 && &p.Data[p.IPPayloadOffset] != &p.IPPayload[0] {
		t.Errorf("IPPayloadOffset %d is not where IPPayload starts", p.IPPayloadOffset)
	}
}

func TestDecodeErrors(t *testing.T) {
	d := capture.NewDecoder()
	p := capture.Packet{LinkType: 119, Data: make([]byte, 40), OrigLen: 40}
	var le *capture.LinkTypeError
	if err := d.Decode(&p); !errors.As(err, &le) || le.LinkType != 119 {
		t.Errorf("Decode of link type 119 = %v, want a LinkTypeError", err)
	}
	if capture.SupportedLinkType(119) || !capture.SupportedLinkType(276) {
		t.Error("SupportedLinkType disagrees with the Decoder")
	}
}

// TestDecodeAllocs proves that decoding allocates nothing, whatever the
// link type or shape of the packet.
func TestDecodeAllocs(t *testing.T) {
	frames := []struct {
		lt   uint16
		data []byte
	}{
		{1, ct.TCP4(v4a, v4b, 1, 80, []byte("x"))},
		{1, ct.UDP6(v6a, v6b, 1, 53, []byte("x"))},
		{1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeQinQ), ct.VLAN(1, layers.EthernetTypeDot1Q), ct.VLAN(2, layers.EthernetTypeIPv4)}, ipv4TCP("v"))},
		{1, build(eth(layers.EthernetTypeIPv6), ipv6(true, "c", 0, ct.IPv6Ext(0, 43, 0), ct.IPv6Ext(43, layers.IPProtocolUDP, 1)))},
		{0, append(ct.Loopback(30, binary.LittleEndian), ct.Serialize(ipv6(false, "x", 0)...)...)},
		{276, append(ct.SLL2(0x0800), ct.Serialize(ipv4UDP("x")...)...)},
		{113, append(ct.SLL(0x86dd), ct.Serialize(ipv6(true, "x", 0)...)...)},
		{101, ct.Serialize(ipv4TCP("raw")...)},
		{1, ct.Fragment4(ct.UDP4(v4a, v4b, 1, 53, make([]byte, 64)), 14, 32)[1]},
		{1, ct.TCP4(v4a, v4b, 1, 80, make([]byte, 100))[:40]},
	}
	for lt, fs := range linkTypeFrames() {
		for _, f := range fs {
			frames = append(frames, struct {
				lt   uint16
				data []byte
			}{lt, f})
		}
	}
	d := capture.NewDecoder()
	var p capture.Packet
	allocs := testing.AllocsPerRun(100, func() {
		for _, f := range frames {
			p.Data, p.OrigLen, p.LinkType = f.data, len(f.data), f.lt
			if err := d.Decode(&p); err != nil {
				t.Fatal(err)
			}
		}
	})
	if allocs != 0 {
		t.Errorf("Decode allocates %.1f times per run of %d frames, want 0", allocs, len(frames))
	}
}

func TestAddrs(t *testing.T) {
	// Addresses are plain (not IPv4-mapped IPv6) so that they compare
	// equal to netip.MustParseAddr.
	d := capture.NewDecoder()
	p := capture.Packet{Data: ct.TCP4(v4a, v4b, 1, 80, nil), LinkType: 1}
	if err := d.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Src != netip.MustParseAddr(v4a) || p.Dst != netip.MustParseAddr(v4b) {
		t.Errorf("addresses %v %v", p.Src, p.Dst)
	}
}

// TestDecodeEtherIPv4 holds Decode's fast path for Ethernet frames of IPv4
// to the general path: on every frame of the corpus and of the decoder's
// seeds, whole and cut short, a Packet that held another packet's fields
// decodes to what the general path makes of a cleared one.
func TestDecodeEtherIPv4(t *testing.T) {
	var frames [][]byte
	for _, s := range decodeSeeds() {
		if s.linkType == capture.LinkTypeEthernet {
			frames = append(frames, s.data)
		}
	}
	frames = append(frames,
		ct.TCP4(v4a, v4b, 1, 2, nil),
		ct.UDP4(v4a, v4b, 53, 53, []byte("query")),
		ct.UDP4(v4a, v4b, 53, 53, nil))
	c := corpustest.LoadCorpus(t)
	for _, e := range c.Entries {
		r, err := capture.Open(e.File(c))
		if err != nil {
			continue
		}
		var p capture.Packet
		for r.Next(&p) == nil {
			if p.LinkType == capture.LinkTypeEthernet {
				frames = append(frames, slices.Clone(p.Data))
			}
		}
		r.Close()
	}
	d := capture.NewDecoder()
	stale := capture.Packet{
		IPVersion: 6, Src: netip.MustParseAddr(v6a), Dst: netip.MustParseAddr(v6b), IPLen: 9, TTL: 9, Fragment: true, MoreFrags: true,
		FragOffset: 9, FragID: 9, Proto: 9, IPPayload: []byte("x"), IPOffset: 9, IPPayloadOffset: 9,
		SrcPort: 9, DstPort: 9, Seq: 9, Ack: 9, TCPFlags: 9, Window: 9, Payload: []byte("y"),
		ICMPType: 9, ICMPCode: 9, Truncated: true,
	}
	// The fast path must set every field Next does not: a field added to
	// Packet must be made stale here too.
	sv := reflect.ValueOf(stale)
	for i := range sv.NumField() {
		switch name := sv.Type().Field(i).Name; {
		case name == "TS" || name == "Data" || name == "Lease" || name == "OrigLen" || name == "LinkType":
		case sv.Field(i).IsZero():
			t.Fatalf("field %s of the stale packet is zero: give it a value", name)
		}
	}
	for _, f := range frames {
		for _, data := range [][]byte{f, f[:len(f)*3/4], f[:len(f)/2]} {
			got := stale
			got.TS, got.Data, got.OrigLen, got.LinkType = 1, data, len(f), capture.LinkTypeEthernet
			want := capture.Packet{TS: 1, Data: data, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}
			gotErr, wantErr := d.Decode(&got), d.DecodeGeneral(&want)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) ||
				cap(got.IPPayload) != cap(want.IPPayload) || cap(got.Payload) != cap(want.Payload) {
				t.Fatalf("frame %x:\nfast path %+v (%v)\ngeneral   %+v (%v)", data, got, gotErr, want, wantErr)
			}
		}
	}
}

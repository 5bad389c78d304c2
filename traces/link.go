package traces

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/internal/capture"
)

// Link is the link layer the generator writes frames in.
type Link string

// Link layers. Every frame is built as Ethernet; the others carry the
// same packet behind their own header, as the captures Zeek reads have
// them.
const (
	LinkEthernet  Link = "ethernet"   // Ethernet II, 802.1Q tags on VLAN sessions (link type 1)
	LinkIEEE80211 Link = "ieee802.11" // 802.11 QoS data frames with LLC/SNAP (105)
	LinkRadiotap  Link = "radiotap"   // the same after a radiotap header (127)
	LinkNFLOG     Link = "nflog"      // Linux netfilter log records (239)
	LinkPPP       Link = "ppp"        // PPP with HDLC-like framing (9)
	LinkPPPHDLC   Link = "ppp-hdlc"   // PPP in HDLC framing (50)
	LinkCHDLC     Link = "chdlc"      // Cisco HDLC (104)
)

// Links lists the link layers in the order the help text gives them.
var Links = []Link{LinkEthernet, LinkIEEE80211, LinkRadiotap, LinkNFLOG, LinkPPP, LinkPPPHDLC, LinkCHDLC}

// linkTypes are the LINKTYPE numbers of the file headers.
var linkTypes = map[Link]uint16{
	LinkEthernet: capture.LinkTypeEthernet, LinkIEEE80211: capture.LinkTypeIEEE80211, LinkRadiotap: capture.LinkTypeRadiotap,
	LinkNFLOG: capture.LinkTypeNFLOG, LinkPPP: capture.LinkTypePPP, LinkPPPHDLC: capture.LinkTypePPPHDLC, LinkCHDLC: capture.LinkTypeCHDLC,
}

// linkType returns the LINKTYPE number of l ("" is Ethernet), or 0.
func (l Link) linkType() uint16 {
	if l == "" {
		return capture.LinkTypeEthernet
	}
	return linkTypes[l]
}

// relink rewrites the Ethernet frame f for link l into buf and returns
// it; Ethernet frames are returned as they are. 802.11 frames keep 802.1Q
// tags behind their SNAP header, as bridges write them; Cisco HDLC, PPP
// and NFLOG carry the IP packet alone. Ethernet's padding of short frames
// is not copied.
func relink(l Link, f []byte, buf []byte) []byte {
	if l == "" || l == LinkEthernet || len(f) < 14 {
		return f
	}
	ipOff := 14
	if binary.BigEndian.Uint16(f[12:14]) == etherVLAN {
		ipOff = 18
	}
	f = f[:ipEnd(f, ipOff)]
	ip, et := f[ipOff:], f[12:]
	v6 := len(ip) > 0 && ip[0]>>4 == 6
	b := buf[:0]
	switch l {
	case LinkRadiotap:
		// Version 0, length 10, the Flags and Rate fields: no flags,
		// 6 Mb/s.
		b = append(b, 0, 0, 10, 0, 0x06, 0, 0, 0, 0, 0x0c)
		fallthrough
	case LinkIEEE80211:
		// A QoS data frame to the distribution system: BSSID, source,
		// destination; then LLC/SNAP (RFC 1042) and the EtherType.
		b = append(b, 0x88, 0x01, 0x2c, 0x00)
		b = append(b, 0x02, 0x77, 0x62, 0x00, 0x00, 0x01)
		b = append(b, f[6:12]...)
		b = append(b, f[0:6]...)
		b = append(b, 0, 0, 0, 0) // sequence control, QoS control
		b = append(b, 0xaa, 0xaa, 0x03, 0, 0, 0)
		b = append(b, et...)
	case LinkCHDLC:
		b = append(b, 0x0f, 0x00)
		b = append(b, f[ipOff-2:]...) // the EtherType of the IP packet, and the packet

	case LinkPPP, LinkPPPHDLC:
		proto := byte(0x21)
		if v6 {
			proto = 0x57
		}
		b = append(b, 0xff, 0x03, 0x00, proto)
		b = append(b, ip...)
	case LinkNFLOG:
		// Family, version 0, resource id; an NFULA_PACKET_HDR TLV
		// (hardware protocol, hook) and the payload TLV, little-endian
		// as an x86 host writes them, padded to 4 bytes.
		family, hwProto := byte(2), uint16(etherIPv4)
		if v6 {
			family, hwProto = 10, etherIPv6
		}
		b = append(b, family, 0, 0, 0)
		b = append(b, 8, 0, 1, 0)
		b = binary.BigEndian.AppendUint16(b, hwProto)
		b = append(b, 3, 0) // NF_INET_FORWARD
		b = binary.LittleEndian.AppendUint16(b, uint16(4+len(ip)))
		b = append(b, 9, 0)
		b = append(b, ip...)
		for range pad4(len(ip)) - len(ip) {
			b = append(b, 0)
		}
	}
	return b
}

// ipEnd returns where the IP packet at off in frame f ends: its total
// length, or the frame's end when the header says more or is not IP.
func ipEnd(f []byte, off int) int {
	ip := f[off:]
	n := len(ip)
	switch {
	case len(ip) >= 20 && ip[0]>>4 == 4:
		n = int(binary.BigEndian.Uint16(ip[2:4]))
	case len(ip) >= 40 && ip[0]>>4 == 6:
		n = 40 + int(binary.BigEndian.Uint16(ip[4:6]))
	}
	return off + min(n, len(ip))
}

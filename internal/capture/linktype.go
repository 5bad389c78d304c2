package capture

import "fmt"

// Link-layer header types (the LINKTYPE_* numbers of pcap and pcapng files)
// that the Decoder understands. Numbers are those of
// https://www.tcpdump.org/linktypes.html; 12 and 14 are the platform DLT_RAW
// values some writers store instead of LinkTypeRaw.
const (
	LinkTypeNull      uint16 = 0   // BSD loopback: 4-byte address family in the writer's byte order
	LinkTypeEthernet  uint16 = 1   // Ethernet II and IEEE 802.3 with LLC/SNAP
	LinkTypePPP       uint16 = 9   // PPP, with or without HDLC-like framing (ff 03)
	LinkTypeFDDI      uint16 = 10  // FDDI with LLC/SNAP
	LinkTypeRawDLT12  uint16 = 12  // raw IPv4 or IPv6 (DLT_RAW on most systems)
	LinkTypeRawDLT14  uint16 = 14  // raw IPv4 or IPv6 (DLT_RAW on OpenBSD)
	LinkTypePPPHDLC   uint16 = 50  // PPP in HDLC-like framing, or Cisco PPP with HDLC framing
	LinkTypeRaw       uint16 = 101 // raw IPv4 or IPv6, told apart by the version field
	LinkTypeCHDLC     uint16 = 104 // Cisco HDLC: address, control, EtherType
	LinkTypeIEEE80211 uint16 = 105 // IEEE 802.11 frames without a radio header
	LinkTypeLoop      uint16 = 108 // OpenBSD loopback: address family in network byte order
	LinkTypeLinuxSLL  uint16 = 113 // Linux cooked capture v1 ("any" device)
	LinkTypeRadiotap  uint16 = 127 // IEEE 802.11 after a radiotap header
	LinkTypeIPv4      uint16 = 228 // raw IPv4
	LinkTypeIPv6      uint16 = 229 // raw IPv6
	LinkTypeNFLOG     uint16 = 239 // Linux netfilter log: header and TLVs, the packet in one of them
	LinkTypeLinuxSLL2 uint16 = 276 // Linux cooked capture v2
)

// SupportedLinkType reports whether the Decoder can decode frames of the
// link type lt.
func SupportedLinkType(lt uint16) bool { return firstHeader(lt) != hdrNone }

// firstHeader returns the header that frames of link type lt start with:
// hdrRawIP for the raw IP types, whose IP version the Decoder reads from
// each frame, and hdrNone for the link types it cannot decode.
func firstHeader(lt uint16) header {
	if lt == LinkTypeEthernet { // most captures: one comparison
		return hdrEthernet
	}
	switch lt {
	case LinkTypeNull, LinkTypeLoop:
		return hdrLoopback
	case LinkTypeFDDI:
		return hdrFDDI
	case LinkTypeLinuxSLL:
		return hdrSLL
	case LinkTypeLinuxSLL2:
		return hdrSLL2
	case LinkTypeIPv4:
		return hdrIPv4
	case LinkTypeIPv6:
		return hdrIPv6
	case LinkTypeRaw, LinkTypeRawDLT12, LinkTypeRawDLT14:
		return hdrRawIP
	case LinkTypePPP:
		return hdrPPP
	case LinkTypePPPHDLC:
		return hdrPPPHDLC
	case LinkTypeCHDLC:
		return hdrCHDLC
	case LinkTypeIEEE80211:
		return hdrDot11
	case LinkTypeRadiotap:
		return hdrRadiotap
	case LinkTypeNFLOG:
		return hdrNFLOG
	}
	return hdrNone
}

// linkTypeNames names the supported link types and the unsupported ones a
// user is likely to meet, so that errors can say what a file holds.
var linkTypeNames = map[uint16]string{
	LinkTypeNull:      "BSD loopback",
	LinkTypeEthernet:  "Ethernet",
	LinkTypeFDDI:      "FDDI",
	LinkTypeRawDLT12:  "raw IP",
	LinkTypeRawDLT14:  "raw IP",
	LinkTypeRaw:       "raw IP",
	LinkTypeLoop:      "OpenBSD loopback",
	LinkTypeLinuxSLL:  "Linux cooked capture",
	LinkTypeIPv4:      "raw IPv4",
	LinkTypeIPv6:      "raw IPv6",
	LinkTypeLinuxSLL2: "Linux cooked capture v2",
	LinkTypePPP:       "PPP",
	LinkTypePPPHDLC:   "PPP in HDLC framing",
	LinkTypeCHDLC:     "Cisco HDLC",
	LinkTypeIEEE80211: "IEEE 802.11",
	LinkTypeRadiotap:  "IEEE 802.11 radiotap",
	LinkTypeNFLOG:     "Linux netfilter log (NFLOG)",
	3:                 "AX.25",
	6:                 "IEEE 802.5 Token Ring",
	7:                 "ARCNET",
	8:                 "SLIP",
	51:                "PPPoE",
	107:               "Frame Relay",
	117:               "OpenBSD pflog",
	119:               "IEEE 802.11 Prism",
	122:               "IP over Fibre Channel",
	138:               "IP over FireWire",
	163:               "IEEE 802.11 AVS",
	187:               "Bluetooth HCI H4",
	189:               "USB (Linux)",
	192:               "PPI",
	195:               "IEEE 802.15.4",
	201:               "Bluetooth HCI H4 with direction",
	220:               "USB (Linux, memory-mapped)",
	227:               "CAN (SocketCAN)",
	230:               "IEEE 802.15.4 (no FCS)",
	231:               "D-Bus",
	249:               "USB (USBPcap)",
	251:               "Bluetooth LE link layer",
	252:               "Wireshark upper PDU",
	253:               "Linux netlink",
	254:               "Bluetooth Linux monitor",
	258:               "Apple PKTAP",
	266:               "USB (Darwin)",
	271:               "Linux vsock",
	272:               "Nordic BLE",
	274:               "Ethernet with preamble",
	283:               "IEEE 802.15.4 TAP",
}

// LinkTypeName returns a short human-readable name of the link type lt, or
// "unknown" for numbers it does not know.
func LinkTypeName(lt uint16) string {
	if n, ok := linkTypeNames[lt]; ok {
		return n
	}
	if lt >= 147 && lt <= 162 {
		return "user-defined"
	}
	return "unknown"
}

// LinkTypeError reports frames of a link type the Decoder cannot decode.
type LinkTypeError struct {
	LinkType uint16
	// Interface is the pcapng interface whose frames have this link type,
	// or -1 for a pcap file (one link type for the whole file).
	Interface int
}

func (e *LinkTypeError) Error() string {
	s := fmt.Sprintf("link type %d (%s) is not supported", e.LinkType, LinkTypeName(e.LinkType))
	if e.Interface >= 0 {
		s = fmt.Sprintf("interface %d: %s", e.Interface, s)
	}
	return s
}

package capture

import "net/netip"

// Packet is one decoded packet. A Decoder fills the same Packet for every
// packet it decodes; byte slices point into the capture buffer and are only
// valid until the next packet is read.
type Packet struct {
	// Timestamp in nanoseconds since the Unix epoch.
	TS int64
	// Data is the whole captured frame; CapLen == len(Data).
	Data []byte
	// Lease is the lease of the read buffer Data lies in when the Reader
	// lends its buffers (see Reader.Lend), and nil otherwise: holding it
	// keeps Data valid after the next call to Next.
	Lease *Lease
	// OrigLen is the frame's length on the wire.
	OrigLen int
	// LinkType is the frame's link-layer type (DLT/LINKTYPE number); it may
	// differ between packets of a pcapng file with several interfaces.
	LinkType uint16

	// IPVersion is 4 or 6, or 0 when the frame carries no IP packet.
	IPVersion uint8
	Src, Dst  netip.Addr
	// IPLen is the IP packet's total length as its header says (what Zeek
	// counts as ip_bytes); padding after it is not part of the packet.
	IPLen int
	TTL   uint8
	// Proto is the transport protocol number (after IPv6 extension
	// headers).
	Proto uint8

	// Fragment information. Fragment is set when the packet is a fragment
	// (IPv4 MF set or offset > 0, or an IPv6 Fragment header). FragOffset
	// is in bytes. FragID is the IPv4 identification or the IPv6 fragment
	// identification. (The fields are in an order that packs them.)
	Fragment   bool
	MoreFrags  bool
	FragID     uint32
	FragOffset int

	// IPPayload is the IP payload, trimmed to IPLen.
	IPPayload []byte
	// IPOffset is the offset of the IP header in Data and IPPayloadOffset
	// that of IPPayload (after IPv4 options and IPv6 extension headers),
	// for tools that rewrite headers in place. Set with IPVersion.
	IPOffset, IPPayloadOffset int

	// Transport fields, set when Proto is TCP or UDP and the packet is not a
	// fragment (or is a reassembled datagram). Payload is the transport
	// payload, without Ethernet padding.
	SrcPort, DstPort uint16
	Seq, Ack         uint32
	TCPFlags         uint8
	Window           uint16
	Payload          []byte
	// ICMPType and ICMPCode are set for ICMP and ICMPv6.
	ICMPType, ICMPCode uint8
	// Truncated says the capture holds less than the packet's headers
	// claim (snap length); Payload then holds what was captured.
	Truncated bool
}

// TCP flag bits as they appear in Packet.TCPFlags.
const (
	FlagFIN uint8 = 0x01
	FlagSYN uint8 = 0x02
	FlagRST uint8 = 0x04
	FlagPSH uint8 = 0x08
	FlagACK uint8 = 0x10
	FlagURG uint8 = 0x20
)

package capture

import "encoding/binary"

// DecodeTransport decodes the transport header of an IP payload whose
// protocol is proto (TCP, UDP, ICMP or ICMPv6) into p's transport fields.
// It is used for unfragmented packets and for datagrams the flow engine
// reassembled from fragments. It reports whether the header was complete;
// when it was not, p.Truncated is set and the transport fields are zero.
func (p *Packet) DecodeTransport(proto uint8, b []byte) bool {
	p.Proto = proto
	p.SrcPort, p.DstPort = 0, 0
	p.Seq, p.Ack, p.TCPFlags, p.Window = 0, 0, 0, 0
	p.ICMPType, p.ICMPCode = 0, 0
	p.Payload = nil
	return p.decodeTransport(proto, b)
}

// decodeTransport is DecodeTransport on a packet whose transport fields
// are zero already, as Decode leaves them: it saves clearing them twice.
func (p *Packet) decodeTransport(proto uint8, b []byte) bool {
	switch proto {
	case 6: // TCP
		if len(b) < 20 {
			p.Truncated = true
			return false
		}
		off := int(b[12]>>4) * 4
		if off < 20 || off > len(b) {
			p.Truncated = true
			return false
		}
		p.SrcPort = binary.BigEndian.Uint16(b[0:2])
		p.DstPort = binary.BigEndian.Uint16(b[2:4])
		p.Seq = binary.BigEndian.Uint32(b[4:8])
		p.Ack = binary.BigEndian.Uint32(b[8:12])
		p.TCPFlags = b[13]
		p.Window = binary.BigEndian.Uint16(b[14:16])
		p.Payload = b[off:]
	case 17: // UDP
		if len(b) < 8 {
			p.Truncated = true
			return false
		}
		p.SrcPort = binary.BigEndian.Uint16(b[0:2])
		p.DstPort = binary.BigEndian.Uint16(b[2:4])
		n := int(binary.BigEndian.Uint16(b[4:6]))
		switch {
		case n < 8:
			// A length below the header size is invalid (or a jumbogram);
			// take what the IP layer carries.
			p.Payload = b[8:]
		case n > len(b):
			p.Truncated = true
			p.Payload = b[8:]
		default:
			p.Payload = b[8:n]
		}
	case 1, 58: // ICMP, ICMPv6
		if len(b) < 4 {
			p.Truncated = true
			return false
		}
		p.ICMPType, p.ICMPCode = b[0], b[1]
		p.Payload = b[4:]
	default:
		p.Payload = b
	}
	return true
}

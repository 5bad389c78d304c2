package tunnel

import (
	"encoding/binary"
	"errors"

	"github.com/wirebench/wirebench/internal/capture"
)

// Kind is a tunnel protocol.
type Kind uint8

// Tunnel protocols.
const (
	None Kind = iota
	Teredo
	AYIYA
	VXLAN
	GTPv1
	GRE
	IP // IP in IP: IPv4 or IPv6 in IPv4 or IPv6 (protocols 4 and 41)
	Geneve
)

var kindNames = [...]string{"none", "teredo", "ayiya", "vxlan", "gtpv1", "gre", "ip", "geneve"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Service returns the name Zeek puts in conn.log's service field for a
// UDP connection that carries a confirmed tunnel of this kind ("teredo",
// "ayiya", "vxlan", "gtpv1", "geneve"), or "" for the kinds that are not
// carried by a logged connection (GRE, IP in IP).
func (k Kind) Service() string {
	switch k {
	case Teredo, AYIYA, VXLAN, GTPv1, Geneve:
		return kindNames[k]
	}
	return ""
}

// Ports Zeek's default scripts register the UDP tunnel analyzers on.
const (
	PortTeredo     = 3544
	PortAYIYA      = 5072
	PortVXLAN      = 4789
	PortGTPv1U     = 2152
	PortGTPv1C     = 2123
	PortGREOverUDP = 4754
	PortGeneve     = 6081
)

// ForUDPPort returns the tunnel Zeek looks for on UDP connections whose
// responder uses port, or None. GTPv1 control messages (2123) carry no
// inner packet; they are recognised so that they are not mistaken for
// anything else.
func ForUDPPort(port uint16) Kind {
	switch port {
	case PortTeredo:
		return Teredo
	case PortAYIYA:
		return AYIYA
	case PortVXLAN:
		return VXLAN
	case PortGTPv1U, PortGTPv1C:
		return GTPv1
	case PortGREOverUDP:
		return GRE
	case PortGeneve:
		return Geneve
	}
	return None
}

// Inner is a decapsulated frame: Data starts with a header of LinkType
// (capture.LinkTypeRaw for an IP packet, capture.LinkTypeEthernet for a
// bridged frame). Data is a slice of the payload passed in.
type Inner struct {
	Data     []byte
	LinkType uint16
}

// Errors of the decapsulation functions.
var (
	ErrTruncated     = errors.New("tunnel header cut short")
	ErrBadHeader     = errors.New("invalid tunnel header")
	ErrInnerVersion  = errors.New("inner packet is not IP of the expected version")
	ErrInnerLength   = errors.New("inner IP length does not match the payload")
	ErrInnerTrunc    = errors.New("inner IP packet cut short")
	ErrNoInnerPacket = errors.New("tunnel message without an inner packet")
	ErrUnsupported   = errors.New("tunnel payload type not followed")
)

// HeaderValid reports whether err, returned by DecodeVXLAN or
// DecodeGeneve, still means a valid tunnel header: one with no inner
// frame, or with one of a protocol that is not followed. Zeek confirms
// these tunnels on such a header (the service in conn.log).
func HeaderValid(err error) bool {
	return err == nil || err == ErrNoInnerPacket || err == ErrUnsupported
}

// ipResult is Zeek's IP::ParsePacket verdict on an inner packet.
type ipResult uint8

const (
	ipOK ipResult = iota
	ipTooSmall
	ipTooLarge
	ipBadVersion
)

// parseIP checks an inner IP header as Zeek's IP::ParsePacket does: the
// version must be want (4 or 6; 0 accepts either), the header complete,
// and the length the header claims equal to len(b) (ipTooSmall when b is
// shorter, ipTooLarge when it is longer).
func parseIP(b []byte, want uint8) ipResult {
	if len(b) == 0 {
		return ipTooSmall
	}
	v := b[0] >> 4
	if (want != 0 && v != want) || (v != 4 && v != 6) {
		return ipBadVersion
	}
	var total int
	if v == 4 {
		if len(b) < 20 {
			return ipTooSmall
		}
		hl := int(b[0]&0x0f) * 4
		total = int(binary.BigEndian.Uint16(b[2:4]))
		if hl < 20 || total < hl {
			return ipBadVersion
		}
	} else {
		if len(b) < 40 {
			return ipTooSmall
		}
		total = 40 + int(binary.BigEndian.Uint16(b[4:6]))
	}
	switch {
	case total > len(b):
		return ipTooSmall
	case total < len(b):
		return ipTooLarge
	}
	return ipOK
}

func ipError(r ipResult) error {
	switch r {
	case ipTooSmall:
		return ErrInnerTrunc
	case ipTooLarge:
		return ErrInnerLength
	case ipBadVersion:
		return ErrInnerVersion
	}
	return nil
}

func rawIP(b []byte) Inner { return Inner{Data: b, LinkType: capture.LinkTypeRaw} }

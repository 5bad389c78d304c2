// Package connid names connections the way Zeek's conn_id does: a
// connection's 5-tuple ([Key], originator first) and the direction of data
// within it ([Dir]). It is the vocabulary the parsers, the flow engine, the
// replay driver and the analyzer share, and what outside modules use to
// read a [github.com/wirebench/wirebench/parsers.Conn].
package connid

import "net/netip"

// Dir is the direction of data within a connection.
type Dir uint8

// Directions of a connection.
const (
	Orig Dir = 0 // from the originator to the responder
	Resp Dir = 1 // from the responder to the originator
)

// Opposite returns the other direction.
func (d Dir) Opposite() Dir { return d ^ 1 }

func (d Dir) String() string {
	if d == Orig {
		return "orig"
	}
	return "resp"
}

// IP protocol numbers of [Key.Proto].
const (
	ProtoICMP   uint8 = 1
	ProtoTCP    uint8 = 6
	ProtoUDP    uint8 = 17
	ProtoICMPv6 uint8 = 58
)

// Key identifies a connection, originator first: Zeek's conn_id (orig_h,
// orig_p, resp_h, resp_p) and the IP protocol. It is comparable, so it
// can key a map. For ICMP the ports hold the type and code, as in Zeek.
type Key struct {
	Orig, Resp netip.AddrPort
	Proto      uint8
}

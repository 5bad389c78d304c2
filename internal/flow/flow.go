package flow

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

// IP protocol numbers the engine knows.
const (
	ProtoICMP   uint8 = 1
	ProtoTCP    uint8 = 6
	ProtoUDP    uint8 = 17
	ProtoICMPv6 uint8 = 58
)

// Key identifies a connection, originator first. It is comparable and is
// used as the connection table's map key.
type Key struct {
	Orig, Resp netip.AddrPort
	Proto      uint8
}

// Handler receives the events of the flow engine. The data slices passed to
// Data are only valid during the call. Events of one connection arrive in
// order: BeginConn, then any mix of Data and Gap, then EndConn. A Handler
// must not call the Engine that calls it.
type Handler interface {
	BeginConn(c *Conn)
	// Data delivers the next in-order bytes of one direction: for TCP the
	// next piece of the reassembled stream, for UDP one whole datagram
	// (empty datagrams are not delivered). ICMP has no Data.
	Data(c *Conn, dir Dir, data []byte)
	// Gap reports n bytes of one direction that are missing for good.
	Gap(c *Conn, dir Dir, n int)
	EndConn(c *Conn)
}

// A StreamEnder is a Handler that also learns when one direction of a TCP
// connection ends before the connection does: its FIN was reached in
// sequence, so every byte before it was delivered or reported as a gap.
// It is Zeek's EndpointEOF: an HTTP reply that runs until close ends
// there, and the order in which the two directions end decides some of
// Zeek's http.log records. EndStream comes at most once per direction,
// always before EndConn; a direction that never reaches its FIN just ends
// with the connection.
type StreamEnder interface {
	EndStream(c *Conn, dir Dir)
}

package flow

import "github.com/wirebench/wirebench/connid"

// Dir is the direction of data within a connection (see [connid.Dir]).
type Dir = connid.Dir

// Directions of a connection.
const (
	Orig = connid.Orig // from the originator to the responder
	Resp = connid.Resp // from the responder to the originator
)

// IP protocol numbers the engine knows.
const (
	ProtoICMP   = connid.ProtoICMP
	ProtoTCP    = connid.ProtoTCP
	ProtoUDP    = connid.ProtoUDP
	ProtoICMPv6 = connid.ProtoICMPv6
)

// Key identifies a connection, originator first (see [connid.Key]). It is
// comparable and is used as the connection table's map key.
type Key = connid.Key

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

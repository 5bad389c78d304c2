package parsers

import "github.com/wirebench/wirebench/connid"

// Kind says whether a connection's data is a byte stream (TCP) or a
// sequence of self-contained blocks (UDP datagrams).
type Kind uint8

// Connection kinds.
const (
	Stream Kind = iota + 1
	Block
)

// Role is the side of a connection a parser reads.
type Role uint8

// Roles.
const (
	Orig Role = iota // the originator's data (HTTP requests, DNS queries)
	Resp             // the responder's data (HTTP replies, DNS replies)
)

// Conn is the parsing context of one connection, shared by the parsers of
// both directions.
type Conn struct {
	// ID names the connection: the batch connection id in replay, the uid
	// in the analyzer.
	ID   string
	Kind Kind
	// Key is the connection's 5-tuple when known: from the packets in the
	// analyzer; in replay, parsed from a connection id that follows Zeek's
	// convention (see ParseConnID), zero otherwise. The dispatcher's
	// Config.KeyUse may leave parts of it zero that no parser or sink
	// reads (see Protocol.KeyUse).
	Key connid.Key
	// UID is the connection's Zeek-style uid for logs (CHhAvVGS1DHFjwGM9),
	// derived deterministically by the dispatcher (see UIDFromID); empty
	// when the dispatcher's Config.NoUIDs says no sink reads it.
	UID string
	// TS is the time, in nanoseconds since the Unix epoch, of the packet
	// that delivered the chunk being fed; 0 when unknown (replay).
	TS int64
}

// Parser consumes one direction of a connection.
type Parser interface {
	// Feed passes the next chunk: for a Stream connection the next bytes of
	// the stream, for a Block connection one whole message. The parser
	// must not keep data after Feed returns.
	Feed(data []byte)
	// Gap says n bytes of the stream are missing; the parser skips them or
	// resynchronises.
	Gap(n int)
	// Finish says the direction ended.
	Finish()
}

// ConnParser holds the parsers of one connection.
type ConnParser interface {
	Orig() Parser
	Resp() Parser
	// Close ends the connection after both directions finished: pending
	// transactions are reported and the state may be reused.
	Close()
}

// A Holder is a ConnParser that says how much memory it holds beyond its
// fixed state, buffers' capacity included: lines and headers split across
// chunks, messages split across segments. The drivers that bound the
// memory of all connections together count it: the [Dispatcher] against
// Config.MaxBuffered, the analyzer against its flow engine's budget,
// asking after every Feed and Gap.
type Holder interface {
	Held() int
}

// Analyzer makes connection parsers for one protocol.
type Analyzer interface {
	// Open starts parsing a connection. The Conn stays valid until Close.
	Open(c *Conn) ConnParser
}

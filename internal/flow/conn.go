package flow

// Conn is one connection in the table. The engine owns it; handlers may read
// it during a callback and keep their own per-connection state in User.
type Conn struct {
	Key Key
	// Start and Last are the timestamps (ns since the Unix epoch) of the
	// connection's first and latest packet. As in Zeek, packets that arrive
	// after both sides of a TCP connection closed do not move Last, so
	// Last-Start is Zeek's conn.log duration.
	Start, Last int64
	// Stats holds per-direction counters, indexed by Dir.
	Stats [2]DirStats
	// History is Zeek's conn.log history string of this connection (for
	// example "ShADadFf"), at most MaxHistory bytes.
	History []byte
	// User is free for the handler (the dispatcher keeps its parsers here).
	User any
	// Aux is a second slot like User, for a program that layers its own
	// handler over another one using User: the analyzer keeps its
	// conn.log state (uid, service, tunnel parents) here while the parser
	// dispatcher it wraps keeps its parsers in User.
	Aux any

	// ID numbers the connections of an Engine from 1 in creation order; it
	// is unique for the Engine's lifetime (handlers can derive uids from it).
	ID uint64
	// Flipped reports that the originator is not the sender of the first
	// packet the engine saw (a SYN-ACK came first, or the likely-server-port
	// heuristic chose the receiver); History then starts with Zeek's '^'.
	// It is set before BeginConn and never changes.
	Flipped bool
	// End says why the connection ended; valid during EndConn.
	End EndReason

	tcp  [2]tcpEndpoint // per-direction TCP state (Zeek's TCP_Endpoint)
	conn connState      // table, timer and history bookkeeping
}

// MaxHistory bounds the length of Conn.History; letters past it are dropped.
const MaxHistory = 64

// EndReason says why a connection ended.
type EndReason uint8

// Reasons for EndConn.
const (
	EndClosed  EndReason = iota + 1 // closed by FIN/RST, after the close delay
	EndTimeout                      // inactivity (or unanswered attempt) timeout
	EndEvicted                      // the connection table was full
	EndReused                       // a new connection (SYN) reused the 5-tuple
	EndFlush                        // Engine.Flush at end of input
)

var endNames = [...]string{"", "closed", "timeout", "evicted", "reused", "flush"}

func (r EndReason) String() string {
	if int(r) < len(endNames) && r != 0 {
		return endNames[r]
	}
	return "unknown"
}

// DirStats counts what one direction of a connection carried.
type DirStats struct {
	Packets int64 // packets seen
	IPBytes int64 // sum of IP total lengths
	// Bytes is the payload size: for TCP the span of sequence space
	// covered (as Zeek's orig_bytes/resp_bytes), for UDP the sum of the
	// payload lengths the UDP headers claim, for ICMP the bytes after the
	// 8-byte ICMP header (both as Zeek counts them). A TCP connection's
	// is worked out from its endpoints' state when it ends, once rather
	// than per packet: it is valid during EndConn.
	Bytes int64
	// Missed is the number of stream bytes reported as gaps while both
	// sides were established or cleanly closing: Zeek's missed_bytes, which
	// leaves out gaps of partial connections and holes only found at the
	// end. GapBytes counts every byte reported through Handler.Gap.
	Missed   int64
	GapBytes int64
	// Flags seen in this direction (capture.Flag* bits, ORed).
	TCPFlags uint8
}

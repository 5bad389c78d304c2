package flow

// Conn is one connection in the table. The engine owns it; handlers may read
// it during a callback and keep their own per-connection state in User.
type Conn struct {
	Key Key
	// Start and Last are the timestamps (ns since the Unix epoch) of the
	// connection's first and latest packet.
	Start, Last int64
	// Stats holds per-direction counters, indexed by Dir.
	Stats [2]DirStats
	// History is Zeek's conn.log history string of this connection (for
	// example "ShADadFf"), at most a few dozen bytes.
	History []byte
	// User is free for the handler (the dispatcher keeps its parsers here).
	User any
}

// DirStats counts what one direction of a connection carried.
type DirStats struct {
	Packets int64 // packets seen
	IPBytes int64 // sum of IP total lengths
	// Bytes is the payload size: for TCP the span of sequence space
	// covered (as Zeek's orig_bytes/resp_bytes), for UDP the sum of
	// payloads.
	Bytes int64
	// Missed is the number of stream bytes reported as gaps.
	Missed int64
	// Flags seen in this direction (capture.Flag* bits, ORed).
	TCPFlags uint8
}

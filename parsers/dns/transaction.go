package dns

import "github.com/wirebench/wirebench/parsers"

// Transaction is one DNS query paired with its reply (either may be
// missing), with the fields of Zeek's dns.log. Byte slices point into buffers
// the parser reuses: they are valid only during the Sink call.
type Transaction struct {
	// TS is the time of the query, or of the reply when there was no query
	// (ns since the Unix epoch); 0 when unknown.
	TS int64
	// RTT is the time from query to reply in nanoseconds; valid when both
	// HasQuery and HasReply.
	RTT int64

	HasQuery, HasReply bool

	TransID uint16
	// Query is the question name as Zeek renders it (no trailing dot,
	// non-printable bytes escaped); empty when there is no question.
	Query  []byte
	QClass uint16
	QType  uint16
	// RCode is the reply's response code (extended by EDNS0 when present).
	RCode uint16

	AA, TC, RD, RA bool
	Z              uint8
	// Opcode is the message's opcode (0 query, 4 notify, 5 dynamic
	// update), logged by Zeek as opcode and opcode_name.
	Opcode uint8

	// Answers are the answer section's records rendered as Zeek renders
	// them, with their TTLs.
	Answers []Answer
	// Rejected is Zeek's "rejected": the server replied with a non-zero
	// rcode and no answers.
	Rejected bool
}

// Answer is one rendered answer record.
type Answer struct {
	Data []byte
	TTL  uint32
}

// Sink receives finished transactions. tx and its slices are only valid
// during the call.
type Sink interface {
	DNS(c *parsers.Conn, tx *Transaction)
}

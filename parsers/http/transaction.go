package http

import "github.com/wirebench/wirebench/parsers"

// Transaction is one HTTP request paired with its reply, with the fields of
// Zeek's http.log. Byte slices point into buffers the parser reuses: they are
// valid only during the Sink call that reports the transaction.
type Transaction struct {
	// TS is the time of the request's first byte (ns since the Unix epoch),
	// or of the reply's when there was no request; 0 when unknown.
	TS int64
	// Depth is the 1-based position of the transaction in its connection
	// (Zeek's trans_depth).
	Depth int

	HasRequest, HasReply bool

	Method, Host, URI, Referrer []byte
	// Version is the HTTP version as in the message ("1.1", "1.0", "0.9").
	Version   []byte
	UserAgent []byte
	Origin    []byte

	// RequestBodyLen and ResponseBodyLen are the lengths of the bodies after
	// transfer decoding (chunk framing removed).
	RequestBodyLen, ResponseBodyLen int64

	StatusCode int // 0 when no reply
	StatusMsg  []byte
	// InfoCode and InfoMsg are the last 1xx reply before the final one.
	InfoCode int
	InfoMsg  []byte

	// Username and Password come from an Authorization: Basic header.
	Username, Password []byte
}

// Sink receives finished transactions. tx and its slices are only valid
// during the call.
type Sink interface {
	HTTP(c *parsers.Conn, tx *Transaction)
}

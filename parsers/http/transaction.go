package http

import "github.com/wirebench/wirebench/parsers"

// Transaction is one HTTP request paired with its reply, with the fields of
// Zeek's http.log. Byte slices point into buffers the parser reuses: they are
// valid only during the Sink call that reports the transaction.
//
// A nil slice is a field Zeek leaves unset (logged as "-"); a non-nil empty
// slice is an empty string (logged as "(empty)").
type Transaction struct {
	// TS is the time of the request's first byte (ns since the Unix epoch),
	// or of the reply's when there was no request; 0 when unknown. The
	// native parser reports, as Zeek does, the time of the chunk that
	// completed the request line (or status line) that opened the record.
	TS int64
	// Depth is the 1-based position of the transaction in its connection
	// (Zeek's trans_depth).
	Depth int

	HasRequest, HasReply bool

	// Method, Host and Referrer are the request's, as sent (Host keeps its
	// port). URI is the request target with %-escapes decoded, as Zeek's
	// http.log shows it (unescaped_URI).
	Method, Host, URI, Referrer []byte
	// Version is the HTTP version as in the message ("1.1", "1.0", "0.9").
	// Zeek's http.log logs the reply's version, formatted "%.1f" ("0.0"
	// for a malformed one), and leaves it unset when there is no reply; the
	// native parser does the same.
	Version   []byte
	UserAgent []byte
	Origin    []byte

	// RequestBodyLen and ResponseBodyLen are the lengths of the bodies after
	// transfer decoding (chunk framing removed).
	RequestBodyLen, ResponseBodyLen int64

	// StatusCode is 0 when no reply; an HTTP/0.9 reply has code 0 too, so
	// HasReply tells them apart.
	StatusCode int
	// StatusMsg is the reason phrase; Zeek logs "<empty>" when the status
	// line has none.
	StatusMsg []byte
	// InfoCode and InfoMsg are the last 1xx reply before the final one.
	InfoCode int
	InfoMsg  []byte

	// Username and Password come from an Authorization: Basic header.
	// Zeek logs the password only when HTTP::default_capture_password is
	// set, which is off by default; the native parser follows the same
	// option (see WithCapturePassword).
	Username, Password []byte

	// Proxied holds, for each request header that may indicate a proxy
	// (Forwarded, X-Forwarded-For, X-Forwarded-From, Client-IP, Via,
	// Xroxy-Connection, Proxy-Connection), the string "NAME -> value" with
	// the name in upper case, without duplicates, in the order first seen:
	// the elements of Zeek's proxied set. Empty when there is none.
	Proxied [][]byte

	// OrigMIMETypes and RespMIMETypes are http.log's orig_mime_types and
	// resp_mime_types: for each body (MIME entity) of the request and of
	// the reply, in order, the MIME type Zeek's file analysis sniffs from
	// its first bytes with Zeek's file-magic signatures (package
	// filemagic), decompressed when the body is gzip- or deflate-encoded;
	// bodies no signature matches add nothing, and at most MaxFiles are
	// kept (HTTP::max_files_orig and max_files_resp). Nil when there is
	// none. The strings are the signatures' own and stay valid.
	OrigMIMETypes, RespMIMETypes []string
}

// MaxFiles is Zeek's HTTP::max_files_orig and HTTP::max_files_resp: the
// most MIME types a transaction lists per direction.
const MaxFiles = 15

// Sink receives finished transactions. tx and its slices are only valid
// during the call.
type Sink interface {
	HTTP(c *parsers.Conn, tx *Transaction)
}

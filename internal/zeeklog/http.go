package zeeklog

import (
	"io"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// HTTPFields are the columns of Zeek's default http.log.
var HTTPFields = []Field{
	{"ts", "time"}, {"uid", "string"},
	{"id.orig_h", "addr"}, {"id.orig_p", "port"}, {"id.resp_h", "addr"}, {"id.resp_p", "port"},
	{"trans_depth", "count"}, {"method", "string"}, {"host", "string"}, {"uri", "string"},
	{"referrer", "string"}, {"version", "string"}, {"user_agent", "string"}, {"origin", "string"},
	{"request_body_len", "count"}, {"response_body_len", "count"},
	{"status_code", "count"}, {"status_msg", "string"}, {"info_code", "count"}, {"info_msg", "string"},
	{"tags", "set[enum]"}, {"username", "string"}, {"password", "string"}, {"proxied", "set[string]"},
	{"orig_fuids", "vector[string]"}, {"orig_filenames", "vector[string]"}, {"orig_mime_types", "vector[string]"},
	{"resp_fuids", "vector[string]"}, {"resp_filenames", "vector[string]"}, {"resp_mime_types", "vector[string]"},
}

// HTTPLog writes http.log: it is an http.Sink that appends one record per
// transaction. Of the files framework's fields, only the MIME types are
// computed; fuids and filenames are unset.
type HTTPLog struct {
	w *Writer
	// lead keeps what the leading columns of the records render from.
	lead connTSV
}

// NewHTTPLog returns an http.log writer writing to w.
func NewHTTPLog(w io.Writer, o Options) (*HTTPLog, error) {
	lw, err := NewWriter(w, "http", HTTPFields, o)
	return &HTTPLog{w: lw}, err
}

// HTTP implements http.Sink. A nil slice in tx is an unset field, an
// empty one "(empty)". Write errors are kept for Close.
func (l *HTTPLog) HTTP(c *parsers.Conn, tx *http.Transaction) { l.WriteColumns(nil, c, tx) }

// WriteColumns implements ColumnsWriter: it is HTTP with the connection's
// leading columns from cc (nil: none).
//
// In TSV, it appends the record straight to the Writer's buffer (see
// tsv.go); the other formats go through write.
func (l *HTTPLog) WriteColumns(cc *ConnColumns, c *parsers.Conn, txn any) {
	tx := txn.(*http.Transaction)
	w := l.w
	if w.format != TSV || w.inVec {
		l.write(c, tx)
		return
	}
	b := l.lead.appendLead(w.tsvBegin(), tx.TS, c, cc)
	b = tsvUint(b, uint64(tx.Depth))
	b = tsvBytes(b, tx.Method)
	b = tsvBytes(b, tx.Host)
	b = tsvBytes(b, tx.URI)
	b = tsvBytes(b, tx.Referrer)
	b = tsvBytes(b, tx.Version)
	b = tsvBytes(b, tx.UserAgent)
	b = tsvBytes(b, tx.Origin)
	b = tsvUint(b, uint64(max(tx.RequestBodyLen, 0)))
	b = tsvUint(b, uint64(max(tx.ResponseBodyLen, 0)))
	if tx.HasReply {
		b = tsvUint(b, uint64(max(tx.StatusCode, 0)))
	} else {
		b = tsvUnset(b)
	}
	b = tsvBytes(b, tx.StatusMsg)
	b = tsvOptUint(b, uint64(tx.InfoCode))
	b = tsvBytes(b, tx.InfoMsg)
	b = append(b, emptyField+"\t"...) // tags
	b = tsvBytes(b, tx.Username)
	b = tsvBytes(b, tx.Password)
	b = tsvSet(b, tx.Proxied)
	b = append(b, "-\t-\t"...) // orig_fuids, orig_filenames
	b = tsvSet(b, tx.OrigMIMETypes)
	b = append(b, "-\t-\t"...) // resp_fuids, resp_filenames
	w.tsvEnd(tsvSet(b, tx.RespMIMETypes))
}

// write is HTTP through the Writer's value methods: JSON, and the
// reference of the TSV fast path.
func (l *HTTPLog) write(c *parsers.Conn, tx *http.Transaction) {
	w := l.w
	w.Begin()
	w.Time(tx.TS)
	writeConnID(w, c)
	w.Count(uint64(tx.Depth))
	w.String(tx.Method)
	w.String(tx.Host)
	w.String(tx.URI)
	w.String(tx.Referrer)
	w.String(tx.Version)
	w.String(tx.UserAgent)
	w.String(tx.Origin)
	w.Count(uint64(max(tx.RequestBodyLen, 0)))
	w.Count(uint64(max(tx.ResponseBodyLen, 0)))
	if tx.HasReply {
		// Zeek logs 0 for the status-less reply of an HTTP/0.9 request.
		w.Count(uint64(max(tx.StatusCode, 0)))
	} else {
		w.Unset()
	}
	w.String(tx.StatusMsg)
	optCount(w, tx.InfoCode)
	w.String(tx.InfoMsg)
	w.EmptySet() // tags
	w.String(tx.Username)
	w.String(tx.Password)
	writeSet(w, tx.Proxied)
	w.Unset() // orig_fuids
	w.Unset() // orig_filenames
	writeSet(w, tx.OrigMIMETypes)
	w.Unset() // resp_fuids
	w.Unset() // resp_filenames
	writeSet(w, tx.RespMIMETypes)
	w.End()
}

// Records returns the number of records written.
func (l *HTTPLog) Records() int64 { return l.w.Records() }

// Flush writes buffered records out.
func (l *HTTPLog) Flush() error { return l.w.Flush() }

// Close writes the footer and flushes; it returns the first write error.
func (l *HTTPLog) Close() error { return l.w.Close() }

var _ http.Sink = (*HTTPLog)(nil)

// writeConnID writes uid and the id.* fields: from the connection's
// 5-tuple when it is known, unset otherwise.
func writeConnID(w *Writer, c *parsers.Conn) {
	w.StrOrUnset(c.UID)
	if !c.Key.Orig.IsValid() {
		for range 4 {
			w.Unset()
		}
		return
	}
	w.Addr(c.Key.Orig.Addr())
	w.Port(c.Key.Orig.Port())
	w.Addr(c.Key.Resp.Addr())
	w.Port(c.Key.Resp.Port())
}

// optCount writes n, or unset when it is 0.
func optCount(w *Writer, n int) {
	if n == 0 {
		w.Unset()
		return
	}
	w.Count(uint64(n))
}

// Write is HTTP for a transaction of any type, *http.Transaction: it makes
// HTTPLog a parsers.LogWriter.
func (l *HTTPLog) Write(c *parsers.Conn, tx any) { l.WriteColumns(nil, c, tx) }

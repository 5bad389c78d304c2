package fiber

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// Request is what each parser reports for one HTTP/1.x request. Its slices
// point into buffers the parser reuses: they are valid during the call
// that reports the request.
type Request struct {
	Method, URI, Version []byte
	Host                 []byte
	BodyLen              int64

	line, host []byte // the buffers behind the fields
}

// Parser consumes the client side of one connection, chunk by chunk. Feed
// must not keep the chunk after it returns. Close ends the stream and
// returns the first error met, if any.
type Parser interface {
	Feed(chunk []byte)
	Close() error
}

// maxLine bounds a line kept across chunks.
const maxLine = 8 << 10

var (
	errLineTooLong = errors.New("line longer than 8 KiB")
	errTruncated   = errors.New("stream ends inside a request")
)

// requestLine starts a request from "METHOD SP URI SP VERSION", keeping a
// copy of the line.
func requestLine(line []byte, r *Request) error {
	sp1 := bytes.IndexByte(line, ' ')
	sp2 := bytes.LastIndexByte(line, ' ')
	if sp1 <= 0 || sp2 <= sp1 {
		return fmt.Errorf("malformed request line %q", line)
	}
	r.line = append(r.line[:0], line...)
	r.Method, r.URI, r.Version = r.line[:sp1], r.line[sp1+1:sp2], r.line[sp2+1:]
	r.Host, r.BodyLen = nil, 0
	return nil
}

// bodyKind is how a request's body is framed.
type bodyKind uint8

const (
	noBody bodyKind = iota
	lengthBody
	chunkedBody
)

// header applies one header line to the request and the framing.
func header(line []byte, r *Request, kind *bodyKind, length *int64) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("malformed header line %q", line)
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case bytes.EqualFold(name, []byte("Host")):
		r.host = append(r.host[:0], value...)
		r.Host = r.host
	case bytes.EqualFold(name, []byte("Content-Length")):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("bad Content-Length %q", value)
		}
		if *kind != chunkedBody {
			*kind, *length = lengthBody, n
		}
	case bytes.EqualFold(name, []byte("Transfer-Encoding")):
		if bytes.EqualFold(value, []byte("chunked")) {
			*kind = chunkedBody
		}
	}
	return nil
}

// chunkSize reads the size of a chunk, ignoring extensions.
func chunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad chunk size %q", line)
	}
	return n, nil
}

// trimCR drops the CR of a CR LF line end.
func trimCR(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1]
	}
	return line
}

package std

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	nethttp "net/http"
	"strings"

	"github.com/wirebench/wirebench/internal/filemagic"
)

// inflatePiece is the size of the pieces in which zlib hands its output to
// Zeek's ZIP analyzer: after corrupt data, Zeek loses the piece being
// filled.
const inflatePiece = 4096

// contentCoding returns the coding of a message's body as Zeek reads it:
// the first token of the last Content-Encoding header, in lower case; ""
// without one.
func contentCoding(h nethttp.Header) string {
	vs := h["Content-Encoding"]
	if len(vs) == 0 {
		return ""
	}
	return leadingToken(vs[len(vs)-1])
}

// leadingToken returns the token that starts a header value, after white
// space, in lower case.
func leadingToken(v string) string {
	v = strings.TrimLeft(v, " \t")
	if i := strings.IndexFunc(v, notTokenChar); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(v)
}

// notTokenChar reports whether r cannot be part of a MIME token (RFC 2045).
func notTokenChar(r rune) bool {
	return r <= ' ' || r >= 0x7f || strings.ContainsRune(`()<>@,;:\"/[]?=`, r)
}

// bodyLen reads a message body to its end and returns its length as Zeek
// counts request_body_len and response_body_len: after transfer decoding
// (net/http removes the chunk framing) and, for a gzip or deflate body,
// after decompression, which is what a Go program counting the content
// would do. err is the body's own read error (a truncated or malformed
// message), not a decompression error: a body that does not decompress
// counts what it decompressed to before the error, as in Zeek.
//
// The body's first bytes (decompressed) go to bof, to be sniffed.
func bodyLen(body io.Reader, coding string, bof *bofWriter) (int64, error) {
	switch coding {
	case "gzip", "x-gzip", "deflate":
	default:
		return io.Copy(bof, body)
	}
	er := &errReader{r: body}
	br := bufio.NewReader(er)
	n := inflatedLen(br, er, bof)
	bof.truncate(n)
	// The compressed stream may end before the body does.
	if _, err := io.Copy(io.Discard, br); err != nil && er.err == nil {
		er.err = err
	}
	return n, er.err
}

// inflatedLen decompresses a gzip, zlib or raw deflate stream and returns
// the length of its output. As Zeek's ZIP analyzer does (zlib with
// automatic header detection), it tells the three apart by the first two
// bytes, whatever the coding's name, and stops at the end of the first
// stream. Output counts up to where the body ends; after corrupt data the
// output since the last 4 KiB boundary is dropped, as Zeek drops the piece
// being filled. Checksum errors in the trailer are ignored, as the native
// parser ignores them (it does not keep the output to verify them). src is
// the body under r, to tell its errors from the decompressor's.
func inflatedLen(r *bufio.Reader, src *errReader, out io.Writer) int64 {
	head, _ := r.Peek(2)
	if len(head) == 0 {
		return 0
	}
	var zr io.Reader
	var err error
	switch {
	case len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b:
		var gz *gzip.Reader
		if gz, err = gzip.NewReader(r); err == nil {
			gz.Multistream(false)
			zr = gz
		}
	case len(head) == 2 && isZlibHeader(head[0], head[1]):
		zr, err = zlib.NewReader(r)
	default:
		zr = flate.NewReader(r)
	}
	var n int64
	if err == nil {
		n, err = io.Copy(out, zr)
	}
	switch {
	case err == nil, src.err != nil, errors.Is(err, io.ErrUnexpectedEOF):
		return n // complete, or cut short by the end of the body
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, zlib.ErrChecksum):
		return n
	}
	return n - n%inflatePiece
}

// isZlibHeader reports whether cmf and flg start a zlib stream (RFC 1950):
// deflate with a window of at most 32 KiB and a valid header check.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// errReader remembers the first error other than io.EOF of the reader
// under it.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// bofWriter keeps the first filemagic.BOFSize bytes written to it, the
// start of a body to sniff for its MIME type, and discards the rest. With
// lines set (a body read until the connection closes, which Zeek reads as
// lines) every line end reaches it as CR LF, as Zeek's MIME_Entity hands
// lines on to the file analysis.
type bofWriter struct {
	buf    []byte
	lines  bool
	lastCR bool
}

func (w *bofWriter) reset(lines bool) {
	w.buf, w.lines, w.lastCR = w.buf[:0], lines, false
}

func (w *bofWriter) Write(p []byte) (int, error) {
	if !w.lines {
		n := min(len(p), filemagic.BOFSize-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		return len(p), nil
	}
	for _, c := range p {
		if len(w.buf) >= filemagic.BOFSize {
			break
		}
		switch {
		case c == '\n' && w.lastCR:
			// the second half of a CR LF
		case c == '\r' || c == '\n':
			w.buf = append(w.buf, "\r\n"[:min(2, filemagic.BOFSize-len(w.buf))]...)
		default:
			w.buf = append(w.buf, c)
		}
		w.lastCR = c == '\r'
	}
	return len(p), nil
}

// truncate drops what follows the first n bytes: the output a
// decompressor produced past the point where Zeek's count stops.
func (w *bofWriter) truncate(n int64) {
	if n < int64(len(w.buf)) {
		w.buf = w.buf[:n]
	}
}

// Command http-bodies writes the gzip and deflate bodies of the HTTP
// messages in a capture, as they arrive (transfer coding removed, still
// compressed), to a file: the input of the HTTP floor's decompression
// (BenchmarkInflateBodies in parsers/http), which bench-analyze adds to
// the floor of its HTTP sub-trace.
//
// Usage: http-bodies -o BODIES FILE.pcap
//
// TCP streams are reassembled by wirebench's flow engine and read as
// HTTP/1.x with net/http (ReadRequest on the originator's side,
// ReadResponse on the responder's, each reply read with the method of its
// request), as the standard parsers read them. A body counts when its
// message's last Content-Encoding header starts with gzip, x-gzip or
// deflate: the bodies whose decompressed length the analyzer logs. A
// direction stops at its first gap, and a body cut short by the end of the
// connection is written as far as it arrived.
//
// The file holds one record per body: its length as a 4-byte
// little-endian number, then its bytes. On standard output goes one line,
// bodies=N bytes=B.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"strings"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
)

// maxStream caps the bytes kept of one direction of a connection.
const maxStream = 256 << 20

func main() {
	out := flag.String("o", "", "write the bodies to `FILE`")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: http-bodies -o BODIES FILE.pcap\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, flag.Arg(0)); err != nil {
		fmt.Fprintf(os.Stderr, "http-bodies: %v\n", err)
		os.Exit(1)
	}
}

func run(out, trace string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	w := &bodyWriter{w: bufio.NewWriterSize(f, 1<<20)}
	if err := extract(w, trace); err != nil {
		f.Close()
		return err
	}
	if err := w.w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	_, err = fmt.Printf("bodies=%d bytes=%d\n", w.n, w.bytes)
	return err
}

// extract reassembles the TCP connections of trace and writes the
// compressed bodies of each when it ends.
func extract(w *bodyWriter, trace string) error {
	r, err := capture.Open(trace)
	if err != nil {
		return err
	}
	defer r.Close()
	h := &streams{w: w}
	eng := flow.New(flow.Config{}, h)
	d := capture.NewDecoder()
	var p capture.Packet
	for {
		err := r.Next(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if d.Decode(&p) == nil && p.IPVersion != 0 {
			eng.Packet(&p)
		}
	}
	eng.Flush()
	return w.err
}

// streams keeps both directions of every TCP connection until it ends.
type streams struct{ w *bodyWriter }

type conn struct {
	dir    [2]bytes.Buffer
	broken [2]bool
}

func (s *streams) BeginConn(c *flow.Conn) {
	if c.Key.Proto == flow.ProtoTCP {
		c.User = new(conn)
	}
}

func (s *streams) Data(c *flow.Conn, d flow.Dir, data []byte) {
	if st, ok := c.User.(*conn); ok && !st.broken[d] {
		if st.dir[d].Len()+len(data) > maxStream {
			st.broken[d] = true
			return
		}
		st.dir[d].Write(data)
	}
}

func (s *streams) Gap(c *flow.Conn, d flow.Dir, n int) {
	if st, ok := c.User.(*conn); ok {
		st.broken[d] = true
	}
}

func (s *streams) EndConn(c *flow.Conn) {
	st, ok := c.User.(*conn)
	if !ok {
		return
	}
	c.User = nil
	methods := s.requests(&st.dir[flow.Orig])
	s.responses(&st.dir[flow.Resp], methods)
}

// requests reads the requests of one originator stream, writes their
// compressed bodies and returns their methods.
func (s *streams) requests(b *bytes.Buffer) []string {
	br := bufio.NewReader(b)
	var methods []string
	for {
		req, err := nethttp.ReadRequest(br)
		if err != nil {
			return methods
		}
		methods = append(methods, req.Method)
		if !s.body(req.Header, req.Body) {
			return methods
		}
	}
}

// responses reads the replies of one responder stream, the i-th final
// reply answering the i-th request.
func (s *streams) responses(b *bytes.Buffer, methods []string) {
	br := bufio.NewReader(b)
	for i := 0; ; {
		req := &nethttp.Request{Method: nethttp.MethodGet}
		if i < len(methods) {
			req.Method = methods[i]
		}
		resp, err := nethttp.ReadResponse(br, req)
		if err != nil {
			return
		}
		if resp.StatusCode >= 200 || resp.StatusCode == nethttp.StatusSwitchingProtocols {
			i++ // an interim reply (100 Continue) answers no request
		}
		if !s.body(resp.Header, resp.Body) {
			return
		}
		if resp.StatusCode == nethttp.StatusSwitchingProtocols {
			return
		}
	}
}

// body reads a message body and writes it when it is compressed; it
// reports whether the stream goes on after it.
func (s *streams) body(h nethttp.Header, body io.ReadCloser) bool {
	defer body.Close()
	var buf bytes.Buffer
	_, err := io.Copy(&buf, body)
	if compressed(h) && buf.Len() > 0 {
		s.w.write(buf.Bytes())
	}
	return err == nil
}

// compressed says a message's body is gzip or deflate as the analyzer
// tells: by the first token of the last Content-Encoding header.
func compressed(h nethttp.Header) bool {
	vs := h["Content-Encoding"]
	if len(vs) == 0 {
		return false
	}
	v := strings.ToLower(strings.TrimLeft(vs[len(vs)-1], " \t"))
	if i := strings.IndexAny(v, " \t,;"); i >= 0 {
		v = v[:i]
	}
	return v == "gzip" || v == "x-gzip" || v == "deflate"
}

// bodyWriter writes length-prefixed records and remembers its first
// error.
type bodyWriter struct {
	w        *bufio.Writer
	n, bytes int64
	err      error
}

func (w *bodyWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	var l [4]byte
	binary.LittleEndian.PutUint32(l[:], uint32(len(b)))
	w.w.Write(l[:])
	_, w.err = w.w.Write(b)
	w.n++
	w.bytes += int64(len(b))
}

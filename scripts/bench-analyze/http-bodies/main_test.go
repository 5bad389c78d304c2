package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
)

// TestExtract takes the compressed bodies out of a bundled trace: every
// one decompresses whole (the trace has no losses), and there are as many
// as its generator compressed.
func TestExtract(t *testing.T) {
	root, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "bodies")
	if err := run(out, filepath.Join(root, "traces", "http-dns-plain.pcap")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("%d bytes left after %d bodies", len(b), n)
		}
		l := int(b[0]) | int(b[1])<<8 | int(b[2])<<16 | int(b[3])<<24
		body := b[4 : 4+l]
		b = b[4+l:]
		n++
		if _, err := io.Copy(io.Discard, decompressor(t, body)); err != nil {
			t.Errorf("body %d (%d bytes): %v", n, l, err)
		}
	}
	if n != 18 {
		t.Errorf("%d bodies, want the 18 gzip and deflate bodies of the trace", n)
	}
}

func decompressor(t *testing.T, body []byte) io.Reader {
	t.Helper()
	var r io.Reader
	var err error
	switch {
	case body[0] == 0x1f && body[1] == 0x8b:
		r, err = gzip.NewReader(bytes.NewReader(body))
	case (uint16(body[0])<<8|uint16(body[1]))%31 == 0 && body[0]&0x0f == 8:
		r, err = zlib.NewReader(bytes.NewReader(body))
	default:
		r = flate.NewReader(bytes.NewReader(body))
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResponses reads replies with their requests' methods: a HEAD reply
// has no body, an interim reply answers no request.
func TestResponses(t *testing.T) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte("hello, hello, hello"))
	zw.Close()
	gz := zipped.String()
	stream := "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 999\r\n\r\n" + // HEAD: no body
		"HTTP/1.1 100 Continue\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Encoding: x-gzip\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"5\r\n" + gz[:5] + "\r\n" + "0\r\n\r\n" +
		"HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\nContent-Length: 2\r\n\r\nhi" +
		"HTTP/1.1 200 OK\r\nContent-Encoding: Deflate ; q=1\r\nContent-Length: " + strconv.Itoa(len(gz)) + "\r\n\r\n" + gz
	var file bytes.Buffer
	w := &bodyWriter{w: bufio.NewWriter(&file)}
	s := &streams{w: w}
	s.responses(bytes.NewBufferString(stream), []string{"HEAD", "POST", "GET", "GET"})
	w.w.Flush()
	if w.n != 2 || w.bytes != int64(5+len(gz)) {
		t.Errorf("wrote %d bodies of %d bytes, want 2 of %d", w.n, w.bytes, 5+len(gz))
	}
}

// Package fasthttp is an HTTP/1.x implementation for wirebench built on
// the request and response header parsers of valyala/fasthttp, written as
// any module outside wirebench would write one: through the public API
// only. Importing the package registers it under [Name]; a replay binary
// then picks it with "--parsers fasthttp" (see cmd/http-fasthttp-parser).
//
// fasthttp parses a message head from a bufio.Reader and leaves the body
// to its caller, who reads it into memory. Parsers are pushed chunks of a
// TCP stream instead, so each direction finds where a head ends itself,
// hands the whole head to fasthttp (RequestHeader.Read, ResponseHeader.Read
// through one bufio.Reader the analyzer reuses), and then frames the body
// as fasthttp's own client and server do: Content-Length, chunked, or until
// the connection closes, no body for HEAD, 1xx, 204 and 304. Bodies are
// counted, not kept, except a gzip or deflate one, which is kept (up to
// [MaxInflate] bytes) to count its decompressed length as Zeek does, as a
// fasthttp program would keep it to decompress it.
//
// Requests and replies are paired as Zeek pairs them (interim replies
// before the final one, pipelining, replies without a request), and each
// pair is reported as an [http.Transaction] with the fields of http.log the
// headers give. The README says which fields agree with the native parser
// on the bundled traces, and which it cannot fill.
package fasthttp

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"io"

	fh "github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// Name is the implementation's name for --parsers.
const Name = "fasthttp"

func init() {
	if err := http.Register(Name, func(s http.Sink) parsers.Analyzer { return New(s) }); err != nil {
		panic(err)
	}
}

// Limits. A message head larger than MaxHeader ends the parsing of its
// direction (Stats.LargeHeaders), as fasthttp refuses a head larger than
// its read buffer; a compressed body larger than MaxInflate is counted as
// it came on the wire (Stats.InflateSkipped); at most MaxPending requests
// wait for replies (Zeek's limit: more are reported unanswered,
// Stats.PendingLimit).
const (
	MaxHeader  = 64 << 10
	MaxInflate = 1 << 20
	MaxPending = 100
)

// Stats counts what an [Analyzer] met, across all its connections.
type Stats struct {
	Requests, Replies, Transactions int64
	// Errors counts message heads fasthttp refused; the direction stops
	// there, as a fasthttp server or client closes such a connection.
	Errors int64
	// LargeHeaders counts heads over MaxHeader, LongLines chunk-size and
	// trailer lines over it; both stop the direction.
	LargeHeaders, LongLines int64
	// Gaps counts gaps; Resyncs the times a direction looked for the next
	// request or status line after a gap outside a body.
	Gaps, Resyncs int64
	// InflateSkipped counts compressed bodies over MaxInflate, counted on
	// the wire; InflateErrors those that failed to decompress.
	InflateSkipped, InflateErrors int64
	// PendingLimit counts the times MaxPending requests waited and were
	// reported without replies.
	PendingLimit int64
}

// Analyzer parses HTTP/1.x with fasthttp's header parsers. It and its
// connections must be used from one goroutine; the state of closed
// connections is reused.
type Analyzer struct {
	sink  http.Sink
	stats Stats
	// One of each, shared by all connections: a direction is parsed to
	// the end of its chunk before the next is fed.
	req  fh.RequestHeader
	res  fh.ResponseHeader
	rd   bytes.Reader
	br   *bufio.Reader
	gz   gzip.Reader
	zl   io.ReadCloser
	fl   io.ReadCloser
	free []*conn
	// zfree are the buffers of compressed bodies not in use.
	zfree [][]byte
}

// maxZFree is how many buffers of compressed bodies the analyzer keeps
// for the next ones.
const maxZFree = 16

// getZ returns an empty buffer for a compressed body.
func (a *Analyzer) getZ() []byte {
	if n := len(a.zfree); n > 0 {
		b := a.zfree[n-1]
		a.zfree = a.zfree[:n-1]
		return b
	}
	return nil
}

// putZ takes back the buffer of a compressed body.
func (a *Analyzer) putZ(b []byte) {
	if cap(b) > 0 && len(a.zfree) < maxZFree {
		a.zfree = append(a.zfree, b[:0])
	}
}

// New returns an Analyzer reporting transactions to sink.
func New(sink http.Sink) *Analyzer {
	return &Analyzer{sink: sink, br: bufio.NewReaderSize(nil, MaxHeader)}
}

// Stats returns the counters so far.
func (a *Analyzer) Stats() Stats { return a.stats }

// Open implements parsers.Analyzer.
func (a *Analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	var cs *conn
	if n := len(a.free); n > 0 {
		cs, a.free = a.free[n-1], a.free[:n-1]
	} else {
		cs = &conn{a: a}
		cs.orig = side{cs: cs}
		cs.resp = side{cs: cs, resp: true}
	}
	cs.c = c
	return cs
}

// inflatedLen returns the length of a gzip, zlib or raw deflate body once
// decompressed. As Zeek's ZIP analyzer does, it tells the three apart by
// the first two bytes, whatever the coding's name, and stops at the end of
// the first stream; after corrupt data it drops the output since the last
// 4 KiB boundary, as Zeek drops the piece being filled.
func (a *Analyzer) inflatedLen(body []byte) int64 {
	if len(body) == 0 {
		return 0
	}
	a.rd.Reset(body)
	var zr io.Reader
	var err error
	switch {
	case len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b:
		err = a.gz.Reset(&a.rd)
		a.gz.Multistream(false)
		zr = &a.gz
	case len(body) >= 2 && isZlibHeader(body[0], body[1]):
		if a.zl == nil {
			a.zl, err = zlib.NewReader(&a.rd)
		} else {
			err = a.zl.(zlib.Resetter).Reset(&a.rd, nil)
		}
		zr = a.zl
	default:
		if a.fl == nil {
			a.fl = flate.NewReader(&a.rd)
		} else {
			err = a.fl.(flate.Resetter).Reset(&a.rd, nil)
		}
		zr = a.fl
	}
	var n int64
	if err == nil {
		n, err = io.Copy(io.Discard, zr)
	}
	switch err {
	case nil, io.ErrUnexpectedEOF, io.EOF, gzip.ErrChecksum, zlib.ErrChecksum:
		// Complete, cut short by the end of the body, or with a checksum
		// Zeek does not verify.
		return n
	}
	a.stats.InflateErrors++
	return n - n%4096
}

// isZlibHeader reports whether cmf and flg start a zlib stream (RFC 1950).
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

package http

import (
	"bufio"
	"bytes"
	stdflate "compress/flate"
	stdgzip "compress/gzip"
	stdzlib "compress/zlib"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	kflate "github.com/klauspost/compress/flate"
	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"

	"github.com/wirebench/wirebench/internal/rusage"
)

var inflateBodies = flag.String("inflate-bodies", "",
	"`file` of compressed HTTP bodies (written by scripts/bench-analyze/http-bodies) for BenchmarkInflateBodies; default: generated bodies")

// loadBodies reads the bodies of -inflate-bodies, or without it makes
// gzip, zlib and raw deflate bodies of the sizes web pages have.
func loadBodies(tb testing.TB) [][]byte {
	if *inflateBodies == "" {
		rng := rand.New(rand.NewPCG(15, 16))
		var out [][]byte
		for i, method := range []string{"gzip", "zlib", "raw", "gzip", "gzip", "gzip"} {
			data := sample(rng, 1<<(10+2*i))
			out = append(out, compressed(tb, method, stdflate.DefaultCompression, data))
		}
		return out
	}
	b, err := os.ReadFile(*inflateBodies)
	if err != nil {
		tb.Fatal(err)
	}
	bodies, err := splitBodies(b)
	if err != nil {
		tb.Fatalf("%s: %v", *inflateBodies, err)
	}
	return bodies
}

// splitBodies splits the records of an http-bodies file: a 4-byte
// little-endian length, then as many bytes.
func splitBodies(b []byte) ([][]byte, error) {
	var out [][]byte
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return nil, fmt.Errorf("offset %d: truncated length", off)
		}
		n := int(binary.LittleEndian.Uint32(b[off:]))
		if n > len(b)-off-4 {
			return nil, fmt.Errorf("offset %d: body of %d bytes, %d left", off, n, len(b)-off-4)
		}
		out = append(out, b[off+4:off+4+n])
		off += 4 + n
	}
	return out, nil
}

// A bodyInflater returns how many bytes a compressed body decompresses to,
// counted as the analyzer counts it.
type bodyInflater interface {
	inflatedLen(body []byte) int64
}

// ours is the native parser's inflater, fed each body whole.
type ours struct {
	pool tablePool
	f    inflater
}

func (o *ours) inflatedLen(body []byte) int64 {
	o.f.start(&o.pool)
	n := o.f.write(body)
	return n + o.f.flush()
}

// The readers of a decompression library, reused from body to body as a
// program decompressing many would, writing to io.Discard.
type readers struct {
	br      *bytes.Reader
	bufr    *bufio.Reader
	gzip    gzipReader
	zlib    io.Reader // made at the first zlib body
	newZlib func(io.Reader) (io.ReadCloser, error)
	flate   io.Reader
}

// gzipReader is the gzip.Reader of compress/gzip and of
// klauspost/compress/gzip.
type gzipReader interface {
	io.Reader
	Reset(io.Reader) error
	Multistream(bool)
}

// resetter is the Resetter of the zlib and flate packages of both.
type resetter interface {
	Reset(r io.Reader, dict []byte) error
}

// newStd returns compress/flate's readers (compress/gzip, compress/zlib).
func newStd() *readers {
	return &readers{gzip: new(stdgzip.Reader), newZlib: stdzlib.NewReader, flate: stdflate.NewReader(nil)}
}

// newKlauspost returns klauspost/compress's readers.
func newKlauspost() *readers {
	return &readers{gzip: new(kgzip.Reader), newZlib: kzlib.NewReader, flate: kflate.NewReader(nil)}
}

// inflatedLen decompresses body as parsers/std counts it: gzip, zlib or
// raw deflate told apart by the first two bytes; the output of a stream
// cut short counts whole, that of a corrupt one to the last 4 KiB
// boundary.
func (r *readers) inflatedLen(body []byte) int64 {
	if r.br == nil {
		r.br = bytes.NewReader(nil)
		r.bufr = bufio.NewReader(r.br)
	}
	r.br.Reset(body)
	r.bufr.Reset(r.br)
	var zr io.Reader
	var err error
	switch {
	case len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b:
		if err = r.gzip.Reset(r.bufr); err == nil {
			r.gzip.Multistream(false)
			zr = r.gzip
		}
	case len(body) >= 2 && body[0]&0x0f == 8 && body[0]>>4 <= 7 && (uint16(body[0])<<8|uint16(body[1]))%31 == 0:
		if r.zlib == nil {
			r.zlib, err = r.newZlib(r.bufr)
		} else {
			err = r.zlib.(resetter).Reset(r.bufr, nil)
		}
		zr = r.zlib
	default:
		err = r.flate.(resetter).Reset(r.bufr, nil)
		zr = r.flate
	}
	var n int64
	if err == nil {
		n, err = io.Copy(io.Discard, zr)
	}
	switch {
	case err == nil, errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, stdgzip.ErrChecksum), errors.Is(err, stdzlib.ErrChecksum),
		errors.Is(err, kgzip.ErrChecksum), errors.Is(err, kzlib.ErrChecksum):
		return n
	}
	return n - n%outPiece
}

var inflaters = []struct {
	name string
	make func() bodyInflater
}{
	{"wirebench", func() bodyInflater { return new(ours) }},
	{"compress-flate", func() bodyInflater { return newStd() }},
	{"klauspost", func() bodyInflater { return newKlauspost() }},
}

// TestInflateBodiesAgree checks that the three inflaters of
// BenchmarkInflateBodies count the same lengths, so that the benchmark
// compares the same work.
func TestInflateBodiesAgree(t *testing.T) {
	bodies := loadBodies(t)
	want := make([]int64, len(bodies))
	for i, in := range inflaters {
		f := in.make()
		for j, b := range bodies {
			n := f.inflatedLen(b)
			if i == 0 {
				want[j] = n
			} else if n != want[j] {
				t.Errorf("body %d (%d bytes): %s counts %d, %s %d", j, len(b), in.name, n, inflaters[0].name, want[j])
			}
		}
	}
}

// BenchmarkInflateBodies measures counting the decompressed length of
// HTTP bodies with the native parser's inflater, compress/flate and
// klauspost/compress, one operation being every body once. Bytes/s are of
// compressed input; cpu-ns/op is the process's CPU time (user and
// system), which scripts/bench-analyze adds, for the fastest inflater, to
// the floor of its HTTP sub-trace:
//
//	go run ./scripts/bench-analyze/http-bodies -o bodies trace.pcap
//	go test ./parsers/http -run '^$' -bench InflateBodies -count 10 -args -inflate-bodies $PWD/bodies | benchstat -col /inflater -
func BenchmarkInflateBodies(b *testing.B) {
	bodies := loadBodies(b)
	var size int64
	for _, body := range bodies {
		size += int64(len(body))
	}
	for _, in := range inflaters {
		b.Run("inflater="+in.name, func(b *testing.B) {
			f := in.make()
			b.SetBytes(size)
			b.ReportAllocs()
			var out int64
			start := rusage.Self()
			for b.Loop() {
				out = 0
				for _, body := range bodies {
					out += f.inflatedLen(body)
				}
			}
			end := rusage.Self()
			cpu := end.User + end.Sys - start.User - start.Sys
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(out), "out-B/op")
		})
	}
}

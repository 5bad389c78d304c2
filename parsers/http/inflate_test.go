package http

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// sample returns n bytes of text-like data with repeats, the kind of body
// HTTP servers compress.
func sample(rng *rand.Rand, n int) []byte {
	words := []string{"<div class=\"item\">", "</div>\n", "hello", "world", "lorem ipsum dolor ",
		"{\"id\":", "}, ", "\t", "0123456789", "HTTP", "zeek"}
	var b bytes.Buffer
	for b.Len() < n {
		if rng.IntN(10) == 0 {
			b.WriteByte(byte(rng.IntN(256))) // some noise
			continue
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.Bytes()[:n]
}

// compressed returns data compressed by the named method at a level.
func compressed(t testing.TB, method string, level int, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch method {
	case "gzip":
		var zw *gzip.Writer
		zw, err = gzip.NewWriterLevel(&b, level)
		if zw != nil {
			zw.Name, zw.Comment, zw.Extra = "body.html", "a comment", []byte{1, 2, 3}
		}
		w = zw
	case "zlib":
		w, err = zlib.NewWriterLevel(&b, level)
	case "raw":
		w, err = flate.NewWriter(&b, level)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// inflatedLen feeds z to a fresh inflater in pieces of the sizes next
// returns and returns the length it counts.
func inflatedLen(z []byte, next func() int) (int64, bool) {
	return inflatedLenWith(new(tablePool), z, next)
}

// inflatedLenWith is inflatedLen with the code tables borrowed from pool.
func inflatedLenWith(pool *tablePool, z []byte, next func() int) (int64, bool) {
	var f inflater
	f.start(pool)
	var n int64
	for len(z) > 0 {
		k := min(max(next(), 1), len(z))
		n += f.write(z[:k])
		z = z[k:]
	}
	return n + f.flush(), f.failed
}

func TestInflatedLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	levels := []int{flate.NoCompression, flate.HuffmanOnly, flate.BestSpeed, 5, flate.BestCompression}
	for _, method := range []string{"gzip", "zlib", "raw"} {
		for _, level := range levels {
			for _, size := range []int{0, 1, 100, 5000, 70000, 300000} {
				data := sample(rng, size)
				z := compressed(t, method, level, data)
				whole, failed := inflatedLen(z, func() int { return len(z) })
				if failed || whole != int64(len(data)) {
					t.Errorf("%s level %d size %d whole: got %d (failed %v), want %d", method, level, size, whole, failed, len(data))
				}
				for _, chunk := range []func() int{
					func() int { return 1 },
					func() int { return 1 + rng.IntN(40) },
					func() int { return 1460 },
				} {
					if got, _ := inflatedLen(z, chunk); got != whole {
						t.Errorf("%s level %d size %d: chunked %d, whole %d", method, level, size, got, whole)
					}
				}
			}
		}
	}
}

// TestInflateErrors checks truncated and corrupt streams against Go's
// compress/flate. Go's reader keeps decoded bytes in its window and loses
// them on an error, zlib (like the inflater) hands out all it decoded, so
// Go's output is a lower bound, except that both find the same errors and,
// without one, produce the same length. The count must also not depend on
// how the stream is cut.
func TestInflateErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 300 {
		data := sample(rng, 1+rng.IntN(50000))
		z := compressed(t, "raw", 1+rng.IntN(9), data)
		truncated := i%3 == 0
		if truncated {
			z = z[:rng.IntN(len(z))]
		} else {
			for range 1 + rng.IntN(3) {
				z[rng.IntN(len(z))] ^= byte(1 + rng.IntN(255))
			}
		}
		ref, err := io.Copy(io.Discard, flate.NewReader(bytes.NewReader(z)))
		goFailed := err != nil && err != io.ErrUnexpectedEOF
		whole, failed := inflatedLen(z, func() int { return len(z) })
		if got, f := inflatedLen(z, func() int { return 1 + rng.IntN(3000) }); got != whole || f != failed {
			t.Fatalf("case %d: chunked count %d (failed %v), whole %d (failed %v)", i, got, f, whole, failed)
		}
		switch {
		case truncated && (failed || whole < ref || whole > int64(len(data))):
			t.Fatalf("case %d: truncated stream counted %d (failed %v); Go's flate gave %d of %d", i, whole, failed, ref, len(data))
		case !truncated && failed != goFailed:
			t.Fatalf("case %d: failed %v, Go's flate error: %v", i, failed, err)
		case !truncated && !failed && whole != ref:
			t.Fatalf("case %d: counted %d, Go's flate produced %d", i, whole, ref)
		}
	}
}

func TestInflateNotCompressed(t *testing.T) {
	// Plain text announced as gzip: neither gzip nor zlib, so decoded as
	// raw deflate, which fails quickly; whatever came out before the error
	// is dropped with its piece.
	got, failed := inflatedLen([]byte("<html><body>not compressed at all</body></html>\n"), func() int { return 7 })
	if !failed || got != 0 {
		t.Errorf("plain text: counted %d (failed %v), want 0 and a failure", got, failed)
	}
	// A gzip header with a bad header CRC.
	z := compressed(t, "gzip", 5, []byte("hello"))
	hz := append([]byte(nil), z[:3]...)
	hz[3-1] = 8
	hz = append(hz, 0x02, 0, 0, 0, 0, 0, 3, 0xde, 0xad) // FHCRC with a wrong CRC
	hz = append(hz, z[10:]...)
	if got, failed := inflatedLen(hz, func() int { return 3 }); !failed || got != 0 {
		t.Errorf("bad header CRC: counted %d (failed %v), want 0 and a failure", got, failed)
	}
}

// FuzzInflate checks that the count and the verdict on any stream do not
// depend on how it is cut: whole deliveries take the inflater's fast path
// (8 bytes of input at a time), short ones its byte-at-a-time path, and
// both must stop at the same error or end with the same length. A stream
// the inflater accepts must also decode with Go's compress/flate to the
// same length when it is raw deflate.
func FuzzInflate(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for i, method := range []string{"gzip", "zlib", "raw", "raw"} {
		z := compressed(f, method, []int{1, 6, 9, flate.HuffmanOnly}[i], sample(rng, 3000))
		f.Add(z, uint8(1))
		f.Add(z, uint8(7))
	}
	f.Add([]byte{0x78, 0x9c, 0x03, 0x00}, uint8(0))
	f.Fuzz(func(t *testing.T, z []byte, step uint8) {
		whole, failed := inflatedLen(z, func() int { return len(z) })
		got, f := inflatedLen(z, func() int { return int(step%8) + 1 })
		if got != whole || f != failed {
			t.Fatalf("in pieces of %d: counted %d (failed %v); whole: %d (failed %v)", step%8+1, got, f, whole, failed)
		}
		if whole < 0 {
			t.Fatalf("negative count %d", whole)
		}
		if len(z) < 2 || failed || z[0] == 0x1f || (uint16(z[0])<<8|uint16(z[1]))%31 == 0 {
			return // not plain raw deflate, or not accepted
		}
		ref, err := io.Copy(io.Discard, flate.NewReader(bytes.NewReader(z)))
		if err == nil && ref != whole {
			t.Fatalf("counted %d, Go's flate produced %d", whole, ref)
		}
	})
}

// BenchmarkInflate measures counting the decompressed length of a gzip
// body delivered in TCP-segment-sized pieces; bytes/s are of compressed
// input.
func BenchmarkInflate(b *testing.B) {
	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		data := sample(rand.New(rand.NewPCG(13, 14)), 1<<20)
		z := compressed(b, "gzip", level, data)
		b.Run(fmt.Sprintf("level%d", level), func(b *testing.B) {
			b.SetBytes(int64(len(z)))
			b.ReportAllocs()
			pool := new(tablePool)
			for b.Loop() {
				if n, failed := inflatedLenWith(pool, z, func() int { return 1460 }); failed || n != int64(len(data)) {
					b.Fatalf("counted %d (failed %v), want %d", n, failed, len(data))
				}
			}
		})
	}
}

// randomCode returns the code lengths of a random complete code of n
// symbols (n >= 2) spread over size symbols, made by splitting random
// leaves of a one-bit code, so that long codes of up to 15 bits are
// common.
func randomCode(rng *rand.Rand, n, size int) []uint8 {
	leaves := []uint8{1, 1}
	for len(leaves) < n {
		i := rng.IntN(len(leaves))
		if leaves[i] == 15 {
			continue
		}
		leaves[i]++
		leaves = append(leaves, leaves[i])
	}
	lens := make([]uint8, size)
	for i, s := range rng.Perm(size)[:n] {
		lens[s] = leaves[i]
	}
	return lens
}

// TestHuffmanTable checks every code of random complete codes against the
// canonical code of RFC 1951, 3.2.2: each decodes to its symbol's entry
// and length whatever bits follow it, and not before all its bits are
// buffered.
func TestHuffmanTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	alphabets := []struct {
		alphabet, size int
	}{{litLenCode, 286}, {distCode, 30}, {codeLenCode, 19}}
	var h huffman
	for i := range 600 {
		a := alphabets[i%len(alphabets)]
		lens := randomCode(rng, 2+rng.IntN(a.size-1), a.size)
		if a.alphabet == codeLenCode {
			lens = randomCode(rng, 2+rng.IntN(7), a.size) // at most 7 bits in a header
			for j := range lens {
				if lens[j] > 7 {
					lens = nil
					break
				}
			}
			if lens == nil {
				continue
			}
		}
		if !h.build(lens, a.alphabet) {
			t.Fatalf("alphabet %d: complete code %v rejected", a.alphabet, lens)
		}
		var count, next [17]int
		for _, l := range lens {
			count[l]++
		}
		count[0] = 0
		for l := 1; l <= 15; l++ {
			next[l+1] = (next[l] + count[l]) << 1
		}
		for s, l := range lens {
			if l == 0 {
				continue
			}
			code := next[l]
			next[l]++
			var rev uint64
			for b := range int(l) {
				rev |= uint64(code>>(int(l)-1-b)&1) << b
			}
			bits := rev | rng.Uint64()<<l
			want := symbolEntry(a.alphabet, s, int(l))
			if e, ok := h.decode(bits, 64); !ok || e != want {
				t.Fatalf("alphabet %d, lengths %v: symbol %d (code %0*b) decoded to %#x (ok %v), want %#x", a.alphabet, lens, s, l, code, e, ok, want)
			}
			if _, ok := h.decode(bits&(1<<(l-1)-1), uint(l-1)); ok {
				t.Fatalf("alphabet %d: symbol %d decoded from %d of its %d bits", a.alphabet, s, l-1, l)
			}
		}
	}
}

func TestHuffmanBuildRejects(t *testing.T) {
	tests := []struct {
		name     string
		lens     []uint8
		alphabet int
		ok       bool
	}{
		{"over-subscribed", []uint8{1, 1, 1}, litLenCode, false},
		{"incomplete", []uint8{2, 2, 0, 2}, distCode, false},
		{"one code of one bit", []uint8{0, 1}, distCode, true},
		{"no codes", []uint8{0, 0, 0}, distCode, true},
		{"one code of two bits", []uint8{2}, distCode, false},
		{"code lengths: one code", []uint8{1}, codeLenCode, false},
		{"code lengths: none", []uint8{0, 0}, codeLenCode, false},
	}
	for _, tt := range tests {
		var h huffman
		if got := h.build(tt.lens, tt.alphabet); got != tt.ok {
			t.Errorf("%s: build(%v) = %v, want %v", tt.name, tt.lens, got, tt.ok)
		}
	}
	// Bits that are no code of a lone one-bit code fail, once 15 are
	// buffered.
	var h huffman
	h.build([]uint8{0, 1}, distCode)
	if _, ok := h.decode(1, 14); ok {
		t.Errorf("no code: decoded with 14 bits buffered")
	}
	if e, ok := h.decode(1, 15); !ok || e&entryBad == 0 {
		t.Errorf("no code: decoded to %#x (ok %v), want a bad entry", e, ok)
	}
}

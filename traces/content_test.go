package traces

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/url"
	"testing"
)

// readAll drains a body in pieces of varying size, as TCP segments do.
func readAll(t *testing.T, b *body) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 1448)
	for i := 0; b.left > 0; i++ {
		n := b.read(buf[:1+i*97%len(buf)])
		if n == 0 {
			t.Fatalf("read returned 0 with %d bytes left", b.left)
		}
		out = append(out, buf[:n]...)
	}
	return out
}

func TestGzipBodiesDecode(t *testing.T) {
	p := newPools(7)
	for _, ulen := range []int64{0, 1, 2, 17, 100, 4095, 4096, 70_000, 300_000} {
		for _, ct := range []contentType{ctHTML, ctCSS, ctJS, ctPlain} {
			r := newRNG(uint64(ulen), uint64(ct))
			var b body
			var enc gzipEnc
			size := b.initGzip(p, ct, ulen, &enc, &r)
			got := readAll(t, &b)
			if int64(len(got)) != size {
				t.Fatalf("ulen %d: announced %d encoded bytes, produced %d", ulen, size, len(got))
			}
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("ulen %d: %v", ulen, err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("ulen %d: decompressing: %v", ulen, err)
			}
			if int64(len(plain)) != ulen {
				t.Fatalf("ulen %d: decompressed to %d bytes", ulen, len(plain))
			}
		}
	}
}

func TestStructuredBodies(t *testing.T) {
	p := newPools(3)
	for size := int64(2); size < 3000; size += 37 {
		r := newRNG(uint64(size), 1)
		var b body
		b.init(p, ctJSON, size, &r)
		got := readAll(t, &b)
		if int64(len(got)) != size || !json.Valid(got) {
			t.Fatalf("JSON body of %d bytes: got %d bytes, valid %v: %q", size, len(got), json.Valid(got), got)
		}
		b.init(p, ctForm, size, &r)
		got = readAll(t, &b)
		if _, err := url.ParseQuery(string(got)); int64(len(got)) != size || err != nil {
			t.Fatalf("form body of %d bytes: got %d bytes, %v: %q", size, len(got), err, got)
		}
	}
}

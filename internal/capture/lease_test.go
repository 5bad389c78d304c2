package capture_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// lendInputs returns the bundled traces, pcap and pcapng, each also
// gzip-compressed, by name.
func lendInputs(t *testing.T) map[string][]byte {
	in := map[string][]byte{}
	for _, path := range corpustest.BundledTraces(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(data)
		zw.Close()
		in[path], in[path+".gz"] = data, gz.Bytes()
	}
	return in
}

// TestLend checks that the frames of a lending reader stay as they were
// read while their leases are held, and are what a reader that does not
// lend reads.
func TestLend(t *testing.T) {
	for name, data := range lendInputs(t) {
		want, _, err := readAll(t, name, data)
		if err != nil {
			t.Fatal(err)
		}
		r, err := capture.NewReader(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		r.Lend()
		var held []*capture.Lease
		var got [][]byte
		var p capture.Packet
		for r.Next(&p) == nil {
			switch l := p.Lease; {
			case l == nil:
				got = append(got, slices.Clone(p.Data))
				continue
			case len(held) == 0 || held[len(held)-1] != l:
				l.Hold()
				held = append(held, l)
			}
			if off := p.Lease.Offset(p.Data); !bytes.Equal(p.Lease.Bytes()[off:off+len(p.Data)], p.Data) {
				t.Fatalf("%s: frame %d is not at offset %d of its lease", name, len(got), off)
			}
			got = append(got, p.Data)
		}
		r.Close()
		if len(got) != len(want) {
			t.Fatalf("%s: %d frames lent, want %d", name, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i].Data) {
				t.Fatalf("%s: frame %d changed while its lease was held", name, i)
			}
		}
		if len(held) < 2 && len(data) > 1<<17 {
			t.Errorf("%s: %d leases for %d bytes", name, len(held), len(data))
		}
		for _, l := range held {
			l.Release()
		}
	}
}

// TestLendReuses checks that a lending reader whose leases are released
// soon reads into the same few buffers.
func TestLendReuses(t *testing.T) {
	for name, data := range lendInputs(t) {
		r, err := capture.NewReader(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		r.Lend()
		seen := map[*capture.Lease]bool{}
		var held *capture.Lease
		var p capture.Packet
		for r.Next(&p) == nil {
			if l := p.Lease; l != nil && l != held {
				l.Hold()
				if held != nil {
					held.Release()
				}
				held = l
				seen[l] = true
			}
		}
		r.Close()
		if len(seen) > 3 {
			t.Errorf("%s: %d buffers, want at most 3 when one lease is held at a time", name, len(seen))
		}
	}
}

// TestNotLent checks that a reader that does not lend sets no lease.
func TestNotLent(t *testing.T) {
	for name, data := range lendInputs(t) {
		r, err := capture.NewReader(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		p := capture.Packet{Lease: new(capture.Lease)}
		for r.Next(&p) == nil {
			if p.Lease != nil {
				t.Fatalf("%s: a reader that does not lend set a lease", name)
			}
		}
		r.Close()
	}
}

// TestOffset checks that Offset is the end of the last record read, with
// and without lending, and the end of the input after the last one and
// after Close.
func TestOffset(t *testing.T) {
	for name, data := range lendInputs(t) {
		if bytes.HasPrefix(data, []byte{0x0a, 0x0d, 0x0d, 0x0a}) || strings.HasSuffix(name, ".gz") {
			continue // pcapng blocks are not records; gzip offsets are of what it decompresses
		}
		for _, lend := range []bool{false, true} {
			r, err := capture.NewReader(bytes.NewReader(data), name)
			if err != nil {
				t.Fatal(err)
			}
			if lend {
				r.Lend()
			}
			off := int64(24)
			var p capture.Packet
			for r.Next(&p) == nil {
				if off += 16 + int64(len(p.Data)); r.Offset() != off {
					t.Fatalf("%s (lend %v): Offset %d after a record ending at %d", name, lend, r.Offset(), off)
				}
			}
			if r.Offset() != int64(len(data)) {
				t.Errorf("%s (lend %v): Offset %d at the end of %d bytes", name, lend, r.Offset(), len(data))
			}
			r.Close()
			if r.Offset() != int64(len(data)) {
				t.Errorf("%s (lend %v): Offset %d after Close, want %d", name, lend, r.Offset(), len(data))
			}
		}
	}
}

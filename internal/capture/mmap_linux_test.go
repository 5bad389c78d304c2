package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

// mappedRecords returns records of many sizes, some larger than a small
// window, so that records straddle windows and some are copied out.
func mappedRecords(n int) []ct.Record {
	recs := make([]ct.Record, n)
	for i := range recs {
		size := 60 + i*97%1400
		if i%50 == 49 {
			size = 9000 // above the test windows' Peek limit
		}
		recs[i] = ct.Record{TS: int64(i) * 1e9, Data: bytes.Repeat([]byte{byte(i)}, size)}
	}
	return recs
}

// openMapped opens path through windows of window bytes.
func openMapped(t *testing.T, path string, window int) *Reader {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	br, ok := mapFile(f, path, window)
	if !ok {
		t.Fatal("file not mapped")
	}
	r, err := newReader(br, path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMappedMatchesStream reads files through windows of a few pages and
// through a stream: the frames must be the same.
func TestMappedMatchesStream(t *testing.T) {
	recs := mappedRecords(300)
	files := map[string][]byte{
		"pcap":   ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...),
		"pcapng": ct.Pcapng(false, nil, recs...),
	}
	page := os.Getpagesize()
	for name, data := range files {
		path := writeFile(t, data)
		for _, window := range []int{2 * page, 3 * page, 64 * page} {
			r := openMapped(t, path, window)
			var p Packet
			for i := 0; ; i++ {
				err := r.Next(&p)
				if err == io.EOF {
					if i != len(recs) {
						t.Errorf("%s, window %d: %d frames, want %d", name, window, i, len(recs))
					}
					break
				}
				if err != nil {
					t.Fatalf("%s, window %d: frame %d: %v", name, window, i, err)
				}
				if !bytes.Equal(p.Data, recs[i].Data) || p.TS != recs[i].TS {
					t.Fatalf("%s, window %d: frame %d differs", name, window, i)
				}
			}
			r.Close()
		}
	}
}

// TestMappedWindowHeld checks that a held window stays readable after the
// reader moved on, and is unmapped by the last Release.
func TestMappedWindowHeld(t *testing.T) {
	recs := mappedRecords(100)
	r := openMapped(t, writeFile(t, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)), 2*os.Getpagesize())
	var p Packet
	if err := r.Next(&p); err != nil {
		t.Fatal(err)
	}
	w := r.Window()
	if off, ok := w.Offset(p.Data); !ok || !bytes.Equal(w.Bytes()[off:off+len(p.Data)], recs[0].Data) {
		t.Fatalf("Offset of the first frame = %d, %v", off, ok)
	}
	w.Hold()
	first := p.Data
	for r.Next(&p) == nil {
	}
	if r.Window() == w {
		t.Fatal("the reader did not move to another window")
	}
	if !bytes.Equal(first, recs[0].Data) {
		t.Error("the held frame changed")
	}
	r.Close()
	if n := len(r.br.m.live); n != 1 {
		t.Errorf("%d windows mapped, want the held one", n)
	}
	w.Release()
	if n := len(r.br.m.live); n != 0 {
		t.Errorf("%d windows mapped after the last Release, want 0", n)
	}
}

// TestMappedTruncated truncates a file while it is read: the fault on the
// pages gone must be an error naming the file and an offset, not a crash.
func TestMappedTruncated(t *testing.T) {
	recs := mappedRecords(2000)
	path := writeFile(t, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...))
	r := openMapped(t, path, 256*os.Getpagesize())
	var p Packet
	for range 10 {
		if err := r.Next(&p); err != nil {
			t.Fatal(err)
		}
	}
	const size = 100_000 // inside the first window
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	err := r.Guard(func() error {
		for {
			if err := r.Next(&p); err != nil {
				return err
			}
			_ = bytes.Count(p.Data, []byte{1}) // touch every byte, as a parser would
		}
	})
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Offset < size || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("reading a file truncated at %d = %v, want an error naming it and an offset past %d", size, err, size)
	}
}

// TestMappedGrowing reads a file that grew after it was opened: the
// records written meanwhile are read too, as a stream would.
func TestMappedGrowing(t *testing.T) {
	recs := mappedRecords(200)
	data := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	cut := len(ct.Pcap(ct.PcapOptions{LinkType: 1}, recs[:120]...))
	path := writeFile(t, data[:cut])
	r := openMapped(t, path, 4*os.Getpagesize())
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var p Packet
	n := 0
	for r.Next(&p) == nil {
		n++
	}
	if n != len(recs) {
		t.Errorf("read %d frames of a file grown to %d", n, len(recs))
	}
}

// TestMappedNextAllocs checks that reading a mapped file allocates only
// per window.
func TestMappedNextAllocs(t *testing.T) {
	r := openMapped(t, writeFile(t, ct.Pcap(ct.PcapOptions{LinkType: 1}, mappedRecords(300)[:49]...)), mapWindowSize)
	var p Packet
	allocs := testing.AllocsPerRun(40, func() {
		if err := r.Next(&p); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Next allocates %.1f times a frame", allocs)
	}
}

// TestOpenMapsOnlyPlainFiles checks that Open maps a plain capture file
// and reads a compressed one as a stream.
func TestOpenMapsOnlyPlainFiles(t *testing.T) {
	data := ct.Pcap(ct.PcapOptions{LinkType: 1}, mappedRecords(10)...)
	for _, tc := range []struct {
		data   []byte
		mapped bool
	}{{data, true}, {ct.Gzip(data), false}} {
		r, err := Open(writeFile(t, tc.data))
		if err != nil {
			t.Fatal(err)
		}
		var p Packet
		n := 0
		for r.Next(&p) == nil {
			n++
		}
		if r.Mapped() != tc.mapped || n != 10 {
			t.Errorf("mapped %v (want %v), %d frames (want 10)", r.Mapped(), tc.mapped, n)
		}
		r.Close()
	}
}

// TestWindowGuard checks that a goroutine holding a window gets an error,
// not a crash, when the file is truncated under it.
func TestWindowGuard(t *testing.T) {
	recs := mappedRecords(200)
	path := writeFile(t, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...))
	r := openMapped(t, path, 64*os.Getpagesize())
	defer r.Close()
	var p Packet
	for range 100 {
		if err := r.Next(&p); err != nil {
			t.Fatal(err)
		}
	}
	w := r.Window()
	w.Hold()
	defer w.Release()
	frame := p.Data
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err := w.Guard(func() error {
		_ = bytes.Count(frame, []byte{1})
		return nil
	})
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Offset <= 0 {
		t.Fatalf("touching a frame of a truncated file = %v, want an error naming it and an offset", err)
	}
}

package capture_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

// frame is what the reader delivers for one packet.
type frame struct {
	TS       int64
	Data     []byte
	OrigLen  int
	LinkType uint16
}

// readAll reads every frame of data, returning the frames and the error
// that ended reading (nil for a clean end).
func readAll(t testing.TB, name string, data []byte) ([]frame, *capture.Reader, error) {
	t.Helper()
	return readFrom(t, name, bytes.NewReader(data))
}

// readFrom is readAll for any input.
func readFrom(t testing.TB, name string, in io.Reader) ([]frame, *capture.Reader, error) {
	t.Helper()
	r, err := capture.NewReader(in, name)
	if err != nil {
		return nil, nil, err
	}
	var out []frame
	var p capture.Packet
	for {
		err := r.Next(&p)
		if err == io.EOF {
			return out, r, nil
		}
		if err != nil {
			return out, r, err
		}
		out = append(out, frame{p.TS, bytes.Clone(p.Data), p.OrigLen, p.LinkType})
	}
}

func sampleRecords() []ct.Record {
	return []ct.Record{
		{TS: 1_700_000_000_123_456_000, Data: ct.TCP4("10.0.0.1", "10.0.0.2", 40000, 80, []byte("GET / HTTP/1.1\r\n\r\n"))},
		{TS: 1_700_000_001_000_001_000, Data: ct.UDP4("10.0.0.1", "10.0.0.53", 40001, 53, []byte("query"))},
		// Cut by a 60-byte snap length.
		{TS: 1_700_000_002_999_999_000, Data: ct.TCP4("10.0.0.2", "10.0.0.1", 80, 40000, bytes.Repeat([]byte("x"), 100))[:60], OrigLen: 154},
	}
}

func TestReaderFormats(t *testing.T) {
	recs := sampleRecords()
	nsRecs := append([]ct.Record(nil), recs...)
	nsRecs[0].TS += 789 // nanosecond digits survive only nanosecond files
	tests := []struct {
		name   string
		file   []byte
		recs   []ct.Record
		format capture.Format
		hdr    capture.Header
	}{
		{"pcap µs little-endian", ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...), recs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 262144}},
		{"pcap µs big-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, BigEndian: true, Snaplen: 1500}, recs...), recs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 1500}},
		{"pcap ns little-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true}, nsRecs...), nsRecs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 262144, Nanos: true}},
		{"pcap ns big-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true, BigEndian: true}, nsRecs...), nsRecs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 262144, Nanos: true}},
		{"pcap frames above the snap length", ct.Pcap(ct.PcapOptions{LinkType: 1, Snaplen: 64}, recs...), recs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 64}},
		{"pcap snaplen 0 is the maximum", ct.Pcap(ct.PcapOptions{LinkType: 1, Snaplen: 0}, recs...), recs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 262144}},
		{"pcap link type with FCS bits", ct.Pcap(ct.PcapOptions{LinkType: 1 | 0x14000000}, recs...), recs, capture.FormatPcap, capture.Header{LinkType: 1, Snaplen: 262144}},
		{"pcapng little-endian", ct.Pcapng(false, nil, recs...), recs, capture.FormatPcapng, capture.Header{LinkType: 1, Snaplen: 262144}},
		{"pcapng big-endian", ct.Pcapng(true, []ct.Interface{{LinkType: 1, Snaplen: 65535}}, recs...), recs, capture.FormatPcapng, capture.Header{LinkType: 1, Snaplen: 65535}},
		{"pcapng ns", ct.Pcapng(false, []ct.Interface{{LinkType: 1, TSResol: 9}}, nsRecs...), nsRecs, capture.FormatPcapng, capture.Header{LinkType: 1, Snaplen: 262144, Nanos: true}},
	}
	for _, tt := range tests {
		for _, gz := range []bool{false, true} {
			name, file := tt.name, tt.file
			if gz {
				name, file = name+" gzip", ct.Gzip(file)
			}
			t.Run(name, func(t *testing.T) {
				got, r, err := readAll(t, "test.cap", file)
				if err != nil {
					t.Fatal(err)
				}
				if r.Format() != tt.format || r.Compressed() != gz || r.Header() != tt.hdr {
					t.Errorf("format %v compressed %v header %+v, want %v %v %+v", r.Format(), r.Compressed(), r.Header(), tt.format, gz, tt.hdr)
				}
				checkFrames(t, got, tt.recs, 1)
				var p capture.Packet
				if err := r.Next(&p); err != io.EOF {
					t.Errorf("Next after the end = %v, want io.EOF", err)
				}
			})
		}
	}
}

func checkFrames(t *testing.T, got []frame, want []ct.Record, lt ...uint16) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d packets, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		orig := w.OrigLen
		if orig == 0 {
			orig = len(w.Data)
		}
		wantLT := lt[0]
		if len(lt) > 1 {
			wantLT = lt[w.Iface]
		}
		if g.TS != w.TS || !bytes.Equal(g.Data, w.Data) || g.OrigLen != orig || g.LinkType != wantLT {
			t.Errorf("packet %d: ts %d len %d orig %d link %d, want ts %d len %d orig %d link %d",
				i, g.TS, len(g.Data), g.OrigLen, g.LinkType, w.TS, len(w.Data), orig, wantLT)
		}
	}
}

// TestPcapngInterfaces reads a pcapng file with interfaces of different
// link types and timestamp resolutions, blocks to skip, every packet block
// type, and a second section in the other byte order.
func TestPcapngInterfaces(t *testing.T) {
	eth := ct.TCP4("10.0.0.1", "10.0.0.2", 1, 80, []byte("a"))
	raw := eth[14:]
	sll2 := append(append([]byte(nil), ct.SLL2(0x0800)...), raw...)
	ifaces := []ct.Interface{
		{LinkType: 1, Snaplen: 20},                    // µs (default)
		{LinkType: 101, TSResol: 9},                   // ns
		{LinkType: 276, TSResol: 3, TSOffset: 1e9},    // ms, offset 10^9 s
		{LinkType: 1, TSResol: 0x80 | 20, Snaplen: 0}, // 2^-20 s
	}
	n := ct.NewNG(false)
	for _, i := range ifaces {
		n.IDB(i)
	}
	n.Block(0x0bad, []byte("custom block to skip"))
	n.Block(4, make([]byte, 8)) // name resolution
	n.EPB(0, 1_700_000_000_000_001, eth, len(eth))
	n.ISB(0)
	n.EPB(1, 1_700_000_000_000_000_007, raw, len(raw))
	n.EPB(2, 700_000_000_005, sll2, len(sll2))
	n.EPB(3, 3<<20|1<<19, eth, len(eth)) // 3.5 s
	n.PB(1, 9, raw, len(raw))
	n.SPB(eth[:20], len(eth)) // no timestamp; cut to interface 0's snap length
	// A second section, big-endian, with one raw IPv6 interface.
	n2 := ct.NewNG(true)
	n2.IDB(ct.Interface{LinkType: 229})
	raw6 := ct.TCP6("2001:db8::1", "2001:db8::2", 1, 80, nil)[14:]
	n2.EPB(0, 42, raw6, len(raw6))
	file := append(n.Bytes(), n2.Bytes()...)

	got, r, err := readAll(t, "multi.pcapng", file)
	if err != nil {
		t.Fatal(err)
	}
	want := []frame{
		{1_700_000_000_000_001_000, eth, len(eth), 1},
		{1_700_000_000_000_000_007, raw, len(raw), 101},
		{1_700_000_000_005_000_000, sll2, len(sll2), 276},
		{3_500_000_000, eth, len(eth), 1},
		{9, raw, len(raw), 101},
		{0, eth[:20], len(eth), 1},
		{42_000, raw6, len(raw6), 229},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d packets, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].TS != want[i].TS || !bytes.Equal(got[i].Data, want[i].Data) || got[i].OrigLen != want[i].OrigLen || got[i].LinkType != want[i].LinkType {
			t.Errorf("packet %d: got ts %d len %d orig %d link %d, want ts %d len %d orig %d link %d", i,
				got[i].TS, len(got[i].Data), got[i].OrigLen, got[i].LinkType, want[i].TS, len(want[i].Data), want[i].OrigLen, want[i].LinkType)
		}
	}
	if h := r.Header(); h != (capture.Header{LinkType: 1, Snaplen: 20, Nanos: true}) {
		t.Errorf("header %+v", h)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.pcap.gz")
	if err := os.WriteFile(path, ct.Gzip(ct.Pcap(ct.PcapOptions{LinkType: 1}, sampleRecords()...)), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var p capture.Packet
	n := 0
	for r.Next(&p) == nil {
		n++
	}
	if n != 3 {
		t.Errorf("read %d packets, want 3", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Next(&p); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("Next after Close = %v", err)
	}
	if _, err := capture.Open(filepath.Join(dir, "missing.pcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open of a missing file = %v", err)
	}
}

func TestReaderErrors(t *testing.T) {
	eth := ct.TCP4("10.0.0.1", "10.0.0.2", 1, 80, []byte("payload"))
	good := ct.Pcap(ct.PcapOptions{LinkType: 1}, ct.Record{TS: 1e9, Data: eth})
	recEnd := len(good)
	withRec := func(caplen, origlen uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[24+8:], caplen)
		binary.LittleEndian.PutUint32(b[24+12:], origlen)
		return b
	}
	ng := func(f func(n *ct.NG)) []byte {
		n := ct.NewNG(false)
		f(n)
		return n.Bytes()
	}
	epbFor := func(iface int) func(n *ct.NG) {
		return func(n *ct.NG) { n.IDB(ct.Interface{LinkType: 1}).EPB(iface, 0, eth, len(eth)) }
	}
	idbWith := func(opt []byte) func(n *ct.NG) {
		return func(n *ct.NG) {
			body := []byte{1, 0, 0, 0, 0, 0, 0, 0}
			n.Block(1, append(body, opt...)).EPB(0, 0, eth, len(eth))
		}
	}
	twoIfaces := func(n *ct.NG) *ct.NG {
		return n.IDB(ct.Interface{LinkType: 1}).IDB(ct.Interface{LinkType: 119}).EPB(0, 0, eth, len(eth))
	}
	nsIface := ct.Interface{LinkType: 1, TSResol: 9}
	shb := ct.NewNG(false).Bytes()
	idb := ng(func(n *ct.NG) { n.IDB(ct.Interface{LinkType: 1}) })
	oneEPB := ng(epbFor(0))
	tests := []struct {
		name    string
		file    []byte
		packets int    // delivered before the error
		want    string // the whole error message
	}{
		{"empty", nil, 0, "f.cap: empty file, not a capture"},
		{"too short", []byte{0xd4, 0xc3}, 0, "f.cap: 2-byte file is too short to be a capture"},
		{"not a capture", []byte("GET / HTTP/1.1\r\n"), 0, "f.cap: not a pcap or pcapng file (starts with 47455420; want a1b2c3d4, a1b23c4d or 0a0d0d0a in either byte order)"},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0}, 0, "f.cap: file is zstd-compressed; decompress it first (only gzip is read directly)"},
		{"pcap header cut", good[:20], 0, "f.cap: offset 0: truncated pcap file header (want 24 bytes, have 20)"},
		{"pcap version", func() []byte { b := bytes.Clone(good); b[6] = 5; return b }(), 0, "f.cap: offset 0: unsupported pcap version 2.5 (want 2.0 to 2.4)"},
		{"pcap unsupported link type", ct.Pcap(ct.PcapOptions{LinkType: 119}), 0, "f.cap: link type 119 (IEEE 802.11 Prism) is not supported"},
		{"record header cut", append(bytes.Clone(good), good[24:24+11]...), 1, "f.cap: offset " + itoa(recEnd) + ": truncated packet record header (want 16 bytes, have 11)"},
		{"record cut", append(bytes.Clone(good), good[24:40+10]...), 1, "f.cap: offset " + itoa(recEnd) + ": truncated packet record (want " + itoa(16+len(eth)) + " bytes, have 26)"},
		{"record caplen huge", withRec(1<<31, 1<<31), 0, "f.cap: offset 24: packet record claims 2147483648 captured bytes, more than the 262144 a capture can hold (damaged file?)"},
		{"record caplen above origlen", withRec(uint32(len(eth)), 10), 0, "f.cap: offset 24: packet record claims " + itoa(len(eth)) + " captured bytes of a 10-byte packet (damaged file?)"},
		{"gzip header cut", ct.Gzip(good)[:5], 0, "f.cap: reading gzip header: unexpected EOF"},
		{"gzip cut", ct.Gzip(good)[:30], 0, "f.cap: offset 24 (decompressed): truncated packet record header (want 16 bytes, have 9)"},
		{"pcapng unsupported link type", ng(func(n *ct.NG) { twoIfaces(n).EPB(1, 0, eth, len(eth)) }), 1,
			"f.cap: offset " + itoa(len(ng(func(n *ct.NG) { twoIfaces(n) }))) + ": interface 1: link type 119 (IEEE 802.11 Prism) is not supported"},
		{"pcapng bad interface", ng(epbFor(1)), 0, "f.cap: offset " + itoa(len(idb)) + ": enhanced packet block refers to interface 1, but the section declares 1"},
		{"pcapng block cut", oneEPB[:len(oneEPB)-3], 0, "f.cap: offset " + itoa(len(idb)) + ": truncated enhanced packet block (want " + itoa(len(oneEPB)-len(idb)) + " bytes, have " + itoa(len(oneEPB)-len(idb)-3) + ")"},
		{"pcapng block header cut", append(bytes.Clone(oneEPB), 6, 0, 0), 1, "f.cap: offset " + itoa(len(oneEPB)) + ": truncated block header (want 8 bytes, have 3)"},
		{"pcapng block length", append(bytes.Clone(shb), 6, 0, 0, 0, 13, 0, 0, 0), 0, "f.cap: offset " + itoa(len(shb)) + ": enhanced packet block has length 13, want a multiple of 4 and at least 12"},
		{"pcapng huge block", append(bytes.Clone(shb), 6, 0, 0, 0, 0, 0, 0, 0x10), 0, "f.cap: offset " + itoa(len(shb)) + ": enhanced packet block of 268435456 bytes is larger than the 1048576 bytes this reader accepts (damaged file?)"},
		{"pcapng trailer", func() []byte { b := bytes.Clone(oneEPB); b[len(b)-4]++; return b }(), 0, "f.cap: offset " + itoa(len(idb)) + ": enhanced packet block has length " + itoa(len(oneEPB)-len(idb)) + " but its trailer says " + itoa(len(oneEPB)-len(idb)+1)},
		{"pcapng byte-order magic", func() []byte { b := bytes.Clone(shb); b[8] = 0; return b }(), 0, "f.cap: offset 0: section header block has byte-order magic 003c2b1a, want 1a2b3c4d in either byte order"},
		{"pcapng version", func() []byte { b := bytes.Clone(shb); b[12] = 2; return b }(), 0, "f.cap: offset 0: unsupported pcapng version 2.0 (want 1.0)"},
		{"pcapng tsresol", ng(idbWith([]byte{9, 0, 1, 0, 100, 0, 0, 0, 0, 0, 0, 0})), 0, "f.cap: offset " + itoa(len(shb)) + ": interface description block 0: if_tsresol 0x64 is out of range"},
		{"pcapng tsresol binary", ng(idbWith([]byte{9, 0, 1, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0})), 0, "f.cap: offset " + itoa(len(shb)) + ": interface description block 0: if_tsresol 0xc0 is out of range"},
		{"pcapng option overrun", ng(idbWith([]byte{2, 0, 200, 0, 'x', 0, 0, 0})), 0, "f.cap: offset " + itoa(len(shb)) + ": interface description block 0: option 2 of 200 bytes overruns the block"},
		{"pcapng caplen beyond block", func() []byte {
			b := bytes.Clone(oneEPB)
			binary.LittleEndian.PutUint32(b[len(idb)+20:], 5000)
			return b
		}(), 0, "f.cap: offset " + itoa(len(idb)) + ": enhanced packet block claims 5000 captured bytes but holds " + itoa(len(oneEPB)-len(idb)-32)},
		{"pcapng timestamp overflow", ng(func(n *ct.NG) { n.IDB(nsIface).EPB(0, ^uint64(0), eth, len(eth)) }), 0,
			"f.cap: offset " + itoa(len(ng(func(n *ct.NG) { n.IDB(nsIface) }))) + ": timestamp is beyond the year 2262"},
		{"pcapng no interface for simple packet", ng(func(n *ct.NG) { n.SPB(eth, len(eth)) }), 0, "f.cap: offset " + itoa(len(shb)) + ": simple packet block refers to interface 0, but the section declares 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := readAll(t, "f.cap", tt.file)
			if err == nil {
				t.Fatalf("read %d packets and no error, want %q", len(got), tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %q\nwant %q", err, tt.want)
			}
			if len(got) != tt.packets {
				t.Errorf("delivered %d packets before the error, want %d", len(got), tt.packets)
			}
			var ce *capture.Error
			if !errors.As(err, &ce) || ce.File != "f.cap" {
				t.Errorf("error %T does not name the file", err)
			}
		})
	}
}

func TestReaderErrorKinds(t *testing.T) {
	eth := ct.TCP4("10.0.0.1", "10.0.0.2", 1, 80, []byte("payload"))
	good := ct.Pcap(ct.PcapOptions{LinkType: 1}, ct.Record{Data: eth}, ct.Record{Data: eth})
	_, _, err := readAll(t, "f", good[:len(good)-1])
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncation error %v does not match io.ErrUnexpectedEOF", err)
	}
	var te *capture.TruncatedError
	if !errors.As(err, &te) || te.Want != 16+len(eth) || te.Have != 15+len(eth) {
		t.Errorf("truncation error %#v", te)
	}
	_, _, err = readAll(t, "f", ct.Pcap(ct.PcapOptions{LinkType: 119}))
	var le *capture.LinkTypeError
	if !errors.As(err, &le) || le.LinkType != 119 {
		t.Errorf("link type error %v", err)
	}
	// A corrupt gzip stream (not merely cut) is a read error at the
	// offset where the damage shows.
	z := ct.Gzip(bytes.Repeat(good, 50))
	for i := 40; i < len(z)-20; i++ {
		z[i] ^= 0x55
	}
	_, _, err = readAll(t, "f.gz", z)
	if err == nil || !strings.Contains(err.Error(), "(decompressed)") {
		t.Errorf("corrupt gzip: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestReaderShortReads reads files through inputs that return a byte at
// a time, half of what is asked, or the last bytes with io.EOF, and
// records larger than the read buffer: the frames are the same.
func TestReaderShortReads(t *testing.T) {
	recs := sampleRecords()
	big := bytes.Repeat([]byte{0xab}, 100_000) // larger than the 64 KiB buffer
	recs = append(recs, ct.Record{TS: 1_700_000_003_000_000_000, Data: big})
	files := map[string][]byte{
		"pcap":      ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...),
		"pcapng":    ct.Pcapng(false, nil, recs...),
		"pcap gzip": ct.Gzip(ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)),
	}
	wraps := map[string]func(io.Reader) io.Reader{
		"one byte":  iotest.OneByteReader,
		"half":      iotest.HalfReader,
		"data+EOF":  iotest.DataErrReader,
		"unbounded": func(r io.Reader) io.Reader { return struct{ io.Reader }{r} }, // no Len: a 64 KiB buffer
	}
	for fname, file := range files {
		for wname, wrap := range wraps {
			t.Run(fname+" "+wname, func(t *testing.T) {
				got, _, err := readFrom(t, "test.cap", wrap(bytes.NewReader(file)))
				if err != nil {
					t.Fatal(err)
				}
				checkFrames(t, got, recs, 1)
			})
		}
	}
}

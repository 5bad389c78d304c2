package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/checksum"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1GB", 1e9}, {"1gb", 1e9}, {"500MiB", 500 << 20}, {"1.5KB", 1500}, {"100000", 100000}, {"64 KiB", 64 << 10},
		{"", 0}, {"GB", 0}, {"-1GB", 0}, {"1TB", 0}, {"lots", 0},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.want == 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
}

// inputs writes two small captures with every kind of frame inflate-trace
// must handle and returns their paths and packets.
func inputs(t *testing.T, dir string) ([]string, [][]ct.Record) {
	base := int64(1_700_000_000_000_000_000)
	udpFrags := ct.Fragment4(ct.UDP4("10.1.2.3", "10.9.8.7", 5000, 53, make([]byte, 60)), 14, 32)
	udp6Frags := ct.Fragment6(ct.UDP6("2001:db8::1", "2001:db8::2", 5000, 53, make([]byte, 60)), 14, 32, 77)
	noSum := ct.UDP4("10.1.2.3", "10.9.8.7", 1, 2, []byte("no checksum"))
	noSum[14+20+6], noSum[14+20+7] = 0, 0
	icmp6 := func() []byte {
		ip := ct.IPv6("2001:db8::1", "2001:db8::2", layers.IPProtocolICMPv6)
		icmp := &layers.ICMPv6{TypeCode: layers.CreateICMPv6TypeCode(128, 0)}
		icmp.SetNetworkLayerForChecksum(ip)
		return ct.Serialize(ct.Ether(layers.EthernetTypeIPv6), ip, icmp, &layers.ICMPv6Echo{Identifier: 1, SeqNumber: 2})
	}()
	frames1 := [][]byte{
		ct.TCP4("192.168.1.10", "93.184.216.34", 40000, 80, []byte("GET / HTTP/1.1\r\n\r\n")),
		ct.TCP4("93.184.216.34", "192.168.1.10", 80, 40000, bytes.Repeat([]byte("x"), 500)),
		ct.UDP6("2001:db8::1", "2001:db8::53", 40000, 53, []byte("query")),
		noSum, icmp6,
		ct.Serialize(ct.Ether(layers.EthernetTypeARP), ct.Header(make([]byte, 28))),
	}
	frames1 = append(frames1, udpFrags...)
	frames1 = append(frames1, udp6Frags...)
	var recs1 []ct.Record
	for i, f := range frames1 {
		recs1 = append(recs1, ct.Record{TS: base + int64(i)*1e6, Data: f})
	}
	// A frame cut by the snap length inside the TCP header, before its
	// checksum.
	cut := ct.TCP4("192.168.1.10", "93.184.216.34", 40001, 80, []byte("abc"))
	recs1 = append(recs1, ct.Record{TS: base + 50e6, Data: cut[:14+20+10], OrigLen: len(cut)})
	recs2 := []ct.Record{
		{TS: 5e9, Data: ct.TCP6("2001:db8::1", "2001:db8::80", 40000, 80, []byte("hello"))},
		{TS: 6e9, Data: ct.UDP4("10.0.0.1", "10.0.0.53", 1234, 53, []byte("q"))},
	}
	p1 := filepath.Join(dir, "one.pcap")
	p2 := filepath.Join(dir, "two.pcapng.gz")
	if err := os.WriteFile(p1, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs1...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p2, ct.Gzip(ct.Pcapng(false, []ct.Interface{{LinkType: 1, TSResol: 9}}, recs2...)), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{p1, p2}, [][]ct.Record{recs1, recs2}
}

func TestInflate(t *testing.T) {
	dir := t.TempDir()
	ins, recs := inputs(t, dir)
	for _, cacheLimit := range []int{64 << 20, 0} {
		out := filepath.Join(dir, "big.pcap")
		inf := &inflater{inputs: ins, limit: 60_000, cacheLimit: cacheLimit}
		if err := inf.writeFile(out); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != inf.written || inf.written < 60_000 {
			t.Fatalf("wrote %d bytes, counted %d, want at least 60000", len(data), inf.written)
		}
		checkInflated(t, data, recs, inf.pass)
	}
}

// checkInflated reads an inflated file and checks every copy against the
// inputs: addresses shifted by the copy number, everything else equal but
// checksums, which must be valid; timestamps never go back; the
// connections of different copies are different.
func checkInflated(t *testing.T, data []byte, recs [][]ct.Record, passes int) {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(data), "big.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header(); h != (capture.Header{LinkType: 1, Snaplen: 262144, Nanos: true}) {
		t.Errorf("header %+v", h)
	}
	var flat []ct.Record
	for _, rs := range recs {
		flat = append(flat, rs...)
	}
	d := capture.NewDecoder()
	conns := map[string]int{} // connection -> copy
	var p capture.Packet
	var lastTS int64
	n := 0
	for ; ; n++ {
		err := r.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		pass, in := n/len(flat), flat[n%len(flat)]
		if p.TS < lastTS {
			t.Fatalf("packet %d goes back in time", n)
		}
		lastTS = p.TS
		if len(p.Data) != len(in.Data) || p.OrigLen != max(in.OrigLen, len(in.Data)) {
			t.Fatalf("packet %d: %d/%d bytes, input %d/%d", n, len(p.Data), p.OrigLen, len(in.Data), in.OrigLen)
		}
		if pass == 0 && !bytes.Equal(p.Data, in.Data) {
			t.Fatalf("packet %d of copy 0 differs from the input", n)
		}
		d.Decode(&p)
		if p.IPVersion == 0 {
			if !bytes.Equal(p.Data, in.Data) {
				t.Fatalf("packet %d: a frame without IP was changed", n)
			}
			continue
		}
		orig := capture.Packet{Data: in.Data, OrigLen: len(in.Data), LinkType: 1}
		d2 := capture.NewDecoder()
		d2.Decode(&orig)
		if p.Src != shifted(orig.Src, pass) || p.Dst != shifted(orig.Dst, pass) {
			t.Fatalf("packet %d (copy %d): %v > %v, want %v > %v", n, pass, p.Src, p.Dst, shifted(orig.Src, pass), shifted(orig.Dst, pass))
		}
		checkSums(t, n, &p)
		if !p.Fragment && (p.Proto == 6 || p.Proto == 17) && len(p.Payload) > 0 {
			key := netip.AddrPortFrom(p.Src, p.SrcPort).String() + ">" + netip.AddrPortFrom(p.Dst, p.DstPort).String()
			if c, ok := conns[key]; ok && c != pass {
				t.Fatalf("connection %s is in copies %d and %d", key, c, pass)
			}
			conns[key] = pass
		}
	}
	if want := passes * len(flat); n > want || n <= want-len(flat) {
		t.Errorf("%d packets in %d copies of %d", n, passes, len(flat))
	}
	if passes < 3 {
		t.Errorf("only %d copies: the test wants several", passes)
	}
}

func shifted(a netip.Addr, pass int) netip.Addr {
	b := a.AsSlice()
	if a.Is4() {
		v := binary.BigEndian.Uint16(b[1:3]) + uint16(pass)
		binary.BigEndian.PutUint16(b[1:3], v)
		b[3] += byte(pass >> 16)
	} else {
		binary.BigEndian.PutUint32(b[4:8], binary.BigEndian.Uint32(b[4:8])+uint32(pass))
	}
	s, _ := netip.AddrFromSlice(b)
	return s
}

// checkSums verifies the IPv4 header checksum and, for whole packets and
// first fragments of complete datagrams, nothing more than that the
// transport checksum verifies for unfragmented packets.
func checkSums(t *testing.T, n int, p *capture.Packet) {
	t.Helper()
	if p.IPVersion == 4 {
		hl := int(p.Data[p.IPOffset]&0xf) * 4
		if checksum.Of(p.Data[p.IPOffset:p.IPOffset+hl]) != 0 {
			t.Fatalf("packet %d: bad IPv4 header checksum", n)
		}
	}
	if p.Fragment || p.Truncated || p.Proto != 6 && p.Proto != 17 && p.Proto != 58 {
		return
	}
	seg := p.IPPayload
	if p.Proto == 17 && p.IPVersion == 4 && binary.BigEndian.Uint16(seg[6:8]) == 0 {
		return // no checksum
	}
	var pseudo []byte
	pseudo = append(pseudo, p.Src.AsSlice()...)
	pseudo = append(pseudo, p.Dst.AsSlice()...)
	if p.IPVersion == 4 {
		pseudo = append(pseudo, 0, p.Proto, byte(len(seg)>>8), byte(len(seg)))
	} else {
		pseudo = binary.BigEndian.AppendUint32(pseudo, uint32(len(seg)))
		pseudo = append(pseudo, 0, 0, 0, p.Proto)
	}
	if checksum.Of(append(pseudo, seg...)) != 0 {
		t.Fatalf("packet %d: bad transport checksum (proto %d)", n, p.Proto)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	ins, _ := inputs(t, dir)
	raw := filepath.Join(dir, "raw.pcap")
	os.WriteFile(raw, ct.Pcap(ct.PcapOptions{LinkType: 101}, ct.Record{Data: make([]byte, 20)}), 0o644)
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, ct.Pcap(ct.PcapOptions{LinkType: 1}), 0o644)
	out := filepath.Join(dir, "out.pcap")
	tests := []struct {
		args   []string
		status int
		msg    string
	}{
		{[]string{"-size", "10KB", ins[0]}, 2, "-o OUT.pcap is required"},
		{[]string{"-o", out}, 2, "no input captures"},
		{[]string{"-o", out, "-size", "big", ins[0]}, 2, `-size: "big" is not a size`},
		{[]string{"-o", out, "-size", "10KB", ins[0], raw}, 1, "has link type 101 (raw IP) but"},
		{[]string{"-o", out, "-size", "10KB", empty}, 1, "the inputs hold no packets"},
		{[]string{"-o", out, "-size", "10KB", filepath.Join(dir, "missing.pcap")}, 1, "no such file"},
		{[]string{"-o", out, "-size", "10KB", ins[0], ins[1]}, 0, "wrote " + out + ": "},
		{[]string{"-help"}, 0, "Usage: inflate-trace"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		status := run(tt.args, &stdout, &stderr)
		if status != tt.status || !strings.Contains(stdout.String()+stderr.String(), tt.msg) {
			t.Errorf("run %q = %d, %q %q; want %d and %q", tt.args, status, stdout.String(), stderr.String(), tt.status, tt.msg)
		}
	}
}

// BenchmarkInflate measures writing copies of a small trace from memory.
func BenchmarkInflate(b *testing.B) {
	dir := b.TempDir()
	var recs []ct.Record
	for i := range 200 {
		recs = append(recs, ct.Record{TS: int64(i) * 1e6, Data: ct.TCP4("10.0.0.1", "10.0.0.2", uint16(1000+i), 80, make([]byte, i*5))})
	}
	in := filepath.Join(dir, "in.pcap")
	os.WriteFile(in, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...), 0o644)
	const size = 32 << 20
	b.SetBytes(size)
	for b.Loop() {
		inf := &inflater{inputs: []string{in}, limit: size, cacheLimit: 64 << 20}
		hdr, err := inputHeader(inf.inputs)
		if err != nil {
			b.Fatal(err)
		}
		if err := inf.write(io.Discard, hdr); err != nil {
			b.Fatal(err)
		}
	}
}

// TestApplyManyCopies checks address shifting and checksums for copy
// numbers beyond 16 bits, which a full-size run reaches with tiny inputs.
func TestApplyManyCopies(t *testing.T) {
	frames := [][]byte{
		ct.TCP4("192.168.1.10", "93.184.216.34", 40000, 80, []byte("GET /")),
		ct.UDP6("2001:db8::1", "2001:db8::53", 40000, 53, []byte("query")),
	}
	d := capture.NewDecoder()
	for _, n := range []int{1, 255, 65535, 65536, 70000, 1<<24 - 1} {
		for i, f := range frames {
			p := capture.Packet{Data: bytes.Clone(f), OrigLen: len(f), LinkType: 1}
			if err := d.Decode(&p); err != nil {
				t.Fatal(err)
			}
			src, dst := p.Src, p.Dst
			planOf(&p).apply(p.Data, uint32(n))
			if err := d.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Src != shifted(src, n) || p.Dst != shifted(dst, n) || p.Src == src {
				t.Errorf("frame %d, copy %d: %v > %v", i, n, p.Src, p.Dst)
			}
			checkSums(t, i, &p)
		}
	}
}

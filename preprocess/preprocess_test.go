package preprocess_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/parsers"
	dnsproto "github.com/wirebench/wirebench/parsers/dns"
	httpproto "github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/preprocess"
)

// t0 is the time of the first packet of the test traces.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano()

// tcpSeg is an Ethernet/IPv4/TCP frame with the given flags ("S", "SA",
// "A", "PA", "FA", ...), sequence and acknowledgement numbers.
func tcpSeg(src, dst string, sport, dport uint16, flags string, seq, ack uint32, payload string) []byte {
	ip := ct.IPv4(src, dst, layers.IPProtocolTCP)
	tcp := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport), Seq: seq, Ack: ack, Window: 65535,
		SYN: strings.Contains(flags, "S"), ACK: strings.Contains(flags, "A"), FIN: strings.Contains(flags, "F"),
		PSH: strings.Contains(flags, "P"), RST: strings.Contains(flags, "R")}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	return ct.Serialize(ct.Ether(layers.EthernetTypeIPv4), ip, tcp, gopacket.Payload(payload))
}

const (
	request  = "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
	response = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	client   = "192.0.2.1-40000-198.51.100.2-80-tcp"
	resolver = "192.0.2.1-40001-198.51.100.2-53-udp"
)

// conversation is an HTTP exchange over TCP with handshake and close, a
// DNS query and reply, and traffic of neither sub-trace, one packet a
// millisecond. http and dns list the indexes of each sub-trace's packets.
func conversation() (recs []ct.Record, http, dns []int) {
	c, s := a4, b4
	frames := [][]byte{
		tcpSeg(c, s, 40000, 80, "S", 100, 0, ""),
		tcpSeg(s, c, 80, 40000, "SA", 500, 101, ""),
		ct.UDP4(c, s, 40001, 53, []byte("query")),
		tcpSeg(c, s, 40000, 80, "A", 101, 501, ""),
		tcpSeg(c, s, 40000, 80, "PA", 101, 501, request),
		ct.UDP4(c, s, 5000, 5001, []byte("neither")),
		ct.UDP4(s, c, 53, 40001, []byte("reply")),
		tcpSeg(s, c, 80, 40000, "PA", 501, 101+uint32(len(request)), response),
		tcpSeg(c, s, 40000, 22, "S", 7, 0, ""),
		tcpSeg(c, s, 40000, 80, "FA", 101+uint32(len(request)), 501+uint32(len(response)), ""),
		tcpSeg(s, c, 80, 40000, "FA", 501+uint32(len(response)), 102+uint32(len(request)), ""),
		tcpSeg(c, s, 40000, 80, "A", 102+uint32(len(request)), 502+uint32(len(response)), ""),
	}
	for i, f := range frames {
		recs = append(recs, ct.Record{TS: t0 + int64(i)*int64(time.Millisecond), Data: f})
	}
	return recs, []int{0, 1, 3, 4, 7, 9, 10, 11}, []int{2, 6}
}

// wantFrames is the pcap a sub-trace of recs at the indexes idx must be.
func wantFrames(hdr capture.Header, recs []ct.Record, idx []int) pcapFile {
	f := pcapFile{hdr: hdr}
	for _, i := range idx {
		f.frames = append(f.frames, pframe{recs[i].TS, recs[i].Data, len(recs[i].Data)})
	}
	return f
}

func checkPcap(t *testing.T, name string, got []byte, want pcapFile) {
	t.Helper()
	f, err := readPcap(name, got)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if d := diffPcap(f, want); d != "" {
		t.Errorf("%s: %s", name, d)
	}
}

// checkConversation checks what Process wrote for conversation().
func checkConversation(t *testing.T, res processed, hdr capture.Header, recs []ct.Record, http, dns []int) {
	t.Helper()
	checkPcap(t, "HTTP pcap", res.httpPcap, wantFrames(hdr, recs, http))
	checkPcap(t, "DNS pcap", res.dnsPcap, wantFrames(hdr, recs, dns))
	hb := mustParseBatch(t, "http.dat", res.httpDat)
	if len(hb.conns) != 1 || hb.conns[0].cid != client || hb.conns[0].kind.String() != "stream" {
		t.Fatalf("HTTP batch file has connections %+v, want one stream connection %s", hb.conns, client)
	}
	for dir, want := range []string{request, response} {
		if got, gaps := hb.conns[0].data(dir); string(got) != want || gaps != 0 {
			t.Errorf("HTTP direction %d: %q and %d gap bytes, want %q", dir, got, gaps, want)
		}
	}
	db := mustParseBatch(t, "dns.dat", res.dnsDat)
	if len(db.conns) != 1 || db.conns[0].cid != resolver || db.conns[0].kind.String() != "block" {
		t.Fatalf("DNS batch file has connections %+v, want one block connection %s", db.conns, resolver)
	}
	c := db.conns[0]
	if len(c.chunks[0]) != 1 || string(c.chunks[0][0].data) != "query" || len(c.chunks[1]) != 1 || string(c.chunks[1][0].data) != "reply" {
		t.Errorf("DNS datagrams %+v, want query and reply", c.chunks)
	}
}

func TestProcess(t *testing.T) {
	recs, http, dns := conversation()
	for _, tt := range []struct {
		name  string
		input []byte
		hdr   capture.Header
	}{
		{"pcap", ct.Pcap(ct.PcapOptions{LinkType: 1, Snaplen: 65535}, recs...), capture.Header{LinkType: 1, Snaplen: 65535}},
		{"pcap ns", ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true}, recs...), capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen, Nanos: true}},
		{"pcapng gzip", ct.Gzip(ct.Pcapng(true, nil, recs...)), capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := processBytes(preprocess.DefaultConfig(), "in", tt.input)
			if res.err != nil {
				t.Fatal(res.err)
			}
			checkConversation(t, res, tt.hdr, recs, http, dns)
			s := res.sum
			if s.Packets != int64(len(recs)) || s.SubTrace("http").Packets != int64(len(http)) || s.SubTrace("dns").Packets != int64(len(dns)) {
				t.Errorf("summary counts %d packets, %d HTTP, %d DNS", s.Packets, s.SubTrace("http").Packets, s.SubTrace("dns").Packets)
			}
			if s.SubTrace("http").Connections != 1 || s.SubTrace("http").DataBytes != int64(len(request)+len(response)) || s.SubTrace("http").Gaps != 0 || s.SubTrace("http").Dropped != 0 {
				t.Errorf("HTTP summary %+v", s.SubTrace("http"))
			}
			if s.SubTrace("dns").Connections != 1 || s.SubTrace("dns").DataRecords != 2 || s.SubTrace("dns").DataBytes != 10 {
				t.Errorf("DNS summary %+v", s.SubTrace("dns"))
			}
			in := s.Inputs[0]
			if in.Name != "in" || in.Packets != int64(len(recs)) || in.First.UnixNano() != t0 || in.Last.UnixNano() != recs[len(recs)-1].TS || in.Size != int64(len(tt.input)) {
				t.Errorf("input summary %+v", in)
			}
			if in.Gzip != strings.Contains(tt.name, "gzip") {
				t.Errorf("input summary says gzip %v", in.Gzip)
			}
		})
	}
}

// TestProcessSeveralInputs processes a conversation cut into two files:
// the connection that goes on in the second file stays one connection.
func TestProcessSeveralInputs(t *testing.T) {
	recs, http, dns := conversation()
	a := ct.Pcap(ct.PcapOptions{LinkType: 1, Snaplen: 1500}, recs[:5]...)
	b := ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true, Snaplen: 9000}, recs[5:]...)
	res := process(preprocess.DefaultConfig(),
		preprocess.Input{Name: "a.pcap", R: bytes.NewReader(a)}, preprocess.Input{Name: "b.pcap", R: bytes.NewReader(b)})
	if res.err != nil {
		t.Fatal(res.err)
	}
	// The largest snap length and the finer resolution of the two.
	checkConversation(t, res, capture.Header{LinkType: 1, Snaplen: 9000, Nanos: true}, recs, http, dns)
	if len(res.sum.Inputs) != 2 || res.sum.Inputs[0].Packets != 5 || res.sum.Inputs[1].Packets != int64(len(recs)-5) {
		t.Errorf("inputs %+v", res.sum.Inputs)
	}
	if res.sum.Bytes != int64(len(a)+len(b)) || len(res.sum.Warnings) != 0 {
		t.Errorf("summary: %d bytes, warnings %q", res.sum.Bytes, res.sum.Warnings)
	}

	// The same files in the wrong order: a warning, and two connections
	// where there was one.
	res = process(preprocess.DefaultConfig(),
		preprocess.Input{Name: "b.pcap", R: bytes.NewReader(b)}, preprocess.Input{Name: "a.pcap", R: bytes.NewReader(a)})
	if res.err != nil {
		t.Fatal(res.err)
	}
	if len(res.sum.Warnings) != 1 || !strings.HasPrefix(res.sum.Warnings[0], "a.pcap starts 11ms before the end of the packets read before it: ") {
		t.Errorf("warnings %q, want one saying that a.pcap starts 11ms early", res.sum.Warnings)
	}
	if f := mustParseBatch(t, "http.dat", res.httpDat); len(f.conns) != 2 {
		t.Errorf("%d HTTP connections, want 2", len(f.conns))
	}
}

// TestProcessLinkTypes refuses inputs of different link types before it
// writes anything.
func TestProcessLinkTypes(t *testing.T) {
	recs, _, _ := conversation()
	eth := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	var raw []ct.Record
	for _, r := range recs {
		raw = append(raw, ct.Record{TS: r.TS, Data: r.Data[14:]})
	}
	rawIP := ct.Pcap(ct.PcapOptions{LinkType: 101}, raw...)
	res := process(preprocess.DefaultConfig(),
		preprocess.Input{Name: "eth.pcap", R: bytes.NewReader(eth)}, preprocess.Input{Name: "raw.pcap", R: bytes.NewReader(rawIP)})
	want := "raw.pcap: link type 101 (raw IP) differs from the link type 1 (Ethernet) of eth.pcap: the sub-traces are pcap files, which hold one link type; preprocess the two separately"
	if res.err == nil || res.err.Error() != want {
		t.Fatalf("error %v, want %q", res.err, want)
	}
	if len(res.httpPcap)+len(res.httpDat)+len(res.dnsPcap)+len(res.dnsDat) != 0 || res.sum.Inputs != nil {
		t.Errorf("wrote %d, %d, %d, %d bytes and a summary %+v; want nothing", len(res.httpPcap), len(res.httpDat), len(res.dnsPcap), len(res.dnsDat), res.sum)
	}

	// Each alone is fine, raw IP included.
	res = processBytes(preprocess.DefaultConfig(), "raw.pcap", rawIP)
	if res.err != nil || res.sum.SubTrace("http").Connections != 1 || res.sum.SubTrace("dns").Connections != 1 {
		t.Errorf("raw IP alone: %v, %+v", res.err, res.sum)
	}
	// An unsupported link type is refused at once.
	res = processBytes(preprocess.DefaultConfig(), "prism.pcap", ct.Pcap(ct.PcapOptions{LinkType: 119}, raw...))
	if res.err == nil || res.err.Error() != "prism.pcap: link type 119 (IEEE 802.11 Prism) is not supported" || len(res.httpPcap) != 0 {
		t.Errorf("802.11 Prism: %v, %d bytes written", res.err, len(res.httpPcap))
	}
	// So is a pcapng file whose first interface has one, even when its
	// packets come from another: the sub-traces would carry that link
	// type, and nothing could read them.
	ng := ct.Pcapng(false, []ct.Interface{{LinkType: 12336}, {LinkType: 1}}, ct.Record{Data: recs[0].Data, Iface: 1})
	res = processBytes(preprocess.DefaultConfig(), "odd.pcapng", ng)
	want = "odd.pcapng: interface 0: link type 12336 (unknown) is not supported: " +
		"the sub-traces take the first interface's link type, so it must be one preprocess decodes"
	if res.err == nil || res.err.Error() != want || len(res.httpPcap)+len(res.dnsPcap) != 0 || res.sum.Inputs != nil {
		t.Errorf("unsupported first interface: %v, %d+%d bytes written; want %q and nothing written",
			res.err, len(res.httpPcap), len(res.dnsPcap), want)
	}
}

// TestProcessTruncated cuts the input inside the record of the HTTP
// response: an error naming the file and the offset, and outputs complete
// up to the packet before.
func TestProcessTruncated(t *testing.T) {
	recs, http, dns := conversation()
	input := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	// The response is packet 7: 24 bytes of file header, then records.
	off := 24
	for _, r := range recs[:7] {
		off += 16 + len(r.Data)
	}
	res := processBytes(preprocess.DefaultConfig(), "cut.pcap", input[:off+30])
	want := "cut.pcap: offset " + strconv.Itoa(off) + ": truncated packet record"
	if res.err == nil || !strings.HasPrefix(res.err.Error(), want) {
		t.Fatalf("error %v, want one starting %q", res.err, want)
	}
	checkOneLine(t, res.err, "cut.pcap")
	hdr := capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen}
	checkPcap(t, "HTTP pcap", res.httpPcap, wantFrames(hdr, recs, http[:4]))
	checkPcap(t, "DNS pcap", res.dnsPcap, wantFrames(hdr, recs, dns))
	hb := mustParseBatch(t, "http.dat", res.httpDat) // every connection ended
	if len(hb.conns) != 1 {
		t.Fatalf("%d HTTP connections", len(hb.conns))
	}
	if got, _ := hb.conns[0].data(0); string(got) != request {
		t.Errorf("request %q, want %q", got, request)
	}
	if res.sum.Packets != 7 || res.sum.Inputs[0].Bytes != int64(off) {
		t.Errorf("summary: %d packets, %d bytes; want 7 and %d", res.sum.Packets, res.sum.Inputs[0].Bytes, off)
	}
}

// failingWriter accepts n bytes, then fails.
type failingWriter struct{ n int }

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

func TestProcessWriteErrors(t *testing.T) {
	recs, _, dns := conversation()
	input := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	for _, tt := range []struct {
		name string
		out  func(o preprocess.Outputs)
		want string
	}{
		{"http batch header", func(o preprocess.Outputs) { set(o, "http", func(w *preprocess.Output) { w.Batch = &failingWriter{3} }) }, "http batch file: batch: writing header: disk full"},
		{"http batch", func(o preprocess.Outputs) {
			set(o, "http", func(w *preprocess.Output) { w.Batch = &failingWriter{100} })
		}, "http batch file: recording"},
		{"dns pcap", func(o preprocess.Outputs) { set(o, "dns", func(w *preprocess.Output) { w.Pcap = &failingWriter{30} }) }, "dns sub-trace: "},
		// The HTTP sub-trace fails when it is flushed at the end; the DNS
		// one, flushed after it, must still be written.
		{"http pcap", func(o preprocess.Outputs) { set(o, "http", func(w *preprocess.Output) { w.Pcap = &failingWriter{30} }) }, "http sub-trace: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var hp, hd, dp, dd bytes.Buffer
			out := preprocess.Outputs{"http": {Pcap: &hp, Batch: &hd}, "dns": {Pcap: &dp, Batch: &dd}}
			tt.out(out)
			_, err := preprocess.Process(context.Background(), preprocess.DefaultConfig(), out,
				preprocess.Input{Name: "in.pcap", R: bytes.NewReader(input)})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || !errors.Is(err, errDiskFull) {
				t.Fatalf("error %v, want one starting %q that wraps the write error", err, tt.want)
			}
			if out["dns"].Pcap == &dp && tt.name != "http batch header" { // the other outputs are complete
				checkPcap(t, "DNS pcap", dp.Bytes(), wantFrames(capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen}, recs, dns))
				mustParseBatch(t, "dns.dat", dd.Bytes())
			}
		})
	}
}

// set changes the output of the sub-trace name.
func set(o preprocess.Outputs, name string, f func(*preprocess.Output)) {
	w := o[name]
	f(&w)
	o[name] = w
}

// manyQueries is a trace of n DNS queries and replies.
func manyQueries(n int) []byte {
	var recs []ct.Record
	for i := range n {
		recs = append(recs, ct.Record{TS: t0 + int64(i)*int64(time.Millisecond), Data: ct.UDP4(a4, b4, uint16(10000+i%5000), 53, []byte("q"))})
	}
	return ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
}

func TestProcessInterrupted(t *testing.T) {
	input := manyQueries(3000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var hp, hd, dp, dd bytes.Buffer
	sum, err := preprocess.Process(ctx, preprocess.DefaultConfig(),
		preprocess.Outputs{"http": {Pcap: &hp, Batch: &hd}, "dns": {Pcap: &dp, Batch: &dd}},
		preprocess.Input{Name: "big.pcap", R: bytes.NewReader(input)})
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "big.pcap: interrupted at offset ") {
		t.Fatalf("error %v, want an interruption naming the input", err)
	}
	f, perr := readPcap("dns", dp.Bytes())
	if perr != nil || int64(len(f.frames)) != sum.SubTrace("dns").Packets || sum.Packets >= 3000 {
		t.Errorf("interrupted after %d packets: DNS pcap has %d frames (%v), summary %d", sum.Packets, len(f.frames), perr, sum.SubTrace("dns").Packets)
	}
	b := mustParseBatch(t, "dns.dat", dd.Bytes())
	if int64(len(b.conns)) != sum.SubTrace("dns").Connections {
		t.Errorf("%d connections in the batch file, summary says %d", len(b.conns), sum.SubTrace("dns").Connections)
	}
}

func TestProgress(t *testing.T) {
	input := manyQueries(5000)
	var calls []preprocess.Progress
	cfg := preprocess.DefaultConfig()
	cfg.ProgressInterval = time.Nanosecond
	cfg.Progress = func(p preprocess.Progress) { calls = append(calls, p) }
	res := processBytes(cfg, "q.pcap", input)
	if res.err != nil {
		t.Fatal(res.err)
	}
	if len(calls) != 5 { // after 1024, 2048, 3072 and 4096 packets, and at the end
		t.Fatalf("%d calls, want 5: %+v", len(calls), calls)
	}
	for i, p := range calls[:4] {
		if p.Done || p.Packets != int64(1024*(i+1)) || p.Input != "q.pcap" || p.Inputs != 1 || p.Size != int64(len(input)) {
			t.Errorf("call %d: %+v", i, p)
		}
		if f, ok := p.Fraction(); !ok || f <= 0 || f > 1 {
			t.Errorf("call %d: fraction %v, %v", i, f, ok)
		}
	}
	last := calls[4]
	if !last.Done || last.Packets != 5000 || last.Bytes != int64(len(input)) || last.Read != int64(len(input)) {
		t.Errorf("last call %+v", last)
	}
	if f, _ := last.Fraction(); f != 1 {
		t.Errorf("last fraction %v", f)
	}
	if s := last.String(); !strings.HasPrefix(s, "5,000 packets  ") || !strings.HasSuffix(s, "  100%") {
		t.Errorf("String() = %q", s)
	}
	if s := (preprocess.Progress{Packets: 1, Bytes: 2e6, Elapsed: time.Second, Inputs: 3, Index: 1, Input: "b.pcap"}).String(); s != "1 packet  2.0 MB  2.0 MB/s  [2/3 b.pcap]" {
		t.Errorf("String() without a size = %q", s)
	}
}

func TestVerifyChecksums(t *testing.T) {
	good := ct.UDP4(a4, b4, 40000, 53, []byte("good"))
	bad := ct.UDP4(a4, b4, 40001, 53, []byte("bad!"))
	bad[14+20+6] ^= 0xff // the UDP checksum's first byte
	input := ct.Pcap(ct.PcapOptions{LinkType: 1}, ct.Record{TS: t0, Data: good}, ct.Record{TS: t0 + 1, Data: bad})
	for _, verify := range []bool{false, true} {
		cfg := preprocess.DefaultConfig()
		cfg.VerifyChecksums = verify
		res := processBytes(cfg, "in", input)
		if res.err != nil {
			t.Fatal(res.err)
		}
		b := mustParseBatch(t, "dns.dat", res.dnsDat)
		want, dropped := 2, int64(0)
		if verify {
			want, dropped = 1, 1
		}
		if len(b.conns) != want || res.sum.SubTrace("dns").Packets != 2 || res.sum.SubTrace("dns").DroppedBy["checksum"] != dropped {
			t.Errorf("verify %v: %d connections recorded, %d packets in the pcap, %v dropped; want %d, 2, %d checksum",
				verify, len(b.conns), res.sum.SubTrace("dns").Packets, res.sum.SubTrace("dns").DroppedBy, want, dropped)
		}
	}
}

func TestRun(t *testing.T) {
	recs, http, dns := conversation()
	dir := t.TempDir()
	trace := filepath.Join(dir, "in.pcap.gz")
	if err := os.WriteFile(trace, ct.Gzip(ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "a", "b")
	sum, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), out, trace)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{preprocess.PcapFile("http"), preprocess.BatchFile("http"), preprocess.PcapFile("dns"), preprocess.BatchFile("dns")} {
		if files[name], err = os.ReadFile(filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
	}
	checkConversation(t, processed{httpPcap: files["spicy-http.pcap"], httpDat: files["spicy-http.dat"], dnsPcap: files["spicy-dns.pcap"], dnsDat: files["spicy-dns.dat"]},
		capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen}, recs, http, dns)
	if sum.SubTrace("http").Pcap != filepath.Join(out, "spicy-http.pcap") || sum.SubTrace("dns").Batch != filepath.Join(out, "spicy-dns.dat") {
		t.Errorf("summary names %q and %q", sum.SubTrace("http").Pcap, sum.SubTrace("dns").Batch)
	}
	if fi, _ := os.Stat(trace); sum.Inputs[0].Size != fi.Size() || !sum.Inputs[0].Gzip {
		t.Errorf("input summary %+v", sum.Inputs[0])
	}

	// An input that cannot be opened: nothing is created.
	missing := filepath.Join(dir, "missing.pcap")
	if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), filepath.Join(dir, "c"), trace, missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing input: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); !os.IsNotExist(err) {
		t.Errorf("the output directory was created for a run that could not start: %v", err)
	}
	// An output over an input is refused before the input is truncated.
	http2 := filepath.Join(out, "spicy-http.pcap")
	_, err = preprocess.Run(context.Background(), preprocess.DefaultConfig(), out, http2)
	if err == nil || err.Error() != http2+": the input is also an output file; write the outputs to another directory" {
		t.Errorf("input = output: %v", err)
	}
	if got, _ := os.ReadFile(http2); !bytes.Equal(got, files["spicy-http.pcap"]) {
		t.Error("the input was overwritten")
	}
	if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), out); err == nil {
		t.Error("no inputs: no error")
	}
}

func TestFormatPorts(t *testing.T) {
	for _, tt := range []struct {
		in   []uint16
		want string
	}{
		{nil, ""}, {[]uint16{80}, "80"}, {[]uint16{80, 81, 82, 8080}, "80-82,8080"}, {[]uint16{53, 5353, 5354}, "53,5353-5354"},
		{[]uint16{65534, 65535}, "65534-65535"},
	} {
		got := preprocess.FormatPorts(tt.in)
		if got != tt.want {
			t.Errorf("FormatPorts(%v) = %q, want %q", tt.in, got, tt.want)
		}
		back, err := preprocess.ParsePorts(got)
		if err != nil || !slices.Equal(back, tt.in) {
			t.Errorf("ParsePorts(%q) = %v, %v", got, back, err)
		}
	}
}

func TestSummaryText(t *testing.T) {
	s := preprocess.Summary{
		Inputs: make([]preprocess.InputSummary, 2), Packets: 1234567, Bytes: 404_200_000, Seconds: 1.5, MBPerSecond: 269.5, Malformed: 3,
		SubTraces: []preprocess.SubTraceSummary{
			{Name: "http", Rule: "tcp port 80", Pcap: "d/spicy-http.pcap", Batch: "d/spicy-http.dat", Packets: 1000,
				Connections: 12, DataBytes: 3_400_000, Gaps: 2, GapBytes: 1460, Dropped: 6, DroppedBy: map[string]int64{"truncated": 5, "checksum": 1}},
			{Name: "dns", Rule: "udp ports 53,5353", Pcap: "d/spicy-dns.pcap", Batch: "d/spicy-dns.dat", Packets: 2, Connections: 1, DataBytes: 80},
		},
		Fragments: preprocess.FragmentSummary{Matched: 4, Other: 2, Unmatched: 1},
		Warnings:  []string{"something to know"},
	}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `read 2 traces: 1,234,567 packets, 404.2 MB in 1.50 s (269.5 MB/s)
d/spicy-http.pcap  1,000 packets (tcp port 80)
d/spicy-http.dat   12 connections, 3.4 MB of data, 2 gaps (1,460 bytes missing), 6 packets dropped (truncated 5, checksum 1)
d/spicy-dns.pcap   2 packets (udp ports 53,5353)
d/spicy-dns.dat    1 connection, 80 bytes of data, no gaps, no packets dropped
3 packets had invalid headers and matched no rule
IP fragments: 4 followed their first fragment into a sub-trace, 2 belong to other traffic, 1 came without their first fragment and were left out
warning: something to know
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestRulesFor runs a third sub-trace beside the default ones: the
// conversation's DNS exchange, taken by a rule on its UDP port declared
// before DNS's, goes to it, with its files, its lines in the summary and
// its key in the JSON form, which keeps http's and dns's where they were.
func TestRulesFor(t *testing.T) {
	recs, _, dns := conversation()
	third := &parsers.Protocol{Name: "third", SubTrace: parsers.SubTraceRule{Transport: connid.ProtoUDP, Ports: []uint16{53}}}
	none := &parsers.Protocol{Name: "none"} // no sub-trace rule
	cfg := preprocess.Config{Rules: preprocess.RulesFor([]*parsers.Protocol{httpproto.Protocol, third, none, dnsproto.Protocol})}
	if got := cfg.Rules.Names(); !slices.Equal(got, []string{"http", "third", "dns"}) {
		t.Fatalf("sub-traces %q", got)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "in.pcap")
	if err := os.WriteFile(trace, ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := preprocess.Run(context.Background(), cfg, dir, trace)
	if err != nil {
		t.Fatal(err)
	}
	pcap, err := os.ReadFile(filepath.Join(dir, "spicy-third.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	checkPcap(t, "third pcap", pcap, wantFrames(capture.Header{LinkType: 1, Snaplen: capture.MaxSnaplen}, recs, dns))
	if b := mustParseBatch(t, "third.dat", mustRead(t, filepath.Join(dir, "spicy-third.dat"))); len(b.conns) != 1 {
		t.Errorf("spicy-third.dat holds %d connections, want 1", len(b.conns))
	}
	if s := sum.SubTrace("dns"); s == nil || s.Packets != 0 {
		t.Errorf("dns sub-trace %+v, want no packets", s)
	}
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "spicy-third.pcap") + "  2 packets (udp port 53)\n"; !strings.Contains(text.String(), want) {
		t.Errorf("summary lacks %q:\n%s", want, text.String())
	}

	js, err := json.Marshal(sum)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"inputs", "packets", "bytes", "malformed", "seconds", "mb_per_second", "http", "third", "dns", "fragments", "warnings"}; !slices.Equal(keys, want) {
		t.Errorf("JSON keys %q, want %q", keys, want)
	}
	var back preprocess.Summary
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.SubTraces, sum.SubTraces) || back.Packets != sum.Packets || len(back.Inputs) != 1 {
		t.Errorf("read back %+v\nwant %+v", back, sum)
	}
}

func TestRulesErrors(t *testing.T) {
	r := preprocess.DefaultRules()
	if err := r.SetPorts("smtp", []uint16{25}); err == nil || !strings.Contains(err.Error(), "http, dns") {
		t.Errorf("SetPorts(smtp) = %v, want an error listing http, dns", err)
	}
	dir := t.TempDir()
	trace := filepath.Join(dir, "in.pcap")
	if err := os.WriteFile(trace, ct.Pcap(ct.PcapOptions{LinkType: 1}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		rules []preprocess.SubTrace
		want  string
	}{
		{[]preprocess.SubTrace{{Name: "a", Transport: 6}, {Name: "a", Transport: 17}}, `two sub-traces are called "a"`},
		{[]preprocess.SubTrace{{Name: "../a", Transport: 6}}, "cannot name a file"},
		{[]preprocess.SubTrace{{Name: "sctp", Transport: 132}}, "neither TCP nor UDP"},
		{[]preprocess.SubTrace{{Name: "fragments", Transport: 6}}, "a key of the summary's JSON form"},
	} {
		_, err := preprocess.Run(context.Background(), preprocess.Config{Rules: preprocess.Rules{SubTraces: tt.rules}}, filepath.Join(dir, "out"), trace)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.rules, err, tt.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
			t.Errorf("%+v: the output directory was created", tt.rules)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

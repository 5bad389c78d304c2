package capture_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// benchTarget is the size of the in-memory benchmark input.
const benchTarget = 32 << 20

// benchInput returns a pcap file of about benchTarget bytes in memory and
// its packet count: the Ethernet packets of every corpus trace, repeated;
// without the corpus, synthetic HTTP and DNS traffic.
func benchInput(b *testing.B) ([]ct.Record, string) {
	b.Helper()
	var recs []ct.Record
	source := "synthetic traffic"
	c, err := corpustest.FindCorpus()
	if err != nil {
		b.Fatal(err)
	}
	if c != nil {
		for _, e := range c.Entries {
			if corpusOutcome[e.Trace] != "" {
				continue
			}
			r, err := capture.Open(e.File(c))
			if err != nil {
				b.Fatal(err)
			}
			var p capture.Packet
			for r.Next(&p) == nil {
				if p.LinkType == capture.LinkTypeEthernet {
					recs = append(recs, ct.Record{TS: p.TS, Data: bytes.Clone(p.Data), OrigLen: p.OrigLen})
				}
			}
			r.Close()
		}
		source = "the corpus's Ethernet packets"
	} else {
		for i := range 1000 {
			recs = append(recs,
				ct.Record{Data: ct.TCP4("10.0.0.1", "10.0.0.2", uint16(40000+i), 80, bytes.Repeat([]byte("x"), i%1400))},
				ct.Record{Data: ct.TCP4("10.0.0.2", "10.0.0.1", 80, uint16(40000+i), nil)},
				ct.Record{Data: ct.UDP4("10.0.0.1", "10.0.0.53", uint16(30000+i), 53, make([]byte, 40))})
		}
	}
	var out []ct.Record
	size := 0
	for size < benchTarget {
		for _, r := range recs {
			out = append(out, r)
			size += 16 + len(r.Data)
		}
	}
	return out, source
}

// benchFiles makes the benchmark input as a pcap and a pcapng file.
func benchFiles(b *testing.B) (pcap, pcapng []byte, packets int) {
	recs, source := benchInput(b)
	b.Logf("input: %d packets from %s", len(recs), source)
	return ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...), ct.Pcapng(false, nil, recs...), len(recs)
}

// cpuClock measures the CPU time the process spends (all threads: the
// benchmark and the garbage collector). On a machine shared with other
// work, wall-clock ns/op varies with the load; CPU time much less, so the
// benchmarks also report throughput per CPU second.
type cpuClock struct{ start time.Duration }

func startCPU() cpuClock { return cpuClock{cpuNow()} }

// report sets the bytes per operation and reports packets per second of
// wall-clock time and MB and packets per CPU second.
func (c cpuClock) report(b *testing.B, size, packets int) {
	cpu := (cpuNow() - c.start).Seconds()
	b.SetBytes(int64(size))
	b.ReportMetric(float64(packets)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
	if cpu <= 0 {
		return // no process CPU clock on this system
	}
	b.ReportMetric(float64(size)*float64(b.N)/cpu/1e6, "MB/cpu-s")
	b.ReportMetric(float64(packets)*float64(b.N)/cpu, "packets/cpu-s")
}

// BenchmarkPcapgo is the plain pcapgo read loop, the reference.
func BenchmarkPcapgo(b *testing.B) {
	file, _, n := benchFiles(b)
	clock := startCPU()
	for b.Loop() {
		r, err := pcapgo.NewReader(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, _, err := r.ZeroCopyReadPacketData(); err != nil {
				break
			}
		}
	}
	clock.report(b, len(file), n)
}

// BenchmarkPcapgoDLP is pcapgo with gopacket's DecodingLayerParser down to
// TCP/UDP: the speed to match.
func BenchmarkPcapgoDLP(b *testing.B) {
	file, _, n := benchFiles(b)
	var (
		eth   layers.Ethernet
		dot1q layers.Dot1Q
		ip4   layers.IPv4
		ip6   layers.IPv6
		tcp   layers.TCP
		udp   layers.UDP
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &dot1q, &ip4, &ip6, &tcp, &udp)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 8)
	clock := startCPU()
	for b.Loop() {
		r, err := pcapgo.NewReader(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		for {
			data, _, err := r.ZeroCopyReadPacketData()
			if err != nil {
				break
			}
			parser.DecodeLayers(data, &decoded)
		}
	}
	clock.report(b, len(file), n)
}

func benchRead(b *testing.B, file []byte, n int, decode bool) {
	d := capture.NewDecoder()
	var p capture.Packet
	clock := startCPU()
	for b.Loop() {
		r, err := capture.NewReader(bytes.NewReader(file), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for {
			if err := r.Next(&p); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
			if decode {
				d.Decode(&p)
			}
		}
	}
	clock.report(b, len(file), n)
}

// BenchmarkRead is the Reader alone on a pcap file.
func BenchmarkRead(b *testing.B) {
	file, _, n := benchFiles(b)
	benchRead(b, file, n, false)
}

// BenchmarkReadDecode is the Reader and the Decoder on a pcap file.
func BenchmarkReadDecode(b *testing.B) {
	file, _, n := benchFiles(b)
	benchRead(b, file, n, true)
}

// BenchmarkReadDecodePcapng is the Reader and the Decoder on the same
// packets in a pcapng file.
func BenchmarkReadDecodePcapng(b *testing.B) {
	_, file, n := benchFiles(b)
	benchRead(b, file, n, true)
}

// BenchmarkDecode is the Decoder alone over frames in memory.
func BenchmarkDecode(b *testing.B) {
	recs, _ := benchInput(b)
	recs = recs[:min(len(recs), 20000)]
	size := 0
	for _, r := range recs {
		size += len(r.Data)
	}
	d := capture.NewDecoder()
	var p capture.Packet
	clock := startCPU()
	for b.Loop() {
		for _, r := range recs {
			p.Data, p.OrigLen, p.LinkType = r.Data, len(r.Data), 1
			d.Decode(&p)
		}
	}
	clock.report(b, size, len(recs))
}

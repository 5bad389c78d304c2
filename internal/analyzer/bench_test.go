package analyzer

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/parsers/http"
)

// syntheticHTTP is a trace of n HTTP sessions on port 80, each a request
// and a reply with a body of size bytes in 1400-byte segments.
func syntheticHTTP(n, size int) []byte {
	var frames [][]byte
	body := strings.Repeat("x", size)
	resp := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", size, body)
	for i := range n {
		c, s := fmt.Sprintf("10.%d.%d.1", i>>8&255, i&255), "10.0.0.2"
		cp := uint16(10000 + i%50000)
		ci, si := uint32(100), uint32(500)
		frames = append(frames,
			seg(c, s, cp, 80, ci, 0, "S", ""),
			seg(s, c, 80, cp, si, ci+1, "SA", ""),
			seg(c, s, cp, 80, ci+1, si+1, "PA", request))
		ci += 1 + uint32(len(request))
		for off := 0; off < len(resp); off += 1400 {
			chunk := resp[off:min(off+1400, len(resp))]
			frames = append(frames, seg(s, c, 80, cp, si+1+uint32(off), ci, "PA", chunk))
		}
		frames = append(frames,
			seg(c, s, cp, 80, ci, si+1+uint32(len(resp)), "FA", ""),
			seg(s, c, 80, cp, si+1+uint32(len(resp)), ci+1, "FA", ""))
	}
	return pcapOf(frames)
}

// syntheticDNS is a trace of n DNS queries and replies, each pair its own
// connection.
func syntheticDNS(n int) []byte {
	reply := append(append([]byte{}, dnsQuery...), "\xc0\x0c\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04\x5d\xb8\xd8\x22"...)
	reply[2], reply[3], reply[7] = 0x81, 0x80, 1
	var frames [][]byte
	for i := range n {
		c := fmt.Sprintf("10.%d.%d.1", i>>8&255, i&255)
		cp := uint16(10000 + i%50000)
		frames = append(frames, udp(c, "10.0.0.53", cp, 53, dnsQuery), udp("10.0.0.53", c, 53, cp, reply))
	}
	return pcapOf(frames)
}

// benchTrace analyzes pcap b.N times, writing TSV logs to io.Discard.
func benchTrace(b *testing.B, impl string, pcap []byte) {
	out := benchOutput(impl)
	b.SetBytes(int64(len(pcap)))
	b.ReportAllocs()
	var packets int64
	for b.Loop() {
		a, err := New(Config{Parsers: impl}, out)
		if err != nil {
			b.Fatal(err)
		}
		r, err := capture.NewReader(bytes.NewReader(pcap), "bench.pcap")
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Read(r); err != nil {
			b.Fatal(err)
		}
		a.Close()
		packets = a.Stats().Packets
	}
	b.ReportMetric(float64(packets)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

// BenchmarkSynthetic times the whole analyzer (reading from memory,
// decoding, the flow engine, parsers, logs) on synthetic HTTP and DNS
// traffic.
func BenchmarkSynthetic(b *testing.B) {
	httpTrace := syntheticHTTP(200, 50_000)
	dnsTrace := syntheticDNS(20_000)
	for _, impl := range []string{builtin.Native, builtin.Std} {
		if builtin.Supports(impl, http.Protocol) {
			b.Run("http/"+impl, func(b *testing.B) { benchTrace(b, impl, httpTrace) })
		}
		b.Run("dns/"+impl, func(b *testing.B) { benchTrace(b, impl, dnsTrace) })
	}
}

// BenchmarkCorpus times the analyzer on every Ethernet trace of the corpus,
// read from memory.
func BenchmarkCorpus(b *testing.B) {
	c := corpustest.LoadCorpus(b)
	var traces [][]byte
	for _, e := range c.Entries {
		if e.Capinfos.Encapsulation != "ether" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.Dir, e.Path))
		if err == nil && len(data) > 4 && data[0] != 0x1f { // not gzip: one format per run
			traces = append(traces, data)
		}
	}
	for _, impl := range []string{builtin.Native, builtin.Std} {
		b.Run(impl, func(b *testing.B) {
			var all int64
			for _, t := range traces {
				all += int64(len(t))
			}
			b.SetBytes(all)
			b.ReportAllocs()
			for b.Loop() {
				for _, t := range traces {
					a, err := New(Config{Parsers: impl}, benchOutput(impl))
					if err != nil {
						b.Fatal(err)
					}
					r, err := capture.NewReader(bytes.NewReader(t), "bench.pcap")
					if err != nil {
						continue
					}
					a.Read(r)
					a.Close()
				}
			}
		})
	}
}

func benchOutput(impl string) Output {
	out := Output{Conn: io.Discard, Logs: map[string]io.Writer{}}
	for _, p := range builtin.Protocols() {
		if builtin.Supports(impl, p) {
			out.Logs[p.Log.Name] = io.Discard
		}
	}
	return out
}

// TestSteadyStateAllocs checks that packets of an established connection
// cost no allocation: the analyzer, the engine and the dispatcher reuse
// their state (the parsers' own allocations are theirs to test).
func TestSteadyStateAllocs(t *testing.T) {
	a, err := New(Config{Parsers: builtin.Std}, Output{Conn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	frames := [][]byte{
		udp("10.0.0.1", "10.0.0.2", 5000, 9999, []byte("ping")),
		udp("10.0.0.2", "10.0.0.1", 9999, 5000, []byte("pong")),
		capturetest.UDP4("10.0.0.1", "10.0.0.2", 5000, 4789, vxlan(innerDNS())),
	}
	ts := t0
	var p capture.Packet // as Read does, one Packet for every frame
	feed := func() {
		for _, f := range frames {
			ts += 1000
			p = capture.Packet{TS: ts, Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}
			a.Frame(&p)
		}
	}
	feed()
	if n := testing.AllocsPerRun(200, feed); n != 0 {
		t.Errorf("%v allocations per round of packets, want 0", n)
	}
}

package preprocess_test

import (
	"io"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/preprocess"
)

// BenchmarkSplitter classifies and writes decoded packets: HTTP and DNS
// in both directions, IPv4 and IPv6, and packets of neither.
func BenchmarkSplitter(b *testing.B) {
	var ps []*capture.Packet
	for i := range 100 {
		for _, f := range [][]byte{
			ct.TCP4(a4, b4, uint16(40000+i), 80, make([]byte, i*10)),
			ct.TCP6(a6, b6, 80, uint16(40000+i), make([]byte, 1400)),
			ct.UDP4(a4, b4, uint16(40000+i), 53, make([]byte, 40)),
			ct.TCP4(a4, b4, uint16(40000+i), 443, make([]byte, 1400)),
		} {
			ps = append(ps, decodePacket(b, 1, f, 0))
		}
	}
	size := 0
	for _, p := range ps {
		size += len(p.Data)
	}
	s, err := preprocess.NewSplitter(preprocess.DefaultRules(), capture.Header{LinkType: 1}, io.Discard, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range ps {
			s.Packet(p)
		}
	}
	b.ReportMetric(float64(len(ps))*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

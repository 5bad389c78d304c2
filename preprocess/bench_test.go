package preprocess_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/preprocess"
)

// benchTrace is a pcap file of conns HTTP connections (handshake, a
// request, a response of segs segments, close) interleaved with DNS
// queries and replies and HTTPS packets that match no rule.
func benchTrace(conns, segs int) []byte {
	var recs []ct.Record
	ts := t0
	add := func(f []byte) {
		ts += int64(50 * time.Microsecond)
		recs = append(recs, ct.Record{TS: ts, Data: f})
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), 1400/16)
	for i := range conns {
		c := fmt.Sprintf("10.%d.%d.1", i/250, i%250)
		port := uint16(10000 + i)
		seq, ack := uint32(1000), uint32(5000)
		add(tcpSeg(c, b4, port, 80, "S", seq-1, 0, ""))
		add(tcpSeg(b4, c, 80, port, "SA", ack-1, seq, ""))
		add(tcpSeg(c, b4, port, 80, "A", seq, ack, ""))
		add(tcpSeg(c, b4, port, 80, "PA", seq, ack, request))
		seq += uint32(len(request))
		add(ct.UDP4(c, b4, port, 53, []byte("a dns query of some length")))
		for range segs {
			add(tcpSeg(b4, c, 80, port, "A", ack, seq, string(body)))
			ack += uint32(len(body))
			add(tcpSeg(c, b4, port, 80, "A", seq, ack, ""))
		}
		add(ct.UDP4(b4, c, 53, port, make([]byte, 120)))
		add(ct.TCP4(c, b4, port, 443, body))
		add(tcpSeg(c, b4, port, 80, "FA", seq, ack, ""))
		add(tcpSeg(b4, c, 80, port, "FA", ack, seq+1, ""))
		add(tcpSeg(c, b4, port, 80, "A", seq+1, ack+1, ""))
	}
	return ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
}

// BenchmarkProcess runs the whole pipeline (read, decode, split, two flow
// engines, two recorders) on an in-memory trace into io.Discard: the cost
// of preprocess without the disk. make memcheck measures it on a 1 GB
// file next to tcpdump.
func BenchmarkProcess(b *testing.B) {
	input := benchTrace(500, 20)
	out := preprocess.Outputs{"http": {Pcap: io.Discard, Batch: io.Discard}, "dns": {Pcap: io.Discard, Batch: io.Discard}}
	var sum preprocess.Summary
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		sum, err = preprocess.Process(context.Background(), preprocess.DefaultConfig(), out,
			preprocess.Input{Name: "bench.pcap", R: bytes.NewReader(input)})
		if err != nil {
			b.Fatal(err)
		}
	}
	if sum.SubTrace("http").Connections != 500 || sum.SubTrace("dns").Connections != 500 || sum.SubTrace("http").Gaps != 0 {
		b.Fatalf("summary %+v", sum)
	}
	b.ReportMetric(float64(sum.Packets)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

// TestProcessAllocs shows that the pipeline allocates per connection, not
// per packet: the same connections carrying four times the packets cost
// the same allocations.
func TestProcessAllocs(t *testing.T) {
	out := preprocess.Outputs{"http": {Pcap: io.Discard, Batch: io.Discard}, "dns": {Pcap: io.Discard, Batch: io.Discard}}
	allocs := func(input []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, err := preprocess.Process(context.Background(), preprocess.DefaultConfig(), out,
				preprocess.Input{Name: "in.pcap", R: bytes.NewReader(input)}); err != nil {
				t.Fatal(err)
			}
		})
	}
	short, long := allocs(benchTrace(50, 5)), allocs(benchTrace(50, 20))
	if long > short {
		t.Errorf("%v allocations with 5 segments a connection, %v with 20: something allocates per packet", short, long)
	}
	t.Logf("%v allocations for 50 connections of 5 segments, %v for 20", short, long)
}

package shard

import (
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// loadFrames reads the decoded frames of the first bundled trace.
func loadFrames(b *testing.B) []capture.Packet {
	r, err := capture.Open(corpustest.BundledTraces(b)[0])
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var out []capture.Packet
	dec := capture.NewDecoder()
	for {
		var p capture.Packet
		if r.Next(&p) != nil {
			break
		}
		p.Data = append([]byte(nil), p.Data...)
		dec.Decode(&p)
		out = append(out, p)
	}
	return out
}

// BenchmarkBatchAdd times copying a decoded frame into a batch.
func BenchmarkBatchAdd(b *testing.B) {
	frames := loadFrames(b)
	bt := newBatch()
	b.ResetTimer()
	for i := range b.N {
		p := &frames[i%len(frames)]
		if !bt.fitsPacket(len(p.Data)) {
			bt.reset()
		}
		bt.add(p, DecodedOK, 0)
	}
}

// BenchmarkHash times the shard hash of a decoded frame.
func BenchmarkHash(b *testing.B) {
	frames := loadFrames(b)
	var sum uint64
	b.ResetTimer()
	for i := range b.N {
		sum += Hash(&frames[i%len(frames)], 1)
	}
	_ = sum
}

// BenchmarkDecode times decoding a frame, what a worker would do again.
func BenchmarkDecode(b *testing.B) {
	frames := loadFrames(b)
	dec := capture.NewDecoder()
	var p capture.Packet
	b.ResetTimer()
	for i := range b.N {
		f := &frames[i%len(frames)]
		p = capture.Packet{TS: f.TS, Data: f.Data, OrigLen: f.OrigLen, LinkType: f.LinkType}
		dec.Decode(&p)
	}
}

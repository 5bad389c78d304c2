package flow

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// streamCase is a random client stream cut into segments.
type streamCase struct {
	isn    uint32
	stream []byte
	segs   []seg // data segments, in stream order
	fin    seg
}

func randomStream(rng *rand.Rand) streamCase {
	isns := []uint32{rng.Uint32(), 0xffffffff - uint32(rng.IntN(3000)), 0, 1}
	sc := streamCase{isn: isns[rng.IntN(len(isns))]}
	n := 1 + rng.IntN(6000)
	sc.stream = make([]byte, n)
	for i := range sc.stream {
		sc.stream[i] = byte(rng.UintN(256))
	}
	for off := 0; off < n; {
		l := min(n-off, 1+rng.IntN(1460))
		sc.segs = append(sc.segs, seg{from: cli, to: srv, flags: "PA", seq: sc.isn + 1 + uint32(off),
			ack: sISN + 1, data: string(sc.stream[off : off+l])})
		off += l
	}
	sc.fin = seg{from: cli, to: srv, flags: "FA", seq: sc.isn + 1 + uint32(n), ack: sISN + 1}
	return sc
}

func (sc streamCase) handshake() []seg {
	return []seg{
		{from: cli, to: srv, flags: "S", seq: sc.isn},
		{from: srv, to: cli, flags: "SA", seq: sISN, ack: sc.isn + 1},
		{from: cli, to: srv, flags: "A", seq: sc.isn + 1, ack: sISN + 1},
	}
}

// resegment cuts some segments differently (overlapping the originals), as
// TCP stacks do when they retransmit.
func resegment(rng *rand.Rand, sc streamCase, s seg) seg {
	off := int(s.seq - sc.isn - 1)
	lo := max(0, off-rng.IntN(100))
	hi := min(len(sc.stream), off+len(s.data)+rng.IntN(100))
	s.seq = sc.isn + 1 + uint32(lo)
	s.data = string(sc.stream[lo:hi])
	return s
}

// TestPropertyPermutation checks that any order and duplication of a
// stream's segments yields the stream when nothing is lost.
func TestPropertyPermutation(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		sc := randomStream(rng)
		var ss []seg
		for _, s := range sc.segs {
			ss = append(ss, s)
			for rng.IntN(4) == 0 {
				ss = append(ss, resegment(rng, sc, s))
			}
		}
		rng.Shuffle(len(ss), func(i, j int) { ss[i], ss[j] = ss[j], ss[i] })
		if rng.IntN(2) == 0 {
			ss = append(ss, sc.fin)
		} else {
			ss = append([]seg{sc.fin}, ss...)
		}
		r, st := run(t, Config{MaxFlowBuffer: 1 << 20}, segs(join(sc.handshake(), ss)...)...)
		c := r.only()
		if !bytes.Equal(c.data[Orig], sc.stream) || len(c.gaps[Orig]) != 0 {
			t.Fatalf("case %d (isn %#x, %d segments): delivered %d of %d bytes, gaps %v",
				i, sc.isn, len(ss), len(c.data[Orig]), len(sc.stream), c.gaps[Orig])
		}
		if st.Buffered != 0 {
			t.Fatalf("case %d: %d bytes still buffered after Flush", i, st.Buffered)
		}
	}
}

// TestPropertyLoss checks that when segments are lost, the delivered bytes
// are the stream's bytes at their places, and delivered plus gap bytes make
// up the stream, whether holes are found by acks, caps or at the end.
func TestPropertyLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		sc := randomStream(rng)
		var ss []seg
		acked := 0 // highest stream offset the server acknowledged
		for _, s := range sc.segs {
			if rng.IntN(5) != 0 { // 20% loss
				ss = append(ss, s)
				if rng.IntN(3) == 0 && len(ss) > 1 {
					j := rng.IntN(len(ss))
					ss[j], ss[len(ss)-1] = ss[len(ss)-1], ss[j]
				}
			}
			if rng.IntN(4) == 0 {
				end := int(s.seq-sc.isn-1) + len(s.data)
				if end > acked && rng.IntN(2) == 0 {
					acked = end
					ss = append(ss, seg{from: srv, to: cli, flags: "A", seq: sISN + 1, ack: sc.isn + 1 + uint32(end)})
				}
			}
		}
		ss = append(ss, sc.fin)
		cfg := Config{}
		if rng.IntN(3) == 0 {
			cfg.MaxFlowBuffer = 1 + rng.IntN(3000)
		}
		r, _ := run(t, cfg, segs(join(sc.handshake(), ss)...)...)
		c := r.only()
		got := reconstruct(c)
		if len(got) != len(sc.stream) {
			t.Logf("isn %#x\n%s", sc.isn, strings.Join(r.log, "\n"))
			t.Fatalf("case %d: delivered %d + gaps %d = %d bytes, want %d",
				i, len(c.data[Orig]), c.gapTotal(Orig), len(got), len(sc.stream))
		}
		for j := range got {
			if got[j] >= 0 && byte(got[j]) != sc.stream[j] {
				t.Fatalf("case %d: byte %d is %#x, want %#x", i, j, got[j], sc.stream[j])
			}
		}
	}
}

// reconstruct replays the originator's Data and Gap events of a
// connection, giving -1 for bytes reported missing.
func reconstruct(c *connRecord) []int {
	var out []int
	data := c.data[Orig]
	for _, ev := range c.events[Orig] {
		for range ev.gap {
			out = append(out, -1)
		}
		for _, b := range data[:ev.n] {
			out = append(out, int(b))
		}
		data = data[ev.n:]
	}
	return out
}

package flow

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	cli = "10.0.0.1:40000"
	srv = "10.0.0.2:80"
)

// Client and server initial sequence numbers used by the scenarios.
const (
	cISN = 1000
	sISN = 5000
)

// handshake returns a three-way handshake.
func handshake() []seg {
	return []seg{
		{from: cli, to: srv, flags: "S", seq: cISN},
		{from: srv, to: cli, flags: "SA", seq: sISN, ack: cISN + 1},
		{from: cli, to: srv, flags: "A", seq: cISN + 1, ack: sISN + 1},
	}
}

func join(parts ...[]seg) []seg { return slices.Concat(parts...) }

func TestTCPScenarios(t *testing.T) {
	req, resp := "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n"
	c1 := uint32(cISN + 1)
	s1 := uint32(sISN + 1)
	rq, rs := uint32(len(req)), uint32(len(resp))
	// A normal exchange and close, used as the base of several scenarios.
	exchange := []seg{
		{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req},
		{from: srv, to: cli, flags: "A", seq: s1, ack: c1 + rq},
		{from: srv, to: cli, flags: "PA", seq: s1, ack: c1 + rq, data: resp},
		{from: cli, to: srv, flags: "A", seq: c1 + rq, ack: s1 + rs},
	}
	closeBoth := []seg{
		{from: cli, to: srv, flags: "FA", seq: c1 + rq, ack: s1 + rs},
		{from: srv, to: cli, flags: "FA", seq: s1 + rs, ack: c1 + rq + 1},
		{from: cli, to: srv, flags: "A", seq: c1 + rq + 1, ack: s1 + rs + 1},
	}

	tests := []struct {
		name       string
		segs       []seg
		cfg        Config
		orig, resp string // delivered bytes
		origGaps   []int
		respGaps   []int
		state      string
		history    string
		origBytes  int64
		respBytes  int64
		missed     [2]int64
		flipped    bool
	}{
		{
			name: "normal", segs: join(handshake(), exchange, closeBoth),
			orig: req, resp: resp, state: "SF", history: "ShADadFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "out of order",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "PA", seq: c1 + 4, ack: s1, data: req[4:]},
				{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req[:4]},
			}, exchange[1:], closeBoth),
			// Zeek counts any segment below the highest sequence seen as a
			// retransmission.
			orig: req, resp: resp, state: "SF", history: "ShADTadFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "retransmission",
			segs: join(handshake(), exchange[:1], exchange[:1], exchange[1:], closeBoth),
			orig: req, resp: resp, state: "SF", history: "ShADTadFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "overlap with different data: first wins",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "PA", seq: c1 + 4, ack: s1, data: req[4:]},
				{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: "XXXXXXXX"},
			}, exchange[1:], closeBoth),
			orig: "XXXX" + req[4:], resp: resp, state: "SF", history: "ShADTadFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "gap acknowledged by the peer",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "PA", seq: c1 + 4, ack: s1, data: req[4:]},
				{from: srv, to: cli, flags: "A", seq: s1, ack: c1 + rq},
			}, exchange[2:], closeBoth),
			orig: req[4:], resp: resp, origGaps: []int{4}, state: "SF", history: "ShADaGdFf",
			origBytes: int64(rq), respBytes: int64(rs), missed: [2]int64{4, 0},
		},
		{
			name: "gap at end",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "PA", seq: c1 + 4, ack: s1, data: req[4:]},
			}),
			orig: req[4:], origGaps: []int{4}, state: "S1", history: "ShAD",
			origBytes: int64(rq),
		},
		{
			name: "hole before FIN at end",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req[:4]},
				{from: cli, to: srv, flags: "FA", seq: c1 + rq, ack: s1},
			}),
			orig: req[:4], origGaps: []int{int(rq) - 4}, state: "S2", history: "ShADF",
			origBytes: int64(rq),
		},
		{
			name: "data after FIN fills the hole",
			segs: join(handshake(), []seg{
				{from: cli, to: srv, flags: "FA", seq: c1 + 4, ack: s1, data: req[4:]},
				{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req[:4]},
			}, exchange[1:3], []seg{
				{from: srv, to: cli, flags: "FA", seq: s1 + rs, ack: c1 + rq + 1},
				{from: cli, to: srv, flags: "A", seq: c1 + rq + 1, ack: s1 + rs + 1},
			}),
			orig: req, resp: resp, state: "SF", history: "ShAFDTadf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "SYN-less connection",
			segs: join(exchange, closeBoth),
			orig: req, resp: resp, state: "SF", history: "DadAFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "SYN-less connection seen from the server first flips",
			segs: join(exchange[2:], closeBoth),
			resp: resp, state: "SF", history: "^dAFf", flipped: true,
			respBytes: int64(rs),
		},
		{
			name: "FIN-less connection", segs: join(handshake(), exchange),
			orig: req, resp: resp, state: "S1", history: "ShADad",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "data on SYN",
			segs: []seg{
				{from: cli, to: srv, flags: "S", seq: cISN, data: "hi"},
				{from: srv, to: cli, flags: "SA", seq: sISN, ack: cISN + 3},
				{from: cli, to: srv, flags: "A", seq: cISN + 3, ack: sISN + 1},
			},
			// As in Zeek, data on a SYN counts as a retransmission ('T').
			orig: "hi", state: "S1", history: "SThA", origBytes: 2,
		},
		{
			name: "RST from originator",
			segs: join(handshake(), exchange, []seg{
				{from: cli, to: srv, flags: "R", seq: c1 + rq},
			}),
			orig: req, resp: resp, state: "RSTO", history: "ShADadR",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "RST data is not stream data",
			segs: join(handshake(), []seg{
				{from: srv, to: cli, flags: "RA", seq: s1, ack: c1, data: "junk"},
			}),
			state: "RSTR", history: "ShArt",
		},
		{
			name: "SYN-ACK first makes its receiver the originator",
			segs: []seg{
				{from: srv, to: cli, flags: "SA", seq: sISN, ack: cISN + 1},
				{from: cli, to: srv, flags: "A", seq: cISN + 1, ack: sISN + 1},
			},
			state: "S1", history: "^hA", flipped: true,
		},
		{
			name: "keep-alive is a retransmission",
			segs: join(handshake(), exchange, []seg{
				{from: cli, to: srv, flags: "A", seq: c1 + rq - 1, ack: s1 + rs, data: "x"},
			}, closeBoth),
			orig: req, resp: resp, state: "SF", history: "ShADadTFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
		{
			name: "zero window",
			segs: join(handshake(), exchange[:1], []seg{
				{from: srv, to: cli, flags: "A", seq: s1, ack: c1 + rq, zeroWin: true},
			}, exchange[2:], closeBoth),
			orig: req, resp: resp, state: "SF", history: "ShADawdFf",
			origBytes: int64(rq), respBytes: int64(rs),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := run(t, tt.cfg, segs(tt.segs...)...)
			c := r.only()
			if got := string(c.data[Orig]); got != tt.orig {
				t.Errorf("orig data = %q, want %q", got, tt.orig)
			}
			if got := string(c.data[Resp]); got != tt.resp {
				t.Errorf("resp data = %q, want %q", got, tt.resp)
			}
			if !slices.Equal(c.gaps[Orig], tt.origGaps) || !slices.Equal(c.gaps[Resp], tt.respGaps) {
				t.Errorf("gaps = %v %v, want %v %v", c.gaps[Orig], c.gaps[Resp], tt.origGaps, tt.respGaps)
			}
			if c.state != tt.state || c.history != tt.history {
				t.Errorf("state %s history %q, want %s %q", c.state, c.history, tt.state, tt.history)
			}
			if c.stats[Orig].Bytes != tt.origBytes || c.stats[Resp].Bytes != tt.respBytes {
				t.Errorf("bytes %d/%d, want %d/%d", c.stats[Orig].Bytes, c.stats[Resp].Bytes, tt.origBytes, tt.respBytes)
			}
			if got := [2]int64{c.stats[Orig].Missed, c.stats[Resp].Missed}; got != tt.missed {
				t.Errorf("missed = %v, want %v", got, tt.missed)
			}
			if c.flipped != tt.flipped {
				t.Errorf("flipped = %v, want %v", c.flipped, tt.flipped)
			}
			if n := len(tt.segs); c.stats[Orig].Packets+c.stats[Resp].Packets != int64(n) {
				t.Errorf("packets %d+%d, want %d", c.stats[Orig].Packets, c.stats[Resp].Packets, n)
			}
		})
	}
}

// TestSequenceWrap sends a stream across the 2^32 boundary.
func TestSequenceWrap(t *testing.T) {
	const isn = 0xffffff00
	chunk := strings.Repeat("abcdefgh", 16) // 128 bytes
	ss := []seg{
		{from: cli, to: srv, flags: "S", seq: isn},
		{from: srv, to: cli, flags: "SA", seq: sISN, ack: isn + 1},
		{from: cli, to: srv, flags: "A", seq: isn + 1, ack: sISN + 1},
	}
	var want bytes.Buffer
	seq := uint32(isn + 1)
	for i := range 6 {
		data := strings.ToUpper(chunk[:i+1]) + chunk[i+1:]
		ss = append(ss,
			seg{from: cli, to: srv, flags: "PA", seq: seq, ack: sISN + 1, data: data},
			seg{from: srv, to: cli, flags: "A", seq: sISN + 1, ack: seq + uint32(len(data))})
		want.WriteString(data)
		seq += uint32(len(data))
	}
	// An out-of-order pair across the wrap as well.
	a, b := chunk[:50], chunk[50:]
	ss = append(ss,
		seg{from: cli, to: srv, flags: "PA", seq: seq + 50, ack: sISN + 1, data: b},
		seg{from: cli, to: srv, flags: "PA", seq: seq, ack: sISN + 1, data: a},
		seg{from: cli, to: srv, flags: "FA", seq: seq + uint32(len(chunk)), ack: sISN + 1},
		seg{from: srv, to: cli, flags: "FA", seq: sISN + 1, ack: seq + uint32(len(chunk)) + 1},
	)
	want.WriteString(chunk)
	r, _ := run(t, Config{}, segs(ss...)...)
	c := r.only()
	if !bytes.Equal(c.data[Orig], want.Bytes()) {
		t.Errorf("delivered %d bytes, want %d", len(c.data[Orig]), want.Len())
	}
	if len(c.gaps[Orig]) != 0 {
		t.Errorf("gaps %v", c.gaps[Orig])
	}
	if c.stats[Orig].Bytes != int64(want.Len()) || c.state != "SF" {
		t.Errorf("bytes %d state %s, want %d SF", c.stats[Orig].Bytes, c.state, want.Len())
	}
}

func TestBufferCaps(t *testing.T) {
	// The client sends 10 segments of 100 bytes; the first is lost, the
	// rest arrive and are buffered until a cap forces the hole.
	data := make([]seg, 0, 12)
	data = append(data, handshake()...)
	var want []byte
	for i := 1; i < 10; i++ {
		d := strings.Repeat(string(rune('a'+i)), 100)
		data = append(data, seg{from: cli, to: srv, flags: "PA", seq: cISN + 1 + uint32(100*i), ack: sISN + 1, data: d})
		want = append(want, d...)
	}
	t.Run("per flow", func(t *testing.T) {
		r, st := run(t, Config{MaxFlowBuffer: 350}, segs(data...)...)
		c := r.only()
		if !bytes.Equal(c.data[Orig], want) || c.gapTotal(Orig) != 100 {
			t.Errorf("got %d bytes, gaps %v", len(c.data[Orig]), c.gaps[Orig])
		}
		if st.FlowCapHits == 0 {
			t.Error("FlowCapHits = 0")
		}
		if st.PeakBuffered > 350 {
			t.Errorf("PeakBuffered = %d, over the cap", st.PeakBuffered)
		}
	})
	t.Run("global", func(t *testing.T) {
		// Two connections buffer; the one that started first is flushed.
		other := make([]seg, len(data))
		for i, s := range data {
			s.from = strings.Replace(s.from, ":40000", ":40001", 1)
			s.to = strings.Replace(s.to, ":40000", ":40001", 1)
			other[i] = s
		}
		all := join(data[:6], other, data[6:])
		r, st := run(t, Config{MaxFlowBuffer: 1000, MaxBuffer: 1200}, segs(all...)...)
		if st.GlobalCapHits == 0 {
			t.Error("GlobalCapHits = 0")
		}
		if st.PeakBuffered > 1200 {
			t.Errorf("PeakBuffered = %d, over the cap", st.PeakBuffered)
		}
		for _, id := range r.order {
			c := r.conns[id]
			if !bytes.Equal(c.data[Orig], want) || c.gapTotal(Orig) != 100 {
				t.Errorf("conn %d: got %d bytes, gaps %v", id, len(c.data[Orig]), c.gaps[Orig])
			}
		}
	})
}

func TestConnectionReuse(t *testing.T) {
	first := join(handshake(), []seg{
		{from: cli, to: srv, flags: "FA", seq: cISN + 1, ack: sISN + 1},
		{from: srv, to: cli, flags: "FA", seq: sISN + 1, ack: cISN + 2},
	})
	second := []seg{
		{from: cli, to: srv, flags: "S", seq: 90000, ts: at(time.Second)},
		{from: srv, to: cli, flags: "SA", seq: 70000, ack: 90001, ts: at(time.Second + time.Millisecond)},
	}
	r, st := run(t, Config{}, segs(join(first, second)...)...)
	if len(r.order) != 2 || st.Reused != 1 {
		t.Fatalf("got %d connections, %d reused; want 2, 1", len(r.order), st.Reused)
	}
	if c := r.conns[r.order[0]]; c.end != EndReused || c.state != "SF" {
		t.Errorf("first: end %v state %s", c.end, c.state)
	}
	if c := r.conns[r.order[1]]; c.history != "Sh" || c.state != "OTH" && c.state != "S1" {
		t.Errorf("second: history %q state %s", c.history, c.state)
	}
}

// TestRelativeSeq checks how relativeSeq counts wraps of the sequence
// space, at the 2 GB bounds where a wrap starts to count.
func TestRelativeSeq(t *testing.T) {
	tests := []struct {
		name             string
		start, last, seq uint32
		wraps            uint32
		want             uint64
		wantUnderflow    bool
	}{
		{"after last", 1000, 1400, 1500, 0, 500, false},
		{"before the start", 1000, 1400, 900, 0, 1<<64 - 100, true},
		{"into the next space", 0xfffffff0, 0xfffffff8, 0x10, 0, 0x20, false},
		{"back in the previous space", 0xfffffff0, 0x10, 0xfffffff8, 1, 8, false},
		{"in the counted space", 0xfffffff0, 0x10, 0x20, 1, 0x30, false},
		{"2 GB before last", 0, 0x80000000, 0, 0, 0, false},
		{"2 GB after last", 0x80000000, 0, 0x80000000, 1, 0, false},
		{"2 GB after last, no wrap counted", 0, 0, 0x80000000, 0, 1<<64 - 1<<31, true},
	}
	for _, tt := range tests {
		var ep tcpEndpoint
		ep.setStart(tt.start)
		got, under := ep.relativeSeq(tt.seq, tt.last, tt.wraps)
		if got != tt.want || under != tt.wantUnderflow {
			t.Errorf("%s: relativeSeq(%#x, %#x, %d) from %#x = %#x, %v; want %#x, %v",
				tt.name, tt.seq, tt.last, tt.wraps, tt.start, got, under, tt.want, tt.wantUnderflow)
		}
	}
}

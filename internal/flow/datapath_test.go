package flow

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// TestDataSegmentSteps checks what processTCP relies on when it skips the
// control steps for a segment without SYN, FIN or RST from an established
// or partial side: initSeq and updateStateMachine change nothing, and
// dataHistory and advanceLast (with the retransmission
// it leaves to processTCP) do what updateHistory and updateLast do.
func TestDataSegmentSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	e := &Engine{}
	states := []TCPState{TCPInactive, TCPSynSent, TCPSynAckSent, TCPPartial, TCPEstablished, TCPClosed, TCPReset}
	seqs := []uint32{0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
	pick := func() uint32 {
		if rng.IntN(2) == 0 {
			return seqs[rng.IntN(len(seqs))] + uint32(rng.IntN(5))
		}
		return rng.Uint32()
	}
	for i := range 20000 {
		var c Conn
		d := Dir(rng.IntN(2))
		c.tcp[Orig].init(&c, Orig)
		c.tcp[Resp].init(&c, Resp)
		ep, peer := &c.tcp[d], &c.tcp[d^1]
		ep.state = []TCPState{TCPEstablished, TCPPartial}[rng.IntN(2)]
		ep.prevState = states[rng.IntN(len(states))]
		peer.state, peer.prevState = states[rng.IntN(len(states))], states[rng.IntN(len(states))]
		ep.setStart(pick())
		ep.lastSeq, ep.ackSeq = pick(), pick()
		ep.seqWraps, ep.ackWraps = uint32(rng.IntN(3)), uint32(rng.IntN(3))
		ep.rxmt = scaled{count: uint32(rng.IntN(12)), threshold: []uint32{0, 1, 10}[rng.IntN(3)]}
		c.conn.histSeen = rng.Uint32()
		c.conn.seenFirst = uint8(rng.IntN(4)) | 1<<d
		c.History = []byte("Sh")
		flags := tcpFlags(uint8(rng.IntN(256)) &^ (capture.FlagSYN | capture.FlagFIN | capture.FlagRST))
		n := []int{0, 1, 1460}[rng.IntN(3)]
		first := pick()
		last := first + uint32(n)
		relSeq := uint64(rng.Uint32())

		want := c
		want.History = bytes.Clone(c.History)
		want.tcp[d].initSeq(flags, first, last)
		want.updateHistory(d, flags, relSeq, n)
		want.tcp[d].updateLast(&want, flags, last, n)
		if e.updateStateMachine(&want, d, flags, n) {
			t.Fatalf("case %d: updateStateMachine closed side %v in state %v on flags %#x", i, d, ep.state, flags)
		}

		got := c
		got.History = bytes.Clone(c.History)
		got.dataHistory(d, flags, n)
		if !got.tcp[d].advanceLast(last) && n > 0 {
			got.tcp[d].rxmt.add(&got, letter(d, 'T'))
		}

		// The copies' streams point back at c: compare without them.
		for dd := range got.tcp {
			want.tcp[dd].stream, got.tcp[dd].stream = stream{}, stream{}
		}
		if !bytes.Equal(got.History, want.History) {
			t.Fatalf("case %d: history %q, updateHistory made %q", i, got.History, want.History)
		}
		got.History, want.History = nil, nil
		if !reflect.DeepEqual(got.tcp, want.tcp) || !reflect.DeepEqual(got.conn, want.conn) {
			t.Fatalf("case %d (dir %v, flags %#x, n %d, seq %#x):\n got  %+v\n want %+v", i, d, flags, n, first, got.tcp[d], want.tcp[d])
		}
	}
}

// TestSteadySegments runs traces through an engine as it is and through
// one whose connections are never steady, so that every segment takes
// processTCP and touch, and wants the same events, end states and
// counters.
func TestSteadySegments(t *testing.T) {
	paths, err := filepath.Glob("../../traces/*.pcap")
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, "../../traces/http-dns-ipv6-vlan.pcapng")
	corpus, err := corpustest.FindCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if corpus != nil {
		for _, e := range corpus.Entries {
			paths = append(paths, filepath.Join(corpus.Dir, e.Path))
		}
	}
	steady := 0
	for _, path := range paths {
		pkts := readTrace(t, path)
		for _, verify := range []bool{false, true} {
			cfg := Config{HashSeed: 1, VerifyChecksums: verify}
			fast, slow := newRecorder(t), newRecorder(t)
			ef, es := New(cfg, fast), New(cfg, slow)
			var conns []*Conn
			for _, p := range pkts {
				if c := ef.lastTCP; c != nil && c.conn.steady {
					steady++
				}
				ef.Packet(p)
				conns = es.table.all(conns[:0])
				for _, c := range conns {
					c.conn.steady = false
				}
				es.Packet(p)
			}
			ef.Flush()
			es.Flush()
			if got, want := strings.Join(fast.log, "\n"), strings.Join(slow.log, "\n"); got != want {
				t.Fatalf("%s (verify %v): events differ from processTCP's:\n%s", path, verify, firstDifference(got, want))
			}
			if !reflect.DeepEqual(fast.conns, slow.conns) {
				t.Fatalf("%s (verify %v): connections differ from processTCP's", path, verify)
			}
			if fs, ss := ef.Stats(), es.Stats(); fs != ss {
				t.Fatalf("%s (verify %v): stats %+v, processTCP's %+v", path, verify, fs, ss)
			}
		}
	}
	if steady == 0 {
		t.Fatal("no segment took the steady path")
	}
}

// firstDifference returns the lines around where got and want part.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// TestOpeningSYN holds openingSYN to processTCP for the segments it
// takes: bare SYNs without payload, with any other flags, that make their
// connection.
func TestOpeningSYN(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	e := &Engine{}
	fresh := func(ts int64) *Conn {
		c := &Conn{History: make([]byte, 0, MaxHistory), Start: ts, Last: ts}
		c.Key.Proto = ProtoTCP
		c.tcp[Orig].init(c, Orig)
		c.tcp[Resp].init(c, Resp)
		return c
	}
	for i := range 5000 {
		flags := uint8(rng.IntN(256))&^(capture.FlagFIN|capture.FlagRST|capture.FlagACK) | capture.FlagSYN
		p := &capture.Packet{
			TS:       int64(rng.Uint64() >> 1),
			Seq:      []uint32{0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, rng.Uint32()}[rng.IntN(7)],
			Ack:      rng.Uint32(),
			TCPFlags: flags,
			Window:   uint16(1 + rng.IntN(65535)),
		}
		want, got := fresh(p.TS-1), fresh(p.TS-1)
		e.processTCP(want, Orig, p, tcpFlags(flags))
		got.openingSYN(p)
		// The streams point back at their connections: compare without.
		for d := range got.tcp {
			want.tcp[d].stream.owner, got.tcp[d].stream.owner = nil, nil
		}
		if !bytes.Equal(got.History, want.History) {
			t.Fatalf("case %d: history %q, processTCP made %q", i, got.History, want.History)
		}
		got.History, want.History = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (flags %#x, seq %#x):\n got  %+v\n want %+v", i, flags, p.Seq, got, want)
		}
	}
}

// TestAnsweringSYN holds answeringSYN to processTCP for the segments it
// takes: SYN-ACKs without payload, with any other flags, from the
// responder of a connection whose originator sent a SYN.
func TestAnsweringSYN(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var gaps []int
	e := New(Config{}, &funcHandler{gap: func(_ *Conn, _ Dir, n int) { gaps = append(gaps, n) }})
	seqs := []uint32{0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
	pick := func() uint32 {
		if rng.IntN(2) == 0 {
			return seqs[rng.IntN(len(seqs))] + uint32(rng.IntN(5))
		}
		return rng.Uint32()
	}
	start := func(isn uint32, ts int64) *Conn {
		c := &Conn{History: make([]byte, 0, MaxHistory), Start: ts, Last: ts}
		c.Key.Proto = ProtoTCP
		c.tcp[Orig].init(c, Orig)
		c.tcp[Resp].init(c, Resp)
		c.openingSYN(&capture.Packet{TS: ts, Seq: isn})
		if rng.IntN(4) == 0 {
			// The responder acked the SYN before its SYN-ACK.
			e.processTCP(c, Resp, &capture.Packet{TS: ts, Seq: pick(), Ack: isn + 1, TCPFlags: capture.FlagACK, Window: 1}, tcpFlags(capture.FlagACK))
		}
		return c
	}
	for i := range 5000 {
		flags := uint8(rng.IntN(256))&^(capture.FlagFIN|capture.FlagRST) | capture.FlagSYN | capture.FlagACK
		isn, ts := pick(), int64(rng.Uint64()>>2)
		ack := isn + 1
		if rng.IntN(2) == 0 {
			ack = pick()
		}
		p := &capture.Packet{TS: ts + 1, Seq: pick(), Ack: ack, TCPFlags: flags, Window: uint16(1 + rng.IntN(65535))}
		state := rng.Uint64()
		rng = rand.New(rand.NewPCG(state, 1))
		want := start(isn, ts)
		rng = rand.New(rand.NewPCG(state, 1))
		got := start(isn, ts)
		if !got.answersSYN() {
			t.Fatalf("case %d: connection does not answer the SYN", i)
		}
		gaps = nil
		e.processTCP(want, Resp, p, tcpFlags(flags))
		wantGaps := gaps
		gaps = nil
		e.answeringSYN(got, p)
		if fmt.Sprint(gaps) != fmt.Sprint(wantGaps) {
			t.Fatalf("case %d: gaps %v, processTCP reported %v", i, gaps, wantGaps)
		}
		// The streams point back at their connections: compare without.
		for d := range got.tcp {
			want.tcp[d].stream.owner, got.tcp[d].stream.owner = nil, nil
		}
		if !bytes.Equal(got.History, want.History) {
			t.Fatalf("case %d: history %q, processTCP made %q", i, got.History, want.History)
		}
		got.History, want.History = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d (flags %#x, seq %#x, ack %#x):\n got  %+v\n want %+v", i, flags, p.Seq, p.Ack, got, want)
		}
	}
}

// finEnder records the gaps and stream ends a segment reports.
type finEnder struct {
	funcHandler
	events []string
}

func (h *finEnder) Gap(c *Conn, d Dir, n int) { h.events = append(h.events, fmt.Sprint("gap ", d, n)) }
func (h *finEnder) EndStream(c *Conn, d Dir)  { h.events = append(h.events, fmt.Sprint("end ", d)) }
func (h *finEnder) Data(c *Conn, d Dir, b []byte) {
	h.events = append(h.events, fmt.Sprint("data ", d, len(b)))
}

// closeCase makes the random connections and segments of TestClosingFIN
// and TestBareAck.
type closeCase struct{ rng *rand.Rand }

// seq returns a sequence or ack number, near a wrap half of the time.
func (cc closeCase) seq() uint32 {
	seqs := []uint32{0, 1, 2, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff}
	if cc.rng.IntN(2) == 0 {
		return seqs[cc.rng.IntN(len(seqs))] + uint32(cc.rng.IntN(5))
	}
	return cc.rng.Uint32()
}

// conn returns a TCP connection whose sides are in random states but
// inactive, with random sequence spaces, FINs and streams, and random
// history bits and first-seen sides, side d among them.
func (cc closeCase) conn(d Dir) *Conn {
	rng := cc.rng
	states := []TCPState{TCPInactive, TCPSynSent, TCPSynAckSent, TCPPartial, TCPEstablished, TCPClosed, TCPReset}
	small := func() uint64 { return uint64(rng.IntN(8)) }
	c := &Conn{History: []byte("ShAD")}
	c.Key.Proto = ProtoTCP
	for dd := range c.tcp {
		ep := &c.tcp[dd]
		ep.init(c, Dir(dd))
		ep.state, ep.prevState = states[1+rng.IntN(len(states)-1)], states[rng.IntN(len(states))]
		ep.setStart(cc.seq())
		ep.lastSeq, ep.ackSeq = cc.seq(), cc.seq()
		ep.seqWraps, ep.ackWraps = uint32(rng.IntN(3)), uint32(rng.IntN(3))
		ep.finCnt = uint32(rng.IntN(2))
		ep.finSeq = small()
		ep.didClose, ep.eof = rng.IntN(2) == 0, rng.IntN(2) == 0
		ep.histLastFIN = small()
		ep.stream.next = 1 + small()
		ep.stream.trim = 1 + uint64(rng.IntN(int(ep.stream.next)))
	}
	c.conn.histSeen = rng.Uint32()
	c.conn.seenFirst = uint8(rng.IntN(4)) | 1<<d
	c.conn.closed = rng.IntN(4) == 0
	return c
}

// segment returns a segment from side d of c without payload, with the
// flags, a sequence number near the side's last half of the time, and
// an open window.
func (cc closeCase) segment(c *Conn, d Dir, flags uint8) *capture.Packet {
	seq := cc.seq()
	if cc.rng.IntN(2) == 0 {
		seq = c.tcp[d].lastSeq + uint32(cc.rng.IntN(3)) - 1
	}
	return &capture.Packet{TS: int64(cc.rng.Uint64() >> 1), Seq: seq, Ack: cc.seq(), TCPFlags: flags, Window: 1}
}

// holdToProcessTCP fails case i of t unless path, on a copy of c, does
// to it and reports to h what processTCP does on another copy, for the
// segment p from side d.
func holdToProcessTCP(t *testing.T, i int, e *Engine, h *finEnder, c *Conn, d Dir, p *capture.Packet, path func(*Conn)) {
	t.Helper()
	want := *c
	want.History = bytes.Clone(c.History)
	got := *c
	got.History = bytes.Clone(c.History)
	h.events = nil
	e.processTCP(&want, d, p, tcpFlags(p.TCPFlags))
	wantEvents := h.events
	h.events = nil
	path(&got)
	if fmt.Sprint(h.events) != fmt.Sprint(wantEvents) {
		t.Fatalf("case %d: events %v, processTCP reported %v", i, h.events, wantEvents)
	}
	for dd := range got.tcp {
		want.tcp[dd].stream.owner, got.tcp[dd].stream.owner = nil, nil
	}
	if !bytes.Equal(got.History, want.History) {
		t.Fatalf("case %d: history %q, processTCP made %q", i, got.History, want.History)
	}
	got.History, want.History = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("case %d (dir %v, flags %#x, seq %#x, ack %#x):\n got  %+v\n want %+v", i, d, p.TCPFlags, p.Seq, p.Ack, got.tcp, want.tcp)
	}
}

// TestClosingFIN holds closingFIN to processTCP for the segments it
// takes: FINs without payload, with any flags but SYN and RST, from an
// open side whose peer is not inactive.
func TestClosingFIN(t *testing.T) {
	cc := closeCase{rand.New(rand.NewPCG(9, 10))}
	h := &finEnder{}
	e := New(Config{}, h)
	for i := range 20000 {
		d := Dir(cc.rng.IntN(2))
		c := cc.conn(d)
		ep := &c.tcp[d]
		ep.state = []TCPState{TCPEstablished, TCPPartial}[cc.rng.IntN(2)]
		ep.finCnt, ep.didClose, ep.eof = 0, false, false
		if cc.rng.IntN(2) == 0 {
			ep.lastSeq = uint32(ep.startSeq) + 1
		}
		if !c.closes(d) {
			t.Fatalf("case %d: side %v does not close", i, d)
		}
		flags := uint8(cc.rng.IntN(256))&^(capture.FlagSYN|capture.FlagRST) | capture.FlagFIN
		p := cc.segment(c, d, flags)
		holdToProcessTCP(t, i, e, h, c, d, p, func(c *Conn) { e.closingFIN(c, d, p, tcpFlags(flags)) })
	}
}

// TestBareAck holds bareAck to processTCP for the segments it takes:
// bare acks, with any flags but SYN, FIN and RST, from an established,
// partial or closed side whose peer is not inactive.
func TestBareAck(t *testing.T) {
	cc := closeCase{rand.New(rand.NewPCG(11, 12))}
	h := &finEnder{}
	e := New(Config{}, h)
	for i := range 20000 {
		d := Dir(cc.rng.IntN(2))
		c := cc.conn(d)
		c.tcp[d].state = []TCPState{TCPPartial, TCPEstablished, TCPClosed}[cc.rng.IntN(3)]
		if !c.takesBareAck(d) {
			t.Fatalf("case %d: side %v takes no bare ack", i, d)
		}
		flags := uint8(cc.rng.IntN(256)) &^ (capture.FlagSYN | capture.FlagFIN | capture.FlagRST)
		p := cc.segment(c, d, flags)
		holdToProcessTCP(t, i, e, h, c, d, p, func(c *Conn) { e.bareAck(c, d, p, tcpFlags(flags)) })
	}
}

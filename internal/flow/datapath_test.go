package flow

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
)

// TestDataSegmentSteps checks what processTCP relies on when it skips the
// control steps for a segment without SYN, FIN or RST from an established
// or partial side: initSeq and updateStateMachine change nothing, and
// dataHistory (unless dataSeen) and advanceLast (with the retransmission
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
		if !got.dataSeen(d, flags, n) {
			got.dataHistory(d, flags, n)
		}
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

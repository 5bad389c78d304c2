package flow

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// holePackets returns the packets of connection i: a handshake, then n
// one-byte segments of the client, each after a hole (offsets 2, 4, 6,
// ...), in descending order when desc, and no acks, so that every one is
// buffered.
func holePackets(i, n int, desc bool) []*capture.Packet {
	var out []*capture.Packet
	eachHolePacket(i, n, desc, func(p *capture.Packet) { out = append(out, p) })
	return out
}

// eachHolePacket passes the packets of holePackets to f as it makes them,
// so that none is kept.
func eachHolePacket(i, n int, desc bool, f func(*capture.Packet)) {
	c := fmt.Sprintf("10.%d.%d.%d:%d", i>>16&0xff, i>>8&0xff, i&0xff, 1024+i%50000)
	s := "192.168.0.1:80"
	for _, p := range segs(
		seg{from: c, to: s, flags: "S", seq: cISN},
		seg{from: s, to: c, flags: "SA", seq: sISN, ack: cISN + 1},
		seg{from: c, to: s, flags: "A", seq: cISN + 1, ack: sISN + 1},
	) {
		f(p)
	}
	for k := range n {
		off := k
		if desc {
			off = n - 1 - k
		}
		f(seg{from: c, to: s, flags: "P", seq: cISN + 2 + 2*uint32(off), data: "x", ts: at(time.Second)}.packet())
	}
}

// TestBufferCapCountsMemory checks that the reassembly caps count the
// memory buffered segments hold, not their payload: many flows of tiny
// segments must not hold more than Config.MaxBuffer. Every one-byte
// segment used to take a 512-byte buffer the caps did not see.
func TestBufferCapCountsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const flows, holes, maxBuffer = 300, 1000, 4 << 20
	var pkts []*capture.Packet
	for i := range flows {
		pkts = append(pkts, holePackets(i, holes, false)...)
	}
	e := New(Config{MaxBuffer: maxBuffer}, &countingHandler{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, p := range pkts {
		e.Packet(p)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := e.Stats()
	if st.PeakBuffered > maxBuffer {
		t.Errorf("PeakBuffered = %d, above MaxBuffer %d", st.PeakBuffered, maxBuffer)
	}
	if st.GlobalCapHits == 0 {
		t.Errorf("%d one-byte segments held within a %d-byte cap: the cap never acted", flows*holes, maxBuffer)
	}
	// The connections themselves take about 3 KB each; allow as much
	// again for the free lists and the arena's spare capacity.
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(2*maxBuffer + flows*8<<10); grown > limit {
		t.Errorf("the heap grew by %d bytes, more than %d for a %d-byte buffer cap", grown, limit, maxBuffer)
	}
	e.Flush()
	runtime.KeepAlive(pkts)
}

// TestFragmentCapCountsMemory sends datagrams of one fragment each, 8
// bytes near the end of a 64 KiB datagram: each datagram's buffer reaches
// that far. The cap must count those buffers, not the 8 bytes received.
func TestFragmentCapCountsMemory(t *testing.T) {
	const datagrams, maxFrag = DefaultMaxFragDatagrams, DefaultMaxFragBuffer
	src, dst := mustAddrPort("10.0.0.1:1"), mustAddrPort("10.0.0.2:2")
	payload := make([]byte, 8)
	e := New(Config{}, &countingHandler{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range datagrams {
		p := &capture.Packet{
			TS: at(time.Duration(i) * time.Millisecond), IPVersion: 4, Src: src.Addr(), Dst: dst.Addr(), TTL: 64,
			Fragment: true, MoreFrags: true, FragOffset: 65000, FragID: uint32(i),
			Proto: ProtoUDP, IPPayload: payload, Data: payload, IPLen: 28, OrigLen: 28,
		}
		e.Packet(p)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := e.Stats()
	if st.FragCapHits == 0 {
		t.Errorf("%d datagrams of 64 KiB buffers within a %d-byte cap: the cap never acted", datagrams, maxFrag)
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(2*maxFrag + 8<<20); grown > limit {
		t.Errorf("the heap grew by %d bytes, more than %d for a %d-byte fragment cap", grown, limit, maxFrag)
	}
	e.Flush()
}

// TestPoolIdleBounded fills the buffer cap with segments of one size
// class after another: the pool must not keep every class's buffers.
func TestPoolIdleBounded(t *testing.T) {
	var p bufferPool
	for class := range numSizeClasses {
		n := minSizeClass << class
		bufs := make([][]byte, 0, (16<<20)/n)
		for range cap(bufs) {
			bufs = append(bufs, p.get(n))
		}
		for _, b := range bufs {
			p.put(b)
		}
	}
	if p.idle > maxIdle {
		t.Fatalf("the pool keeps %d idle bytes, more than %d", p.idle, maxIdle)
	}
	held := 0
	for _, l := range p.free {
		for _, b := range l {
			held += cap(b)
		}
	}
	if held != p.idle {
		t.Fatalf("the pool holds %d bytes but counts %d", held, p.idle)
	}
}

// endOrder records the ids of ended connections and why they ended.
type endOrder struct {
	countingHandler
	ids []uint64
	why []EndReason
}

func (h *endOrder) EndConn(c *Conn) { h.ids = append(h.ids, c.ID); h.why = append(h.why, c.End) }

// TestMemoryBudget floods the engine with SYNs beyond its memory budget:
// the connections it counts stay within the budget, the evictions are
// counted, and the connection idle longest goes first.
func TestMemoryBudget(t *testing.T) {
	const budget, conns = 1 << 20, 5000
	h := &endOrder{}
	e := New(Config{MaxMemory: budget}, h)
	syn := func(i int, ts int64) {
		c := fmt.Sprintf("10.%d.%d.%d:%d", i>>16&0xff, i>>8&0xff, i&0xff, 1024+i%50000)
		e.Packet(seg{from: c, to: "192.168.0.1:80", flags: "S", seq: cISN, ts: ts}.packet())
	}
	fits := budget / ConnMemory
	for i := range fits - 1 {
		syn(i, at(time.Duration(i)*time.Microsecond))
	}
	// Connection 1 (i = 0) gets its SYN-ACK: connection 2 is now idle
	// longest. (The SYNs' attempt timers keep their order: a repeated SYN
	// would not move connection 1.)
	e.Packet(seg{from: "192.168.0.1:80", to: "10.0.0.0:1024", flags: "SA", seq: sISN, ack: cISN + 1, ts: at(time.Second)}.packet())
	if len(h.ids) != 0 {
		t.Fatalf("%d connections ended before the budget was reached", len(h.ids))
	}
	for i := fits - 1; i < conns; i++ {
		syn(i, at(time.Second+time.Duration(i)*time.Microsecond))
	}
	st := e.Stats()
	if st.Memory > budget || st.PeakMemory > budget {
		t.Errorf("memory counted %d, peak %d: above the budget %d", st.Memory, st.PeakMemory, budget)
	}
	if st.MemoryEvictions == 0 || st.MemoryEvictions != st.Evictions {
		t.Errorf("evictions %d, by memory %d: want all by memory", st.Evictions, st.MemoryEvictions)
	}
	if len(h.ids) < 2 || h.ids[0] != 2 || h.why[0] != EndEvicted {
		t.Fatalf("first ended: %v (%v), want connection 2 evicted (idle longest)", h.ids[:min(3, len(h.ids))], h.why[:min(3, len(h.why))])
	}
	for i, id := range h.ids {
		if id == 1 && i < fits-2 {
			t.Fatalf("connection 1, which spoke last of the first %d, was evicted %dth", fits-1, i+1)
		}
	}
	if st.Active*int64(ConnMemory) > budget {
		t.Errorf("%d connections open, %d bytes: above the budget", st.Active, st.Active*int64(ConnMemory))
	}
}

package flow

import (
	"fmt"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// connPackets returns the packets of one complete connection number i,
// starting at ts: handshake, a request in three segments with the last
// two swapped, a reply, and a close.
func connPackets(i int, ts int64) []*capture.Packet {
	c := fmt.Sprintf("10.%d.%d.%d:%d", i>>16&0xff, i>>8&0xff, i&0xff, 1024+i%50000)
	s := "192.168.0.1:80"
	req := "GET /some/path HTTP/1.1\r\nHost: example.com\r\n\r\n"
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	c1, s1 := uint32(cISN+1), uint32(sISN+1)
	rq, rs := uint32(len(req)), uint32(len(resp))
	ss := []seg{
		{from: c, to: s, flags: "S", seq: cISN},
		{from: s, to: c, flags: "SA", seq: sISN, ack: c1},
		{from: c, to: s, flags: "A", seq: c1, ack: s1},
		{from: c, to: s, flags: "PA", seq: c1, ack: s1, data: req[:10]},
		{from: c, to: s, flags: "PA", seq: c1 + 20, ack: s1, data: req[20:]},
		{from: c, to: s, flags: "PA", seq: c1 + 10, ack: s1, data: req[10:20]},
		{from: s, to: c, flags: "PA", seq: s1, ack: c1 + rq, data: resp},
		{from: c, to: s, flags: "FA", seq: c1 + rq, ack: s1 + rs},
		{from: s, to: c, flags: "FA", seq: s1 + rs, ack: c1 + rq + 1},
		{from: c, to: s, flags: "A", seq: c1 + rq + 1, ack: s1 + rs + 1},
	}
	for j := range ss {
		ss[j].ts = ts + int64(j)*int64(time.Millisecond)
	}
	pkts := segs(ss...)
	// A DNS exchange, and a large UDP datagram in fragments.
	dc := fmt.Sprintf("10.%d.%d.%d:%d", i>>16&0xff, i>>8&0xff, i&0xff, 2000+i%50000)
	pkts = append(pkts,
		udpPacket(ts, dc, "192.168.0.53:53", "query"),
		udpPacket(ts+1, "192.168.0.53:53", dc, "reply"))
	big := udpPacket(ts+2, dc, "192.168.0.53:53", string(make([]byte, 3000)))
	return append(pkts, fragments(big, uint32(i), 1480)...)
}

// countingHandler counts events without keeping anything.
type countingHandler struct{ conns, data, gaps, ends int }

func (h *countingHandler) BeginConn(*Conn)               { h.conns++ }
func (h *countingHandler) Data(_ *Conn, _ Dir, b []byte) { h.data += len(b) }
func (h *countingHandler) Gap(*Conn, Dir, int)           { h.gaps++ }
func (h *countingHandler) EndConn(*Conn)                 { h.ends++ }

// TestSteadyStateAllocs checks that, once warm, the engine allocates
// nothing per packet: connections, segment buffers and table slots are
// reused.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const warm, measured = 4000, 500
	var conns [][]*capture.Packet
	for i := range warm + measured + 1 {
		// A new connection every 20 ms: about 250 are open at once,
		// each kept for the close delay.
		conns = append(conns, connPackets(i, at(time.Duration(i)*20*time.Millisecond)))
	}
	h := &countingHandler{}
	e := New(Config{}, h)
	for _, ps := range conns[:warm] {
		for _, p := range ps {
			e.Packet(p)
		}
	}
	next := warm
	allocs := testing.AllocsPerRun(measured, func() {
		for _, p := range conns[next] {
			e.Packet(p)
		}
		next++
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per round of %d packets, want 0", allocs, len(conns[0]))
	}
	e.Flush()
	if h.ends != h.conns || h.gaps != 0 {
		t.Errorf("%d connections, %d ended, %d gaps", h.conns, h.ends, h.gaps)
	}
}

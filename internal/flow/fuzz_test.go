package flow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// fuzzPackets turns fuzz input into a packet sequence. The first byte
// chooses the configuration; then every 8 bytes make one packet:
//
//	0: kind (TCP, UDP, ICMP, fragmented UDP) and direction
//	1: connection (one of 4) and TCP flags
//	2-3: sequence offset, 4-5: ack offset (from per-connection bases near 2^32)
//	6: payload length, 7: time step
//
// TCP payload bytes are the low byte of their sequence number, so any byte
// delivered can be checked against its place in the stream.
func fuzzPackets(b []byte) (Config, bool, []*capture.Packet) {
	if len(b) == 0 {
		return Config{}, false, nil
	}
	mode := b[0]
	b = b[1:]
	cfg := Config{
		MaxConns:            2 + int(mode&3),
		MaxFlowBuffer:       200 + 100*int(mode>>2&3),
		MaxBuffer:           500,
		MaxFragDatagrams:    2,
		MaxFragsPerDatagram: 4,
		VerifyChecksums:     mode&0x10 != 0,
	}
	noSYN := mode&0x20 != 0
	ts := t0
	var pkts []*capture.Packet
	for ; len(b) >= 8; b = b[8:] {
		kind, dir := b[0]&3, b[0]>>2&1
		conn := int(b[1] & 3)
		flags := b[1] >> 2 & 0x1f // FIN SYN RST PSH ACK
		if noSYN {
			flags &^= capture.FlagSYN
		}
		seqOff := uint32(binary.BigEndian.Uint16(b[2:]))
		ackOff := uint32(binary.BigEndian.Uint16(b[4:]))
		n := int(b[6] % 100)
		switch step := b[7]; {
		case step == 255:
			ts += int64(10 * time.Minute)
		case step > 250:
			ts += int64(step-250) * int64(time.Second)
		default:
			ts += int64(step) * int64(time.Millisecond)
		}
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), uint16(40000+conn))
		z := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 2}), 80)
		bases := [2]uint32{0xffffff00 - uint32(conn)*0x1000, 0x7fffff00}
		if dir == 1 {
			a, z = z, a
		}
		var p *capture.Packet
		switch kind {
		case 0, 1:
			seq := bases[dir] + seqOff
			payload := make([]byte, n)
			for i := range payload {
				payload[i] = byte(seq + uint32(i))
			}
			if flags&capture.FlagSYN != 0 {
				for i := range payload {
					payload[i] = byte(seq + 1 + uint32(i)) // data on a SYN starts after it
				}
			}
			ack := bases[1-dir] + ackOff
			p = ipPacket(ts, a.Addr(), z.Addr(), ProtoTCP, tcpBytes(a, z, flags, seq, ack, uint16(ackOff), payload))
		case 2:
			if seqOff&1 == 0 {
				p = ipPacket(ts, a.Addr(), z.Addr(), ProtoUDP, udpBytes(a, z, make([]byte, n)))
			} else {
				p = ipPacket(ts, a.Addr(), z.Addr(), ProtoICMP, icmpBytes(false, uint8(seqOff>>1), 0, a.Addr(), z.Addr(), nil))
			}
		case 3:
			p = ipPacket(ts, a.Addr(), z.Addr(), ProtoUDP, udpBytes(a, z, make([]byte, 8*n)))
			frags := fragments(p, ackOff&7, 8*(1+int(seqOff%8)))
			if seqOff&0x100 != 0 {
				for i, j := 0, len(frags)-1; i < j; i, j = i+1, j-1 {
					frags[i], frags[j] = frags[j], frags[i]
				}
			}
			if seqOff&0x200 != 0 && len(frags) > 1 {
				frags = frags[1:] // one lost
			}
			pkts = append(pkts, frags...)
			continue
		}
		if seqOff&0x8000 != 0 && cfg.VerifyChecksums && len(p.IPPayload) > 0 {
			p.IPPayload[len(p.IPPayload)-1] ^= 1 // a corrupt packet, to be dropped
		}
		pkts = append(pkts, p)
	}
	return cfg, noSYN, pkts
}

func FuzzEngine(f *testing.F) {
	seed := func(mode byte, ops ...[8]byte) []byte {
		b := []byte{mode}
		for _, op := range ops {
			b = append(b, op[:]...)
		}
		return b
	}
	f.Add(seed(0,
		[8]byte{0, 0x02 << 2, 0, 0, 0, 0, 0, 1}, // SYN
		[8]byte{4, 0x12 << 2, 0, 0, 0, 1, 0, 1}, // SYN-ACK
		[8]byte{0, 0x10 << 2, 0, 1, 0, 1, 10, 1},
		[8]byte{0, 0x10 << 2, 0, 21, 0, 1, 10, 1},
		[8]byte{0, 0x10 << 2, 0, 11, 0, 1, 10, 1},
		[8]byte{4, 0x10 << 2, 0, 1, 0, 31, 0, 1},
		[8]byte{0, 0x11 << 2, 0, 31, 0, 1, 0, 1},
		[8]byte{4, 0x11 << 2, 0, 1, 0, 32, 0, 1},
	))
	f.Add(seed(0x20, [8]byte{0, 0x10 << 2, 0, 50, 0, 0, 40, 1}, [8]byte{4, 0x10 << 2, 0, 0, 0, 90, 0, 255}))
	f.Add(seed(0x13, [8]byte{2, 1, 0, 0, 0, 0, 5, 1}, [8]byte{6, 1, 0, 0, 0, 0, 5, 251}, [8]byte{3, 0, 1, 3, 0, 2, 20, 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, noSYN, pkts := fuzzPackets(b)
		r := newRecorder(t)
		e := New(cfg, r)
		for _, p := range pkts {
			e.Packet(p)
			if st := e.Stats(); st.Buffered > int64(cfg.MaxBuffer) || st.Active > int64(cfg.MaxConns) {
				t.Fatalf("buffered %d active %d over the caps", st.Buffered, st.Active)
			}
		}
		e.Flush()
		st := e.Stats()
		if st.Active != 0 || st.Buffered != 0 {
			t.Fatalf("after Flush: %d active, %d buffered", st.Active, st.Buffered)
		}
		if e.bufList.head != nil || e.bufList.tail != nil {
			t.Fatalf("after Flush: a stream is still on the buffering list")
		}
		if st.Connections != int64(len(r.order)) {
			t.Fatalf("%d connections counted, %d begun", st.Connections, len(r.order))
		}
		for _, id := range r.order {
			c := r.conns[id]
			if !c.ended {
				t.Fatalf("connection %d never ended", id)
			}
			if c.key.Proto != ProtoTCP || !noSYN {
				continue
			}
			for d := Orig; d <= Resp; d++ {
				if err := checkPattern(c, d); err != nil {
					t.Fatalf("connection %d %v: %v\n%v", id, d, err, r.log)
				}
			}
		}
	})
}

// checkPattern checks that the bytes of a direction, in which every byte is
// the low byte of its sequence number, follow each other with the gaps in
// between accounted for.
func checkPattern(c *connRecord, d Dir) error {
	data := c.data[d]
	pos := 0
	var prev byte
	have := false
	skip := 0
	for _, ev := range c.events[d] {
		if ev.gap > 0 {
			skip += ev.gap
			continue
		}
		for _, x := range data[pos : pos+ev.n] {
			if have && x != prev+1+byte(skip) {
				return fmt.Errorf("byte %#x after %#x and a gap of %d", x, prev, skip)
			}
			prev, have, skip = x, true, 0
		}
		pos += ev.n
	}
	return nil
}

func TestFuzzSeedsRun(t *testing.T) {
	// The fuzz target's invariants also hold on a long pseudo-random input.
	b := make([]byte, 1+8*3000)
	x := uint32(12345)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	for _, mode := range []byte{0x20, 0x21, 0x32, 0x0} {
		b[0] = mode
		cfg, noSYN, pkts := fuzzPackets(b)
		r := newRecorder(t)
		e := New(cfg, r)
		for _, p := range pkts {
			e.Packet(p)
		}
		e.Flush()
		if noSYN {
			for _, id := range r.order {
				if c := r.conns[id]; c.key.Proto == ProtoTCP {
					for d := Orig; d <= Resp; d++ {
						if err := checkPattern(c, d); err != nil {
							t.Fatalf("mode %#x connection %d %v: %v", mode, id, d, err)
						}
					}
				}
			}
		}
	}
}

package flow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// t0 is the timestamp of the first packet of test scenarios.
const t0 = int64(1_700_000_000) * int64(time.Second)

// at returns t0 plus d.
func at(d time.Duration) int64 { return t0 + int64(d) }

// seg describes one test TCP segment.
type seg struct {
	from, to string // "addr:port"
	flags    string // letters of S A F R P, e.g. "SA"
	seq, ack uint32
	data     string
	ts       int64
	win      uint16 // 0 means 65535 unless zeroWin
	zeroWin  bool
}

func parseFlags(s string) uint8 {
	var f uint8
	for _, c := range s {
		switch c {
		case 'S':
			f |= capture.FlagSYN
		case 'A':
			f |= capture.FlagACK
		case 'F':
			f |= capture.FlagFIN
		case 'R':
			f |= capture.FlagRST
		case 'P':
			f |= capture.FlagPSH
		default:
			panic("bad flag " + string(c))
		}
	}
	return f
}

// ipPacket builds a decoded packet around an IP payload, the way
// capture's decoder would: addresses, lengths, and the transport fields
// decoded by Packet.DecodeTransport.
func ipPacket(ts int64, from, to netip.Addr, proto uint8, ipPayload []byte) *capture.Packet {
	p := &capture.Packet{TS: ts, Src: from, Dst: to, TTL: 64}
	hdr := 20
	p.IPVersion = 4
	if from.Is6() && !from.Is4In6() {
		p.IPVersion, hdr = 6, 40
	}
	p.IPLen = hdr + len(ipPayload)
	p.Data = ipPayload
	p.OrigLen = p.IPLen
	p.IPPayload = ipPayload
	p.DecodeTransport(proto, ipPayload)
	return p
}

func mustAddrPort(s string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		panic(err)
	}
	return ap
}

// tcpBytes builds a TCP header with payload and a valid checksum.
func tcpBytes(src, dst netip.AddrPort, flags uint8, seq, ack uint32, win uint16, data []byte) []byte {
	b := make([]byte, 20+len(data))
	binary.BigEndian.PutUint16(b[0:], src.Port())
	binary.BigEndian.PutUint16(b[2:], dst.Port())
	binary.BigEndian.PutUint32(b[4:], seq)
	binary.BigEndian.PutUint32(b[8:], ack)
	b[12] = 5 << 4
	b[13] = flags
	binary.BigEndian.PutUint16(b[14:], win)
	copy(b[20:], data)
	setChecksum(b, 16, src.Addr(), dst.Addr(), ProtoTCP)
	return b
}

func udpBytes(src, dst netip.AddrPort, data []byte) []byte {
	b := make([]byte, 8+len(data))
	binary.BigEndian.PutUint16(b[0:], src.Port())
	binary.BigEndian.PutUint16(b[2:], dst.Port())
	binary.BigEndian.PutUint16(b[4:], uint16(len(b)))
	copy(b[8:], data)
	setChecksum(b, 6, src.Addr(), dst.Addr(), ProtoUDP)
	return b
}

func icmpBytes(v6 bool, typ, code uint8, src, dst netip.Addr, data []byte) []byte {
	b := make([]byte, 8+len(data))
	b[0], b[1] = typ, code
	copy(b[8:], data)
	if v6 {
		setChecksum(b, 2, src, dst, ProtoICMPv6)
	} else {
		binary.BigEndian.PutUint16(b[2:], ^fold(onesSum(0, b)))
	}
	return b
}

func setChecksum(b []byte, at int, src, dst netip.Addr, proto uint8) {
	p := capture.Packet{Src: src, Dst: dst, Proto: proto, IPVersion: 4}
	if src.Is6() {
		p.IPVersion = 6
	}
	sum := onesSum(pseudoHeader(&p, len(b)), b)
	binary.BigEndian.PutUint16(b[at:], ^fold(sum))
}

// tcpPacket builds the packet of segment s.
func (s seg) packet() *capture.Packet {
	src, dst := mustAddrPort(s.from), mustAddrPort(s.to)
	win := s.win
	if win == 0 && !s.zeroWin {
		win = 65535
	}
	b := tcpBytes(src, dst, parseFlags(s.flags), s.seq, s.ack, win, []byte(s.data))
	return ipPacket(s.ts, src.Addr(), dst.Addr(), ProtoTCP, b)
}

func udpPacket(ts int64, from, to string, data string) *capture.Packet {
	src, dst := mustAddrPort(from), mustAddrPort(to)
	return ipPacket(ts, src.Addr(), dst.Addr(), ProtoUDP, udpBytes(src, dst, []byte(data)))
}

func icmpPacket(ts int64, from, to string, typ, code uint8, data string) *capture.Packet {
	src, dst := netip.MustParseAddr(from), netip.MustParseAddr(to)
	proto := ProtoICMP
	if src.Is6() {
		proto = ProtoICMPv6
	}
	return ipPacket(ts, src, dst, proto, icmpBytes(proto == ProtoICMPv6, typ, code, src, dst, []byte(data)))
}

// fragments splits the IP payload of p into fragments of at most size
// bytes (a multiple of 8) with identification id.
func fragments(p *capture.Packet, id uint32, size int) []*capture.Packet {
	var out []*capture.Packet
	payload := p.IPPayload
	hdr := p.IPLen - len(payload)
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		f := &capture.Packet{
			TS: p.TS, IPVersion: p.IPVersion, Src: p.Src, Dst: p.Dst, TTL: p.TTL,
			Fragment: true, MoreFrags: end < len(payload), FragOffset: off, FragID: id,
			Proto: p.Proto, IPPayload: append([]byte(nil), payload[off:end]...),
		}
		f.IPLen = hdr + (end - off)
		if p.IPVersion == 6 {
			f.IPLen += 8
		}
		f.Data = f.IPPayload
		f.OrigLen = f.IPLen
		if off == 0 {
			f.DecodeTransport(p.Proto, f.IPPayload)
		}
		out = append(out, f)
	}
	return out
}

// event is one Data (n bytes) or Gap (gap bytes) event.
type event struct{ n, gap int }

// connRecord is what the recorder saw of one connection.
type connRecord struct {
	key     Key
	flipped bool
	data    [2][]byte
	chunks  [2]int
	gaps    [2][]int
	events  [2][]event // data (n bytes) and gaps in the order they came
	begun   bool
	ended   bool
	end     EndReason
	state   string
	history string
	stats   [2]DirStats
	tcp     [2]TCPState
	start   int64
	last    int64
}

func (r *connRecord) gapTotal(d Dir) int {
	n := 0
	for _, g := range r.gaps[d] {
		n += g
	}
	return n
}

// recorder is a Handler that keeps every event, and checks that each
// connection's events come in order.
type recorder struct {
	t     testing.TB
	conns map[uint64]*connRecord
	order []uint64
	log   []string
}

func newRecorder(t testing.TB) *recorder {
	return &recorder{t: t, conns: make(map[uint64]*connRecord)}
}

func (r *recorder) BeginConn(c *Conn) {
	if _, ok := r.conns[c.ID]; ok {
		r.t.Errorf("BeginConn twice for connection %d", c.ID)
	}
	r.conns[c.ID] = &connRecord{key: c.Key, flipped: c.Flipped, begun: true}
	r.order = append(r.order, c.ID)
	r.log = append(r.log, fmt.Sprintf("begin %d %v", c.ID, c.Key))
}

func (r *recorder) rec(c *Conn, what string) *connRecord {
	cr := r.conns[c.ID]
	if cr == nil || cr.ended {
		r.t.Fatalf("%s for connection %d outside BeginConn..EndConn", what, c.ID)
	}
	return cr
}

func (r *recorder) Data(c *Conn, d Dir, b []byte) {
	cr := r.rec(c, "Data")
	if len(b) == 0 {
		r.t.Errorf("empty Data for connection %d", c.ID)
	}
	cr.data[d] = append(cr.data[d], b...)
	cr.chunks[d]++
	cr.events[d] = append(cr.events[d], event{n: len(b)})
	r.log = append(r.log, fmt.Sprintf("data %d %v %q", c.ID, d, b))
}

func (r *recorder) Gap(c *Conn, d Dir, n int) {
	cr := r.rec(c, "Gap")
	if n <= 0 {
		r.t.Errorf("Gap of %d bytes for connection %d", n, c.ID)
	}
	cr.gaps[d] = append(cr.gaps[d], n)
	cr.events[d] = append(cr.events[d], event{gap: n})
	r.log = append(r.log, fmt.Sprintf("gap %d %v %d", c.ID, d, n))
}

func (r *recorder) EndConn(c *Conn) {
	cr := r.rec(c, "EndConn")
	cr.ended = true
	cr.end = c.End
	cr.state = c.State()
	cr.history = string(c.History)
	cr.stats = c.Stats
	cr.tcp = [2]TCPState{c.TCPState(Orig), c.TCPState(Resp)}
	cr.start, cr.last = c.Start, c.Last
	r.log = append(r.log, fmt.Sprintf("end %d %v %s %s", c.ID, c.End, cr.state, cr.history))
}

// only returns the single connection recorded.
func (r *recorder) only() *connRecord {
	r.t.Helper()
	if len(r.order) != 1 {
		r.t.Fatalf("got %d connections, want 1:\n%s", len(r.order), strings.Join(r.log, "\n"))
	}
	return r.conns[r.order[0]]
}

// run feeds packets to a new engine with cfg and flushes it.
func run(t testing.TB, cfg Config, pkts ...*capture.Packet) (*recorder, Stats) {
	r := newRecorder(t)
	e := New(cfg, r)
	for _, p := range pkts {
		e.Packet(p)
	}
	e.Flush()
	return r, e.Stats()
}

// segs turns segments into packets, giving each a timestamp 1 ms after the
// previous one unless set.
func segs(ss ...seg) []*capture.Packet {
	out := make([]*capture.Packet, len(ss))
	ts := t0
	for i, s := range ss {
		if s.ts == 0 {
			s.ts = ts
		}
		ts = s.ts + int64(time.Millisecond)
		out[i] = s.packet()
	}
	return out
}

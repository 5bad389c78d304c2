package traces

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/checksum"
)

// session is one simulated conversation: a TCP connection, a DNS exchange,
// an NTP or ping flow. Its packets come out in time order, one per step.
type session interface {
	// at returns the time of the session's next packet (ns).
	at() int64
	// step writes the packet due at at() (or drops it, for a loss) and
	// moves on.
	step()
	// done reports whether the session has nothing more to send.
	done() bool
}

// Session kinds, in the order of Mix.weights.
const (
	kindHTTP = iota
	kindDNS
	kindTLS
	kindSSH
	kindNTP
	kindICMP
)

type heapEntry struct {
	at int64
	id uint64
	s  session
}

// gen is the state of one run of the generator.
type gen struct {
	cfg     Config
	cw      *captureWriter
	truth   Truth
	pools   *pools
	r       rng // the scheduler's: session kinds and start times
	heap    []heapEntry
	started int
	nextID  uint64
	stopped bool // no new sessions
	f       frame
	frag    [maxFrame]byte
	fragID  uint32
	// clientPort holds the next ephemeral port of each client host.
	clientPort []uint16
}

// Client hosts: each has a stable address and its own ephemeral port
// counter, so that no two connections share a 5-tuple.
const numClients = 4000

// Generate writes a trace made as cfg says to w and returns its ground
// truth. Memory use does not depend on the size of the trace.
func Generate(w io.Writer, cfg Config) (*Truth, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &gen{cfg: cfg, cw: newCaptureWriter(w, cfg.Format, cfg.Link), pools: newPools(cfg.Seed)}
	g.truth.init(cfg)
	g.r = newRNG(cfg.Seed, 0)
	g.clientPort = make([]uint16, numClients)
	for i := range g.clientPort {
		g.clientPort[i] = uint16(32768 + g.r.intn(28000))
	}
	g.fragID = uint32(g.r.u64())
	t := cfg.StartNS
	for i := 0; i < cfg.Concurrency && g.startSession(t); i++ {
		t += g.r.exp(3_000_000) + 1000
	}
	g.run()
	if err := g.cw.flush(); err != nil {
		return nil, fmt.Errorf("writing the trace: %w", err)
	}
	g.truth.FileBytes = g.cw.written
	g.truth.finish()
	return &g.truth, nil
}

// run sends packets in time order until every session has ended (or
// writing fails: the error comes out of the final flush).
func (g *gen) run() {
	for len(g.heap) > 0 && g.cw.err == nil {
		top := &g.heap[0]
		s := top.s
		now := top.at
		s.step()
		if s.done() {
			g.pop()
			// A new session replaces the one that ended, a little later.
			g.startSession(now + g.r.exp(2_000_000) + 1000)
			continue
		}
		top.at = s.at()
		g.down(0)
	}
}

// full reports whether the size limit is reached: open sessions then
// finish the exchange they are in instead of starting another.
func (g *gen) full() bool { return g.cfg.Size > 0 && g.cw.written >= g.cfg.Size }

// startSession starts a session of a random kind at t unless the size or
// session limit is reached. It reports whether it started one.
func (g *gen) startSession(t int64) bool {
	if g.stopped || g.cfg.Sessions > 0 && g.started >= g.cfg.Sessions || g.full() {
		g.stopped = true
		return false
	}
	g.started++
	g.nextID++
	kind := g.r.pick(g.cfg.Mix.weights())
	r := newRNG(g.cfg.Seed, g.nextID)
	var s session
	switch kind {
	case kindHTTP:
		s = g.newHTTP(r, t)
	case kindDNS:
		s = g.newDNS(r, t)
	case kindTLS:
		s = g.newTLS(r, t)
	case kindSSH:
		s = g.newSSH(r, t)
	case kindNTP:
		s = g.newNTP(r, t)
	default:
		s = g.newPing(r, t)
	}
	g.push(heapEntry{at: s.at(), id: g.nextID, s: s})
	return true
}

func (g *gen) less(i, j int) bool {
	a, b := &g.heap[i], &g.heap[j]
	return a.at < b.at || a.at == b.at && a.id < b.id
}

func (g *gen) push(e heapEntry) {
	g.heap = append(g.heap, e)
	i := len(g.heap) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !g.less(i, p) {
			break
		}
		g.heap[i], g.heap[p] = g.heap[p], g.heap[i]
		i = p
	}
}

func (g *gen) pop() {
	n := len(g.heap) - 1
	g.heap[0] = g.heap[n]
	g.heap[n] = heapEntry{}
	g.heap = g.heap[:n]
	if n > 0 {
		g.down(0)
	}
}

func (g *gen) down(i int) {
	n := len(g.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && g.less(r, l) {
			m = r
		}
		if !g.less(m, i) {
			return
		}
		g.heap[i], g.heap[m] = g.heap[m], g.heap[i]
		i = m
	}
}

// Addresses. Clients live in 10.0.0.0/8 and 2001:db8:1::/48; servers in
// the documentation ranges 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24
// and 2001:db8:ff::/48, plus a few well-known public resolvers.
var (
	routerMAC = [6]byte{0x00, 0x1b, 0x21, 0x3c, 0x9d, 0x01}
	serverNet = [3][3]byte{{192, 0, 2}, {198, 51, 100}, {203, 0, 113}}
)

// endpoints returns the addressing of a new session of client host h to
// server number srv on port sport, protocol proto.
func (g *gen) endpoints(r *rng, proto uint8, srv int, sport uint16) endpoints {
	e := endpoints{proto: proto, v6: r.pct(g.cfg.IPv6)}
	if r.pct(g.cfg.VLAN) {
		e.vlan = []uint16{10, 20, 100, 200, 4000}[r.intn(5)]
	}
	h := r.intn(numClients)
	e.host = h
	if e.v6 {
		e.addr[dirC] = [16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 1, byte(h >> 8), byte(h)}
		binary.BigEndian.PutUint64(e.addr[dirC][8:], mix64(uint64(h))|0x0200000000000000)
		e.addr[dirS] = [16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0xff, 0, byte(srv >> 8), 14: byte(srv >> 8), 15: byte(srv)}
		e.flow[dirC] = uint32(r.u64()) & 0xfffff
		e.flow[dirS] = uint32(r.u64()) & 0xfffff
	} else {
		e.addr[dirC] = [16]byte{10, byte(1 + h/250), byte(h % 250), byte(2 + (h*37)%250)}
		n := serverNet[srv%3]
		e.addr[dirS] = [16]byte{n[0], n[1], n[2], byte(1 + srv%250)}
	}
	if srv >= 1000 { // public resolvers
		e.addr[dirS] = resolverAddr(e.v6, srv-1000)
	}
	e.mac[dirC] = routerMAC
	e.mac[dirS] = [6]byte{0x52, 0x54, 0x00, byte(srv >> 8), byte(srv), 0x10}
	e.port[dirC] = g.nextPort(h)
	e.port[dirS] = sport
	hops := uint8(r.between(3, 20))
	if r.pct(30) {
		e.ttl[dirC] = 128 - hops
	} else {
		e.ttl[dirC] = 64 - hops
	}
	e.ttl[dirS] = 64
	e.ipid[dirC] = uint16(r.u64())
	e.ipid[dirS] = uint16(r.u64())
	return e
}

func resolverAddr(v6 bool, i int) [16]byte {
	if v6 {
		return [][16]byte{
			{0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 14: 0x88, 15: 0x88},
			{0x26, 0x06, 0x47, 0x00, 0x47, 0x00, 14: 0x11, 15: 0x11},
			{0x20, 0x01, 0x0d, 0xb8, 0, 0x53, 15: 1},
		}[i%3]
	}
	return [][16]byte{{8, 8, 8, 8}, {1, 1, 1, 1}, {192, 0, 2, 53}}[i%3]
}

// nextPort hands out client h's next ephemeral port (32768-60999, as
// Linux does), wrapping around.
func (g *gen) nextPort(h int) uint16 {
	p := g.clientPort[h]
	n := p + 1
	if n > 60999 {
		n = 32768
	}
	g.clientPort[h] = n
	return p
}

func mix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	return x ^ x>>33
}

// pickImpairment decides what happens to a data segment that impairments
// may hit. canReorder says that the next segment may be hit as well.
func (g *gen) pickImpairment(r *rng, v6, canReorder bool) int {
	im := &g.cfg.Impair
	switch {
	case r.chance(im.Loss):
		return impLoss
	case canReorder && r.chance(im.Reorder):
		return impReorder
	case r.chance(im.Retransmit):
		return impRetransmit
	case r.chance(im.Duplicate):
		return impDuplicate
	case !v6 && r.chance(im.Fragment):
		return impFragment
	}
	return impNone
}

// Link MTU and the MTU that fragmentation impairments use (IPv4 only).
const (
	linkMTU   = 1500
	impairMTU = 576
)

// writeFrame writes the frame built in g.f, sent by side d at time at.
// Packets larger than the link MTU are fragmented, as the sending host
// would; frag fragments at a smaller MTU, dup writes the frame twice.
func (g *gen) writeFrame(at int64, d int, frag, dup bool) {
	f := &g.f
	ipLen := f.n - f.ipOff
	mtu := linkMTU
	if frag {
		mtu = impairMTU
	}
	if ipLen > mtu {
		g.fragment(at, d, mtu)
		return
	}
	g.count(f.proto, f.sport, f.dport, true)
	g.put(at, d, f.b[:f.n])
	if dup {
		g.count(f.proto, f.sport, f.dport, true)
		g.put(at, d, f.b[:f.n])
	}
}

// put writes a frame, padding short frames from the client side to the
// Ethernet minimum as a NIC does for frames it receives.
func (g *gen) put(at int64, d int, b []byte) {
	if d == dirC && len(b) < 60 {
		n := len(b)
		b = b[:60]
		clear(b[n:])
	}
	g.cw.write(at, b)
	g.truth.Packets++
	if g.truth.firstTS == 0 {
		g.truth.firstTS = at
	}
	g.truth.lastTS = at
}

// count updates the per-port packet counters the way tcpdump's "tcp port
// 80" and "udp port 53" match: the IP header's protocol field must be the
// transport (so IPv6 packets with a Fragment header never match) and the
// packet must not be a non-first IPv4 fragment.
func (g *gen) count(proto uint8, sport, dport uint16, first bool) {
	if !first {
		return
	}
	switch proto {
	case protoTCP:
		if sport == 80 || dport == 80 {
			g.truth.TCPPort80Packets++
		}
	case protoUDP:
		if sport == 53 || dport == 53 {
			g.truth.UDPPort53Packets++
		}
	}
}

// fragment writes the frame in g.f as IP fragments of at most mtu bytes.
func (g *gen) fragment(at int64, d int, mtu int) {
	f := &g.f
	src := f.b[:f.n]
	hdrLen := 20
	if f.v6 {
		hdrLen = 40
	}
	payload := src[f.ipOff+hdrLen:]
	chunk := (mtu - hdrLen) &^ 7
	if f.v6 {
		chunk = (mtu - hdrLen - 8) &^ 7
		g.fragID++
	}
	for off := 0; off < len(payload); off += chunk {
		end := min(off+chunk, len(payload))
		more := end < len(payload)
		b := g.frag[:]
		copy(b, src[:f.ipOff+hdrLen])
		ip := b[f.ipOff:]
		var n int
		if f.v6 {
			ip[6] = protoFrag6
			binary.BigEndian.PutUint16(ip[4:], uint16(8+end-off))
			fh := ip[40:48]
			fh[0], fh[1] = f.proto, 0
			fo := uint16(off)
			if more {
				fo |= 1
			}
			binary.BigEndian.PutUint16(fh[2:], fo)
			binary.BigEndian.PutUint32(fh[4:], g.fragID)
			n = f.ipOff + 48 + copy(b[f.ipOff+48:], payload[off:end])
		} else {
			binary.BigEndian.PutUint16(ip[2:], uint16(20+end-off))
			fo := uint16(off / 8)
			if more {
				fo |= 0x2000
			}
			binary.BigEndian.PutUint16(ip[6:], fo)
			ip[10], ip[11] = 0, 0
			binary.BigEndian.PutUint16(ip[10:], checksum.Of(ip[:20]))
			n = f.ipOff + 20 + copy(b[f.ipOff+20:], payload[off:end])
		}
		g.count(f.proto, f.sport, f.dport, off == 0 && !f.v6)
		g.truth.IPFragments++
		g.put(at, d, b[:n])
	}
	if mtu == impairMTU {
		g.truth.Impairments.Fragmented++
	}
}

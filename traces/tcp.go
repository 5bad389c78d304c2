package traces

// The TCP model. The capture point sits next to the server: a client
// packet is captured when it reaches the server, a server packet when it
// leaves. So the server reacts to a client packet after a few tens of
// microseconds, the client to a server packet one round trip later.
//
// A connection is a sequence of phases: a send phase moves one burst of
// application bytes (one or more messages) in one direction, in MSS-sized
// segments grouped in slow-start flights one round trip apart, paced by
// the sender's link, and acknowledged by the receiver every second segment
// (delayed ACK for a last odd segment, unless the receiver answers with
// data first). A close phase is a FIN exchange, a reset phase one RST.
// Phases come from a tcpApp, which also writes the bytes.

// tcpApp supplies the byte streams of a TCP connection, phase by phase.
type tcpApp interface {
	// next returns what happens after the previous phase ended (or after
	// the handshake).
	next(c *tcpConn) phase
	// read fills p with the next bytes of the current send phase. It fills
	// p completely unless the phase ends, and reports whether it has.
	read(p []byte) (n int, end bool)
	// interior returns how many bytes from the current position may be hit
	// by impairments: bytes inside an identity-coded Content-Length body,
	// not counting its last byte. 0 elsewhere.
	interior() int64
	// lost tells the app that the segment it just wrote never reaches the
	// capture (a loss impairment).
	lost()
}

type phaseOp uint8

const (
	opSend  phaseOp = iota // dir sends application bytes
	opClose                // dir closes with FIN, the peer answers with FIN
	opReset                // dir aborts with RST
)

// phase is one step of a TCP conversation.
type phase struct {
	op  phaseOp
	dir int
	// delay is the actor's think time: from the moment it has what it
	// needs (the peer's last packet) to its first packet.
	delay int64
}

// Impairment kinds applied to one data segment.
const (
	impNone = iota
	impLoss
	impReorder
	impRetransmit
	impDuplicate
	impFragment
)

// qpkt is a packet scheduled for later: an ACK, a handshake or teardown
// packet, a retransmitted or reordered segment.
type qpkt struct {
	at         int64
	dir        int8
	flags      uint8
	delayedAck bool // may be replaced by the receiver's next data
	reordered  bool
	seq, ack   uint32
	data       []byte
}

// tcpConn is one simulated TCP connection.
type tcpConn struct {
	g      *gen
	r      *rng
	e      endpoints
	app    tcpApp
	port80 bool // counts into the HTTP keys of the truth file

	rtt      int64    // round trip beyond the capture point, ns
	srvDelay int64    // server reaction time, ns
	gap      [2]int64 // pacing between back-to-back segments of each sender
	seg      [2]int   // payload bytes of a full segment from each sender
	mss      [2]uint16
	win      [2]uint16
	wscale   [2]uint8
	useTS    bool
	nxt      [2]uint32 // next sequence number of each sender
	tsBase   [2]uint32
	lastTS   [2]uint32
	cwnd     [2]int
	maxW     [2]int
	t0       int64

	// The current send phase.
	sending     bool
	dir         int
	next        int64 // time of the next data segment
	flightLeft  int
	flightStart int64
	idx         int   // data segments sent in this phase
	prevLost    bool  // the previous segment of this phase was lost
	heldUntil   int64 // capture time of the last reordered segment
	lastAt      int64 // time of the last data segment or handshake packet
	lastDir     int   // its sender

	q       []qpkt // sorted by time
	closing bool
}

// The initial congestion window in segments, and how long a receiver
// delays the ACK of a lone last segment.
const (
	initCwnd     = 10
	delayedAckNS = 40_000_000
)

// start sets the connection up: addresses come from e; the handshake is
// scheduled at t0.
func (c *tcpConn) start(g *gen, r *rng, e endpoints, app tcpApp, t0 int64) {
	c.g, c.r, c.e, c.app, c.t0 = g, r, e, app, t0
	c.e.proto = protoTCP
	c.port80 = e.port[dirS] == 80
	c.rtt = r.between64(200_000, 120_000_000)
	if r.pct(20) {
		c.rtt = r.between64(50_000, 2_000_000) // same site
	}
	c.srvDelay = r.between64(15_000, 120_000)
	// Links from 10 Mbit/s to 10 Gbit/s: ns per full segment.
	rates := []int64{1_200_000, 120_000, 12_000, 1_200}
	c.gap[dirC] = rates[r.between(0, 2)]
	c.gap[dirS] = rates[r.between(1, 3)]
	c.useTS = r.pct(85)
	for d := range 2 {
		mss := uint16(1460)
		if e.v6 {
			mss = 1440
		}
		if r.pct(10) {
			mss = uint16(r.between(1200, int(mss)))
		}
		c.mss[d] = mss
		c.wscale[d] = uint8(r.between(6, 9))
		c.win[d] = uint16(r.between(250, 4000))
		c.nxt[d] = uint32(r.u64())
		c.tsBase[d] = uint32(r.u64())
		c.cwnd[d] = initCwnd
		c.maxW[d] = r.between(20, 44)
	}
	for d := range 2 {
		c.seg[d] = int(c.mss[d^1])
		if c.useTS {
			c.seg[d] -= 12
		}
	}
	synAck := t0 + c.srvDelay
	ack := synAck + c.rtt
	c.push(qpkt{at: t0, dir: dirC, flags: tcpSYN, seq: c.nxt[dirC]})
	c.push(qpkt{at: synAck, dir: dirS, flags: tcpSYN | tcpACK, seq: c.nxt[dirS], ack: c.nxt[dirC] + 1})
	c.nxt[dirC]++
	c.nxt[dirS]++
	c.push(qpkt{at: ack, dir: dirC, flags: tcpACK, seq: c.nxt[dirC], ack: c.nxt[dirS]})
	c.lastAt, c.lastDir = ack, dirC
	c.advance()
}

func (c *tcpConn) synOpts() tcpOpts {
	if c.useTS {
		return optSYNTS
	}
	return optSYNWin
}

// at returns the time of the connection's next packet.
func (c *tcpConn) at() int64 {
	t := int64(1<<63 - 1)
	if c.sending {
		t = c.next
	}
	if len(c.q) > 0 && c.q[0].at <= t {
		t = c.q[0].at
	}
	return t
}

// done reports whether the connection has sent its last packet.
func (c *tcpConn) done() bool { return !c.sending && len(c.q) == 0 && c.closing }

// step sends the next packet.
func (c *tcpConn) step() {
	if len(c.q) > 0 && (!c.sending || c.q[0].at <= c.next) {
		p := c.q[0]
		copy(c.q, c.q[1:])
		c.q = c.q[:len(c.q)-1]
		c.sendQueued(&p)
		return
	}
	c.sendData()
}

// push inserts p into the queue in time order (after packets of equal time).
func (c *tcpConn) push(p qpkt) {
	i := len(c.q)
	c.q = append(c.q, p)
	for i > 0 && c.q[i-1].at > p.at {
		c.q[i] = c.q[i-1]
		i--
	}
	c.q[i] = p
}

// react is how long side to takes to act on a packet from side from, as
// seen at the capture point.
func (c *tcpConn) react(to, from int) int64 {
	switch {
	case to == from:
		return 10_000
	case to == dirS:
		return c.srvDelay
	}
	return c.rtt
}

// ackLatency is when the receiver's ACK of a data segment is captured.
func (c *tcpConn) ackLatency(receiver int) int64 {
	if receiver == dirS {
		return c.srvDelay
	}
	return c.rtt
}

func (c *tcpConn) tsval(d int, t int64) uint32 {
	return c.tsBase[d] + uint32((t-c.t0)/1_000_000)
}

// header fills the fields every segment from d at time t shares.
func (c *tcpConn) header(h *tcpHdr, d int, t int64) {
	h.win = c.win[d]
	if c.useTS {
		h.opts = optTS
		h.tsval = c.tsval(d, t)
		h.tsecr = c.lastTS[d^1]
		c.lastTS[d] = h.tsval
	} else {
		h.opts = optNone
	}
}

// sendQueued sends a scheduled packet.
func (c *tcpConn) sendQueued(p *qpkt) {
	d := int(p.dir)
	h := tcpHdr{seq: p.seq, ack: p.ack, flags: p.flags}
	c.header(&h, d, p.at)
	if p.flags&tcpSYN != 0 {
		h.opts = c.synOpts()
		h.mss = c.mss[d]
		h.wscale = c.wscale[d]
		h.win = 64240
		if d == dirS {
			h.win = 65160
		}
		if !c.useTS {
			h.win = 64240
		}
	}
	if p.flags&tcpACK == 0 {
		h.ack = 0
	}
	b := c.g.f.tcp(&c.e, d, &h, len(p.data))
	copy(b, p.data)
	c.g.f.finish()
	c.g.writeFrame(p.at, d, false, false)
	switch {
	case p.reordered:
		c.g.truth.Impairments.Reordered++
	case len(p.data) > 0:
		c.g.truth.Impairments.Retransmitted++
	}
}

// sendData sends the next segment of the current send phase.
func (c *tcpConn) sendData() {
	g, d, now := c.g, c.dir, c.next
	full := c.seg[d]
	imp := impNone
	if in := c.app.interior(); in > int64(full) {
		imp = g.pickImpairment(c.r, c.e.v6, in > int64(2*full)+1)
	}
	h := tcpHdr{seq: c.nxt[d], ack: c.nxt[d^1], flags: tcpACK}
	c.header(&h, d, now)
	b := g.f.tcp(&c.e, d, &h, full)
	n, end := c.app.read(b)
	if n < full {
		g.f.shrink(n)
	}
	if end {
		g.f.setTCPFlags(tcpACK | tcpPSH)
	}
	c.nxt[d] += uint32(n)
	if c.port80 {
		g.truth.HTTPBytes.add(d, n)
	}
	g.f.finish()
	switch imp {
	case impLoss:
		if !c.prevLost {
			g.truth.Gaps++
		}
		g.truth.GapBytes += int64(n)
		g.truth.Impairments.Lost++
		c.app.lost()
	case impReorder:
		// Captured after the next segment; the receiver cannot acknowledge
		// it before that.
		c.heldUntil = c.nextDataTime(now) + 1
		c.push(qpkt{at: c.heldUntil, dir: int8(d), flags: tcpACK, reordered: true,
			seq: h.seq, ack: h.ack, data: append([]byte(nil), b[:n]...)})
	case impRetransmit:
		g.writeFrame(now, d, false, false)
		rto := max(200_000_000, c.rtt*3/2+c.srvDelay)
		c.push(qpkt{at: now + rto, dir: int8(d), flags: tcpACK, seq: h.seq, ack: h.ack,
			data: append([]byte(nil), b[:n]...)})
	case impDuplicate:
		g.writeFrame(now, d, false, true)
		g.truth.Impairments.Duplicated++
	case impFragment:
		g.writeFrame(now, d, true, false)
	default:
		g.writeFrame(now, d, false, false)
	}
	c.prevLost = imp == impLoss

	// The receiver acknowledges every second segment and the last one.
	c.idx++
	if c.idx%2 == 0 || end {
		lat := c.ackLatency(d ^ 1)
		delayed := end && c.idx%2 == 1
		if delayed {
			lat += delayedAckNS
		}
		c.push(qpkt{at: max(now+lat, c.heldUntil+1000), dir: int8(d ^ 1), flags: tcpACK, delayedAck: delayed,
			seq: c.nxt[d^1], ack: c.nxt[d]})
	}
	if end {
		c.sending = false
		c.lastAt, c.lastDir = now, d
		c.advance()
		return
	}
	c.next = c.nextDataTime(now)
	c.flightLeft--
	if c.flightLeft == 0 {
		c.cwnd[d] = min(2*c.cwnd[d], c.maxW[d])
		c.flightStart, c.flightLeft = c.next, c.cwnd[d]
	}
}

// nextDataTime is when the segment after the one sent at now leaves: right
// after it within a flight, or when the first ACK of the flight is back (it
// acknowledges the flight's second segment).
func (c *tcpConn) nextDataTime(now int64) int64 {
	t := now + c.gap[c.dir]
	if c.flightLeft <= 1 {
		back := c.flightStart + c.gap[c.dir] + c.rtt + c.react(c.dir, c.dir)
		if c.dir == dirC {
			back += c.srvDelay
		}
		t = max(t, back)
	}
	return t
}

// advance asks the app for the next phase and schedules it.
func (c *tcpConn) advance() {
	p := c.app.next(c)
	start := c.lastAt + c.react(p.dir, c.lastDir) + p.delay
	// Nothing new before a scheduled retransmission: it belongs to the
	// data before.
	for _, q := range c.q {
		if len(q.data) > 0 && q.at >= start {
			start = q.at + 1000
		}
	}
	c.dropAcks(p.dir, start, true)
	switch p.op {
	case opSend:
		c.sending, c.dir, c.idx, c.prevLost = true, p.dir, 0, false
		c.next, c.flightStart, c.flightLeft = start, start, c.cwnd[p.dir]
	case opClose:
		c.closing = true
		a, b := p.dir, p.dir^1
		c.push(qpkt{at: start, dir: int8(a), flags: tcpFIN | tcpACK, seq: c.nxt[a], ack: c.nxt[b]})
		c.nxt[a]++
		t := start + c.react(b, a)
		c.dropAcks(b, t, false)
		if c.r.pct(40) {
			// The peer acknowledges at once and closes a little later.
			c.push(qpkt{at: t, dir: int8(b), flags: tcpACK, seq: c.nxt[b], ack: c.nxt[a]})
			t += c.r.between64(50_000, 5_000_000)
		}
		c.push(qpkt{at: t, dir: int8(b), flags: tcpFIN | tcpACK, seq: c.nxt[b], ack: c.nxt[a]})
		c.nxt[b]++
		c.push(qpkt{at: t + c.react(a, b), dir: int8(a), flags: tcpACK, seq: c.nxt[a], ack: c.nxt[b]})
	case opReset:
		c.closing = true
		c.dropAcks(p.dir^1, start, false)
		c.push(qpkt{at: start, dir: int8(p.dir), flags: tcpRST | tcpACK, seq: c.nxt[p.dir], ack: c.nxt[p.dir^1]})
	}
}

// dropAcks removes pure ACKs of side d due after t: d's next packet at t
// carries the acknowledgement (when d sends data) or makes them stale (a FIN
// or RST). With delayedOnly, only delayed ACKs go.
func (c *tcpConn) dropAcks(d int, t int64, delayedOnly bool) {
	k := 0
	for _, q := range c.q {
		pure := q.flags == tcpACK && len(q.data) == 0
		if pure && int(q.dir) == d && q.at > t && (q.delayedAck || !delayedOnly) {
			continue
		}
		c.q[k] = q
		k++
	}
	c.q = c.q[:k]
}

package flow

import (
	"cmp"
	"math"
	"math/bits"
	"net/netip"
	"slices"
	"unsafe"

	"github.com/wirebench/wirebench/internal/capture"
)

// Engine turns decoded packets into connection events for one Handler. It
// is single-threaded: call Packet for every packet in capture order, then
// Flush once at the end of the input. An Engine holds no global state;
// several engines (for example one per core, fed by a flow hash) can run
// side by side.
type Engine struct {
	cfg   Config
	h     Handler
	ender StreamEnder // h, when it wants EndStream events

	now    int64 // highest packet timestamp seen (ns); the engine's clock
	secret hashSecret
	table  connTable
	// free heads the list of ended connections kept for reuse, linked
	// through their timer list links.
	free *Conn
	ids  uint64
	// lastTCP is the TCP connection of the latest TCP packet (nil once it
	// ends): a packet of the same connection, as in a burst of segments,
	// finds it by comparing addresses, without the key and hash of a table
	// lookup.
	lastTCP *Conn
	// lastUDP is lastTCP for UDP: a DNS reply often follows its query.
	lastUDP *Conn

	// timers holds one list per timer class; every list is sorted by
	// deadline because all its entries share one timeout and are appended
	// as the clock advances.
	timers  [numClasses]connList
	timeout [numClasses]int64
	// listed has bit k set when timers[k] may hold connections: touch
	// sets it, and firstDeadlines clears it when it finds the list empty,
	// so that it looks at the one or two lists a trace uses, not at all.
	listed uint8
	// nextDeadline is at most the earliest deadline of all timers, so
	// that Packet looks at the lists only when one may have run out:
	// pushing a timer lowers it, and expireDue raises it to the earliest.
	// It is math.MinInt64 while fragments wait or the memory counted may
	// be over budget, so that this one test also has Packet expire
	// fragments and shed connections when it must (see fragsAndBudget).
	nextDeadline int64

	bufs    bufferPool
	arena   segArena   // the nodes of every stream's buffered segments
	bufList streamList // streams holding out-of-order data, oldest first

	frag defragmenter
	// reasm is the packet handed on when fragments complete a datagram.
	reasm capture.Packet

	// connHeld is the memory counted for connections: ConnMemory plus
	// Config.ConnCost each, plus what the handler charged.
	connHeld int64

	scratch []*Conn
	stats   Stats
}

// ConnMemory is what the engine counts against Config.MaxMemory for each
// connection: the Conn, its history, and its share of the table.
const ConnMemory = int(unsafe.Sizeof(Conn{})) + MaxHistory + 48

// memory returns the memory counted against Config.MaxMemory.
func (e *Engine) memory() int64 {
	return e.connHeld + e.stats.Buffered + int64(e.frag.held)
}

// Charge counts n more bytes (fewer, when negative) against
// Config.MaxMemory for connection c: state its handler keeps for it beyond
// Config.ConnCost, such as parsers that grow. The charge is released when
// c ends. When charges take the memory over the budget, the next packet
// first evicts the connections idle longest until it fits. Call it only
// from the handler's callbacks of c, or between packets.
func (e *Engine) Charge(c *Conn, n int) {
	c.conn.charged += int64(n)
	e.connHeld += int64(n)
	e.notePeak()
}

// notePeak is called whenever the memory counted grows (but for the
// fragments', which Packet looks at while any wait).
func (e *Engine) notePeak() {
	m := e.memory()
	e.stats.PeakMemory = max(e.stats.PeakMemory, m)
	if m > e.cfg.MaxMemory {
		e.nextDeadline = math.MinInt64 // the next packet sheds
	}
}

// New returns an engine that reports to h. Zero fields of cfg take their
// defaults (see Config).
func New(cfg Config, h Handler) *Engine {
	cfg = cfg.withDefaults()
	ender, _ := h.(StreamEnder)
	e := &Engine{cfg: cfg, h: h, ender: ender, secret: newHashSecret(cfg.HashSeed)}
	e.table.init(minTableSlots)
	e.timeout = [numClasses]int64{
		classAttempt:   int64(cfg.TCPAttemptTimeout),
		classClose:     int64(cfg.TCPCloseDelay),
		classHandshake: int64(cfg.UDPInactivity),
		classTCP:       int64(cfg.TCPInactivity),
		classUDP:       int64(cfg.UDPInactivity),
		classDNS:       int64(cfg.DNSInactivity),
		classICMP:      int64(cfg.ICMPInactivity),
	}
	e.frag.init(&e.cfg, &e.bufs)
	return e
}

// Stats returns the engine's counters.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.Active = int64(e.table.n)
	s.Memory = e.memory()
	return s
}

// Packet processes one decoded packet. Packets must come in capture order;
// the engine's clock is the highest timestamp seen, and connections and
// fragments expire as it advances. The engine does not keep p or its
// slices after Packet returns.
func (e *Engine) Packet(p *capture.Packet) {
	e.stats.Packets++
	e.stats.Bytes += int64(len(p.Data))
	if p.TS > e.now {
		e.now = p.TS
	}
	// Connections whose timer ran out end first, earliest deadline
	// first, and then fragments.
	if e.now >= e.nextDeadline {
		e.expireDue()
		if e.frag.head != nil || e.memory() > e.cfg.MaxMemory {
			e.fragsAndBudget()
		}
	}
	if p.IPVersion == 0 {
		e.stats.Dropped[DropNotIP]++
		return
	}
	if p.Fragment {
		p = e.defrag(p)
		if e.frag.head != nil {
			e.nextDeadline = math.MinInt64 // the next packet expires fragments
		}
		if p == nil {
			return
		}
	}
	switch p.Proto {
	case ProtoTCP:
		// A steady segment of the latest connection, as most are, goes
		// to steadySegment from here, with little to keep across calls:
		// a connection's key and hash are only made in tcpSegment.
		c, d := lastMatch(e.lastTCP, netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort))
		flags := tcpFlags(p.TCPFlags)
		if c != nil && c.steadyFor(flags, p) {
			if len(p.Payload) == 0 {
				e.steadyAck(c, d, p, flags)
			} else {
				e.steadySegment(c, d, p, flags)
			}
			return
		}
		e.tcpSegment(p, c, d, flags)
	case ProtoUDP:
		e.udpPacket(p)
	case ProtoICMP, ProtoICMPv6:
		e.icmpPacket(p)
	default:
		e.stats.Dropped[DropProto]++
	}
}

// Flush ends every connection (EndConn with EndFlush), in creation order,
// and drops fragments still waiting for their datagram. The engine can be
// used again afterwards.
func (e *Engine) Flush() {
	e.scratch = e.table.all(e.scratch[:0])
	slices.SortFunc(e.scratch, func(x, y *Conn) int { return cmp.Compare(x.ID, y.ID) })
	for i, c := range e.scratch {
		e.endConn(c, EndFlush)
		e.scratch[i] = nil
	}
	e.frag.flush(&e.stats)
}

// fragsAndBudget is the rest of Packet's start, when the clock reached
// nextDeadline, for a trace whose fragments wait or whose memory counted
// may be over budget: fragments whose timer ran out are dropped, then
// connections are shed while the memory is over budget.
func (e *Engine) fragsAndBudget() {
	if e.frag.head != nil {
		e.frag.expire(e.now, &e.stats)
	}
	if e.memory() > e.cfg.MaxMemory {
		e.shed()
	}
	if e.frag.head != nil || e.memory() > e.cfg.MaxMemory {
		e.nextDeadline = math.MinInt64
	}
}

// shed evicts the connections idle longest until the memory counted is
// within the budget again: the handler's charges (Charge) may have grown
// past it while no new connection came to make room.
func (e *Engine) shed() {
	for e.memory() > e.cfg.MaxMemory {
		victim := e.idlest()
		if victim == nil {
			return
		}
		e.stats.MemoryEvictions++
		e.endConn(victim, EndEvicted)
	}
}

// idlest returns the connection to evict: of the connections heading the
// timer lists (each list is in order of the last packet, but for the
// attempt and close timers, whose deadlines do not move), the one whose
// last packet is oldest.
func (e *Engine) idlest() *Conn {
	return e.lowestHead(func(c *Conn) int64 { return c.conn.touched })
}

// expireDue ends the connections whose deadline has passed, in order of
// deadline (on a tie, of timer class), and sets nextDeadline. It scans
// the lists' heads for the list due first and the earliest deadline of
// the others, then ends connections from that list while they come
// before that deadline: expiring a run of one list's connections (or the
// one connection a packet's clock usually expires) costs one scan of the
// lists, not one per connection and one more to find the next deadline.
func (e *Engine) expireDue() {
	if m := e.listed; m != 0 && m&(m-1) == 0 {
		e.expireList(&e.timers[bits.TrailingZeros8(m)])
		return
	}
	for {
		k, other, otherClass := e.firstDeadlines()
		if k < 0 {
			e.nextDeadline = math.MaxInt64
			return
		}
		l := &e.timers[k]
		for c := l.head; c != nil && (c.conn.deadline < other || c.conn.deadline == other && k < otherClass); c = l.head {
			if c.conn.deadline > e.now {
				e.nextDeadline = c.conn.deadline
				return
			}
			e.endConn(c, c.expiry())
		}
		if other > e.now { // list k ran out, or its head comes after other
			e.nextDeadline = other
			return
		}
	}
}

// expireList is expireDue when only list l may hold connections, as in
// a trace of one protocol's connections: it ends them while their
// deadline has passed, with no scan of the lists.
func (e *Engine) expireList(l *connList) {
	for c := l.head; c != nil; c = l.head {
		if c.conn.deadline > e.now {
			e.nextDeadline = c.conn.deadline
			return
		}
		e.endConn(c, c.expiry())
	}
	e.nextDeadline = math.MaxInt64
}

// expiry is why c ends when its deadline has passed: closed if it was
// waiting out its close, timed out otherwise.
func (c *Conn) expiry() EndReason {
	if c.conn.class == classClose {
		return EndClosed
	}
	return EndTimeout
}

// firstDeadlines returns the timer class whose list's head has the
// earliest deadline (the lowest class of those tied; -1 when every list
// is empty), and the earliest deadline of the other lists' heads with its
// class (math.MaxInt64 when they are empty).
func (e *Engine) firstDeadlines() (k int, other int64, otherClass int) {
	k, otherClass = -1, -1
	first, other := int64(math.MaxInt64), int64(math.MaxInt64)
	for m := e.listed; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(m)
		h := e.timers[i].head
		if h == nil {
			e.listed &^= 1 << i
			continue
		}
		switch d := h.conn.deadline; {
		case k < 0 || d < first:
			if k >= 0 {
				other, otherClass = first, k
			}
			k, first = i, d
		case otherClass < 0 || d < other:
			other, otherClass = d, i
		}
	}
	return k, other, otherClass
}

// lowestHead returns the connection heading a timer list whose key is
// lowest.
func (e *Engine) lowestHead(key func(*Conn) int64) *Conn {
	var best *Conn
	for i := range e.timers {
		if h := e.timers[i].head; h != nil && (best == nil || key(h) < key(best)) {
			best = h
		}
	}
	return best
}

// lastMatch returns last, the connection of the latest packet of a
// protocol, when it is that of a packet of the protocol from src to dst,
// and the packet's direction in it.
func lastMatch(last *Conn, src, dst netip.AddrPort) (*Conn, Dir) {
	switch c := last; {
	case c == nil:
	case c.Key.Orig == src && c.Key.Resp == dst:
		return c, Orig
	case c.Key.Resp == src && c.Key.Orig == dst:
		return c, Resp
	}
	return nil, Orig
}

// dirOf returns the direction in c of packet p, which the table found
// c for, and whose source port is sp (ICMP's is made up). It is in line,
// where the table's lookup is.
func (c *Conn) dirOf(p *capture.Packet, sp uint16) Dir {
	if c.Key.Orig == netip.AddrPortFrom(p.Src, sp) {
		return Orig
	}
	return Resp
}

// newConn creates the connection of packet p, whose key is k and k's
// hash h, and reports BeginConn. Its endpoints are p's addresses with
// ports sp and dp (p's own, but for ICMP); flipped says p came from the
// responder. A connection whose timer class its key decides (UDP, ICMP)
// goes on its timer list here, as touch would put it: its first packet
// then finds it last on the list.
func (e *Engine) newConn(p *capture.Packet, k *tableKey, h uint64, sp, dp uint16, flipped bool) *Conn {
	// The memory counted once c is made, worked out once: notePeak's.
	cost := int64(ConnMemory + e.cfg.ConnCost)
	held := e.memory() + cost
	for e.table.n >= e.cfg.MaxConns || held > e.cfg.MaxMemory {
		victim := e.idlest()
		if victim == nil {
			break
		}
		if e.table.n < e.cfg.MaxConns {
			e.stats.MemoryEvictions++
		}
		e.endConn(victim, EndEvicted)
		held = e.memory() + cost
	}
	c := e.free
	if c != nil {
		e.free, c.conn.next = c.conn.next, nil
	} else {
		c = &Conn{History: make([]byte, 0, MaxHistory)}
	}
	e.ids++
	// Field by field: a Key literal is built on the stack and copied.
	proto := p.Proto
	if flipped {
		c.Key.Orig, c.Key.Resp = netip.AddrPortFrom(p.Dst, dp), netip.AddrPortFrom(p.Src, sp)
		c.addHistory('^')
	} else {
		c.Key.Orig, c.Key.Resp = netip.AddrPortFrom(p.Src, sp), netip.AddrPortFrom(p.Dst, dp)
	}
	c.Key.Proto = proto
	c.ID = e.ids
	c.Start, c.Last = p.TS, p.TS
	c.Flipped = flipped
	c.conn.key, c.conn.hash = *k, h
	if proto == ProtoTCP {
		c.conn.class, c.conn.keyClass = classNone, classNone
		c.tcp[Orig].init(c, Orig)
		c.tcp[Resp].init(c, Resp)
	} else {
		class := keyClass(proto, c.Key.Resp.Port())
		c.conn.class, c.conn.keyClass = class, class
		c.conn.touched, c.conn.deadline = e.now, e.now+e.timeout[class]
		e.timers[class].push(c)
		e.listed |= 1 << class
		e.nextDeadline = min(e.nextDeadline, c.conn.deadline)
	}
	if e.table.full() {
		e.table.grow()
	}
	e.table.insert(c, h)
	e.connHeld += cost
	c.conn.charged = cost
	e.stats.PeakMemory = max(e.stats.PeakMemory, held)
	if held > e.cfg.MaxMemory {
		e.nextDeadline = math.MinInt64 // no victim: the next packet sheds
	}
	e.stats.Connections++
	e.h.BeginConn(c)
	return c
}

// endConn reports the end of c (delivering what reassembly still holds)
// and returns it to the free list.
func (e *Engine) endConn(c *Conn, why EndReason) {
	if c.Key.Proto == ProtoTCP {
		e.finishStream(c, Orig)
		e.finishStream(c, Resp)
		c.updateTCPBytes()
	}
	c.End = why
	switch why {
	case EndClosed:
		e.stats.Closed++
	case EndTimeout:
		e.stats.Timeouts++
	case EndEvicted:
		e.stats.Evictions++
	case EndReused:
		e.stats.Reused++
	}
	e.h.EndConn(c)
	if e.lastTCP == c {
		e.lastTCP = nil
	}
	if e.lastUDP == c {
		e.lastUDP = nil
	}
	e.connHeld -= c.conn.charged
	e.table.remove(c, c.conn.hash)
	e.timers[c.conn.class].remove(c)
	// The streams buffer nothing now: finishStream delivered what a TCP
	// connection held, and other protocols buffer nothing.
	c.recycle()
	c.conn.next, e.free = e.free, c
}

// recycle zeroes c for its next connection, keeping its history's
// memory. The TCP endpoints, half of a Conn, are zeroed only after a TCP
// connection: newConn sets them up for TCP alone, so that those of a
// connection of another protocol are still zero. Of the other fields,
// those newConn sets (the key, ID, times and Flipped, and the table and
// timer bookkeeping but for the links, which leaving its timer list
// cleared) are left as they are, and so are the bookkeeping's TCP flags,
// which only a TCP connection sets.
func (c *Conn) recycle() {
	history := c.History[:0]
	if c.Key.Proto == ProtoTCP {
		*c = Conn{History: history}
		return
	}
	c.Stats = [2]DirStats{}
	c.History, c.User, c.Aux = history, nil, nil
	c.End = 0
	c.conn.histSeen, c.conn.udpChk = 0, scaled{}
}

// touch moves c to the timer list its state calls for. Deadlines of the
// attempt and close timers are fixed when they start; the inactivity timers
// restart with every packet.
func (e *Engine) touch(c *Conn) {
	c.conn.touched = e.now
	class := c.timerClass()
	if class == c.conn.class {
		switch {
		case class == classAttempt || class == classClose:
			return
		case e.timers[class].tail == c:
			// Already last (as in a burst of packets of one connection):
			// the restarted deadline keeps the list sorted where it is.
			c.conn.deadline = e.now + e.timeout[class]
			return
		}
	}
	if c.conn.class != classNone { // a new connection is on no list
		e.timers[c.conn.class].remove(c)
	}
	c.conn.class = class
	c.conn.deadline = e.now + e.timeout[class]
	e.timers[class].push(c)
	e.listed |= 1 << class
	e.nextDeadline = min(e.nextDeadline, c.conn.deadline)
}

// countPacket adds p to the per-direction counters of c.
func (c *Conn) countPacket(d Dir, p *capture.Packet) {
	s := &c.Stats[d]
	s.Packets++
	s.IPBytes += int64(p.IPLen)
}

// connState is the engine's bookkeeping of one connection.
type connState struct {
	key        tableKey
	hash       uint64 // key.hash(&engine.secret)
	class      timerClass
	keyClass   timerClass // keyClass of the key: the class of a UDP or ICMP connection
	deadline   int64
	prev, next *Conn
	touched    int64 // the engine's clock at the connection's last packet
	charged    int64 // memory counted for it against Config.MaxMemory

	histSeen  uint32 // Zeek's hist_seen: which once-only letters were added
	udpChk    scaled // UDP checksum errors ('C'/'c')
	closed    bool   // TCP: close complete, waiting out the close delay
	isPartial bool   // TCP: Zeek's is_partial
	seenFirst uint8  // TCP: Zeek's first_packet_seen (bit per direction)
	steady    bool   // TCP: see Engine.isSteady
}

type timerClass uint8

// keyClass returns the timer class of a connection of protocol proto
// whose responder's port is port, when the key alone decides it (UDP,
// ICMP), or classNone (TCP, whose class follows its state).
func keyClass(proto uint8, port uint16) timerClass {
	switch proto {
	case ProtoUDP:
		switch port {
		case 53, 137, 5353, 5355:
			return classDNS
		}
		return classUDP
	case ProtoICMP, ProtoICMPv6:
		return classICMP
	}
	return classNone
}

const (
	classNone      timerClass = iota // not on a list yet
	classAttempt                     // TCP SYN without reply
	classClose                       // TCP closed, waiting out the close delay
	classHandshake                   // TCP in handshake (Zeek uses the UDP timeout)
	classTCP
	classUDP
	classDNS // UDP to a DNS port (Zeek's dns_session_timeout)
	classICMP
	numClasses
)

func (c *Conn) timerClass() timerClass {
	if c.conn.keyClass != classNone {
		return c.conn.keyClass
	}
	// The handshake states are the first three (isHandshake): a range
	// test each, so that touch has this in line.
	o, r := c.tcp[Orig].state, c.tcp[Resp].state
	switch {
	case c.conn.closed:
		return classClose
	case o-TCPSynSent <= TCPSynAckSent-TCPSynSent && r == TCPInactive:
		return classAttempt // SYN or SYN-ACK sent, no reply
	case max(o, r) <= TCPSynAckSent:
		return classHandshake
	}
	return classTCP
}

// connList is an intrusive doubly linked list of connections.
type connList struct{ head, tail *Conn }

func (l *connList) push(c *Conn) {
	c.conn.prev, c.conn.next = l.tail, nil
	if l.tail != nil {
		l.tail.conn.next = c
	} else {
		l.head = c
	}
	l.tail = c
}

func (l *connList) remove(c *Conn) {
	if c.conn.prev != nil {
		c.conn.prev.conn.next = c.conn.next
	} else if l.head == c {
		l.head = c.conn.next
	}
	if c.conn.next != nil {
		c.conn.next.conn.prev = c.conn.prev
	} else if l.tail == c {
		l.tail = c.conn.prev
	}
	c.conn.prev, c.conn.next = nil, nil
}

// addHistory appends a history letter, up to MaxHistory.
func (c *Conn) addHistory(code byte) {
	if len(c.History) < MaxHistory {
		c.History = append(c.History, code)
	}
}

// checkHistory adds code the first time the event mask is seen (Zeek's
// Connection::CheckHistory); it reports whether it was seen before.
func (c *Conn) checkHistory(mask uint32, code byte) bool {
	if c.conn.histSeen&mask != 0 {
		return true
	}
	c.conn.histSeen |= mask
	c.addHistory(code)
	return false
}

// scaled counts an event whose history letter is added at 1, 10, 100, ...
// occurrences (Zeek's ScaledHistoryEntry).
type scaled struct{ count, threshold uint32 }

func (s *scaled) add(c *Conn, code byte) {
	if s.threshold == 0 {
		s.threshold = 1
	}
	s.count++
	if s.count != s.threshold {
		return
	}
	c.addHistory(code)
	if next := s.threshold * 10; next > s.threshold {
		s.threshold = next
	} else {
		s.count = 0
	}
}

// letter returns code for the originator and its lower case for the
// responder, as Zeek writes history.
func letter(d Dir, code byte) byte {
	if d == Resp {
		return code | 0x20
	}
	return code
}

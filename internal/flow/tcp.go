package flow

import (
	"math/bits"

	"github.com/wirebench/wirebench/internal/capture"
)

// TCPState is the state of one side of a TCP connection, as Zeek tracks it
// (TCP_ENDPOINT_* in Zeek; TCP_INACTIVE ... TCP_RESET in its scripts).
type TCPState uint8

// TCP endpoint states.
const (
	TCPInactive    TCPState = iota // nothing seen from this side
	TCPSynSent                     // SYN seen, no ack
	TCPSynAckSent                  // SYN-ACK seen, no initial SYN
	TCPPartial                     // data seen, but no SYN
	TCPEstablished                 // SYN-ACK seen (implicit for a SYN sent by the responder)
	TCPClosed                      // FIN seen
	TCPReset                       // RST seen
)

var tcpStateNames = [...]string{"TCP_INACTIVE", "TCP_SYN_SENT", "TCP_SYN_ACK_SENT", "TCP_PARTIAL", "TCP_ESTABLISHED", "TCP_CLOSED", "TCP_RESET"}

func (s TCPState) String() string {
	if int(s) < len(tcpStateNames) {
		return tcpStateNames[s]
	}
	return "TCP_UNKNOWN"
}

func isHandshake(s TCPState) bool {
	return s == TCPInactive || s == TCPSynSent || s == TCPSynAckSent
}

// TCPState returns the TCP state of direction d's sender (TCPInactive for
// other protocols).
func (c *Conn) TCPState(d Dir) TCPState { return c.tcp[d].state }

// Zeek's history masks (TCP_Endpoint::HistoryMasks); the responder's are
// shifted left by 16.
const (
	histSYN      = 0x1
	histFIN      = 0x2
	histRST      = 0x4
	histFINRST   = 0x8
	histData     = 0x10
	histACK      = 0x20
	histMultiFlg = 0x40
)

// tooLargeSeqDelta is Zeek's TOO_LARGE_SEQ_DELTA: sequence jumps beyond it
// in SYN and RST packets are not trusted.
const tooLargeSeqDelta = 1048576

// tcpEndpoint is one side of a TCP connection: Zeek's TCP_Endpoint and the
// sequence bookkeeping of its TCP analyzer, plus the reassembler of the data
// this side sends.
type tcpEndpoint struct {
	state, prevState TCPState
	dir              Dir
	didClose         bool
	doneSomething    bool // Zeek's HasDoneSomething (last_time != 0)

	startSeq           int64 // Zeek's start_seq (may lie outside 32 bits)
	lastSeq, ackSeq    uint32
	seqWraps, ackWraps uint32
	finSeq             uint64 // relative sequence number after the FIN
	finCnt, rstCnt     uint32
	eof                bool // the stream reached its FIN (see StreamEnder)

	histLastSYN, histLastFIN, histLastRST uint64
	rxmt, chk, win0, gap                  scaled

	stream stream
}

func (ep *tcpEndpoint) init(c *Conn, d Dir) {
	ep.dir = d
	ep.stream.next, ep.stream.trim = 1, 1
	ep.stream.owner, ep.stream.dir = c, d
}

func fullSeq(seq, wraps uint32) uint64 { return uint64(wraps)<<32 + uint64(seq) }

// relSeq converts seq (with its wrap count) to the 64-bit offset relative
// to the endpoint's initial sequence number (Zeek's ToRelativeSeqSpace).
func (ep *tcpEndpoint) relSeq(seq, wraps uint32) uint64 {
	return fullSeq(seq, wraps) - uint64(ep.startSeq)
}

func (ep *tcpEndpoint) setStart(seq uint32) {
	ep.startSeq = int64(seq)
	ep.ackSeq = seq
	ep.seqWraps, ep.ackWraps = 0, 0
}

func (ep *tcpEndpoint) updateLastSeq(seq uint32) {
	if seq < ep.lastSeq {
		ep.seqWraps++
	}
	ep.lastSeq = seq
}

func (ep *tcpEndpoint) updateAckSeq(seq uint32) {
	if seq < ep.ackSeq {
		ep.ackWraps++
	}
	ep.ackSeq = seq
}

// noDataAcked reports whether none of this side's data was acknowledged,
// allowing for the SYN's octet.
func (ep *tcpEndpoint) noDataAcked() bool {
	ack := fullSeq(ep.ackSeq, ep.ackWraps)
	start := uint64(ep.startSeq)
	return ack == start || ack == start+1
}

func (ep *tcpEndpoint) setState(s TCPState) {
	if s != ep.state {
		ep.prevState, ep.state = ep.state, s
	}
}

// isClean is Zeek's is_clean: established, or closed after being so.
func (ep *tcpEndpoint) isClean() bool {
	return ep.state == TCPEstablished || (ep.state == TCPClosed && ep.prevState == TCPEstablished)
}

// size is Zeek's TCP_Endpoint::Size: the sequence space this side covered,
// without the SYN and FIN octets (conn.log's orig_bytes / resp_bytes).
func (ep *tcpEndpoint) size(peer *tcpEndpoint) int64 {
	if ep.prevState == TCPSynSent && ep.state == TCPReset && peer.state == TCPInactive && !ep.noDataAcked() {
		return 0
	}
	end := fullSeq(ep.lastSeq, ep.seqWraps)
	if ack := fullSeq(ep.ackSeq, ep.ackWraps); ack > end {
		end = ack
	}
	size := int64(end) - ep.startSeq
	if size <= 0 {
		return 0
	}
	size-- // the SYN octet (assumed for partial connections)
	if ep.finCnt > 0 && size > 0 {
		size-- // the FIN octet
	}
	return size
}

func (c *Conn) updateTCPBytes() {
	c.Stats[Orig].Bytes = c.tcp[Orig].size(&c.tcp[Resp])
	c.Stats[Resp].Bytes = c.tcp[Resp].size(&c.tcp[Orig])
}

func seqDelta(a, b uint32) int32 { return int32(a - b) }

// tcpFlags are the TCP flags of a segment.
type tcpFlags uint8

func (f tcpFlags) syn() bool { return uint8(f)&capture.FlagSYN != 0 }
func (f tcpFlags) fin() bool { return uint8(f)&capture.FlagFIN != 0 }
func (f tcpFlags) rst() bool { return uint8(f)&capture.FlagRST != 0 }
func (f tcpFlags) ack() bool { return uint8(f)&capture.FlagACK != 0 }

// tcpHeaderComplete reports whether p holds a whole TCP header. A packet
// the decoder did not mark truncated had its header decoded whole; only
// truncated ones need a look at the bytes (the first touch of a packet's
// bytes is a cache miss worth avoiding).
func tcpHeaderComplete(p *capture.Packet) bool {
	b := p.IPPayload
	if len(b) < 20 {
		return false
	}
	if !p.Truncated {
		return true
	}
	off := int(b[12]>>4) * 4
	return off >= 20 && off <= len(b)
}

// tcpSegment processes a TCP segment that does not take steadySegment
// through the latest connection: Packet has matched it against that
// connection, c (nil when the segment is not of it), from direction d.
func (e *Engine) tcpSegment(p *capture.Packet, c *Conn, d Dir, flags tcpFlags) {
	if !tcpHeaderComplete(p) {
		e.stats.Dropped[DropTruncated]++
		return
	}
	var k tableKey
	var h uint64
	if c == nil {
		// setPacketKey, with its common case in line (see udpConn).
		if p.Src.Is4() && p.Dst.Is4() {
			k = packedKey(endpoint4(p.Src, p.SrcPort), endpoint4(p.Dst, p.DstPort), ProtoTCP, false)
			h = k.packedHash(&e.secret)
		} else {
			h = setPacketKey(&k, p, ProtoTCP, &e.secret)
		}
		if c = e.table.get(&k, h); c != nil {
			d = c.dirOf(p, p.SrcPort)
			if c.steadyFor(flags, p) {
				e.lastTCP = c
				if len(p.Payload) == 0 {
					e.steadyAck(c, d, p, flags)
				} else {
					e.steadySegment(c, d, p, flags)
				}
				return
			}
		}
	}
	if c != nil && c.isReuse(flags, p.Seq) {
		k, h = c.conn.key, c.conn.hash // the same 5-tuple's, for the new connection
		e.endConn(c, EndReused)
		c = nil
	}
	opened := c == nil
	if c == nil {
		flip := false
		switch {
		case flags.syn() && !flags.ack():
		case flags.syn():
			flip = true // a SYN-ACK: its receiver sent the SYN
		default:
			flip = e.likelyServer(ProtoTCP, p.SrcPort) &&
				(!e.likelyServer(ProtoTCP, p.DstPort) || p.SrcPort < p.DstPort)
		}
		if flip {
			c, d = e.newConn(p, &k, h, p.SrcPort, p.DstPort, true), Resp
		} else {
			c, d = e.newConn(p, &k, h, p.SrcPort, p.DstPort, false), Orig
		}
	}
	// As in Zeek, a packet with a bad checksum still makes its connection
	// but changes nothing else in it.
	if e.cfg.VerifyChecksums && !checksumOK(p) {
		e.badChecksum(c, d, &c.tcp[d].chk)
		e.touch(c)
		return
	}
	if p.Truncated {
		e.stats.TruncatedPayload++
	}
	c.countPacket(d, p)
	c.Stats[d].TCPFlags |= p.TCPFlags
	// The handshake's SYN and SYN-ACK, each side's first FIN and the acks
	// around the close, without payload, as most are, take paths of their
	// own.
	switch handshake := uint8(flags) & (controlFlags | capture.FlagACK); {
	case len(p.Payload) != 0 || p.Window == 0:
		e.processTCP(c, d, p, flags)
	case opened && handshake == capture.FlagSYN:
		c.openingSYN(p)
	case d == Resp && handshake == capture.FlagSYN|capture.FlagACK && c.answersSYN():
		e.answeringSYN(c, p)
	case handshake&controlFlags == capture.FlagFIN && c.closes(d):
		e.closingFIN(c, d, p, flags)
	case handshake&controlFlags == 0 && c.takesBareAck(d):
		e.bareAck(c, d, p, flags)
	default:
		e.processTCP(c, d, p, flags)
	}
	e.touch(c)
	e.lastTCP = c
}

// openingSYN is processTCP for the segment that made c, when it is a bare
// SYN (no ACK, FIN or RST) without payload and with an open window from
// the originator, as most connections start: its steps come to setting
// up the originator's sequence space and state and the history's 'S'
// (TestOpeningSYN holds it to processTCP).
func (c *Conn) openingSYN(p *capture.Packet) {
	ep := &c.tcp[Orig]
	c.conn.seenFirst, c.conn.isPartial = 1, false // setPartialStatus
	ep.setStart(p.Seq)                            // initSeq
	ep.lastSeq = p.Seq + 1
	c.conn.histSeen |= histSYN // updateHistory
	c.addHistory('S')
	ep.histLastSYN = 0
	c.Last = p.TS
	ep.doneSomething = true
	ep.prevState, ep.state = TCPInactive, TCPSynSent // inactiveState
	c.conn.steady = false
}

// answersSYN reports whether a SYN-ACK from c's responder is the answer
// to its originator's SYN: the originator sent its SYN, and no FIN, and
// the responder's side is not yet set up.
func (c *Conn) answersSYN() bool {
	o := &c.tcp[Orig]
	return o.state == TCPSynSent && o.finCnt == 0 && c.tcp[Resp].state == TCPInactive
}

// answeringSYN is processTCP for a SYN-ACK (no FIN or RST) without
// payload and with an open window from c's responder, when it answersSYN,
// as the second segment of most connections does: its steps come to
// setting up the responder's sequence space, the history's 'h', the ack
// of the originator's SYN and both sides' move to TCPEstablished
// (TestAnsweringSYN holds it to processTCP).
func (e *Engine) answeringSYN(c *Conn, p *capture.Packet) {
	ep, peer := &c.tcp[Resp], &c.tcp[Orig]
	c.conn.seenFirst |= 1 << Resp // setPartialStatus: a SYN keeps isPartial
	ep.setStart(p.Seq)            // initSeq
	ep.lastSeq = p.Seq + 1
	if c.checkHistory(histSYN<<16, 'h') && ep.histLastSYN != 0 { // updateHistory
		c.addHistory('h')
	}
	ep.histLastSYN = 0
	c.Last = p.TS
	relAck, under := peer.relativeSeq(p.Ack, peer.ackSeq, peer.ackWraps)
	if under {
		relAck = 0
	} else {
		peer.advanceAck(p.Ack)
	}
	ep.doneSomething = true
	peer.setState(TCPEstablished) // inactiveState
	ep.setState(TCPEstablished)
	e.ackReceived(c, Orig, relAck)
	c.conn.steady = e.isSteady(c)
}

// closes reports whether a FIN from side d of c is the side's first
// close: the side is open (see isSteady) and was seen, and its peer is
// not inactive.
func (c *Conn) closes(d Dir) bool {
	ep, peer := c.ends(d)
	return ep.open() && c.conn.seenFirst&(1<<d) != 0 && peer.state != TCPInactive
}

// closingFIN is processTCP for a FIN (no SYN or RST) without payload and
// with an open window from side d of c, when it closes the side, as most
// FINs do: its steps come to the history's 'F', the FIN's place in the
// side's sequence space, the ack, the side's move to TCPClosed and its
// close, and the ends of the streams the FIN or the ack reach
// (TestClosingFIN holds it to processTCP).
func (e *Engine) closingFIN(c *Conn, d Dir, p *capture.Packet, flags tcpFlags) {
	ep, peer := c.ends(d)
	relSeq, _ := ep.relativeSeq(p.Seq, ep.lastSeq, ep.seqWraps)
	if c.checkHistory(histFIN<<(16*uint32(d)), letter(d, 'F')) && relSeq != ep.histLastFIN { // updateHistory
		c.addHistory(letter(d, 'F'))
	}
	ep.histLastFIN = relSeq
	c.Last = p.TS // the side did not close
	ep.finCnt++
	ep.finSeq = relSeq + 1
	var relAck uint64
	if flags.ack() {
		var under bool
		if relAck, under = peer.relativeSeq(p.Ack, peer.ackSeq, peer.ackWraps); under {
			relAck = 0
		} else {
			peer.advanceAck(p.Ack)
		}
	}
	// updateLast: a FIN after only the SYN is trusted.
	if end := p.Seq + 1; ep.lastSeq == uint32(ep.startSeq)+1 || seqDelta(end, ep.lastSeq) > 0 {
		ep.updateLastSeq(end)
	}
	ep.doneSomething = true
	ep.setState(TCPClosed) // updateStateMachine
	if peer.state == TCPReset && peer.prevState == TCPClosed {
		peer.setState(TCPClosed) // the peer's FIN and RST: a normal close
	}
	if flags.ack() {
		e.ackReceived(c, d^1, relAck)
	}
	c.closeSide(d)
	if e.ender != nil {
		if ep.reachedFIN() {
			e.endStream(c, d)
		}
		if peer.reachedFIN() {
			e.endStream(c, d^1)
		}
	}
	c.conn.steady = false // the side sent a FIN
}

// takesBareAck reports whether a segment without SYN, FIN or RST and
// without payload from side d of c, a bare ack, takes bareAck: the side
// is established or partial, or closed, and was seen, and its peer is not
// inactive.
func (c *Conn) takesBareAck(d Dir) bool {
	ep, peer := c.ends(d)
	return ep.state-TCPPartial <= TCPClosed-TCPPartial && c.conn.seenFirst&(1<<d) != 0 && peer.state != TCPInactive
}

// bareAck is processTCP for a bare ack (see takesBareAck) with an open
// window of a connection that is not steady, as the acks around its
// close are. For a side that closed, processTCP's control steps come to
// those of one that did not; for any, the steps come to the history's
// 'A', the ack, the side's last sequence number, and the ends of the
// streams the ack reaches (TestBareAck holds it to processTCP).
func (e *Engine) bareAck(c *Conn, d Dir, p *capture.Packet, flags tcpFlags) {
	ep, peer := c.ends(d)
	if !c.tcp[Orig].didClose || !c.tcp[Resp].didClose {
		c.Last = p.TS
	}
	var relAck uint64
	if flags.ack() {
		c.firstLetter(d, histACK, 'A')
		var under bool
		if relAck, under = peer.relativeSeq(p.Ack, peer.ackSeq, peer.ackWraps); under {
			relAck = 0
		} else {
			peer.advanceAck(p.Ack)
		}
	}
	ep.advanceLast(p.Seq)
	ep.doneSomething = true
	if flags.ack() {
		e.ackReceived(c, d^1, relAck)
	}
	if e.ender != nil && (ep.finCnt != 0 || peer.finCnt != 0) {
		if ep.reachedFIN() {
			e.endStream(c, d)
		}
		if peer.reachedFIN() {
			e.endStream(c, d^1)
		}
	}
	c.conn.steady = e.isSteady(c)
}

// controlFlags are the flags that take a segment through processTCP's
// control steps.
const controlFlags = capture.FlagSYN | capture.FlagFIN | capture.FlagRST

// steadySegment is tcpSegment, processTCP and touch for a segment without
// SYN, FIN or RST and with an open window, of a steady connection (see
// isSteady), as most segments are: of processTCP's steps it takes only
// those such a segment can need, and its timer class stays classTCP
// (TestSteadySegments holds it to the general path). c is the latest TCP
// connection already, and p carries payload (steadyAck takes the others).
func (e *Engine) steadySegment(c *Conn, d Dir, p *capture.Packet, flags tcpFlags) {
	ep, peer := c.ends(d)
	payload := p.Payload
	c.countPacket(d, p)
	c.Stats[d].TCPFlags |= p.TCPFlags
	relSeq, underflow := ep.relativeSeq(p.Seq, ep.lastSeq, ep.seqWraps)
	c.firstLetter(d, histData, 'D')
	c.Last = p.TS
	var relAck uint64
	if flags.ack() {
		var under bool
		if relAck, under = peer.relativeSeq(p.Ack, peer.ackSeq, peer.ackWraps); under {
			relAck = 0
		} else {
			peer.advanceAck(p.Ack)
		}
	}
	if !ep.advanceLast(p.Seq + uint32(len(payload))) {
		ep.rxmt.add(c, letter(d, 'T')) // updateLast's retransmission
	}
	ep.doneSomething = true
	// ackReceived, for a peer that sent no FIN: ackAdvance finds nothing
	// in an ack below the delivered data, and only trims at one of all
	// of it.
	if s := &peer.stream; relAck > s.trim && relAck >= s.next {
		if relAck == s.next {
			s.trim = relAck
		} else {
			e.ackAdvance(c, d^1, relAck)
		}
	}
	switch {
	case underflow:
	case ep.continues(relSeq):
		ep.stream.next += uint64(len(payload)) // deliver's
		e.h.Data(c, d, payload)
	default:
		e.dataSent(c, d, relSeq, payload)
	}
	// touch, for a connection that stays in classTCP.
	if c.conn.class == classTCP && e.timers[classTCP].tail == c {
		c.conn.touched, c.conn.deadline = e.now, e.now+e.timeout[classTCP]
	} else {
		e.touch(c)
	}
}

// steadyAck is steadySegment for a segment without payload, two in five
// of them, nearly all bare acks: with no sequence number to work out, no
// retransmission to count and nothing to deliver, it takes the steps left
// with fewer tests and fewer values to keep.
func (e *Engine) steadyAck(c *Conn, d Dir, p *capture.Packet, flags tcpFlags) {
	ep, peer := c.ends(d)
	c.countPacket(d, p)
	c.Stats[d].TCPFlags |= p.TCPFlags
	c.Last = p.TS
	var relAck uint64
	if flags.ack() {
		c.firstLetter(d, histACK, 'A')
		var under bool
		if relAck, under = peer.relativeSeq(p.Ack, peer.ackSeq, peer.ackWraps); under {
			relAck = 0
		} else {
			peer.advanceAck(p.Ack)
		}
	}
	ep.advanceLast(p.Seq)
	ep.doneSomething = true
	if s := &peer.stream; relAck > s.trim && relAck >= s.next { // see steadySegment
		if relAck == s.next {
			s.trim = relAck
		} else {
			e.ackAdvance(c, d^1, relAck)
		}
	}
	if c.conn.class == classTCP && e.timers[classTCP].tail == c {
		c.conn.touched, c.conn.deadline = e.now, e.now+e.timeout[classTCP]
	} else {
		e.touch(c)
	}
}

// ends returns the TCP endpoints of direction d and of its peer. Picking
// them, rather than indexing by d and d^1, spares a segment two bounds
// checks and two multiplications.
func (c *Conn) ends(d Dir) (ep, peer *tcpEndpoint) {
	ep, peer = &c.tcp[Orig], &c.tcp[Resp]
	if d == Resp {
		ep, peer = peer, ep
	}
	return ep, peer
}

// steadyFor reports whether segment p of c, with flags, takes
// steadySegment: c is steady, and p has no SYN, FIN or RST, an open
// window and all its payload (and so its whole header, see
// tcpHeaderComplete).
func (c *Conn) steadyFor(flags tcpFlags, p *capture.Packet) bool {
	return c.conn.steady && uint8(flags)&controlFlags == 0 && p.Window != 0 && !p.Truncated && len(p.IPPayload) >= 20
}

// isSteady reports whether c's segments without SYN, FIN or RST may take
// steadySegment: both sides are established (or partial) and have sent
// no FIN, neither closed, both were seen, and checksums are not verified.
// Only processTCP's control steps change any of this, and processTCP
// sets Conn.conn.steady from it after every segment it takes.
func (e *Engine) isSteady(c *Conn) bool {
	return c.tcp[Orig].open() && c.tcp[Resp].open() && c.conn.seenFirst == 3 && !c.conn.closed && !e.cfg.VerifyChecksums
}

// open reports whether the side is established (or partial), sent no FIN
// and did not close.
func (ep *tcpEndpoint) open() bool {
	return ep.state-TCPPartial <= TCPEstablished-TCPPartial && ep.finCnt == 0 && !ep.didClose
}

func (e *Engine) likelyServer(proto uint8, port uint16) bool {
	return e.cfg.ServerPorts.Has(proto, port)
}

// isReuse reports whether a SYN starts a new connection on the 5-tuple of
// c (Zeek's TCPSessionAdapter::IsReuse).
func (c *Conn) isReuse(flags tcpFlags, seq uint32) bool {
	if !flags.syn() {
		return false
	}
	o := &c.tcp[Orig]
	if flags.ack() {
		if o.state != TCPInactive {
			return false // not a half connection
		}
		o = &c.tcp[Resp]
	}
	if !c.tcp[Orig].didClose && !c.tcp[Resp].didClose && !c.conn.closed {
		return seq != uint32(o.startSeq)
	}
	return true
}

// processTCP is Zeek's TCPSessionAdapter::Process for one segment from
// direction d.
func (e *Engine) processTCP(c *Conn, d Dir, p *capture.Packet, flags tcpFlags) {
	ep, peer := c.ends(d)
	payload := p.Payload
	n := len(payload)
	baseSeq, ackSeq := p.Seq, p.Ack

	// Most segments carry no SYN, FIN or RST and come from a side past its
	// handshake. For them initSeq and updateStateMachine change nothing,
	// and updateHistory and updateLast reduce to dataHistory and
	// advanceLast: skipping the calls saves a good part of the
	// per-packet cost (TestDataSegmentSteps checks the equivalence).
	control := uint8(flags)&controlFlags != 0 ||
		(ep.state != TCPEstablished && ep.state != TCPPartial)

	c.setPartialStatus(d, flags)
	segLen := n
	if control {
		if flags.syn() {
			segLen++
		}
		if flags.fin() {
			segLen++
		}
		if flags.rst() {
			segLen -= n // data on a RST is not part of the stream
		}
	}
	seqEnd := baseSeq + uint32(segLen)

	if control {
		ep.initSeq(flags, baseSeq, seqEnd)
	}
	relSeq, underflow := ep.relativeSeq(baseSeq, ep.lastSeq, ep.seqWraps)
	if control {
		c.updateHistory(d, flags, relSeq, n)
	} else {
		c.dataHistory(d, flags, n)
	}
	if p.Window == 0 && !flags.rst() && peer.state != TCPClosed && ep.state != TCPReset {
		ep.win0.add(c, letter(d, 'W'))
	}
	if !c.tcp[Orig].didClose || !c.tcp[Resp].didClose {
		c.Last = p.TS
	}
	if control {
		if flags.fin() {
			ep.finCnt++
			ep.finSeq = relSeq + uint64(segLen)
		}
		if flags.rst() {
			ep.rstCnt++
		}
	}

	var relAck uint64
	if flags.ack() {
		if peer.state == TCPInactive {
			relAck = 1
			// Number the peer's sequence space as if its SYN was seen.
			peer.setStart(ackSeq - 1)
			peer.lastSeq = ackSeq - 1
		} else {
			var ackUnder bool
			relAck, ackUnder = peer.relativeSeq(ackSeq, peer.ackSeq, peer.ackWraps)
			switch {
			case ackUnder:
				relAck = 0
			case !flags.rst(): // acks in RSTs are not trusted
				peer.advanceAck(ackSeq)
			}
		}
	}

	if control {
		ep.updateLast(c, flags, seqEnd, n)
	} else if !ep.advanceLast(seqEnd) && n > 0 {
		ep.rxmt.add(c, letter(d, 'T')) // updateLast's retransmission
	}
	ep.doneSomething = true

	doClose := control && e.updateStateMachine(c, d, flags, n)

	if flags.ack() {
		e.ackReceived(c, d^1, relAck)
	}

	if n > 0 && !flags.rst() && !underflow {
		dataSeq := relSeq
		if flags.syn() {
			dataSeq++
		}
		e.dataSent(c, d, dataSeq, payload)
	}

	if doClose {
		c.closeSide(d)
	}
	if e.ender != nil && (ep.finCnt != 0 || peer.finCnt != 0) { // no end without a FIN
		if ep.reachedFIN() {
			e.endStream(c, d)
		}
		if peer.reachedFIN() { // an ack may have moved the peer's stream to its FIN
			e.endStream(c, d^1)
		}
	}
	c.conn.steady = e.isSteady(c)
}

// advanceAck moves the side's highest ack to ack, when it is after it
// and no doubtful zero ack.
func (ep *tcpEndpoint) advanceAck(ack uint32) {
	if delta := seqDelta(ack, ep.ackSeq); !(ack == 0 && delta > tooLargeSeqDelta) && delta > 0 {
		ep.updateAckSeq(ack)
	}
}

// reachedFIN reports whether this side's stream has reached its FIN and
// the handler was not told yet. It is in line: most segments after a FIN
// find it told already, or the stream short of it.
func (ep *tcpEndpoint) reachedFIN() bool {
	return !ep.eof && ep.finCnt != 0 && ep.finSeq != 0 && ep.stream.next+1 >= ep.finSeq && ep.stream.segs.empty()
}

// endStream tells the handler that side d's stream has reached its FIN.
func (e *Engine) endStream(c *Conn, d Dir) {
	c.tcp[d].eof = true
	e.ender.EndStream(c, d)
}

// setPartialStatus is Zeek's SetPartialStatus: a connection is partial
// when the originator's first packet is not a bare SYN, or the responder's
// first packet carries no SYN.
func (c *Conn) setPartialStatus(d Dir, flags tcpFlags) {
	bit := uint8(1) << d
	if c.conn.seenFirst&bit == 0 {
		if d == Orig {
			c.conn.isPartial = !flags.syn() || flags.ack()
		} else if !c.conn.isPartial {
			c.conn.isPartial = !flags.syn()
		}
		c.conn.seenFirst |= bit
	}
}

// initSeq is Zeek's init_endpoint: it sets the sequence origin of a side
// the first time it is seen, or again when a SYN restarts it.
func (ep *tcpEndpoint) initSeq(flags tcpFlags, first, last uint32) {
	restart := func() {
		ep.setStart(first)
		ep.lastSeq = last
	}
	switch ep.state {
	case TCPInactive:
		if flags.syn() {
			ep.setStart(first)
		} else {
			// A partial connection: number as though a SYN was seen, and
			// make sure the first packet does not count as a retransmission.
			ep.setStart(first - 1)
			last = first
		}
		ep.lastSeq = last
	case TCPSynSent, TCPSynAckSent:
		if flags.syn() && first != uint32(ep.startSeq) {
			restart()
		}
	case TCPEstablished, TCPPartial:
		if flags.syn() {
			restart()
		}
	case TCPReset:
		if flags.syn() && ep.prevState == TCPInactive {
			restart()
		}
	}
}

// relativeSeq is Zeek's get_relative_seq: seq relative to the side's
// initial sequence number, with wraps counted against last. It reports an
// underflow when seq lies before the initial sequence number. Every
// segment asks it twice, for its sequence number and its ack: it is kept
// small enough to be inlined.
func (ep *tcpEndpoint) relativeSeq(seq, last, wraps uint32) (uint64, bool) {
	// seq lies more than 2 GB after last in the same 32-bit space: it is
	// in the previous one; more than 2 GB before: in the next.
	switch diff := int64(seq) - int64(last); {
	case diff >= 1<<31 && wraps > 0:
		wraps--
	case diff < -1<<31:
		wraps++
	}
	if wraps == 0 {
		delta := seqDelta(seq, uint32(ep.startSeq))
		return uint64(int64(delta)), delta < 0
	}
	return ep.relSeq(seq, wraps), false
}

// updateLast is Zeek's update_last_seq; it counts retransmissions.
func (ep *tcpEndpoint) updateLast(c *Conn, flags tcpFlags, last uint32, n int) {
	delta := seqDelta(last, ep.lastSeq)
	switch {
	case (flags.syn() || flags.rst()) && (delta > tooLargeSeqDelta || delta < -tooLargeSeqDelta):
		// Not trusted.
	case flags.fin() && ep.lastSeq == uint32(ep.startSeq)+1:
		// Only the SYN and now the FIN seen: trust the FIN (> 2 GB
		// connections).
		ep.updateLastSeq(last)
	case ep.state == TCPReset:
		// Sequence numbers after a RST are not trusted.
	case delta > 0:
		ep.updateLastSeq(last)
	case n > 0:
		ep.rxmt.add(c, letter(ep.dir, 'T'))
	}
}

// advanceLast is updateLast's step for a segment without SYN, FIN or RST
// from a side that did not reset, when the segment ends after the last
// one: it reports whether it did. Otherwise, a segment with data is a
// retransmission.
func (ep *tcpEndpoint) advanceLast(last uint32) bool {
	if seqDelta(last, ep.lastSeq) <= 0 {
		return false
	}
	ep.updateLastSeq(last)
	return true
}

// updateHistory is Zeek's update_history.
func (c *Conn) updateHistory(d Dir, flags tcpFlags, relSeq uint64, n int) {
	ep := &c.tcp[d]
	shift := uint32(0)
	if d == Resp {
		shift = 16
	}
	check := func(mask uint32, code byte) bool {
		return c.checkHistory(mask<<shift, letter(d, code))
	}
	switch {
	case bits.OnesCount8(uint8(flags)&(capture.FlagSYN|capture.FlagFIN|capture.FlagRST)) > 1:
		if flags.fin() && flags.rst() {
			check(histFINRST, 'I')
		} else {
			check(histMultiFlg, 'Q')
		}
	case flags.syn():
		code := byte('S')
		if flags.ack() {
			code = 'H'
		}
		if check(histSYN, code) && relSeq != ep.histLastSYN {
			c.addHistory(letter(d, code))
		}
		ep.histLastSYN = relSeq
	case flags.fin():
		// A FIN's sequence number is after the packet's data.
		if check(histFIN, 'F') && relSeq+uint64(n) != ep.histLastFIN {
			c.addHistory(letter(d, 'F'))
		}
		ep.histLastFIN = relSeq + uint64(n)
	case flags.rst():
		if check(histRST, 'R') && relSeq != ep.histLastRST {
			c.addHistory(letter(d, 'R'))
		}
		ep.histLastRST = relSeq
	case n > 0:
		check(histData, 'D')
	case flags.ack():
		check(histACK, 'A')
	}
}

// dataHistory is updateHistory for a segment without SYN, FIN or RST: the
// letter of its data or of a bare ack, the first time. Nearly every
// segment finds its letter there already; it is small enough to be in
// line, so that those, and the few that add it, make no call.
func (c *Conn) dataHistory(d Dir, flags tcpFlags, n int) {
	mask, code := uint32(histACK), byte('A')
	if n > 0 {
		mask, code = histData, 'D'
	} else if !flags.ack() {
		return
	}
	c.firstLetter(d, mask, code)
}

// firstLetter adds the letter code of direction d, whose history mask
// is mask, the first time: checkHistory, in line.
func (c *Conn) firstLetter(d Dir, mask uint32, code byte) {
	if mask <<= 16 * uint32(d); c.conn.histSeen&mask == 0 {
		c.conn.histSeen |= mask
		c.addHistory(letter(d, code))
	}
}

// updateStateMachine is Zeek's UpdateStateMachine; it reports whether the
// sending side closed.
func (e *Engine) updateStateMachine(c *Conn, d Dir, flags tcpFlags, n int) bool {
	ep, peer := c.ends(d)
	doClose := false
	switch ep.state {
	case TCPInactive:
		doClose = c.inactiveState(d, flags, n)
	case TCPSynSent, TCPSynAckSent:
		if flags.fin() {
			ep.setState(TCPClosed)
			doClose = true
		}
		if flags.rst() {
			ep.setState(TCPReset)
			doClose = true
		}
	case TCPEstablished, TCPPartial:
		if flags.syn() && ep.state == TCPPartial && peer.state == TCPInactive && !flags.ack() {
			ep.setState(TCPSynSent) // a SYN after a partial start
		}
		if flags.fin() && !flags.rst() {
			ep.setState(TCPClosed)
			if peer.state == TCPReset && peer.prevState == TCPClosed {
				// The peer sent a FIN and then a RST: a normal close.
				peer.setState(TCPClosed)
			}
			doClose = true
		}
		if flags.rst() {
			ep.setState(TCPReset)
			doClose = true
		}
	case TCPClosed:
		if flags.rst() && peer.state != TCPClosed {
			ep.setState(TCPReset)
			if !ep.didClose {
				doClose = true // a RST after a FIN
			}
		}
	case TCPReset:
	}
	return doClose
}

// inactiveState is Zeek's UpdateInactiveState for the first packet of a
// side.
func (c *Conn) inactiveState(d Dir, flags tcpFlags, n int) bool {
	ep, peer := c.ends(d)
	doClose := false
	if flags.syn() {
		if d == Orig {
			if flags.ack() {
				ep.setState(TCPSynAckSent)
			} else {
				ep.setState(TCPSynSent)
			}
		} else {
			if peer.state == TCPSynSent {
				peer.setState(TCPEstablished)
			}
			ep.setState(TCPEstablished)
		}
	}
	if flags.fin() {
		ep.setState(TCPClosed)
		doClose = true
	}
	if flags.rst() {
		ep.setState(TCPReset)
		doClose = true
	}
	if ep.state == TCPInactive { // no control flags changed the state
		switch {
		case d == Resp && n == 0 && c.tcp[Orig].state == TCPSynSent:
			// An ack of the SYN before the SYN-ACK: not a partial connection.
		case flags.ack() && peer.state == TCPEstablished:
			// The originator's SYN was missed but its ACK of the SYN-ACK seen.
			ep.setState(TCPEstablished)
			c.conn.isPartial = false
		default:
			ep.setState(TCPPartial)
		}
	}
	return doClose
}

// closeSide records that side d closed (Zeek's ConnectionClosed). The
// connection is closed when the side reset, its peer closed too, or its
// peer never spoke; it then stays in the table for the close delay.
func (c *Conn) closeSide(d Dir) {
	ep, peer := c.ends(d)
	if ep.didClose {
		return
	}
	ep.didClose = true
	if ep.state == TCPReset || peer.didClose || peer.state == TCPInactive {
		c.conn.closed = true
	}
}

// badChecksum counts a packet dropped for its checksum and records Zeek's
// scaled 'C' history letter on its connection.
func (e *Engine) badChecksum(c *Conn, d Dir, count *scaled) {
	e.stats.ChecksumErrors++
	e.stats.Dropped[DropChecksum]++
	if count != nil {
		count.add(c, letter(d, 'C'))
	}
}

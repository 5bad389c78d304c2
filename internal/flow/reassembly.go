package flow

import "math/bits"

// stream reassembles the bytes one side of a TCP connection sends, after
// Zeek's TCP_Reassembler and Reassembler: sequence numbers are 64-bit
// offsets relative to the side's initial sequence number (the first data
// byte is 1), the first bytes seen for an offset win, in-order data is
// delivered straight from the packet, and out-of-order data is copied into
// pooled buffers until the hole before it is filled or known to be lost.
type stream struct {
	next uint64 // offset of the next byte to deliver (Zeek's last_reassem_seq)
	trim uint64 // offsets below were acknowledged (Zeek's trim_seq)

	segs     segTree // buffered data above next: sorted, disjoint
	buffered int     // bytes of memory segs holds (see segment.held)

	owner *Conn
	dir   Dir

	listed     bool // on the engine's list of buffering streams
	prev, succ *stream
}

// segment is one buffered piece of out-of-order data; data is a pooled
// buffer.
type segment struct {
	seq  uint64
	data []byte
}

func (s segment) end() uint64 { return s.seq + uint64(len(s.data)) }

// held is the memory the segment holds: its buffer's capacity and its node.
// The caps count it rather than the payload bytes, so that many tiny
// segments cannot hold far more memory than the caps say.
func (s segment) held() int { return cap(s.data) + segNodeSize }

// gapKind says how a hole was found; it decides whether Zeek would count it
// in missed_bytes.
type gapKind uint8

const (
	gapAcked  gapKind = iota // the peer acknowledged data never seen
	gapForced                // a buffer cap forced the hole
	gapAtEnd                 // the connection ended with the hole open
)

// relAck returns how far the peer acknowledged this side's data.
func (ep *tcpEndpoint) relAck() uint64 {
	if r := int64(fullSeq(ep.ackSeq, ep.ackWraps)) - ep.startSeq; r > 0 {
		return uint64(r)
	}
	return 0
}

// continues reports whether data starting at relative offset seq
// continues this side's stream with nothing buffered and none of it
// below what the peer acknowledged: nearly all data, which dataSent
// delivers as it is.
func (ep *tcpEndpoint) continues(seq uint64) bool {
	s := &ep.stream
	return seq == s.next && s.segs.empty() && s.trim <= seq && ep.relAck() <= seq
}

// dataSent takes the payload of a segment from side d starting at relative
// offset seq (Zeek's TCP_Reassembler::DataSent and Reassembler::NewBlock).
func (e *Engine) dataSent(c *Conn, d Dir, seq uint64, data []byte) {
	ep := &c.tcp[d]
	s := &ep.stream
	floor := max(ep.relAck(), s.trim, s.next)
	end := seq + uint64(len(data))
	if end <= floor {
		e.stats.Retransmissions++
		return
	}
	if seq < floor {
		data = data[floor-seq:]
		seq = floor
	}
	if s.segs.empty() {
		if seq == s.next {
			e.deliver(c, d, data) // as nearly all data: in order, with nothing to drain
			return
		}
	} else {
		e.checkOverlap(s, seq, data)
	}
	if seq == s.next {
		e.deliverInOrder(c, d, seq, data)
		return
	}
	e.bufferSegment(c, d, seq, data)
}

// deliverInOrder delivers data starting at s.next, letting buffered bytes
// win where they overlap it.
func (e *Engine) deliverInOrder(c *Conn, d Dir, seq uint64, data []byte) {
	s := &c.tcp[d].stream
	for {
		if seq < s.next {
			if seq+uint64(len(data)) <= s.next {
				return
			}
			data = data[s.next-seq:]
			seq = s.next
		}
		if len(data) == 0 {
			return
		}
		if s.segs.empty() || e.arena.first(&s.segs).seq >= seq+uint64(len(data)) {
			e.deliver(c, d, data)
			e.drain(c, d) // the data may have filled the hole before a buffered segment
			return
		}
		if cut := e.arena.first(&s.segs).seq - seq; cut > 0 {
			e.deliver(c, d, data[:cut])
			data = data[cut:]
			seq += cut
		}
		e.drain(c, d)
	}
}

func (e *Engine) deliver(c *Conn, d Dir, b []byte) {
	if len(b) == 0 {
		return
	}
	c.tcp[d].stream.next += uint64(len(b))
	e.h.Data(c, d, b)
}

// drain delivers buffered segments that continue the stream at s.next.
func (e *Engine) drain(c *Conn, d Dir) {
	s := &c.tcp[d].stream
	for !s.segs.empty() && e.arena.first(&s.segs).seq <= s.next {
		// Take the segment out before delivering it, so that the stream
		// and the counters are consistent while the handler runs.
		sg := e.arena.popFirst(&s.segs)
		e.unbuffer(s, sg.held())
		if sg.end() > s.next {
			e.deliver(c, d, sg.data[s.next-sg.seq:])
		}
		e.bufs.put(sg.data)
	}
}

func (e *Engine) unbuffer(s *stream, n int) {
	s.buffered -= n
	e.stats.Buffered -= int64(n)
	if s.segs.empty() && s.listed {
		e.bufList.remove(s)
	}
}

// checkOverlap counts buffered segments whose bytes differ from the new
// data overlapping them (Zeek's rexmit_inconsistency).
func (e *Engine) checkOverlap(s *stream, seq uint64, data []byte) {
	end := seq + uint64(len(data))
	for sg := e.arena.endingAfter(&s.segs, seq); sg != nil && sg.seq < end; sg = e.arena.endingAfter(&s.segs, sg.end()) {
		lo, hi := max(seq, sg.seq), min(end, sg.end())
		a := sg.data[lo-sg.seq : hi-sg.seq]
		b := data[lo-seq : hi-seq]
		if string(a) != string(b) {
			e.stats.Inconsistent++
		}
	}
}

// bufferSegment keeps the parts of data (above s.next) that no buffered
// segment covers yet, forcing holes when the caps would be exceeded.
func (e *Engine) bufferSegment(c *Conn, d Dir, seq uint64, data []byte) {
	s := &c.tcp[d].stream
	need := e.bufs.capFor(len(data)) + segNodeSize // what the segment will hold
	for s.buffered+need > e.cfg.MaxFlowBuffer {
		e.stats.FlowCapHits++
		if s.segs.empty() {
			// Larger than the cap on its own: the hole before it is lost.
			e.skipTo(c, d, seq, gapForced)
			e.deliverInOrder(c, d, seq, data)
			return
		}
		e.forceHole(c, d)
		if seq <= s.next {
			e.deliverInOrder(c, d, seq, data)
			return
		}
	}
	// The budget forces holes only while out-of-order data holds some of
	// it: connections that fill it are evicted by the next new one.
	for e.stats.Buffered+int64(need) > int64(e.cfg.MaxBuffer) ||
		e.bufList.head != nil && e.memory()+int64(need) > e.cfg.MaxMemory {
		e.stats.GlobalCapHits++
		oldest := e.bufList.head
		if oldest == nil {
			e.skipTo(c, d, seq, gapForced)
			e.deliverInOrder(c, d, seq, data)
			return
		}
		for !oldest.segs.empty() {
			e.forceHole(oldest.owner, oldest.dir)
		}
		if seq <= s.next {
			e.deliverInOrder(c, d, seq, data)
			return
		}
	}
	e.insert(s, seq, data)
}

// insert copies the parts of data not yet buffered into new segments.
func (e *Engine) insert(s *stream, seq uint64, data []byte) {
	end := seq + uint64(len(data))
	for cur := seq; cur < end; {
		next := e.arena.endingAfter(&s.segs, cur)
		if next != nil && next.seq <= cur {
			cur = next.end()
			continue
		}
		pieceEnd := end
		if next != nil && next.seq < pieceEnd {
			pieceEnd = next.seq
		}
		buf := e.bufs.get(int(pieceEnd - cur))
		copy(buf, data[cur-seq:pieceEnd-seq])
		sg := segment{seq: cur, data: buf}
		e.arena.insert(&s.segs, sg)
		s.buffered += sg.held()
		e.stats.Buffered += int64(sg.held())
		e.stats.PeakBuffered = max(e.stats.PeakBuffered, e.stats.Buffered)
		e.notePeak()
		cur = pieceEnd
	}
	if !s.segs.empty() && !s.listed {
		e.bufList.push(s)
	}
}

// forceHole declares the hole before the first buffered segment lost and
// delivers what follows it.
func (e *Engine) forceHole(c *Conn, d Dir) { e.forceHoleKind(c, d, gapForced) }

// skipTo reports the bytes from s.next up to seq as lost and moves past
// them.
func (e *Engine) skipTo(c *Conn, d Dir, seq uint64, kind gapKind) {
	s := &c.tcp[d].stream
	if seq > s.next {
		e.gap(c, d, seq-s.next, kind)
		s.next = seq
	}
}

// ackReceived handles the peer acknowledging side d's data up to offset
// seq: bytes below it that never arrived are lost (Zeek's
// TCP_Reassembler::AckReceived, Reassembler::TrimToSeq and Undelivered).
func (e *Engine) ackReceived(c *Conn, d Dir, seq uint64) {
	// An ack at or below the trimmed data, as a good part of them are,
	// acknowledges nothing new (the FIN's clamp below only lowers seq):
	// this test is in line, the rest is not.
	if seq > c.tcp[d].stream.trim {
		e.ackAdvance(c, d, seq)
	}
}

// ackAdvance is ackReceived for an ack above the trimmed data.
func (e *Engine) ackAdvance(c *Conn, d Dir, seq uint64) {
	ep := &c.tcp[d]
	s := &ep.stream
	if ep.finCnt > 0 && ep.finSeq > 0 && seq >= ep.finSeq {
		seq = ep.finSeq - 1 // the FIN's octet is no data
	}
	if seq <= s.trim || seq-s.next >= 1<<32 {
		// Nothing new, or an offset no 32-bit ack can reach from the
		// delivered data (numbers made from an underflowed sequence).
		return
	}
	if seq > s.next {
		e.undelivered(c, d, seq)
	}
	s.trim = seq
}

// undelivered reports the holes below upTo as gaps, delivering the
// buffered data between them.
func (e *Engine) undelivered(c *Conn, d Dir, upTo uint64) {
	s := &c.tcp[d].stream
	if upTo <= 2 && c.conn.isPartial {
		// Zeek: the sequence numbers of a partial connection were made up
		// as though a SYN was seen, and this ack of its first octet (or of
		// a keep-alive's) is no evidence of loss.
		return
	}
	for !s.segs.empty() && e.arena.first(&s.segs).seq < upTo {
		e.forceHoleKind(c, d, gapAcked)
	}
	if upTo > s.next {
		e.skipTo(c, d, upTo, gapAcked)
		e.drain(c, d)
	}
}

func (e *Engine) forceHoleKind(c *Conn, d Dir, kind gapKind) {
	s := &c.tcp[d].stream
	if !s.segs.empty() {
		e.skipTo(c, d, e.arena.first(&s.segs).seq, kind)
		e.drain(c, d)
	}
}

// finishStream delivers what side d still buffers when its connection
// ends, reporting the holes as gaps, and a hole before its FIN.
func (e *Engine) finishStream(c *Conn, d Dir) {
	ep := &c.tcp[d]
	s := &ep.stream
	for !s.segs.empty() {
		e.forceHoleKind(c, d, gapAtEnd)
	}
	if ep.finCnt == 0 || ep.finSeq == 0 || (ep.finSeq <= 3 && c.conn.isPartial) {
		// As with acks (see undelivered), the first octets of a partial
		// connection are made up and no evidence of loss.
		return
	}
	// Bytes between the delivered data and a FIN are known to be lost.
	last := ep.relSeq(ep.lastSeq, ep.seqWraps)
	if fin := ep.finSeq - 1; fin > s.next && fin <= last && fin-s.next < 1<<32 {
		e.skipTo(c, d, fin, gapAtEnd)
	}
}

// gap reports n lost bytes of side d. As in Zeek, only holes found while
// both sides are established or cleanly closing count as missed bytes and
// add the 'G' history letter.
func (e *Engine) gap(c *Conn, d Dir, n uint64, kind gapKind) {
	if n == 0 {
		return
	}
	e.stats.Gaps++
	e.stats.GapBytes += int64(n)
	c.Stats[d].GapBytes += int64(n)
	ep, peer := c.ends(d)
	if kind != gapAtEnd && ep.isClean() && peer.isClean() {
		c.Stats[d].Missed += int64(n)
		ep.gap.add(c, letter(d, 'G'))
	}
	e.h.Gap(c, d, int(n))
}

// streamList is an intrusive list of streams that buffer data, in the
// order they started buffering.
type streamList struct{ head, tail *stream }

func (l *streamList) push(s *stream) {
	s.prev, s.succ = l.tail, nil
	if l.tail != nil {
		l.tail.succ = s
	} else {
		l.head = s
	}
	l.tail = s
	s.listed = true
}

func (l *streamList) remove(s *stream) {
	if s.prev != nil {
		s.prev.succ = s.succ
	} else {
		l.head = s.succ
	}
	if s.succ != nil {
		s.succ.prev = s.prev
	} else {
		l.tail = s.prev
	}
	s.prev, s.succ, s.listed = nil, nil, false
}

// bufferPool recycles the buffers of out-of-order segments and fragmented
// datagrams in power-of-two size classes from 64 bytes to 64 KiB, so that
// steady-state reassembly does not allocate. It keeps at most maxIdle
// bytes of buffers no one uses (more go to the garbage collector): else a
// trace could fill the caps in one size class after another and leave
// the pool holding the caps many times over.
type bufferPool struct {
	free [numSizeClasses][][]byte
	idle int // capacity of the buffers in free
}

const (
	minSizeClass   = 64
	numSizeClasses = 11 // 64 B ... 64 KiB
	maxIdle        = 8 << 20
)

func sizeClass(n int) int {
	if n <= minSizeClass {
		return 0
	}
	return min(bits.Len(uint(n-1))-6, numSizeClasses-1)
}

// capFor returns the capacity of the buffer get(n) returns.
func (p *bufferPool) capFor(n int) int {
	return max(n, minSizeClass<<sizeClass(n))
}

func (p *bufferPool) get(n int) []byte {
	i := sizeClass(n)
	if l := len(p.free[i]); l > 0 && cap(p.free[i][l-1]) >= n {
		b := p.free[i][l-1]
		p.free[i][l-1] = nil
		p.free[i] = p.free[i][:l-1]
		p.idle -= cap(b)
		return b[:n]
	}
	return make([]byte, n, max(n, minSizeClass<<i))
}

func (p *bufferPool) put(b []byte) {
	i := sizeClass(cap(b))
	if cap(b) < minSizeClass<<i {
		i-- // an odd-sized buffer goes to the class it fully serves
	}
	if i >= 0 && p.idle+cap(b) <= maxIdle {
		p.free[i] = append(p.free[i], b[:0])
		p.idle += cap(b)
	}
}

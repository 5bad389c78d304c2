package flow

import (
	"net/netip"
	"unsafe"

	"github.com/wirebench/wirebench/internal/capture"
)

// maxDatagram is the largest IP payload fragments can rebuild.
const maxDatagram = 65535

// fragKey identifies the fragments of one datagram (RFC 791 and 8200:
// source, destination, protocol and identification).
type fragKey struct {
	src, dst netip.Addr
	id       uint32
	proto    uint8
}

// datagram is a datagram being rebuilt from its fragments.
type datagram struct {
	key    fragKey
	start  int64  // time of its first fragment
	buf    []byte // payload bytes received, at their offsets
	have   []span // received byte ranges, sorted and merged
	total  int    // payload length, known from the last fragment; -1 before
	hdrLen int    // IP header length before the fragmentable part; -1 before the first fragment
	frags  int

	prev, next *datagram
}

// datagramSize is what a datagram costs beyond its buffer and spans.
const datagramSize = int(unsafe.Sizeof(datagram{}))

// heldBy returns the memory dg holds: its buffer's and its spans'
// capacity, and itself.
func (dg *datagram) heldBy() int {
	return cap(dg.buf) + cap(dg.have)*int(unsafe.Sizeof(span{})) + datagramSize
}

type span struct{ lo, hi int }

// defragmenter rebuilds IPv4 and IPv6 datagrams from fragments. The first
// bytes received for an offset win, as in the TCP reassembler.
type defragmenter struct {
	cfg        *Config
	pool       *bufferPool // datagram buffers come from the reassembler's pool
	table      map[fragKey]*datagram
	head, tail *datagram // in order of first fragment
	free       []*datagram
	held       int // memory the datagrams in progress hold
}

func (f *defragmenter) init(cfg *Config, pool *bufferPool) {
	f.cfg, f.pool = cfg, pool
	f.table = make(map[fragKey]*datagram)
}

// defrag adds fragment p; when it completes a datagram, defrag returns the
// rebuilt packet (valid until the next call), else nil.
func (e *Engine) defrag(p *capture.Packet) *capture.Packet {
	f := &e.frag
	st := &e.stats
	data := p.IPPayload
	off := p.FragOffset
	end := off + len(data)
	// p.Truncated is no reason to drop: decoding the transport header of a
	// first fragment finds it cut short by nature.
	if end > maxDatagram || off < 0 {
		st.FragsDropped++
		st.Dropped[DropFragment]++
		return nil
	}
	k := fragKey{src: p.Src, dst: p.Dst, id: p.FragID, proto: p.Proto}
	dg := f.table[k]
	if dg == nil {
		for len(f.table) >= f.cfg.MaxFragDatagrams {
			st.FragCapHits++
			f.drop(f.head, st)
		}
		dg = f.get(k, e.now)
	}
	// Make room for what the fragment adds to the memory held, dropping
	// the oldest other datagrams (one datagram alone may always grow to
	// its 64 KiB).
	for grow := f.growth(dg, end); f.held+grow > f.cfg.MaxFragBuffer && f.head != nil && (f.head != dg || dg.next != nil); {
		st.FragCapHits++
		if f.head == dg {
			f.drop(dg.next, st)
		} else {
			f.drop(f.head, st)
		}
	}
	dg.frags++
	if dg.frags > f.cfg.MaxFragsPerDatagram {
		st.FragCapHits++
		f.drop(dg, st)
		return nil
	}
	if !p.MoreFrags {
		if dg.total >= 0 && dg.total != end {
			st.FragInconsistent++ // a second, different last fragment: the first wins
		} else {
			dg.total = end
		}
	}
	if off == 0 && dg.hdrLen < 0 {
		dg.hdrLen = p.IPLen - len(data)
		if p.IPVersion == 6 {
			dg.hdrLen -= 8 // the fragment header goes away
		}
	}
	f.store(dg, off, data, st)
	if dg.total < 0 || dg.hdrLen < 0 || len(dg.have) != 1 || dg.have[0].lo != 0 || dg.have[0].hi < dg.total {
		return nil
	}

	st.FragsReassembled++
	r := &e.reasm
	*r = capture.Packet{
		TS: p.TS, Data: p.Data, OrigLen: p.OrigLen, LinkType: p.LinkType,
		IPVersion: p.IPVersion, Src: p.Src, Dst: p.Dst, TTL: p.TTL,
		IPLen: dg.hdrLen + dg.total,
	}
	proto, payload := p.Proto, dg.buf[:dg.total]
	if p.IPVersion == 6 {
		proto, payload = skipIPv6Extensions(proto, payload)
	}
	r.IPPayload = payload
	r.DecodeTransport(proto, payload)
	f.release(dg)
	return r
}

// growth returns how much more memory dg holds once it has bytes up to
// end: the larger buffer, and one more span.
func (f *defragmenter) growth(dg *datagram, end int) int {
	n := int(unsafe.Sizeof(span{}))
	if dg.buf == nil || end > cap(dg.buf) {
		n += f.pool.capFor(end) - cap(dg.buf)
	}
	return n
}

// store copies the parts of data not yet received into dg.
func (f *defragmenter) store(dg *datagram, off int, data []byte, st *Stats) {
	end := off + len(data)
	f.held -= dg.heldBy()
	if dg.buf == nil || end > cap(dg.buf) {
		nb := f.pool.get(end)
		copy(nb, dg.buf)
		if dg.buf != nil {
			f.pool.put(dg.buf)
		}
		dg.buf = nb
	} else if end > len(dg.buf) {
		dg.buf = dg.buf[:end]
	}
	overlap, inconsistent := false, false
	cur := off
	for _, s := range dg.have {
		if s.hi <= cur {
			continue
		}
		if s.lo >= end {
			break
		}
		if s.lo > cur {
			copy(dg.buf[cur:s.lo], data[cur-off:s.lo-off])
		}
		lo, hi := max(cur, s.lo), min(end, s.hi)
		overlap = true
		if string(dg.buf[lo:hi]) != string(data[lo-off:hi-off]) {
			inconsistent = true
		}
		cur = hi
	}
	if cur < end {
		copy(dg.buf[cur:end], data[cur-off:])
	}
	if overlap {
		st.FragOverlaps++
	}
	if inconsistent {
		st.FragInconsistent++
	}
	dg.have = addSpan(dg.have, span{off, end})
	f.held += dg.heldBy()
}

// addSpan inserts s into the sorted, merged spans.
func addSpan(have []span, s span) []span {
	i := 0
	for i < len(have) && have[i].hi < s.lo {
		i++
	}
	j := i
	for j < len(have) && have[j].lo <= s.hi {
		s.lo = min(s.lo, have[j].lo)
		s.hi = max(s.hi, have[j].hi)
		j++
	}
	if i == j {
		have = append(have, span{})
		copy(have[i+1:], have[i:])
		have[i] = s
		return have
	}
	have[i] = s
	return append(have[:i+1], have[j:]...)
}

func (f *defragmenter) get(k fragKey, now int64) *datagram {
	var dg *datagram
	if n := len(f.free); n > 0 {
		dg = f.free[n-1]
		f.free = f.free[:n-1]
	} else {
		dg = new(datagram)
	}
	dg.key, dg.start = k, now
	dg.buf, dg.have = nil, dg.have[:0]
	dg.total, dg.hdrLen, dg.frags = -1, -1, 0
	f.held += dg.heldBy()
	f.table[k] = dg
	dg.prev, dg.next = f.tail, nil
	if f.tail != nil {
		f.tail.next = dg
	} else {
		f.head = dg
	}
	f.tail = dg
	return dg
}

// release removes dg from the table and keeps it for reuse.
func (f *defragmenter) release(dg *datagram) {
	delete(f.table, dg.key)
	if dg.prev != nil {
		dg.prev.next = dg.next
	} else {
		f.head = dg.next
	}
	if dg.next != nil {
		dg.next.prev = dg.prev
	} else {
		f.tail = dg.prev
	}
	dg.prev, dg.next = nil, nil
	f.held -= dg.heldBy()
	if dg.buf != nil {
		f.pool.put(dg.buf)
		dg.buf = nil
	}
	f.free = append(f.free, dg)
}

// drop abandons an incomplete datagram, counting its fragments.
func (f *defragmenter) drop(dg *datagram, st *Stats) {
	st.FragsDropped += int64(dg.frags)
	st.Dropped[DropFragment] += int64(dg.frags)
	f.release(dg)
}

// expire drops datagrams whose first fragment is older than the timeout.
func (f *defragmenter) expire(now int64, st *Stats) {
	for f.head != nil && f.head.start+int64(f.cfg.FragTimeout) <= now {
		st.FragTimeouts++
		f.drop(f.head, st)
	}
}

func (f *defragmenter) flush(st *Stats) {
	for f.head != nil {
		f.drop(f.head, st)
	}
}

// skipIPv6Extensions skips the extension headers that may sit in the
// fragmentable part of an IPv6 datagram (destination options, routing).
func skipIPv6Extensions(proto uint8, b []byte) (uint8, []byte) {
	for proto == 0 || proto == 43 || proto == 60 {
		if len(b) < 8 {
			break
		}
		n := 8 + int(b[1])*8
		if n > len(b) {
			break
		}
		proto, b = b[0], b[n:]
	}
	return proto, b
}

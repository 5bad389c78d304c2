package shard

import (
	"sync"
	"unsafe"

	"github.com/wirebench/wirebench/internal/capture"
)

// Batch is a run of frames, handed to a worker in one queue operation,
// whose bytes are copied back to back into the batch's buffer or, for
// frames a capture.Reader lent (see capture.Reader.Lend), left in the
// reader's buffers, which the batch holds until the worker returns it:
// frames to decode (AddFrame), kept as a small record without pointers,
// and frames the reader decoded (Add), kept with their decoded packet and
// always copied.
type Batch struct {
	// data and frames keep their length; used and n say how much of
	// them holds the batch's frames. Counting them apart, rather than
	// appending, spares every frame the stores of the slices' headers
	// and their write barriers.
	data   []byte
	used   int
	frames []frame
	n      int
	pkts   []capture.Packet // of the decoded frames
	// bufs[:nbufs] are the buffers the frames lie in: bufs[0] is data,
	// the others the buffers of leases, held. Their bytes, lent, count
	// against the batch's size as much as data's used bytes: the
	// batch holds no more memory than when it copies. lease is the last
	// lease taken, leases[nbufs-1], and its frames' buffer nbufs-1.
	bufs   [maxBufs][]byte
	leases [maxBufs]*capture.Lease
	nbufs  int
	lent   int
	lease  *capture.Lease
}

// maxBufs bounds the buffers of a batch: its own and the leases it holds.
const maxBufs = 8

// frame is one frame of a Batch.
type frame struct {
	ts       int64
	off, end uint32 // of its bytes in its buffer
	origLen  uint32
	pkt      int32 // its decoded packet in pkts, if decoded
	linkType uint16
	state    Decoded
	tag      uint8
	buf      uint8 // the batch's buffer its bytes are in (bufs)
}

// Decoded says how the reader's decoding of a frame went.
type Decoded uint8

// The states of a frame of a batch.
const (
	DecodedOK Decoded = iota
	// DecodedBad: a header was invalid; the packet holds what was
	// decoded before it.
	DecodedBad
	// NotDecoded: only TS, Data, OrigLen and LinkType are set (AddFrame,
	// or decoded slices that could not be moved into the batch): the
	// worker decodes the frame.
	NotDecoded
)

// Len returns the number of frames in the batch.
func (b *Batch) Len() int { return b.n }

// Packet returns frame i, how the reader's decoding of it went and the
// tag it gave it. A frame not decoded is set into scratch (TS, Data,
// OrigLen and LinkType, the fields capture.Reader.Next sets) and scratch
// returned; a decoded one is returned as the reader decoded it. Its
// slices point into the batch, valid until the worker returns it.
func (b *Batch) Packet(i int, scratch *capture.Packet) (*capture.Packet, Decoded, uint8) {
	f := &b.frames[i]
	if f.state == NotDecoded {
		scratch.TS, scratch.OrigLen, scratch.LinkType = f.ts, int(f.origLen), f.linkType
		scratch.Data = b.bufs[f.buf%maxBufs][f.off:f.end:f.end]
		return scratch, NotDecoded, f.tag
	}
	return &b.pkts[f.pkt], f.state, f.tag
}

func (b *Batch) reset() {
	for i := 1; i < b.nbufs; i++ {
		b.leases[i].Release()
		b.leases[i], b.bufs[i] = nil, nil
	}
	b.nbufs, b.lent, b.lease = 1, 0, nil
	b.used, b.n = 0, 0
	clear(b.pkts) // drop the slices into the batch
	b.pkts = b.pkts[:0]
}

// fits reports whether a frame of n bytes fits without growing the batch.
func (b *Batch) fits(n int) bool {
	return b.used+b.lent+n <= len(b.data) && b.n < len(b.frames)
}

// fitsPacket is fits of a decoded frame, which takes a packet too.
func (b *Batch) fitsPacket(n int) bool {
	return b.fits(n) && len(b.pkts) < cap(b.pkts)
}

// addFrame copies a frame not decoded (TS, Data, OrigLen, LinkType) into
// a batch it fits.
func (b *Batch) addFrame(p *capture.Packet, tag uint8) *frame {
	off, end := b.used, b.used+len(p.Data)
	// Set field by field into the room fits made: cheaper than a
	// composite literal.
	f := &b.frames[b.n]
	f.ts, f.off, f.end, f.origLen = p.TS, uint32(off), uint32(end), uint32(p.OrigLen)
	f.linkType, f.state, f.tag, f.buf = p.LinkType, NotDecoded, tag, 0
	b.n++
	b.used = end
	// The copy last: nothing is kept across its call.
	copy(b.data[off:end], p.Data)
	return f
}

// addLent adds a frame not decoded that lies in the buffer of lease l,
// the batch's last, into a batch with room for one more frame.
func (b *Batch) addLent(p *capture.Packet, l *capture.Lease) {
	off := l.Offset(p.Data)
	f := &b.frames[b.n]
	f.ts, f.off, f.end, f.origLen = p.TS, uint32(off), uint32(off+len(p.Data)), uint32(p.OrigLen)
	f.linkType, f.state, f.tag, f.buf = p.LinkType, NotDecoded, 0, uint8(b.nbufs-1)
	b.n++
}

// take holds lease l for the batch, whose last lease it becomes.
func (b *Batch) take(l *capture.Lease) {
	l.Hold()
	i := b.nbufs
	b.leases[i], b.bufs[i] = l, l.Bytes()
	b.nbufs++
	b.lent += len(l.Bytes())
	b.lease = l
}

// roomFor reports whether the batch has room for another frame in the
// buffer of lease l.
func (b *Batch) roomFor(l *capture.Lease) bool {
	return b.n < len(b.frames) && (l == b.lease || b.nbufs < maxBufs && b.used+b.lent+len(l.Bytes()) <= b.size())
}

// size returns the bytes of frames the batch takes, copied or lent:
// BatchBytes, or its buffer's size when that was grown, whether or not it
// has its buffer yet.
func (b *Batch) size() int { return max(len(b.data), BatchBytes) }

// add copies decoded packet p and its frame, pointing the copy's slices
// into the batch's buffer; a packet whose slices cannot be moved is left
// to the worker to decode.
func (b *Batch) add(p *capture.Packet, st Decoded, tag uint8) {
	f := b.addFrame(p, tag)
	data := b.data[f.off:f.end:f.end]
	ipPayload, ok1 := rebase(data, p.Data, p.IPPayload)
	payload, ok2 := rebase(data, p.Data, p.Payload)
	if !ok1 || !ok2 {
		return
	}
	b.pkts = append(b.pkts, *p)
	d := &b.pkts[len(b.pkts)-1]
	d.Data, d.Lease, d.IPPayload, d.Payload = data, nil, ipPayload, payload
	f.pkt, f.state = int32(len(b.pkts)-1), st
}

// rebase returns the slice of to that sub is of from. The decoder slices
// every header forward from the frame, so that sub ends where from does
// in the same array and their capacities tell the offset; ok is false
// when sub is not such a slice.
func rebase(to, from, sub []byte) (s []byte, ok bool) {
	if sub == nil {
		return nil, true
	}
	off := cap(from) - cap(sub)
	end := off + len(sub)
	if off < 0 || end > len(from) || (len(sub) > 0 && &from[off] != &sub[0]) {
		return nil, false
	}
	return to[off:end:end], true
}

// Sizes of the fan-out's queues: every batch holds up to BatchBytes of
// frames (a whole largest frame, capture.MaxSnaplen, always fits), copied
// or in the lent buffers it holds, which count whole, up to batchFrames
// frames and up to batchPackets decoded packets; each worker has
// queueDepth batches, one being filled by the reader, the others queued
// or being worked on. Memory returns what they hold. It counts a batch's
// BatchBytes once: a batch whose buffer held copied frames keeps that
// memory while it holds lent buffers, so that a trace whose frames are
// copied and lent in turn can take up to twice its share of BatchBytes.
const (
	BatchBytes   = 256 << 10
	batchFrames  = 4096
	batchPackets = 1024
	perBatch     = BatchBytes + batchFrames*int64(unsafe.Sizeof(frame{})) + batchPackets*int64(unsafe.Sizeof(capture.Packet{}))
	// Each worker has maxDepth batches while the queues of all hold at
	// most maxQueueMemory, and at least minDepth. Real traffic comes in
	// bursts of one connection, one worker's, for a few MiB: a worker
	// whose queue is full stops the reader, and while it catches up, the
	// others starve. Queues of a few MiB ride the bursts out.
	minDepth, maxDepth = 4, 16
	maxQueueMemory     = 64 << 20
)

// queueDepth returns how many batches each of n workers has.
func queueDepth(n int) int {
	return int(min(maxDepth, max(minDepth, maxQueueMemory/(int64(n)*perBatch))))
}

// Memory returns the bytes the batches of a fan-out to n workers hold at
// most: the share of a memory budget its queues take.
func Memory(n int) int64 {
	return int64(n) * int64(queueDepth(n)) * perBatch
}

// WorkerBudget returns the memory budget of a worker's flow engine when
// a fan-out to workers splits the work of engines engines, each given
// total bytes: the queues (Memory) take their share of each engine's
// budget, and the workers split the rest evenly, each getting at least
// MinWorkerMemory.
func WorkerBudget(total int64, workers, engines int) int64 {
	return max((total-Memory(workers)/int64(engines))/int64(workers), MinWorkerMemory)
}

// MinWorkerMemory is the least budget WorkerBudget gives.
const MinWorkerMemory = 4 << 20

// Fanout adds frames to per-worker batches and runs each worker's
// function on its batches in a goroutine of its own, in the order the
// frames were added. A worker that falls behind makes Add wait once its
// batches are all in use: the queues are bounded, and the memory
// they hold is Memory(n). Add and Close are for one goroutine, the
// reader's.
type Fanout struct {
	queues []queue
	wg     sync.WaitGroup
}

type queue struct {
	cur  *Batch
	full chan *Batch // to the worker
	free chan *Batch // back from it
}

// handOff hands the current batch to the worker and takes a free one,
// waiting while all are in use.
func (q *queue) handOff() {
	q.full <- q.cur
	q.cur = <-q.free
}

// next returns a batch with room to copy a frame of n bytes, and a
// decoded packet when packet is set, which the current one has no room
// for or no buffer yet: the current one when it has room, else a free
// one, after handing the current one off. A batch gets its buffer and its
// packets when it first copies a frame and a packet: one whose frames are
// all lent needs neither. An empty one takes any frame, growing its
// buffer for one larger than BatchBytes (which no reader makes:
// capture.MaxSnaplen is BatchBytes).
func (q *queue) next(n int, packet bool) *Batch {
	b := q.cur
	if b.n > 0 && (b.n == len(b.frames) || b.used+b.lent+n > b.size() || packet && len(b.pkts) == batchPackets) {
		q.handOff()
		b = q.cur
	}
	if b.used+n > len(b.data) { // no buffer yet, or an empty batch and a larger frame
		b.data = make([]byte, max(n, BatchBytes))
		b.bufs[0] = b.data
	}
	if packet && b.pkts == nil {
		b.pkts = make([]capture.Packet, 0, batchPackets)
	}
	return b
}

// hold returns a batch with room for a frame lent with lease l, which the
// current one has no room for or does not hold yet: the current one or,
// after handing it off, a free one, holding l.
func (q *queue) hold(l *capture.Lease) *Batch {
	if b := q.cur; b.n > 0 && !b.roomFor(l) {
		q.handOff()
	}
	if b := q.cur; l != b.lease {
		b.take(l)
	}
	return q.cur
}

// NewFanout starts n workers; work(w, b) processes batch b of worker w
// and must not keep it.
func NewFanout(n int, work func(w int, b *Batch)) *Fanout {
	f := &Fanout{queues: make([]queue, n)}
	depth := queueDepth(n)
	for w := range f.queues {
		q := &f.queues[w]
		q.full = make(chan *Batch, depth)
		q.free = make(chan *Batch, depth)
		for range depth - 1 {
			q.free <- newBatch()
		}
		q.cur = newBatch()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for b := range q.full {
				work(w, b)
				b.reset()
				q.free <- b
			}
		}()
	}
	return f
}

func newBatch() *Batch {
	return &Batch{frames: make([]frame, batchFrames), nbufs: 1}
}

// Workers returns the number of workers.
func (f *Fanout) Workers() int { return len(f.queues) }

// Add copies packet p, decoded by a capture.Decoder as st says, into
// worker w's batch with a tag of the caller's (a class of packets), handing
// the batch to the worker when it is full. The reader's decoding is the
// workers': they need not decode again.
func (f *Fanout) Add(w int, p *capture.Packet, st Decoded, tag uint8) {
	q := &f.queues[w]
	b := q.cur
	if !b.fitsPacket(len(p.Data)) {
		b = q.next(len(p.Data), true)
	}
	b.add(p, st, tag)
}

// AddFrame adds frame p (TS, Data, OrigLen and LinkType) to worker w's
// batch, for the worker to decode (its state is NotDecoded): a frame lent
// by its reader (p.Lease set) is held in the reader's buffer, any other
// copied.
func (f *Fanout) AddFrame(w int, p *capture.Packet) {
	q := &f.queues[w]
	b := q.cur
	if l := p.Lease; l != nil {
		if l != b.lease || b.n == len(b.frames) {
			b = q.hold(l)
		}
		b.addLent(p, l)
		return
	}
	if !b.fits(len(p.Data)) {
		b = q.next(len(p.Data), false)
	}
	b.addFrame(p, 0)
}

// Flush hands every partly filled batch to its worker.
func (f *Fanout) Flush() {
	for w := range f.queues {
		q := &f.queues[w]
		if q.cur.Len() > 0 {
			q.handOff()
		}
	}
}

// Close flushes the batches and waits until every worker has processed
// all of them. The Fanout cannot be used afterwards.
func (f *Fanout) Close() {
	f.Flush()
	for w := range f.queues {
		close(f.queues[w].full)
	}
	f.wg.Wait()
}

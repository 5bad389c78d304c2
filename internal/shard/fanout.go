package shard

import (
	"sync"
	"unsafe"

	"github.com/wirebench/wirebench/internal/capture"
)

// Batch is a run of decoded frames whose bytes are copied back to back
// into one buffer, handed to a worker in one queue operation.
type Batch struct {
	data  []byte
	pkts  []capture.Packet
	state []Decoded
	tags  []uint8
}

// Decoded says how the reader's decoding of a frame went.
type Decoded uint8

// The states of a decoded frame.
const (
	DecodedOK Decoded = iota
	// DecodedBad: a header was invalid; the packet holds what was
	// decoded before it.
	DecodedBad
	// NotDecoded: only TS, Data, OrigLen and LinkType are set, since the
	// decoded slices could not be moved into the batch; decode it again.
	NotDecoded
)

// Len returns the number of frames in the batch.
func (b *Batch) Len() int { return len(b.pkts) }

// Packet returns frame i as the reader decoded it, its slices pointing
// into the batch, how decoding it went and the tag the reader gave it. It
// is valid until the worker returns the batch.
func (b *Batch) Packet(i int) (*capture.Packet, Decoded, uint8) {
	return &b.pkts[i], b.state[i], b.tags[i]
}

func (b *Batch) reset() {
	b.data = b.data[:0]
	clear(b.pkts) // drop the slices into the batch
	b.pkts = b.pkts[:0]
	b.state = b.state[:0]
	b.tags = b.tags[:0]
}

// fits reports whether a frame of n bytes fits without growing the batch;
// an empty batch takes any frame.
func (b *Batch) fits(n int) bool {
	return len(b.pkts) == 0 || (len(b.data)+n <= cap(b.data) && len(b.pkts) < cap(b.pkts))
}

// add copies decoded packet p and its frame, pointing the copy's slices
// into the batch's buffer.
func (b *Batch) add(p *capture.Packet, st Decoded, tag uint8) {
	off := len(b.data)
	b.data = append(b.data, p.Data...)
	b.pkts = append(b.pkts, *p)
	q := &b.pkts[len(b.pkts)-1]
	q.Data = b.data[off:len(b.data):len(b.data)]
	var ok1, ok2 bool
	q.IPPayload, ok1 = rebase(q.Data, p.Data, p.IPPayload)
	q.Payload, ok2 = rebase(q.Data, p.Data, p.Payload)
	if !ok1 || !ok2 {
		*q = capture.Packet{TS: p.TS, Data: q.Data, OrigLen: p.OrigLen, LinkType: p.LinkType}
		st = NotDecoded
	}
	b.state = append(b.state, st)
	b.tags = append(b.tags, tag)
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
// frames (a whole largest frame, capture.MaxSnaplen, always fits) and up
// to batchFrames decoded packets; each worker has QueueDepth batches, one being
// filled by the reader, the others queued or being worked on. Memory
// returns what they hold.
const (
	BatchBytes  = 256 << 10
	batchFrames = 1024
	QueueDepth  = 4
)

// Memory returns the bytes the batches of a fan-out to n workers hold at
// most: the share of a memory budget its queues take.
func Memory(n int) int64 {
	frameSize := int64(unsafe.Sizeof(capture.Packet{})) + 2
	return int64(n) * QueueDepth * (BatchBytes + batchFrames*frameSize)
}

// Fanout copies decoded frames into per-worker batches and runs each worker's
// function on its batches in a goroutine of its own, in the order the
// frames were added. A worker that falls behind makes Add wait once its
// QueueDepth batches are in use: the queues are bounded, and the memory
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

// NewFanout starts n workers; work(w, b) processes batch b of worker w
// and must not keep it.
func NewFanout(n int, work func(w int, b *Batch)) *Fanout {
	f := &Fanout{queues: make([]queue, n)}
	for w := range f.queues {
		q := &f.queues[w]
		q.full = make(chan *Batch, QueueDepth)
		q.free = make(chan *Batch, QueueDepth)
		for range QueueDepth - 1 {
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
	return &Batch{data: make([]byte, 0, BatchBytes), pkts: make([]capture.Packet, 0, batchFrames), state: make([]Decoded, 0, batchFrames), tags: make([]uint8, 0, batchFrames)}
}

// Workers returns the number of workers.
func (f *Fanout) Workers() int { return len(f.queues) }

// Add copies packet p, decoded by a capture.Decoder as st says, into
// worker w's batch with a tag of the caller's (a class of packets), handing
// the batch to the worker when it is full. The reader's decoding is the
// workers': they need not decode again.
func (f *Fanout) Add(w int, p *capture.Packet, st Decoded, tag uint8) {
	q := &f.queues[w]
	if !q.cur.fits(len(p.Data)) {
		q.full <- q.cur
		q.cur = <-q.free
	}
	q.cur.add(p, st, tag)
}

// Flush hands every partly filled batch to its worker.
func (f *Fanout) Flush() {
	for w := range f.queues {
		q := &f.queues[w]
		if q.cur.Len() > 0 {
			q.full <- q.cur
			q.cur = <-q.free
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

package shard

import (
	"sync"

	"github.com/wirebench/wirebench/internal/capture"
)

// Frame is one captured frame of a Batch: where its bytes are in the
// batch's buffer and what capture.Reader.Next says of it besides.
type Frame struct {
	TS       int64
	OrigLen  int32
	LinkType uint16
	off, end int32
}

// Batch is a run of frames copied back to back into one buffer, handed to
// a worker in one queue operation.
type Batch struct {
	data   []byte
	frames []Frame
}

// Len returns the number of frames in the batch.
func (b *Batch) Len() int { return len(b.frames) }

// Packet sets p's TS, Data, OrigLen and LinkType to frame i's, as
// capture.Reader.Next does; p.Data is valid until the worker returns the
// batch.
func (b *Batch) Packet(i int, p *capture.Packet) {
	f := &b.frames[i]
	p.TS, p.OrigLen, p.LinkType = f.TS, int(f.OrigLen), f.LinkType
	p.Data = b.data[f.off:f.end:f.end]
}

func (b *Batch) reset() {
	b.data = b.data[:0]
	b.frames = b.frames[:0]
}

// fits reports whether a frame of n bytes fits without growing the batch;
// an empty batch takes any frame.
func (b *Batch) fits(n int) bool {
	return len(b.frames) == 0 || (len(b.data)+n <= cap(b.data) && len(b.frames) < cap(b.frames))
}

func (b *Batch) add(p *capture.Packet) {
	off := len(b.data)
	b.data = append(b.data, p.Data...)
	b.frames = append(b.frames, Frame{TS: p.TS, OrigLen: int32(p.OrigLen), LinkType: p.LinkType, off: int32(off), end: int32(len(b.data))})
}

// Sizes of the fan-out's queues: every batch holds up to BatchBytes of
// frames (a whole largest frame, capture.MaxSnaplen, always fits) and up
// to batchFrames frames; each worker has QueueDepth batches, one being
// filled by the reader, the others queued or being worked on. Memory
// returns what they hold.
const (
	BatchBytes  = 256 << 10
	batchFrames = 4096
	QueueDepth  = 4
)

// Memory returns the bytes the batches of a fan-out to n workers hold at
// most: the share of a memory budget its queues take.
func Memory(n int) int64 {
	const frameSize = 24 // sizeof(Frame)
	return int64(n) * QueueDepth * (BatchBytes + batchFrames*frameSize)
}

// Fanout copies frames into per-worker batches and runs each worker's
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
	return &Batch{data: make([]byte, 0, BatchBytes), frames: make([]Frame, 0, batchFrames)}
}

// Workers returns the number of workers.
func (f *Fanout) Workers() int { return len(f.queues) }

// Add copies frame p (TS, Data, OrigLen, LinkType) into worker w's batch,
// handing the batch to the worker when it is full.
func (f *Fanout) Add(w int, p *capture.Packet) {
	q := &f.queues[w]
	if !q.cur.fits(len(p.Data)) {
		q.full <- q.cur
		q.cur = <-q.free
	}
	q.cur.add(p)
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

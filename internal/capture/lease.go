package capture

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// A Lease is a read buffer of a lending Reader (see Reader.Lend), in which
// the frames it reads lie: a caller that holds the lease keeps their bytes
// as they are, so that it can hand them on without copying them. The
// reader reads into the buffer again only once every hold is released.
// Hold and Release may be called from any goroutine.
type Lease struct {
	buf []byte
	// refs counts the holds: the reader's, while the buffer is the one
	// it reads into, and its callers'.
	refs atomic.Int32
	pool *leasePool
}

// Bytes returns the lease's buffer; the frames lent with it are slices of
// it.
func (l *Lease) Bytes() []byte { return l.buf }

// Offset returns where frame, the Data of a Packet lent with l, starts in
// Bytes.
func (l *Lease) Offset(frame []byte) int {
	// The frame is a slice of buf; an empty one may point at its start
	// rather than where it was cut, which keeps it in buf all the same.
	return int(uintptr(unsafe.Pointer(unsafe.SliceData(frame))) - uintptr(unsafe.Pointer(unsafe.SliceData(l.buf))))
}

// Hold keeps the buffer's bytes as they are until the matching Release.
// Only a holder may hold again: a caller holds a lease of a Packet before
// the next call to Next.
func (l *Lease) Hold() { l.refs.Add(1) }

// Release ends one Hold; the buffer is the reader's again after the last.
func (l *Lease) Release() {
	if l.refs.Add(-1) == 0 {
		l.pool.put(l)
	}
}

// leasePool keeps the buffers of a lending reader that nobody holds, for
// the reader to read into again.
type leasePool struct {
	mu   sync.Mutex
	free []*Lease
	size int // of the buffers
}

// get returns a lease held by the reader: a free buffer, or a new one when
// every buffer is held. How many buffers the holders keep bounds their
// number.
func (p *leasePool) get() *Lease {
	p.mu.Lock()
	var l *Lease
	if n := len(p.free); n > 0 {
		l = p.free[n-1]
		p.free[n-1] = nil
		p.free = p.free[:n-1]
	}
	p.mu.Unlock()
	if l == nil {
		l = &Lease{buf: make([]byte, p.size), pool: p}
	}
	l.refs.Store(1)
	return l
}

func (p *leasePool) put(l *Lease) {
	p.mu.Lock()
	p.free = append(p.free, l)
	p.mu.Unlock()
}

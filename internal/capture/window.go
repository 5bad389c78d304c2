package capture

import (
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A Window is the part of a memory-mapped capture file that the frames
// Next returns point into (see Reader.Window). It stays mapped while
// anyone holds it: the reader until it moves past it, and whoever Hold
// gave it to until they Release it, so that frames can be handed to other
// goroutines without being copied.
type Window struct {
	data []byte
	off  int64 // file offset of data
	refs atomic.Int32
	m    *mapping
}

// Hold keeps w mapped until a matching Release.
func (w *Window) Hold() { w.refs.Add(1) }

// Release gives up a hold; the last one unmaps the window, after which
// no frame in it may be used.
func (w *Window) Release() {
	if w.refs.Add(-1) == 0 {
		w.m.drop(w)
	}
}

// Bytes returns the window's bytes.
func (w *Window) Bytes() []byte { return w.data }

// Offset returns where b, a frame of the window, starts in Bytes(), and
// false when b is not in the window.
func (w *Window) Offset(b []byte) (int, bool) {
	if len(w.data) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(w.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p-base+uintptr(len(b)) > uintptr(len(w.data)) {
		return 0, false
	}
	return int(p - base), true
}

// windows are the mapped windows of a file still held.
type windows struct {
	mu   sync.Mutex
	live []*Window
}

// fileOffset returns the file offset of address a if it lies in a window
// still mapped.
func (ws *windows) fileOffset(a uintptr) (int64, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.live {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(w.data)))
		if a >= base && a < base+uintptr(len(w.data)) {
			return w.off + int64(a-base), true
		}
	}
	return 0, false
}

// unmap gives up the buffer's window, if it reads a mapped file.
func (b *readBuffer) unmap() {
	if b.m != nil {
		b.m.release()
		b.buf, b.start, b.end = nil, 0, 0
	}
}

// Window returns the window of the memory-mapped file that the frame Next
// returned last points into, or nil when the input is not mapped (a
// stream: standard input, a pipe, a gzip-compressed file): its frames are
// valid until the next call to Next. Hold keeps a window's frames valid
// after the reader moved on.
func (r *Reader) Window() *Window {
	if r.br.m == nil {
		return nil
	}
	return r.br.m.cur
}

// Mapped reports whether the reader reads a memory-mapped file.
func (r *Reader) Mapped() bool { return r.br.m != nil }

// Guard calls f, which uses the frames of r, in the calling goroutine,
// and turns a memory fault on r's mapped windows into an *Error naming
// the file and the offset: the fault a mapped file truncated while it is
// read gives (SIGBUS). Every goroutine that touches the frames of a
// mapped file must run in Guard (or Window.Guard); without it such a
// fault crashes the program. Other panics pass through.
func (r *Reader) Guard(f func() error) error {
	if r.br.m == nil {
		return f()
	}
	return r.br.m.guard(f)
}

// Guard is Reader.Guard for a goroutine that uses frames of w, handed to
// it by the reader.
func (w *Window) Guard(f func() error) error { return w.m.guard(f) }

func (m *mapping) guard(f func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		fault, ok := v.(interface{ Addr() uintptr })
		if !ok {
			panic(v)
		}
		off, ok := m.fileOffset(fault.Addr())
		if !ok {
			panic(v)
		}
		err = &Error{File: m.name, Offset: off, Err: errShrank}
	}()
	return f()
}

var errShrank = errors.New("the file shrank while it was read (truncated by another program?)")

package capture

import (
	"io"
	"os"
	"slices"
	"syscall"
)

// mapWindowSize is how much of a mapped file is mapped at a time. Mapped
// pages count in the process's resident memory, and each window held by
// a worker's batch (Window) stays mapped, so a window is small; a larger
// one costs fewer remappings. It holds the largest record (MaxSnaplen),
// but not the largest pcapng block, which is copied out.
const mapWindowSize = 1 << 20

// mapping is a memory-mapped file that a readBuffer reads one window at
// a time.
type mapping struct {
	f      *os.File
	name   string // of the file, for errors
	size   int64  // the file's size when last looked at
	window int    // bytes mapped at a time
	cur    *Window
	base   int64 // file offset of the readBuffer's buf
	windows
}

// mapFile returns a buffer reading f, named name, through memory-mapped
// windows of window bytes when f is a regular file that can be mapped.
func mapFile(f *os.File, name string, window int) (*readBuffer, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil, false
	}
	m := &mapping{f: f, name: name, size: fi.Size(), window: window}
	b := &readBuffer{m: m, maxPeek: window - os.Getpagesize()}
	if err := m.remap(b, 0, 1); err != nil {
		return nil, false
	}
	return b, true
}

// remap maps the window holding the n bytes at file offset pos, looking
// again at the file's size when they lie past it (the file may grow while
// it is read), and points b at it.
func (m *mapping) remap(b *readBuffer, pos int64, n int) error {
	if pos+int64(n) > m.size {
		fi, err := m.f.Stat()
		if err != nil {
			return err
		}
		m.size = max(m.size, fi.Size())
	}
	page := int64(os.Getpagesize())
	off := pos &^ (page - 1)
	length := min(int64(m.window), m.size-off)
	if m.cur != nil && off == m.cur.off && int(length) == len(m.cur.data) {
		return nil // nothing more to map
	}
	if length <= 0 {
		return nil
	}
	// MAP_POPULATE maps the window's pages in one call, cheaper than a
	// page fault every few pages.
	data, err := syscall.Mmap(int(m.f.Fd()), off, int(length), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return err
	}
	w := &Window{data: data, off: off, m: m}
	w.refs.Store(1)
	m.mu.Lock()
	m.live = append(m.live, w)
	m.mu.Unlock()
	m.release()
	m.cur, m.base = w, off
	b.buf, b.start, b.end = data, int(pos-off), len(data)
	return nil
}

// release gives up the reader's hold on its window.
func (m *mapping) release() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

// drop unmaps w, released by all.
func (m *mapping) drop(w *Window) {
	m.mu.Lock()
	m.live = slices.DeleteFunc(m.live, func(x *Window) bool { return x == w })
	m.mu.Unlock()
	syscall.Munmap(w.data)
}

// peek is readBuffer.Peek of a mapped file when the window does not hold
// the n bytes.
func (m *mapping) peek(b *readBuffer, n int) ([]byte, error) {
	if n > b.maxPeek {
		return b.buf[b.start:b.end], errBufferFull
	}
	if err := m.remap(b, m.base+int64(b.start), n); err != nil {
		b.err = err
		return b.buf[b.start:b.end], err
	}
	if b.end-b.start < n {
		return b.buf[b.start:b.end], io.EOF
	}
	return b.buf[b.start : b.start+n : b.start+n], nil
}

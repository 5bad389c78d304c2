package capture

import (
	"errors"
	"io"
)

// readBuffer is the Reader's read buffer: the subset of bufio.Reader the
// Reader uses (Peek, Discard, Size, Read, and a look at the buffered
// bytes), with a Peek whose common case, the bytes already buffered, is
// kept apart from the refill so that it can be inlined: its cost (93) is
// above the compiler's default budget (80), so the profile-guided builds
// of the commands (default.pgo) inline it where the reader is hot.
// Records and blocks are used in place in it.
type readBuffer struct {
	r          io.Reader
	buf        []byte
	start, end int // buf[start:end] is buffered and unread
	err        error
	// base is the offset in the input of buf[0]: base+start bytes are
	// consumed.
	base int64
	// lease, when the buffer lends (see Reader.Lend), is buf's, nil when
	// it does not: bytes returned are never written over while it is
	// held, since the buffer moves to another of its pool's instead of
	// moving its unread bytes to its start.
	lease *Lease
}

func newReadBuffer(r io.Reader, size int) *readBuffer {
	return &readBuffer{r: r, buf: make([]byte, size)}
}

// Size returns the buffer's size: the most Peek can return.
func (b *readBuffer) Size() int { return len(b.buf) }

// buffered returns the bytes buffered and unread, valid until the next
// call that reads: a look at them that, unlike Peek, is always in line.
func (b *readBuffer) buffered() []byte { return b.buf[b.start:b.end] }

// Peek returns the next n bytes without consuming them, valid until the
// next call that reads. Like bufio.Reader.Peek, it returns fewer bytes and
// an error when the input ends (io.EOF) or fails first, and
// bufio.ErrBufferFull's equal when n exceeds the buffer.
func (b *readBuffer) Peek(n int) ([]byte, error) {
	if b.end-b.start >= n {
		return b.buf[b.start : b.start+n : b.start+n], nil
	}
	return b.peekSlow(n)
}

var errBufferFull = errors.New("capture: record larger than the read buffer")

func (b *readBuffer) peekSlow(n int) ([]byte, error) {
	if n > len(b.buf) {
		return b.buf[b.start:b.end], errBufferFull
	}
	if b.start > 0 {
		b.compact()
	}
	for empty := 0; b.end < n && b.err == nil; {
		m, err := b.r.Read(b.buf[b.end:])
		if m < 0 || m > len(b.buf)-b.end {
			err = errors.New("capture: input returned an invalid count from Read")
			m = 0
		}
		b.end += m
		b.err = err
		if m == 0 && err == nil {
			if empty++; empty == 100 {
				b.err = io.ErrNoProgress
			}
		}
	}
	if b.end < n {
		err := b.err
		if err == nil {
			err = io.ErrUnexpectedEOF // not reached: the loop ends with an error
		}
		return b.buf[:b.end:b.end], err
	}
	return b.buf[:n:n], nil
}

// compact moves the unread bytes to the start of the buffer, or of
// another one when the buffer lends.
func (b *readBuffer) compact() {
	b.base += int64(b.start)
	if b.lease == nil {
		b.end = copy(b.buf, b.buf[b.start:b.end])
		b.start = 0
		return
	}
	l := b.lease.pool.get()
	b.end = copy(l.buf, b.buf[b.start:b.end])
	b.start = 0
	b.lease.Release()
	b.lease, b.buf = l, l.buf
}

// lend makes the buffer lend: its bytes become its first lease.
func (b *readBuffer) lend() {
	if b.lease != nil {
		return
	}
	b.lease = &Lease{buf: b.buf, pool: &leasePool{size: len(b.buf)}}
	b.lease.refs.Store(1)
}

// consumed returns how many bytes of the input were consumed.
func (b *readBuffer) consumed() int64 { return b.base + int64(b.start) }

// Discard skips the next n bytes, which Peek returned.
func (b *readBuffer) Discard(n int) { b.start += n }

// Read reads into p, as io.Reader: buffered bytes first.
func (b *readBuffer) Read(p []byte) (int, error) {
	if b.start == b.end {
		if b.err != nil {
			return 0, b.err
		}
		if len(p) >= len(b.buf) {
			// Large reads go straight to the input.
			n, err := b.r.Read(p)
			if err != nil {
				b.err = err
			}
			b.base += int64(max(n, 0))
			return n, err
		}
		if _, err := b.peekSlow(1); b.start == b.end {
			return 0, err
		}
	}
	n := copy(p, b.buf[b.start:b.end])
	b.start += n
	return n, nil
}

// ReadByte reads one byte, as io.ByteReader; with it the buffer is a
// flate.Reader, which gzip reads without a buffer of its own.
func (b *readBuffer) ReadByte() (byte, error) {
	if b.start == b.end {
		if _, err := b.peekSlow(1); b.start == b.end {
			return 0, err
		}
	}
	c := b.buf[b.start]
	b.start++
	return c, nil
}

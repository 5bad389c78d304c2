package std

import "io"

// feeder turns pushed chunks into an io.Reader read by a goroutine: the
// bridge between the push-style Parser interface (Feed) and a pull parser
// such as net/http's ReadRequest. Feed hands a chunk to the reader
// goroutine and blocks until the goroutine has consumed it and waits for
// more (or has exited), so the parser never runs concurrently with its
// caller and never keeps a chunk after Feed returns.
type feeder struct {
	data chan []byte   // chunks, from Feed to the reader goroutine
	idle chan struct{} // the goroutine wants more data, or (closed) exited
	cur  []byte        // the rest of the current chunk (goroutine side)

	started bool // the goroutine runs (caller side)
	closed  bool // data is closed (caller side)
	exited  bool // the goroutine returned (set before idle is closed)
	eof     bool // Read returned io.EOF (goroutine side)

	// limit caps how many bytes Read hands out before reset is called
	// again (a header size limit); 0 is no limit. hitLimit is set when
	// Read stops because of it.
	limit    int64
	left     int64
	hitLimit bool

	// read counts the bytes Read handed out.
	read int64

	// rec receives a copy of what Read hands out while recording.
	rec       []byte
	recording bool
}

// maxKeptRecord is the capacity of rec kept from one recording to the
// next; a larger buffer (a huge header section) is dropped after use.
const maxKeptRecord = 64 << 10

// errLimit is returned by Read when the limit is reached.
var errLimit = io.ErrShortBuffer

// start runs fn in a new goroutine reading from f, with first as its first
// chunk, and waits until the chunk is consumed.
func (f *feeder) start(fn func(), first []byte) {
	f.data = make(chan []byte)
	f.idle = make(chan struct{})
	f.cur = first
	f.started = true
	go func() {
		defer func() {
			f.exited = true
			close(f.idle)
		}()
		fn()
	}()
	<-f.idle
}

// feed hands a chunk to the goroutine and waits until it is consumed. It
// reports false when the goroutine has exited (the data was not read).
func (f *feeder) feed(b []byte) bool {
	if f.exited || f.closed {
		return false
	}
	f.data <- b
	<-f.idle
	return true
}

// finish signals the end of input and waits for the goroutine to return.
func (f *feeder) finish() {
	if !f.started || f.closed {
		return
	}
	f.closed = true
	if !f.exited {
		close(f.data)
	}
	for range f.idle { // drains until the goroutine closes idle
	}
}

// Read implements io.Reader for the goroutine.
func (f *feeder) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		if f.eof {
			return 0, io.EOF
		}
		f.idle <- struct{}{}
		b, ok := <-f.data
		if !ok {
			f.eof = true
			return 0, io.EOF
		}
		f.cur = b
	}
	if f.limit > 0 {
		if f.left <= 0 {
			f.hitLimit = true
			return 0, errLimit
		}
		if int64(len(p)) > f.left {
			p = p[:f.left]
		}
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	f.left -= int64(n)
	f.read += int64(n)
	if f.recording {
		f.rec = append(f.rec, p[:n]...)
	}
	return n, nil
}

// record starts recording what Read hands out, after prefix (bytes the
// consumer has buffered already). The recording is bounded by the limit
// set during it.
func (f *feeder) record(prefix []byte) {
	f.rec = append(f.rec[:0], prefix...)
	f.recording = true
}

// stopRecording ends the recording and returns it; it is valid until the
// next call to record.
func (f *feeder) stopRecording() []byte {
	f.recording = false
	rec := f.rec
	if cap(f.rec) > maxKeptRecord {
		f.rec = nil
	}
	return rec
}

// setLimit starts a new budget of n bytes (0: no limit).
func (f *feeder) setLimit(n int64) {
	f.limit, f.left = n, n
}

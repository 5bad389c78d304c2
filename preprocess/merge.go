package preprocess

import (
	"bytes"
	"io"
	"strconv"
	"sync"
)

// mergedBatch is one batch file written by the recorders of several
// workers: each writes through a part of its own, which passes on whole
// records only, so that the records of the workers interleave but never
// mix. The file gets one header line, the first part's.
type mergedBatch struct {
	mu sync.Mutex
	w  io.Writer
}

// part returns the writer of one worker's recorder; only the first part's
// header is kept.
func (m *mergedBatch) part(first bool) *batchPart {
	return &batchPart{m: m, header: true, keepHeader: first, flushAt: partFlush}
}

// batchPart finds the record boundaries in what a batch.Writer writes
// (it flushes its buffer wherever it fills): every record is a command
// line, and a @data line is followed by its SIZE bytes and a newline. It
// gathers the writes and passes on partFlush bytes or more of whole
// records at a time (fewer, larger writes than one per flush of the
// batch.Writer), holding back the incomplete record at the end.
type batchPart struct {
	m          *mergedBatch
	header     bool   // the next write is the header line
	keepHeader bool   // which is written at once (the first part's) or left out
	buf        []byte // records not passed on yet, whole up to done
	done       int
	flushAt    int    // partFlush
	line       []byte // the part of a command line split by a write
	skip       int    // bytes of a @data record's payload (and newline) still to come
	err        error
}

// partFlush is how many bytes of whole records a batchPart gathers before
// it writes them out.
const partFlush = 256 << 10

var dataCommand = []byte("@data ")

func (p *batchPart) Write(b []byte) (int, error) {
	n := len(b)
	if p.err != nil {
		return 0, p.err
	}
	if p.header {
		// batch.NewWriter writes the header line alone, first, before
		// any part has records to write.
		p.header = false
		if p.keepHeader {
			p.m.mu.Lock()
			_, p.err = p.m.w.Write(b)
			p.m.mu.Unlock()
		}
		if p.err != nil {
			return 0, p.err
		}
		return n, nil
	}
	if end := p.boundary(b); end >= 0 {
		p.done = len(p.buf) + end
	}
	p.buf = append(p.buf, b...)
	if p.done >= p.flushAt {
		p.flush()
	}
	if p.err != nil {
		return 0, p.err
	}
	return n, nil
}

// flush writes out the whole records gathered.
func (p *batchPart) flush() {
	if p.done == 0 || p.err != nil {
		return
	}
	p.m.mu.Lock()
	_, p.err = p.m.w.Write(p.buf[:p.done])
	p.m.mu.Unlock()
	p.buf = append(p.buf[:0], p.buf[p.done:]...)
	p.done = 0
}

// boundary scans b, which continues the bytes written before, and
// returns the offset after the last record it completes, or -1.
func (p *batchPart) boundary(b []byte) int {
	last := -1
	for i := 0; i < len(b); {
		if p.skip > 0 {
			k := min(p.skip, len(b)-i)
			i += k
			p.skip -= k
			if p.skip == 0 {
				last = i
			}
			continue
		}
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			p.line = append(p.line, b[i:]...)
			break
		}
		line := b[i : i+j]
		if len(p.line) > 0 {
			line = append(p.line, line...)
			p.line = p.line[:0]
		}
		i += j + 1
		if size, ok := dataSize(line); ok {
			p.skip = size + 1
			if p.skip > 0 {
				continue
			}
		}
		last = i
	}
	return last
}

// dataSize returns the SIZE of a "@data FID SIZE" line.
func dataSize(line []byte) (int, bool) {
	if !bytes.HasPrefix(line, dataCommand) {
		return 0, false
	}
	sp := bytes.LastIndexByte(line, ' ')
	n, err := strconv.Atoi(string(bytes.TrimRight(line[sp+1:], "\r")))
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// close writes what is held back: the records gathered, and an
// incomplete one only if the file was cut short by an error.
func (p *batchPart) close() error {
	p.done = len(p.buf)
	p.flush()
	return p.err
}

package preprocess

import (
	"io"
	"sync"
)

// mergedBatch is one batch file written by the recorders of several
// workers: each writes through a part of its own, which a worker flushes
// once its recorder has written whole records only, so that the records
// of the workers interleave but never mix. The file gets one header line,
// the first part's.
type mergedBatch struct {
	mu sync.Mutex
	w  io.Writer
}

// part returns the writer of one worker's recorder; only the first part's
// header is kept.
func (m *mergedBatch) part(first bool) *batchPart {
	return &batchPart{m: m, header: true, keepHeader: first}
}

// batchPart gathers what one worker's recorder writes and passes it on at
// flush, when the recorder's batch.Writer has been flushed and so has
// written whole records only.
type batchPart struct {
	m          *mergedBatch
	header     bool   // the next write is the header line
	keepHeader bool   // which is written at once (the first part's) or left out
	buf        []byte // records not passed on yet
	err        error
}

func (p *batchPart) Write(b []byte) (int, error) {
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
		return len(b), nil
	}
	p.buf = append(p.buf, b...)
	return len(b), nil
}

// flush writes out the records gathered.
func (p *batchPart) flush() error {
	if len(p.buf) == 0 || p.err != nil {
		return p.err
	}
	p.m.mu.Lock()
	_, p.err = p.m.w.Write(p.buf)
	p.m.mu.Unlock()
	p.buf = p.buf[:0]
	return p.err
}

// close writes what is held back.
func (p *batchPart) close() error { return p.flush() }

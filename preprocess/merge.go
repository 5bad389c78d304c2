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
	return &batchPart{m: m, dropHeader: !first}
}

// batchPart finds the record boundaries in what a batch.Writer writes
// (it flushes its buffer wherever it fills): every record is a command
// line, and a @data line is followed by its SIZE bytes and a newline. It
// holds back the incomplete record at the end of a write, at most one
// record.
type batchPart struct {
	m          *mergedBatch
	dropHeader bool   // the next write is the header line, to leave out
	pending    []byte // the start of an incomplete record
	line       []byte // the part of a command line split by a write
	skip       int    // bytes of a @data record's payload (and newline) still to come
	err        error
}

var dataCommand = []byte("@data ")

func (p *batchPart) Write(b []byte) (int, error) {
	n := len(b)
	if p.err != nil {
		return 0, p.err
	}
	if p.dropHeader {
		// batch.NewWriter writes the header line alone, first.
		p.dropHeader = false
		return n, nil
	}
	end := p.boundary(b)
	if end < 0 {
		p.pending = append(p.pending, b...)
		return n, nil
	}
	m := p.m
	m.mu.Lock()
	if len(p.pending) > 0 {
		_, p.err = m.w.Write(p.pending)
	}
	if p.err == nil {
		_, p.err = m.w.Write(b[:end])
	}
	m.mu.Unlock()
	p.pending = append(p.pending[:0], b[end:]...)
	if p.err != nil {
		return 0, p.err
	}
	return n, nil
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

// close writes what is held back (nothing, after a batch.Writer's last
// Flush, unless the file was cut short by an error).
func (p *batchPart) close() error {
	if p.err != nil || len(p.pending) == 0 {
		return p.err
	}
	p.m.mu.Lock()
	defer p.m.mu.Unlock()
	_, p.err = p.m.w.Write(p.pending)
	p.pending = p.pending[:0]
	return p.err
}

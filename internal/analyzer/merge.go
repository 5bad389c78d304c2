package analyzer

import (
	"bytes"
	"io"
	"sync"
)

// mergedLog is one log file written by the analyzers of a Parallel: each
// writes through a part of its own, whose writes (whole records: the log
// writers write complete blocks) go to the file under a lock. In the TSV
// layout the file gets one header, the first part's, and one #close line,
// written by close after the last part closed.
type mergedLog struct {
	mu        sync.Mutex
	w         io.Writer
	tsv       bool
	closeLine []byte // the #close line of the last part that closed
}

// part returns the writer of one analyzer; only the first part's header
// is kept.
func (m *mergedLog) part(first bool) io.Writer {
	return &logPart{m: m, dropHeader: m.tsv && !first}
}

// close writes the #close line.
func (m *mergedLog) close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.closeLine) == 0 {
		return nil
	}
	_, err := m.w.Write(m.closeLine)
	m.closeLine = nil
	return err
}

type logPart struct {
	m          *mergedLog
	dropHeader bool // the next write is a header to leave out
}

var closePrefix = []byte("#close\t")

func (p *logPart) Write(b []byte) (int, error) {
	n := len(b)
	if p.dropHeader {
		// A TSV log writer writes its header alone, in its first write.
		p.dropHeader = false
		return n, nil
	}
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tsv {
		// Close writes #close at the end of the writer's last write.
		// Records never start with '#': their first field is ts.
		last := bytes.LastIndexByte(b[:max(len(b)-1, 0)], '\n') + 1
		if bytes.HasPrefix(b[last:], closePrefix) {
			m.closeLine = append(m.closeLine[:0], b[last:]...)
			b = b[:last]
		}
	}
	if len(b) == 0 {
		return n, nil
	}
	if _, err := m.w.Write(b); err != nil {
		return 0, err
	}
	return n, nil
}

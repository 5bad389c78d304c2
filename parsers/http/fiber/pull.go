package fiber

import "bytes"

// source hands the stream to straight-line parsing code. When the chunk at
// hand is used up it calls more, which suspends the parser until the next
// chunk arrives; more reports false at the end of the stream. How more
// suspends is what distinguishes Goroutine from Coroutine.
type source struct {
	chunk []byte
	line  []byte // a line begun in an earlier chunk
	more  func() bool
}

// readLine returns the next line without its line end; ok is false at the
// end of the stream.
func (s *source) readLine() (line []byte, ok bool, err error) {
	s.line = s.line[:0]
	for {
		if i := bytes.IndexByte(s.chunk, '\n'); i >= 0 {
			line = s.chunk[:i]
			s.chunk = s.chunk[i+1:]
			if len(s.line) > 0 {
				s.line = append(s.line, line...)
				line = s.line
			}
			return trimCR(line), true, nil
		}
		if len(s.line)+len(s.chunk) > maxLine {
			return nil, false, errLineTooLong
		}
		s.line = append(s.line, s.chunk...)
		s.chunk = nil
		if !s.more() {
			if len(s.line) > 0 {
				return nil, false, errTruncated
			}
			return nil, false, nil
		}
	}
}

// skip passes over n bytes.
func (s *source) skip(n int64) bool {
	for n > 0 {
		if len(s.chunk) == 0 && !s.more() {
			return false
		}
		k := min(int64(len(s.chunk)), n)
		s.chunk = s.chunk[k:]
		n -= k
	}
	return true
}

// parseRequests is the parser as straight-line code: the grammar reads
// top to bottom, and suspension is hidden in source.more.
func parseRequests(s *source, emit func(*Request)) error {
	var r Request
	for {
		line, ok, err := s.readLine()
		if !ok {
			return err
		}
		if len(line) == 0 {
			continue
		}
		if err := requestLine(line, &r); err != nil {
			return err
		}
		kind, length := noBody, int64(0)
		for {
			line, ok, err := s.readLine()
			if !ok {
				return orTruncated(err)
			}
			if len(line) == 0 {
				break
			}
			if err := header(line, &r, &kind, &length); err != nil {
				return err
			}
		}
		switch kind {
		case lengthBody:
			if !s.skip(length) {
				return errTruncated
			}
			r.BodyLen = length
		case chunkedBody:
			if err := skipChunks(s, &r); err != nil {
				return err
			}
		}
		emit(&r)
	}
}

// skipChunks passes over a chunked body and its trailers.
func skipChunks(s *source, r *Request) error {
	for {
		line, ok, err := s.readLine()
		if !ok {
			return orTruncated(err)
		}
		n, err := chunkSize(line)
		if err != nil {
			return err
		}
		if n == 0 {
			for {
				line, ok, err := s.readLine()
				if !ok {
					return orTruncated(err)
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if !s.skip(n) {
			return errTruncated
		}
		r.BodyLen += n
		if _, ok, err := s.readLine(); !ok {
			return orTruncated(err)
		}
	}
}

func orTruncated(err error) error {
	if err == nil {
		return errTruncated
	}
	return err
}

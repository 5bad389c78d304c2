package fasthttp

import (
	"bytes"
)

// The states of a direction.
const (
	stHead       = iota // before a request or status line: collecting a head
	stBody              // a body of known length (remaining bytes)
	stChunkSize         // a chunk-size line
	stChunkData         // chunk data (remaining bytes)
	stChunkCRLF         // the line end after chunk data
	stTrailer           // trailer lines, up to an empty one
	stUntilClose        // a body that ends with the connection
	stResync            // after a gap: looking for the next request or status line
	stDead              // not parsed any further
)

// side is the Parser of one direction.
type side struct {
	cs    *conn
	resp  bool
	state int
	done  bool
	// buf holds a head, or a chunk-size or trailer line, split across
	// chunks; scanned is how far it was searched for the head's end.
	buf     []byte
	scanned int
	// remaining counts the bytes left of a body or chunk.
	remaining int64
	// The message whose body is read: its record, its length so far, and
	// for a compressed body the bytes kept to decompress (zbuf), or
	// zskip once they would exceed MaxInflate or a gap broke them.
	rec        *record
	bodyLen    int64
	compressed bool
	zskip      bool
	zbuf       []byte
	// lastCR and lineOpen follow the lines of a body read until the
	// connection closes (see countLines).
	lastCR, lineOpen bool
	// lineStart says resync is at the start of a line.
	lineStart bool
	// info is the record an interim (1xx) reply was for: its final
	// reply comes next.
	info *record
}

func (s *side) reset() {
	buf := s.buf[:0]
	if cap(buf) > keptBuf {
		buf = nil
	}
	s.cs.a.putZ(s.zbuf)
	*s = side{cs: s.cs, resp: s.resp, buf: buf}
}

// Feed implements parsers.Parser.
func (s *side) Feed(data []byte) {
	for len(data) > 0 && !s.done && !s.cs.stopped {
		switch s.state {
		case stHead:
			data = s.feedHead(data)
		case stBody, stChunkData:
			n := int(min(s.remaining, int64(len(data))))
			s.body(data[:n])
			s.remaining -= int64(n)
			data = data[n:]
			if s.remaining == 0 {
				if s.state == stBody {
					s.endMessage()
				} else {
					s.state = stChunkCRLF
				}
			}
		case stChunkCRLF:
			// The CR LF after chunk data; what precedes the LF is skipped.
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return
			}
			data = data[i+1:]
			s.state = stChunkSize
		case stChunkSize, stTrailer:
			var line []byte
			var ok bool
			if line, data, ok = s.line(data); ok {
				s.framingLine(line)
			}
		case stUntilClose:
			s.body(data)
			if !s.compressed {
				s.countLines(data)
			}
			return
		case stResync:
			data = s.resync(data)
		default:
			return
		}
	}
}

// feedHead collects a message head and hands it to fasthttp once whole.
// A head within one chunk is parsed where it lies.
func (s *side) feedHead(data []byte) []byte {
	if len(s.buf) == 0 {
		// Line ends between messages (after a body, say) are skipped, as
		// fasthttp skips them before a start line.
		for len(data) > 0 && (data[0] == '\r' || data[0] == '\n') {
			data = data[1:]
		}
		if len(data) == 0 {
			return nil
		}
		if end := headEnd(data, 0); end > 0 {
			s.head(data[:end])
			return data[end:]
		}
	}
	had := len(s.buf)
	n := min(len(data), MaxHeader+1-had)
	s.buf = append(s.buf, data[:n]...)
	if had == 0 {
		s.scanned = len(s.buf) // searched in place above
	}
	end := headEnd(s.buf, max(s.scanned-3, 0))
	if end < 0 {
		s.scanned = len(s.buf)
		if len(s.buf) > MaxHeader {
			s.cs.a.stats.LargeHeaders++
			s.state = stDead
		}
		return nil
	}
	s.head(s.buf[:end])
	s.buf, s.scanned = s.buf[:0], 0
	return data[end-had:]
}

// headEnd returns the length of the head at the start of b, through the
// empty line that ends it (CR LF or a lone LF), or -1 when b does not
// hold it whole; the search starts at from.
func headEnd(b []byte, from int) int {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		case i >= len(b)-1:
			return -1
		}
	}
}

// line returns the next line of data (without its end), joining a line
// split across chunks in buf; ok is false when the line is not whole yet.
func (s *side) line(data []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		if len(s.buf)+len(data) > MaxHeader {
			s.cs.a.stats.LongLines++
			s.state = stDead
			return nil, nil, false
		}
		s.buf = append(s.buf, data...)
		return nil, nil, false
	}
	line, rest = data[:i], data[i+1:]
	if len(s.buf) > 0 {
		s.buf = append(s.buf, line...)
		line = s.buf
		s.buf = s.buf[:0]
	}
	return bytes.TrimSuffix(line, []byte{'\r'}), rest, true
}

// framingLine handles a chunk-size line or a trailer line.
func (s *side) framingLine(line []byte) {
	if s.state == stTrailer {
		if len(line) == 0 {
			s.endMessage()
		}
		return
	}
	size, ok := chunkSize(line)
	switch {
	case !ok:
		// Not a chunk size: fasthttp fails the body; the message ends
		// with what was read.
		s.endMessage()
		s.state, s.lineStart = stResync, true
		s.cs.a.stats.Resyncs++
	case size == 0:
		s.state = stTrailer
	default:
		s.state, s.remaining = stChunkData, size
	}
}

// chunkSize parses the hexadecimal size that starts a chunk-size line
// (extensions after it are ignored); a size too large for an int64 reads
// as the largest one.
func chunkSize(line []byte) (int64, bool) {
	line = bytes.TrimLeft(line, " \t")
	var n int64
	digits := 0
	for _, c := range line {
		var d int64
		switch {
		case '0' <= c && c <= '9':
			d = int64(c - '0')
		case 'a' <= c && c <= 'f':
			d = int64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = int64(c-'A') + 10
		default:
			return n, digits > 0
		}
		if n > (1<<63-1)>>4 {
			n = 1<<63 - 1
		} else {
			n = n<<4 | d
		}
		digits++
	}
	return n, digits > 0
}

// body counts body bytes, and keeps those of a compressed body.
func (s *side) body(p []byte) {
	s.bodyLen += int64(len(p))
	if !s.compressed || s.zskip {
		return
	}
	if len(s.zbuf)+len(p) > MaxInflate {
		s.zskip = true
		s.cs.a.putZ(s.zbuf)
		s.zbuf = nil
		s.cs.a.stats.InflateSkipped++
		return
	}
	s.zbuf = append(s.zbuf, p...)
}

// countLines adds to the length of a body read until the connection
// closes what Zeek adds: it reads such a body as lines, each ended by CR
// LF, a lone LF or a lone CR, and counts two bytes for every line end,
// the last line's too when the stream does not end it (see Finish). A
// lone CR or LF thus counts one byte more than it is.
func (s *side) countLines(p []byte) {
	if len(p) == 0 {
		return
	}
	ends := bytes.Count(p, []byte{'\r'}) + bytes.Count(p, []byte{'\n'})
	pairs := bytes.Count(p, []byte("\r\n"))
	if s.lastCR && p[0] == '\n' {
		pairs++
	}
	s.bodyLen += int64(ends - 2*pairs)
	last := p[len(p)-1]
	s.lastCR = last == '\r'
	s.lineOpen = last != '\r' && last != '\n'
}

// startBody begins reading the body of rec's message in state st (stBody
// with its length, stChunkSize, stUntilClose), compressed when its
// Content-Encoding is gzip or deflate. A body of length 0 ends at once.
func (s *side) startBody(rec *record, st int, length int64, compressed bool) {
	s.rec, s.bodyLen, s.compressed, s.zskip = rec, 0, compressed, false
	s.lastCR, s.lineOpen = false, false
	if compressed {
		s.zbuf = s.cs.a.getZ()
	}
	s.state, s.remaining = st, length
	if st == stBody && length == 0 {
		s.endMessage()
	}
}

// endMessage ends the message whose body was being read: its length goes
// to its record, and a reply's record is reported.
func (s *side) endMessage() {
	n := s.bodyLen
	if s.compressed && !s.zskip {
		n = s.cs.a.inflatedLen(s.zbuf)
	}
	s.cs.a.putZ(s.zbuf)
	s.zbuf = nil
	rec := s.rec
	s.rec, s.state = nil, stHead
	if rec == nil {
		return
	}
	if s.resp {
		rec.respLen = n
		s.cs.done(rec)
	} else {
		rec.reqLen = n
	}
}

// Gap implements parsers.Parser. A gap inside a body of known length, or
// one that runs until the connection closes, only adds to its length (a
// compressed body can no longer be decompressed: its wire length counts).
// Anywhere else the message ends and the direction looks for the next
// request or status line.
func (s *side) Gap(n int) {
	if s.done || s.cs.stopped || n <= 0 {
		return
	}
	s.cs.a.stats.Gaps++
	if s.compressed && !s.zskip {
		s.zskip = true
		s.cs.a.putZ(s.zbuf)
		s.zbuf = nil
	}
	switch s.state {
	case stBody, stChunkData:
		if int64(n) < s.remaining {
			s.bodyLen += int64(n)
			s.remaining -= int64(n)
			return
		}
		s.bodyLen += s.remaining
		if s.state == stBody {
			s.endMessage()
			return // the gap ran past the body; what follows is a new message
		}
	case stUntilClose:
		s.bodyLen += int64(n)
		return
	case stDead:
		return
	case stHead:
		s.cutHead()
	}
	if s.rec != nil {
		s.endMessage()
	}
	s.buf, s.scanned = s.buf[:0], 0
	s.state, s.lineStart = stResync, true
	s.cs.a.stats.Resyncs++
}

// cutHead parses the complete lines of a head a gap cut short, as if the
// head ended there: the message is reported with what came before the
// gap, as Zeek reports it (its body, if any, is lost in the gap).
func (s *side) cutHead() {
	i := bytes.LastIndexByte(s.buf, '\n')
	if i < 0 {
		return
	}
	s.buf = append(s.buf[:i+1], '\r', '\n')
	s.head(s.buf)
}

// resyncPeek is how many bytes of a line resync looks at to tell whether
// it starts a message: more than the longest method.
const resyncPeek = 32

// resync skips data up to a line that starts a request (a method token, a
// space) or a reply ("HTTP/") and hands the rest to the head state. The
// start of a line split across chunks waits in buf.
func (s *side) resync(data []byte) []byte {
	for len(data) > 0 {
		if s.lineStart {
			had := len(s.buf)
			n := min(len(data), resyncPeek-had)
			s.buf = append(s.buf, data[:n]...)
			match, decided := s.startsMessage(s.buf)
			if match {
				s.state, s.lineStart, s.scanned = stHead, false, 0
				// The head state takes data from where buf held it
				// before (buf holds no line end: the head ends in data).
				s.buf = s.buf[:had]
				return data
			}
			if !decided && len(s.buf) < resyncPeek {
				return nil // all of data is in buf
			}
			// Not a start line (an undecided buf holds no line end, so
			// the line's end is in data).
			s.buf, s.lineStart = s.buf[:0], false
		}
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return nil
		}
		data = data[j+1:]
		s.lineStart = true
	}
	return nil
}

// startsMessage reports whether b starts like a request line (a method of
// upper-case letters and a space) or a status line ("HTTP/"), whichever the
// direction carries; decided is false when b is too short to tell.
func (s *side) startsMessage(b []byte) (match, decided bool) {
	if s.resp {
		const status = "HTTP/"
		if len(b) < len(status) {
			return false, string(b) != status[:len(b)]
		}
		return string(b[:len(status)]) == status, true
	}
	for i, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
		case c == ' ':
			return i > 0, true
		default:
			return false, true
		}
	}
	return false, false
}

// Finish implements parsers.Parser: a body that runs until the connection
// closes ends, and so does one cut short; a head not yet whole is dropped.
func (s *side) Finish() {
	if s.done {
		return
	}
	s.done = true
	if s.rec != nil && !s.cs.stopped {
		switch s.state {
		case stUntilClose:
			if s.lineOpen {
				s.bodyLen += 2
			}
			s.endMessage()
		case stBody, stChunkSize, stChunkData, stChunkCRLF, stTrailer:
			s.endMessage()
		}
	}
}

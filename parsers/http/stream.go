package http

import (
	"bytes"
	"encoding/binary"
)

// direction parses one side of a connection. It plays the part of Zeek's
// ContentLine analyzer (splitting the stream into lines, or passing body
// bytes through unsplit) and hands lines and body data to the request or
// reply logic. It implements parsers.Parser.
//
// Lines end, as in Zeek, at CR LF, at a lone LF or at a lone CR (inside the
// body of a multipart part only CR LF ends a line). A line that fits in the
// chunk being fed is passed on as a slice of it; only a line split across
// chunks is copied, into line, which never grows beyond the line limit.
type direction struct {
	c     *connState
	orig  bool
	state uint8

	// plain is the number of bytes still to pass through unsplit (a body of
	// known length, chunk data).
	plain int64
	// lastCR says the previous line ended with a CR at the end of a chunk,
	// so an LF starting the next chunk belongs to it; crInBody says that
	// line lay inside a body whose length bodyLeft tracks.
	lastCR, crInBody bool
	// line holds the start of a line that the previous chunk did not end.
	line []byte
	// skipLong says a line was cut at the limit and the rest of it is
	// being skipped.
	skipLong bool
	eof      bool
	// http09Started says the HTTP/0.9 reply has begun.
	http09Started bool
	// dead is set when a gap stopped the direction (StopOnGap).
	dead bool
	// fromBuf says the line being handled lives in line, not in the chunk.
	fromBuf bool
	// headerEvent says an http_header event of the current message already
	// made sure, during this Feed, that its record exists; until another
	// message starts, a header the scripts ignore needs nothing more.
	headerEvent bool

	// pos is the stream offset just past the data handled so far: bytes
	// fed and bytes missing in gaps.
	pos int64

	// lines is where head has scanHead describe the lines of a head.
	lines [scanLines]uint64

	msg message
}

func (d *direction) reset() {
	d.state = stateLine
	d.plain = 0
	d.lastCR, d.crInBody = false, false
	d.line = d.line[:0]
	d.skipLong, d.eof, d.dead = false, false, false
	d.http09Started, d.fromBuf, d.headerEvent = false, false, false
	d.pos = 0
	d.msg.active, d.msg.endOfData, d.msg.inHeader = false, false, false
	d.msg.pending, d.msg.lineOpen = nil, false
	d.msg.bodyLeft = -1
	d.msg.mime.reset()
	d.sniffRelease()
	d.msg.sniff, d.msg.part = sniffer{}, sniffer{done: true}
}

// dropLineState forgets a partial line and any pending line mode, as when
// Zeek removes the ContentLine analyzer of a direction.
func (d *direction) dropLineState() {
	d.plain = 0
	d.lastCR = false
	d.line = d.line[:0]
	d.skipLong = false
}

// Feed parses the next chunk of the direction's stream.
func (d *direction) Feed(data []byte) {
	c := d.c
	d.headerEvent = false
	if c.stopped || d.eof || d.dead {
		d.pos += int64(len(data))
		return
	}
	for len(data) > 0 && !c.stopped {
		if d.lastCR {
			d.lastCR = false
			if data[0] == '\n' {
				d.pos++
				if d.crInBody && d.msg.bodyLeft > 0 {
					d.msg.bodyLeft--
				}
				data = data[1:]
				continue
			}
		}
		if d.plain > 0 {
			n := len(data)
			if int64(n) > d.plain {
				n = int(d.plain)
			}
			if m := &d.msg; m.bodyLeft >= 0 && m.expect > 0 && int64(n) > m.expect {
				// A part's Content-Length put a multipart or message body
				// in plain delivery: stop where the body's own count ends
				// (Zeek counts the whole segment, so its count depends on
				// segmentation).
				n = int(m.expect)
			}
			d.plain -= int64(n)
			d.advance(n)
			d.deliverPlain(data[:n])
			data = data[n:]
			continue
		}
		switch d.state {
		case stateNothing:
			d.pos += int64(len(data))
			return
		case stateHTTP09:
			d.pos += int64(len(data))
			d.http09(data)
			return
		}
		if d.canTakeHead() {
			if n := d.head(data); n > 0 {
				data = data[n:]
				continue
			}
		}
		if d.canTakeChunkLine() {
			if n := d.chunks(data); n > 0 {
				data = data[n:]
				continue
			}
		}
		if d.countsLines() {
			d.countLines(data)
			return
		}
		n := d.splitLine(data)
		data = data[n:]
	}
	d.msg.keepPendingHeader()
}

// canTakeHead says the fast path of head applies: a request or status line
// is due, or header lines, with no partial line carried over and the
// default line ends.
func (d *direction) canTakeHead() bool {
	m := &d.msg
	return len(d.line) == 0 && !d.skipLong &&
		(d.state == stateLine || d.state == stateMessage && m.active && m.inHeader && !m.mime.crlfOnly && m.bodyLeft < 0)
}

// head is the fast path for message heads (start line, header lines, empty
// line) as they nearly always arrive: whole lines ended by CR LF or LF, no
// folded line. One scanHead finds the lines of a head at once, proving on
// the way that no lone CR (a line end to Zeek) hides in them, that no line
// is continued by the next, and where each header name ends. head hands
// the lines on and stops where scanHead did, at the start of a line that
// the general path must take (see scanHeadGeneric), where the header
// section would grow beyond its limit, or where the message's body begins.
// It returns the bytes consumed. The start line and the header lines are
// handled in one loop of one function: a call per message between them
// would cost more than the few header lines of a typical request.
func (d *direction) head(data []byte) int {
	c, m := d.c, &d.msg
	maxHeader := c.cfg.maxHeader
	pos := 0
heads:
	for !c.stopped && d.canTakeHead() {
		// The AVX2 scanner, which nearly every head takes, is called
		// from here, without scanHead's call in between.
		var n int
		if b := data[pos:]; useAVX2 && len(b) >= 32 && len(b) <= maxScan {
			n = scanHeadAVX2(b, &d.lines, c.cfg.maxLine)
		} else {
			n = scanHead(b, &d.lines, c.cfg.maxLine)
		}
		if n == 0 {
			return pos
		}
		// The lines' offsets are counted from base.
		base, lines := pos, d.lines[:n]
		if d.state == stateLine {
			end := base + int(uint32(lines[0]))
			next := end + 1 + int(lines[0]>>63)
			d.advance(next - pos)
			d.fromBuf = false // handleLine for stateLine, without its switch
			if d.orig {
				c.requestLine(d, data[pos:end:end])
			} else {
				c.replyLine(d, data[pos:end:end])
			}
			pos = next
			// A start line taken opens a message whose header lines
			// head may take (canTakeHead); any other leaves the state
			// elsewhere.
			if c.stopped || d.state != stateMessage {
				continue
			}
			lines = lines[1:]
		}
		if m.pending != nil && len(lines) > 0 {
			// The header line that the previous chunk ended with is not
			// continued by the next.
			d.finishHeader()
		}
		// The stream offset and the bytes of the header section are
		// counted in from and left, and stored when the lines are
		// taken: what the lines lead to does not read them. In a header
		// section, no multipart or message body counts bytes (bodyLeft <
		// 0), so the stream offset is all there is to advance.
		from, left := pos, maxHeader-m.headerBytes
		for _, li := range lines {
			end := base + int(uint32(li))
			n := end - pos // the line's length
			if n+2 > left {
				d.tookLines(pos-from, maxHeader-left)
				return pos
			}
			left -= n + 2
			line := data[pos:end:end]
			name := base + int(uint32(li>>32)&(1<<31-1)) - pos
			pos = end + 1 + int(li>>63)
			switch {
			case n == 0:
				d.tookLines(pos-from, maxHeader-left)
				// The end of the head, which for a request nearly always
				// ends the request too.
				m.inHeader = false
				if d.orig && m.framedNoBody(c.connClose) {
					c.requestWithoutBody()
				} else {
					d.endHead()
				}
				continue heads
			case name > 0 && name < len(line) && line[name] == ':' && line[0] != '(':
				if mayBeKnown(line[0], name) {
					d.takeHeader(line, name)
				} else {
					d.otherHeader()
				}
			default:
				if name, value, ok := splitHeader(line); ok {
					d.submitHeader(name, value)
				}
			}
		}
		d.tookLines(pos-from, maxHeader-left)
	}
	return pos
}

// tookLines stores what head counted in its locals: n bytes of
// the stream taken, and headerBytes, the bytes of the header section.
func (d *direction) tookLines(n, headerBytes int) {
	d.pos += int64(n)
	d.msg.headerBytes = headerBytes
}

// canTakeChunkLine says the fast path of chunks applies: a chunked body
// (not a multipart or message one, which the MIME parser reads) expects a
// chunk-size line or the line end after chunk data, with no partial line
// carried over, and an empty line cannot switch a CONNECT to a tunnel.
func (d *direction) canTakeChunkLine() bool {
	m := &d.msg
	return d.state == stateMessage && m.active && !m.endOfData && !m.inHeader &&
		(m.chunk == chunkSize || m.chunk == chunkDataCRLF) && m.ctype == typeOther &&
		len(d.line) == 0 && !d.skipLong && (d.orig || !d.c.connectRequest)
}

// chunks is the fast path for a chunked body as it nearly always is: the
// CR LF (or LF) after chunk data, chunk-size lines of hexadecimal digits
// only, ended by CR LF, and chunk data, in a loop. It does with them what
// the general path does (entityData) and returns the bytes consumed; it
// stops where the general path must take a line, at the last chunk (whose
// trailer is a header section), or at the end of data.
func (d *direction) chunks(data []byte) int {
	m := &d.msg
	pos := 0
	for pos < len(data) {
		switch m.chunk {
		case chunkDataCRLF:
			n := 0
			switch {
			case data[pos] == '\n':
				n = 1
			case data[pos] == '\r' && pos+1 < len(data) && data[pos+1] == '\n':
				n = 2
			default:
				return pos
			}
			d.advance(n)
			m.chunk = chunkSize
			pos += n
		case chunkSize:
			var size int64
			i, lim := pos, min(len(data), pos+16)
			for ; i < lim; i++ {
				v := hexValue[data[i]]
				if v > 15 {
					break
				}
				size = size<<4 | int64(v)
			}
			if i == pos || i+1 >= len(data) || data[i] != '\r' || data[i+1] != '\n' {
				return pos
			}
			d.advance(i + 2 - pos)
			pos = i + 2
			if size <= 0 {
				m.inHeader = true
				m.chunk = chunkTrailer
				return pos
			}
			m.chunk = chunkData
			m.expect = size
			d.plain = size
		case chunkData:
			n := len(data) - pos
			if int64(n) > d.plain {
				n = int(d.plain)
			}
			d.plain -= int64(n)
			d.advance(n)
			if m.encoding == encIdentity {
				// entityData and deliverBody for chunk data that is only
				// counted (and sniffed).
				if d.sniffs() {
					d.collect(&m.sniff, data[pos:pos+n], false)
				}
				m.expect -= int64(n)
				if m.expect <= 0 {
					d.plain = 0
					m.chunk = chunkDataCRLF
				}
				m.bodyLen += int64(n)
			} else {
				d.deliverPlain(data[pos : pos+n])
			}
			pos += n
		default:
			return pos
		}
	}
	return pos
}

// takeHeader is headerLine for a header line known not to be folded,
// whose name, of length colon, is followed by ':' (see scanHeadGeneric). It goes
// no further than the name for the headers nobody acts on.
func (d *direction) takeHeader(line []byte, colon int) {
	// A request's Host and User-Agent, which nearly every request
	// carries: what the general case below does with them, without
	// classifying.
	switch {
	case colon == 4 && d.orig && binary.LittleEndian.Uint32(line)|fold32 == nHost:
		r := d.c.reqState()
		r.tx.Host = r.set(&r.host, headerValue(line, colon))
		return
	case colon == 10 && d.orig && binary.LittleEndian.Uint64(line)|fold64 == nUserAgent0 &&
		binary.LittleEndian.Uint64(line[2:])|fold64 == nTen1[0]:
		r := d.c.reqState()
		r.tx.UserAgent = r.set(&r.userAgent, headerValue(line, colon))
		return
	}
	name := line[:colon]
	kind := classify(name)
	if kind == hdrOther {
		d.otherHeader()
		return
	}
	value := headerValue(line, colon)
	switch {
	case kind >= hdrReferer && kind <= hdrUserAgent && d.orig:
		// What evHeader does with it, the record being the request's.
		r := d.c.reqState()
		buf, field := r.clientField(kind)
		*field = r.set(buf, value)
		return
	case kind >= hdrReferer:
		d.c.evHeader(d.orig, kind, name, value) // as submitKnownHeader does
		return
	case kind == hdrConnection && d.orig && isKeepAlive(value):
		// A request's usual Connection header, whose http_header event
		// does no more than that of a header nobody acts on.
		d.c.keepAlive = true
		d.otherHeader()
		return
	}
	d.submitKnownHeader(kind, name, value)
}

// headerValue returns the value of a header line whose name, of length
// colon, is followed by ':', without its leading white space.
func headerValue(line []byte, colon int) []byte {
	j := colon + 1
	if j < len(line) && line[j] == ' ' {
		j++ // the one space that nearly always follows the colon
	}
	for j < len(line) && class[line[j]]&clsSpace != 0 {
		j++
	}
	return line[j:]
}

// endHead handles the empty line that ends a message's header section,
// once head has cleared inHeader and found that the message is no
// request without a body.
func (d *direction) endHead() {
	d.submitAllHeaders()
	if !d.orig && d.c.connectRequest {
		d.c.tunnel()
	}
}

var crByte = []byte{'\r'}

// splitLine takes the next line (or the start of one) from data, handles it,
// and returns the number of bytes consumed.
func (d *direction) splitLine(data []byte) int {
	if d.skipLong {
		return d.skipLongLine(data)
	}
	m := &d.msg
	limit, bounded := len(data), false
	if m.bodyLeft >= 0 && m.bodyLeft <= int64(limit) {
		// A multipart or message body of known length ends in this
		// chunk; Zeek ends a line the body leaves unterminated.
		limit, bounded = int(m.bodyLeft), true
	}
	var i, t int
	if m.crlfOnly() {
		i, t = findCRLF(data[:limit], len(d.line) > 0 && d.line[len(d.line)-1] == '\r')
	} else {
		i, t = findEOL(data[:limit])
	}
	maxLine := d.c.cfg.maxLine
	if i < 0 {
		if bounded {
			if limit == 0 && len(d.line) == 0 {
				m.bodyLeft = -1 // the body ended with its last line
				return 0
			}
			return d.endLine(data[:limit], limit, false)
		}
		if len(d.line)+limit > maxLine {
			return d.cutLongLine(data)
		}
		d.appendLine(data[:limit])
		d.advance(limit)
		return limit
	}
	if len(d.line)+i > maxLine {
		return d.cutLongLine(data)
	}
	return d.endLine(data[:i], i+t, t == 1 && data[i] == '\r')
}

// appendLine adds p to the start of a line kept across chunks. A line
// outgrowing maxKeptBuffer moves to a buffer a closed connection left, if
// one is large enough.
func (d *direction) appendLine(p []byte) {
	if n := len(d.line) + len(p); n > cap(d.line) && n > maxKeptBuffer {
		d.line = d.c.a.lines.grow(d.line, n)
	}
	d.line = append(d.line, p...)
}

// advance accounts for n bytes consumed from the stream.
func (d *direction) advance(n int) {
	d.pos += int64(n)
	if d.msg.bodyLeft > 0 {
		d.msg.bodyLeft = max(d.msg.bodyLeft-int64(n), 0)
	}
}

// endLine hands on a complete line: the carried-over start of it, if any,
// followed by rest. n is the number of chunk bytes the line and its
// terminator used; cr says the terminator was a lone CR.
func (d *direction) endLine(rest []byte, n int, cr bool) int {
	d.advance(n)
	d.lastCR, d.crInBody = cr, d.msg.bodyLeft >= 0
	line, fromBuf := rest, false
	if len(d.line) > 0 {
		if d.msg.crlfOnly() && len(rest) == 0 && n == 1 && d.line[len(d.line)-1] == '\r' {
			// A CR ended the previous chunk and an LF starts this one.
			d.line = d.line[:len(d.line)-1]
		}
		d.appendLine(rest)
		line, fromBuf = d.line, true
	}
	d.handleLine(line, fromBuf)
	if fromBuf {
		d.line = d.line[:0]
	}
	return n
}

// cutLongLine handles a line that exceeds the limit: its first maxLine
// bytes are handed on as a line and the rest is skipped up to the line end.
// Inside a body read as lines nothing is skipped: the piece is body data
// and the rest of the line goes on (Zeek too cuts lines, at 16 MiB, into
// pieces whose count comes out the same).
func (d *direction) cutLongLine(data []byte) int {
	d.c.a.stats.LongLines++
	maxLine := d.c.cfg.maxLine
	take := maxLine - len(d.line)
	d.appendLine(data[:take])
	d.advance(take)
	if m := &d.msg; d.state == stateMessage && m.active && !m.inHeader && m.chunk == chunkNone {
		d.entityData(d.line, false)
	} else {
		d.skipLong = true
		d.handleLine(d.line, true)
	}
	d.line = d.line[:0]
	return take
}

// countsLines says the direction is in a body that Zeek reads as lines
// only to count them (no framing, no MIME): the lines need not be split.
func (d *direction) countsLines() bool {
	m := &d.msg
	return d.state == stateMessage && m.active && !m.inHeader && !m.endOfData &&
		m.chunk == chunkNone && m.contentLength < 0 && m.ctype == typeOther &&
		(m.encoding == encIdentity || !d.c.cfg.decompress) && !d.c.connectRequest && len(d.line) == 0
}

// countLines counts a chunk of a body read as lines without splitting it:
// each line counts its bytes plus two for its end, whether CR LF, LF or
// CR, so the count is the bytes plus one per lone CR or LF. An unended last
// line gets its two at the end of the stream (lineOpen).
func (d *direction) countLines(data []byte) {
	m := &d.msg
	if d.sniffs() {
		d.sniffLines(data)
	}
	d.advance(len(data))
	n := int64(len(data) + lineEnds(data))
	m.bodyLen += n
	last := data[len(data)-1]
	m.lineOpen = last != '\r' && last != '\n'
	d.lastCR, d.crInBody = last == '\r', false
}

// lineEndsGeneric returns what the line ends in b add to its bytes when
// each counts two: one for a lone CR or LF, none for a CR LF.
func lineEndsGeneric(b []byte) int {
	lf, cr := bytes.Count(b, lfByte), bytes.Count(b, crByte)
	n := lf + cr
	if lf > 0 && cr > 0 {
		// Only then can there be a CR LF, which is one line end. Binary
		// bodies read as lines are often short and hold neither, and
		// counting a two-byte separator searches for each occurrence.
		n -= 2 * bytes.Count(b, crlfBytes)
	}
	return n
}

var (
	lfByte    = []byte{'\n'}
	crlfBytes = []byte("\r\n")
)

// skipLongLine drops bytes of a cut line up to and including its end.
func (d *direction) skipLongLine(data []byte) int {
	var i, t int
	if d.msg.crlfOnly() {
		i, t = findCRLF(data, false)
	} else {
		i, t = findEOL(data)
	}
	if i < 0 {
		d.advance(len(data))
		return len(data)
	}
	d.skipLong = false
	d.lastCR, d.crInBody = t == 1 && data[i] == '\r', d.msg.bodyLeft >= 0
	d.advance(i + t)
	return i + t
}

// findEOL returns the offset of the first line end in b (CR LF, LF, or a
// lone CR) and its length, or -1.
func findEOL(b []byte) (int, int) {
	lf := bytes.IndexByte(b, '\n')
	if lf < 0 {
		if cr := bytes.IndexByte(b, '\r'); cr >= 0 {
			return cr, 1
		}
		return -1, 0
	}
	if cr := bytes.IndexByte(b[:lf], '\r'); cr >= 0 {
		if cr == lf-1 {
			return cr, 2
		}
		return cr, 1
	}
	return lf, 1
}

// findCRLF returns the offset of the first CR LF in b and 2, or -1. When
// prevCR is set (the carried-over line ends with a CR), an LF at b[0]
// completes it: the offset is then 0 with a terminator of 1 byte, and the
// caller strips the CR.
func findCRLF(b []byte, prevCR bool) (int, int) {
	if prevCR && len(b) > 0 && b[0] == '\n' {
		return 0, 1
	}
	off := 0
	for {
		lf := bytes.IndexByte(b[off:], '\n')
		if lf < 0 {
			return -1, 0
		}
		lf += off
		if lf > 0 && b[lf-1] == '\r' {
			return lf - 1, 2
		}
		off = lf + 1
	}
}

// handleLine passes a complete line to the request or reply logic.
// fromBuf says the line lives in d.line, which is reused afterwards.
func (d *direction) handleLine(line []byte, fromBuf bool) {
	c := d.c
	d.fromBuf = fromBuf
	switch d.state {
	case stateLine:
		if d.orig {
			c.requestLine(d, line)
		} else {
			c.replyLine(d, line)
		}
	case stateMessage:
		d.deliverLine(line)
		if !d.orig && c.connectRequest && len(line) == 0 {
			c.tunnel()
		}
	case stateResync:
		if d.orig && c.looksLikeRequest(line) || !d.orig && looksLikeStatus(line) {
			c.a.stats.Resyncs++
			d.state = stateLine
			d.handleLine(line, fromBuf)
		}
	}
}

// http09 passes raw HTTP/0.9 reply data to the reply, which starts with the
// first byte and runs until the connection closes.
func (d *direction) http09(data []byte) {
	c := d.c
	if !d.http09Started {
		d.http09Started = true
		c.setVersion(&c.replyVersion, version{0, 9})
		c.unanswered.pop()
		c.connClose = true
		c.replyOngoing = true
		c.evReply(c.replyVersion, c.replyCode, nil)
		d.startMessage(c.expectReplyBody())
		d.fromBuf = false
		d.deliverLine(nil) // the empty header section
	}
	if d.msg.active {
		d.entityData(data, false)
	}
}

// Gap says n bytes of the stream are missing.
func (d *direction) Gap(n int) {
	c := d.c
	c.a.stats.Gaps++
	c.a.stats.GapBytes += int64(n)
	d.pos += int64(n)
	if c.stopped || d.eof || d.dead || n <= 0 || d.state == stateNothing {
		return
	}
	if d.msg.active && d.msg.bodyGap(d, int64(n)) {
		c.a.stats.BodyGaps++
		d.sniffEnd() // Zeek's File::Gap matches what came before
		return
	}
	if c.cfg.gaps == StopOnGap {
		if d.orig {
			c.requestMade(true)
			c.replyMade(true)
		} else {
			c.replyMade(true)
		}
		d.dead = true
		return
	}
	if d.orig {
		c.requestMade(true)
	} else {
		c.replyMade(true)
	}
	d.dropLineState()
	d.msg.dropPendingHeader()
	d.state = stateResync
}

// Finish says the direction ended (Zeek's EndpointEOF): a line the stream
// did not end is completed, and the message in progress ends.
func (d *direction) Finish() {
	c := d.c
	if d.eof || c.removed {
		d.eof = true
		return
	}
	if !c.stopped && !d.dead && len(d.line) > 0 && !d.skipLong && d.plain == 0 &&
		(d.state == stateLine || d.state == stateMessage || d.state == stateResync) {
		line := d.line
		d.handleLine(line, true)
		d.line = d.line[:0]
		d.msg.keepPendingHeader()
	}
	if m := &d.msg; m.active && m.lineOpen && !c.stopped && !d.dead {
		m.bodyLen += 2 // Zeek ends the last line at the end of the stream
		m.lineOpen = false
	}
	d.eof = true
	if d.orig {
		c.requestMade(false)
	} else {
		c.replyMade(false)
	}
}

// looksLikeRequest accepts a resynchronisation point: a request line with a
// valid "HTTP/x.y" version, so that body bytes are not taken for one.
func (c *connState) looksLikeRequest(line []byte) bool {
	sp := bytes.LastIndexByte(line, ' ')
	if sp < 0 || len(line)-sp-1 != 8 || !hasPrefixFold(line[sp+1:], "http/") ||
		parseVersion(line[sp+6:]) == (version{}) {
		return false
	}
	m := 0
	for m < len(line) && class[line[m]]&clsToken != 0 {
		m++
	}
	return m > 0 && m < sp && line[m] == ' '
}

// looksLikeStatus accepts "HTTP/x.y NNN" at the start of a line.
func looksLikeStatus(line []byte) bool {
	return len(line) >= 12 && hasPrefixFold(line, "http/") && parseVersion(line[5:]) != (version{}) &&
		line[8] == ' ' && isDigit(line[9]) && isDigit(line[10]) && isDigit(line[11])
}

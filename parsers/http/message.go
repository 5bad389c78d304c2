package http

import "math"

// Whether a message may have a body (HTTP_BODY_*).
const (
	bodyNotExpected int8 = iota
	bodyMaybe            // requests: only with Content-Length or Transfer-Encoding
	bodyExpected         // replies: a body unless framed otherwise
)

// Chunked transfer states (HTTP_Entity's chunked_transfer_state).
const (
	chunkNone     uint8 = iota
	chunkBefore         // Transfer-Encoding: chunked seen, headers not done
	chunkSize           // expecting a chunk-size line
	chunkData           // inside chunk data (delivered plainly)
	chunkDataCRLF       // expecting the line end after chunk data
	chunkTrailer        // inside the trailer section
	chunkDone
)

// Content encodings Zeek decompresses.
const (
	encIdentity uint8 = iota
	encGzip
	encDeflate
)

// MIME content types that change how a body is read.
const (
	typeOther     uint8 = iota
	typeMultipart       // body read as lines, split by boundaries
	typeMessage         // body read as lines, holding a nested entity
)

// maxFoldedHeader is MIME::max_header_bytes: continuation lines beyond it
// are dropped.
const maxFoldedHeader = 65536

// untilClose is the plain-delivery length Zeek uses for a body that runs
// until the connection closes (INT_MAX).
const untilClose = math.MaxInt32

// message is the message in progress in one direction: Zeek's HTTP_Message
// with its top-level HTTP_Entity.
type message struct {
	active    bool // a message is open
	endOfData bool // its entity ended (the message is being finished)
	inHeader  bool

	expectBody     int8
	contentLength  int64 // -1: none
	rangeLength    int64
	partialContent bool
	chunk          uint8
	expect         int64 // expect_data_length
	bodyLen        int64
	encoding       uint8

	ctype       uint8
	boundary    []byte
	hasBoundary bool
	// bodyLeft is the number of stream bytes left in a multipart or message
	// body of known length, read as lines; -1 otherwise.
	bodyLeft int64
	mime     mimeStack

	// lineOpen says a body counted as lines (countLines) ends in a line
	// without its line end.
	lineOpen bool

	headerBytes int
	// pending is the header line not yet submitted (the next line may
	// continue it). It points into the chunk being fed, or into hdr once
	// owned. pendingLevel is the MIME entity it belongs to (0: the message).
	pending      []byte
	pendingOwned bool
	pendingLevel int
	hdr          []byte

	inf inflater
	// sniff finds the body's MIME type, part that of the part open in a
	// multipart or message body (sniff.go).
	sniff, part sniffer
}

// startMessage opens a new message (InitHTTPMessage).
func (d *direction) startMessage(expectBody int8) {
	d.headerEvent = false
	m := &d.msg
	if m.sniff.buf != nil || m.part.buf != nil {
		d.sniffRelease()
	}
	m.active, m.endOfData, m.inHeader = true, false, true
	m.expectBody = expectBody
	m.contentLength, m.rangeLength, m.partialContent = -1, -1, false
	m.chunk = chunkNone
	m.expect, m.bodyLen = 0, 0
	m.encoding = encIdentity
	m.ctype, m.hasBoundary = typeOther, false
	m.bodyLeft = -1
	m.mime.reset()
	m.headerBytes = 0
	m.pending, m.pendingOwned, m.pendingLevel = nil, false, 0
	m.inf.active = false
	m.lineOpen = false
	// The sniffers' buffers are nil now: only their flags need resetting.
	m.sniff.started, m.sniff.done, m.sniff.zipped = false, false, false
	m.part.started, m.part.done, m.part.zipped = false, true, false
}

// crlfOnly says only CR LF ends lines: inside the body of a multipart part.
func (m *message) crlfOnly() bool { return m.active && m.mime.crlfOnly }

// keepPendingHeader copies a pending header line out of the chunk before
// Feed returns.
func (m *message) keepPendingHeader() {
	if m.pending != nil && !m.pendingOwned {
		m.own()
	}
}

func (m *message) own() {
	m.hdr = append(m.hdr[:0], m.pending...)
	m.pending, m.pendingOwned = m.hdr, true
}

func (m *message) dropPendingHeader() { m.pending = nil }

// deliverLine passes a line of the message (Deliver with a trailing CR LF).
func (d *direction) deliverLine(line []byte) {
	m := &d.msg
	if !m.active || m.endOfData {
		return
	}
	if m.inHeader {
		d.headerLine(line)
		return
	}
	d.entityData(line, true)
}

// deliverPlain passes body bytes delivered unsplit.
func (d *direction) deliverPlain(data []byte) {
	m := &d.msg
	if !m.active || m.endOfData || m.inHeader {
		return
	}
	d.entityData(data, false)
}

// headerLine handles a line of a header section (the message's or a
// trailer's): an empty line ends it, a line starting with white space
// continues the previous header (obsolete line folding).
func (d *direction) headerLine(line []byte) {
	m := &d.msg
	m.headerBytes += len(line) + 2
	if m.headerBytes > d.c.cfg.maxHeader {
		d.headersTooLarge()
		return
	}
	if len(line) == 0 || line[0] == 0 {
		d.finishHeader()
		m.inHeader = false
		d.submitAllHeaders()
		return
	}
	d.headerText(line, 0)
}

// headerText is MIME_Entity's NewHeader / ContHeader for the entity at level
// (0: the message).
func (d *direction) headerText(line []byte, level int) {
	m := &d.msg
	if isLWS(line[0]) {
		if m.pending != nil {
			if len(m.pending) >= maxFoldedHeader {
				return
			}
			if !m.pendingOwned {
				m.own()
			}
			m.hdr = append(m.hdr, line...)
			m.pending = m.hdr
			return
		}
		// The first header line starts with white space: Zeek strips it
		// and takes the line as a new header.
		i := 0
		for i < len(line) && isLWS(line[i]) {
			i++
		}
		line = line[i:]
		if len(line) == 0 {
			return
		}
	}
	d.finishHeader()
	m.pending, m.pendingOwned, m.pendingLevel = line, false, level
	if d.fromBuf {
		m.own() // the line lives in d.line, which is about to be reused
	}
}

// headersTooLarge gives up on a message whose header section exceeds the
// limit: it ends as interrupted and the direction resynchronises.
func (d *direction) headersTooLarge() {
	c := d.c
	c.a.stats.LargeHeaders++
	d.msg.dropPendingHeader()
	if d.orig {
		c.requestMade(true)
	} else {
		c.replyMade(true)
	}
	d.dropLineState()
	if d.state != stateNothing || !c.stopped {
		d.state = stateResync
	}
}

// finishHeader submits the pending header line, if any.
func (d *direction) finishHeader() {
	m := &d.msg
	h := m.pending
	if h == nil {
		return
	}
	m.pending = nil
	name, value, ok := splitHeader(h)
	if !ok {
		return
	}
	if m.pendingLevel == 0 {
		d.submitHeader(name, value)
	} else {
		d.submitPartHeader(m.pendingLevel, name, value)
	}
}

// submitAllHeaders decides, at the end of a header section, how the body is
// framed (HTTP_Entity::SubmitAllHeaders).
func (d *direction) submitAllHeaders() {
	m, c := &d.msg, d.c
	if m.chunk == chunkTrailer {
		m.chunk = chunkDone
		d.endOfData()
		return
	}
	if m.expectBody == bodyNotExpected {
		d.endOfData()
		return
	}
	switch {
	case m.ctype == typeMultipart || m.ctype == typeMessage:
		if m.contentLength == 0 {
			d.endOfData()
			return
		}
		if m.contentLength > 0 {
			m.expect = m.contentLength
			m.bodyLeft = m.contentLength
		}
		if m.ctype == typeMessage {
			m.mime.begin(0)
		}
	case m.chunk != chunkNone:
		m.chunk = chunkSize
	case m.contentLength >= 0:
		if m.contentLength == 0 {
			d.endOfData()
			return
		}
		m.expect = m.contentLength
		d.plain = m.contentLength
	case c.connClose || m.encoding != encIdentity:
		m.expect = untilClose
		d.plain = untilClose
	case m.expectBody != bodyExpected:
		d.endOfData()
	}
}

// framedNoBody says a request whose header section just ended has no body,
// as requests nearly always are: nothing announced one (no framing
// header, no multipart or message type, no encoding that reads to the
// end). submitAllHeaders would then end the message at once.
func (m *message) framedNoBody(connClose bool) bool {
	return m.chunk == chunkNone && m.contentLength < 0 && m.ctype == typeOther &&
		m.encoding == encIdentity && !connClose && m.expectBody == bodyMaybe
}

// requestWithoutBody ends a request that framedNoBody says has no body, as
// submitAllHeaders, endOfData, messageDone and requestMade do, without
// the cases that cannot arise: no body data, so nothing to inflate or
// sniff (unless a gap or a part left a sniffer open), and no MIME part.
func (c *connState) requestWithoutBody() {
	d := &c.orig
	m := &d.msg
	if m.inf.active || m.sniff.started || !m.part.done || m.mime.partOpen() || !c.reqOngoing || d.state != stateMessage {
		d.endOfData()
		return
	}
	m.active, m.endOfData, m.bodyLeft = false, true, -1
	m.sniff.done = true
	c.reqState().tx.RequestBodyLen = m.bodyLen
	c.reqOngoing = false
	d.state = stateLine
}

// entityData passes body data (a line, with crlf, or plain bytes) to the
// entity (HTTP_Entity::Deliver, body part).
func (d *direction) entityData(data []byte, crlf bool) {
	m := &d.msg
	switch {
	case m.ctype == typeMultipart || m.ctype == typeMessage:
		d.deliverBody(data, crlf)
		switch {
		case m.encoding != encIdentity && d.c.cfg.decompress:
			// Zeek parses the decompressed data as MIME; not reproduced.
		case crlf:
			d.mimeLine(0, data, crlf)
		default:
			d.mimePlain(data)
		}
		if m.contentLength > 0 && !m.endOfData {
			m.expect -= int64(len(data))
			if crlf {
				m.expect -= 2
			}
			if m.expect <= 0 {
				d.plain = 0
				d.endOfData()
			}
		}
	case m.chunk != chunkNone:
		switch m.chunk {
		case chunkSize:
			n, ok := atoiN(data, 16)
			if !ok {
				n = 0 // HTTP_bad_chunk_size
			}
			if n > 0 {
				m.chunk = chunkData
				m.expect = n
				d.plain = n
			} else {
				m.inHeader = true
				m.chunk = chunkTrailer
			}
		case chunkData:
			m.expect -= int64(len(data))
			if m.expect <= 0 {
				d.plain = 0
				m.chunk = chunkDataCRLF
			}
			d.deliverBody(data, false)
		case chunkDataCRLF:
			m.chunk = chunkSize
		}
	case m.contentLength >= 0:
		d.deliverBody(data, false)
		m.expect -= int64(len(data))
		if m.expect <= 0 {
			d.plain = 0
			d.endOfData()
		}
	default:
		d.deliverBody(data, crlf)
	}
}

// deliverBody counts body bytes (HTTP_Entity::DeliverBody): a line counts
// its CR LF, and compressed data counts what it decompresses to.
func (d *direction) deliverBody(data []byte, crlf bool) {
	m := &d.msg
	sniff := d.sniffs()
	if m.encoding != encIdentity && d.c.cfg.decompress {
		if !m.inf.active {
			m.inf.start(&d.c.a.tables)
		}
		if sniff {
			d.sniffZipped(data)
		}
		wasOK := !m.inf.failed
		m.bodyLen += m.inf.write(data)
		if wasOK && m.inf.failed {
			d.c.a.stats.InflateErrors++
		}
		if sniff {
			d.sniffZippedProgress()
		}
		return
	}
	if sniff {
		d.collect(&m.sniff, data, crlf)
	}
	m.bodyLen += int64(len(data))
	if crlf {
		m.bodyLen += 2
	}
}

// endOfData ends the message's entity (HTTP_Entity::EndOfData) and with it
// the message.
func (d *direction) endOfData() {
	m := &d.msg
	if m.endOfData {
		return
	}
	m.endOfData = true
	m.bodyLeft = -1
	if m.inHeader {
		d.finishHeader()
		m.inHeader = false
	} else {
		d.mimeEnd()
	}
	d.messageDone(false)
}

// messageDone finishes the message (HTTP_Message::Done): http_message_done
// reports its body length, then the request or reply counts as made.
func (d *direction) messageDone(interrupted bool) {
	m := &d.msg
	if !m.active {
		return
	}
	m.active = false
	if !m.endOfData {
		d.endOfData()
	}
	if m.inf.active {
		m.bodyLen += m.inf.flush()
		m.inf.active = false
	}
	d.sniffEnd()
	if d.orig {
		// The http_message_done handler of a request: the record takes
		// the body length.
		d.c.reqState().tx.RequestBodyLen = m.bodyLen
		d.c.requestMade(false)
	} else {
		d.c.evReplyDone(m.bodyLen)
		d.c.replyMade(false)
	}
}

// bodyGap applies a gap of n bytes to the message and reports whether it
// fell inside the body (HTTP_Entity::Undelivered); with Resync, a gap in a
// body of unknown length also counts.
func (m *message) bodyGap(d *direction, n int64) bool {
	zeek := d.c.cfg.gaps == StopOnGap
	if m.endOfData || m.inHeader || (zeek && m.bodyLen == 0) {
		return false
	}
	switch {
	case m.ctype == typeMultipart || m.ctype == typeMessage:
		if zeek {
			return false
		}
		m.bodyLen += n
		if m.bodyLeft >= 0 {
			m.bodyLeft = max(m.bodyLeft-n, 0)
		}
		if m.contentLength > 0 {
			m.expect -= n
			if m.expect <= 0 {
				d.endOfData()
			}
		}
		return true
	case m.chunk != chunkNone:
		if m.chunk == chunkData && m.expect >= n {
			m.bodyLen += n
			m.expect -= n
			d.plain = m.expect
			if m.expect == 0 {
				m.chunk = chunkDataCRLF
			}
			return true
		}
		return false
	case m.contentLength >= 0:
		if m.expect >= n {
			m.bodyLen += n
			m.expect -= n
			d.plain = m.expect
			if m.expect <= 0 {
				d.endOfData()
			}
			return true
		}
		return false
	}
	// A body running until the connection closes.
	if zeek {
		return false
	}
	m.bodyLen += n
	d.plain = max(d.plain-n, 0)
	return true
}

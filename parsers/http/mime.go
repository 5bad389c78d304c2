package http

// Multipart and message bodies. Zeek reads a body whose Content-Type is
// multipart/* or message/* as lines and hands them to its MIME parser. That
// changes http.log in three ways this file reproduces:
//
//   - the closing boundary of a multipart body ends the message, whatever
//     its Content-Length says;
//   - inside the body of a part (after the part's headers) only CR LF ends
//     a line, elsewhere a lone CR or LF does too, and every line counts two
//     bytes for its terminator in the body length;
//   - the headers of parts raise http_header events like the message's own,
//     so a part's "Host:" sets the record's host.
//
// A part with a Content-Length switches the stream to plain delivery for
// that many bytes, as in Zeek: those bytes count as they are, without line
// ends. Zeek does more with parts (file extraction, decoding) that does not
// show in http.log and is not reproduced; nor is its boundary check on the
// start of each plainly delivered segment, which depends on how TCP cut the
// stream.

// maxMIMEDepth is MIME::max_depth: deeper parts are not opened, their lines
// go to the enclosing part.
const maxMIMEDepth = 100

// mimeEntity is one open entity: level 0 is the message body itself, level
// i+1 the part currently open inside level i.
type mimeEntity struct {
	ctype         uint8
	boundary      []byte
	hasBoundary   bool
	inHeader      bool
	endOfData     bool
	hasChild      bool
	contentLength int64 // -1: none
	expect        int64
}

type mimeStack struct {
	e []mimeEntity
	// crlfOnly is the ContentLine mode Zeek switches to inside part bodies.
	crlfOnly bool
}

func (st *mimeStack) reset() {
	st.crlfOnly = false
	if len(st.e) > 0 {
		st.e[0].hasChild = false
	}
}

// partOpen says the body holds a part that mimeEnd must end.
func (st *mimeStack) partOpen() bool { return len(st.e) > 0 && st.e[0].hasChild }

// entity returns the entity at level, growing the stack as needed.
func (st *mimeStack) entity(level int) *mimeEntity {
	for len(st.e) <= level {
		st.e = append(st.e, mimeEntity{})
	}
	return &st.e[level]
}

// begin opens the message's body, or a child of level-1 when level > 0.
func (st *mimeStack) begin(parent int) {
	if parent+1 > maxMIMEDepth {
		return // exceeded_mime_max_depth
	}
	st.entity(parent).hasChild = true
	e := st.entity(parent + 1)
	e.ctype, e.hasBoundary = typeOther, false
	e.inHeader, e.endOfData, e.hasChild = true, false, false
	e.contentLength, e.expect = -1, 0
}

// mimeTop makes level 0 describe the message's body.
func (d *direction) mimeTop() *mimeEntity {
	m := &d.msg
	e := m.mime.entity(0)
	e.ctype, e.boundary, e.hasBoundary = m.ctype, m.boundary, m.hasBoundary
	e.inHeader, e.endOfData = false, m.endOfData
	return e
}

// mimeLine is NewDataLine for the entity at level, whose body the line
// belongs to.
func (d *direction) mimeLine(level int, line []byte, crlf bool) {
	st := &d.msg.mime
	var e *mimeEntity
	if level == 0 {
		e = d.mimeTop()
	} else {
		e = &st.e[level]
	}
	if e.ctype == typeMultipart && e.hasBoundary {
		switch checkBoundary(e.boundary, line) {
		case boundaryOpen:
			if e.hasChild {
				d.mimeEndChild(level)
			}
			if !e.endOfData {
				st.begin(level)
			}
			return
		case boundaryClose:
			if e.hasChild {
				d.mimeEndChild(level)
			}
			if level == 0 {
				d.endOfData()
			} else {
				d.mimePartEnd(level)
			}
			return
		}
	}
	if e.hasChild && level+1 < len(st.e) {
		d.mimePartData(level+1, line, crlf)
	}
}

// mimePartData is a part's Deliver: header lines, then body lines.
func (d *direction) mimePartData(level int, line []byte, crlf bool) {
	st := &d.msg.mime
	e := &st.e[level]
	if e.endOfData {
		return
	}
	if e.inHeader {
		if len(line) == 0 || line[0] == 0 {
			d.finishHeader()
			e.inHeader = false
			d.mimePartHeadersDone(level)
			return
		}
		d.headerText(line, level)
		return
	}
	switch {
	case e.ctype == typeMultipart || e.ctype == typeMessage:
		d.mimeLine(level, line, crlf)
	case e.contentLength >= 0:
		d.partData(line, false)
		d.mimePartCount(level, len(line))
	default:
		d.partData(line, crlf)
	}
}

// mimePartHeadersDone is a part's SubmitAllHeaders and BeginBody: the body
// of a multipart part reads only CR LF as line end, and a Content-Length
// makes the stream deliver that many bytes plainly.
func (d *direction) mimePartHeadersDone(level int) {
	st := &d.msg.mime
	e := &st.e[level]
	if st.e[level-1].ctype == typeMultipart {
		st.crlfOnly = true
	}
	if e.ctype != typeMultipart && e.ctype != typeMessage && e.contentLength >= 0 {
		if e.contentLength == 0 {
			d.mimePartEnd(level)
			return
		}
		e.expect = e.contentLength
		d.plain = e.contentLength
	}
	if e.ctype == typeMessage {
		st.begin(level)
	} else if e.ctype != typeMultipart {
		d.partBegin()
	}
}

// mimePartCount counts n bytes of a part with a Content-Length and ends the
// part when they are all there.
func (d *direction) mimePartCount(level, n int) {
	e := &d.msg.mime.e[level]
	e.expect -= int64(n)
	if e.expect <= 0 {
		d.plain = 0
		d.mimePartEnd(level)
	}
}

// mimePlain passes plainly delivered body bytes down to the innermost open
// part, whose Content-Length they count against.
func (d *direction) mimePlain(data []byte) {
	st := &d.msg.mime
	if len(st.e) == 0 {
		return
	}
	level := 0
	for st.e[level].hasChild && level+1 < len(st.e) {
		e := &st.e[level+1]
		if e.endOfData || e.inHeader {
			return
		}
		if e.ctype == typeMultipart || e.ctype == typeMessage {
			level++
			continue
		}
		if e.contentLength >= 0 {
			d.partData(data, false)
			d.mimePartCount(level+1, len(data))
		}
		return
	}
}

// mimeEndChild ends the part open inside level.
func (d *direction) mimeEndChild(level int) {
	st := &d.msg.mime
	if level+1 < len(st.e) {
		d.mimePartEnd(level + 1)
	}
	st.e[level].hasChild = false
}

// mimePartEnd is a part's EndOfData.
func (d *direction) mimePartEnd(level int) {
	st := &d.msg.mime
	e := &st.e[level]
	if e.endOfData {
		return
	}
	e.endOfData = true
	if e.ctype != typeMultipart && e.ctype != typeMessage {
		d.finish(&d.msg.part)
	}
	if e.inHeader {
		if d.msg.pendingLevel == level {
			d.finishHeader()
		}
		e.inHeader = false
	} else if e.hasChild {
		d.mimeEndChild(level)
	}
	if st.e[level-1].ctype == typeMultipart {
		st.crlfOnly = false
	}
}

// mimeEnd ends the parts still open when the message's entity ends.
func (d *direction) mimeEnd() {
	if d.msg.mime.partOpen() {
		d.mimeEndParts()
	}
}

// mimeEndParts is mimeEnd for a body with a part open, apart so that
// mimeEnd inlines.
func (d *direction) mimeEndParts() {
	d.mimeTop()
	d.mimeEndChild(0)
}

// submitPartHeader acts on a header of a part: its Content-Type (for
// nested multiparts), the analyzer's Connection and Upgrade watch, and the
// http_header event, which Zeek raises for parts too.
func (d *direction) submitPartHeader(level int, name, value []byte) {
	e := &d.msg.mime.e[level]
	kind := classify(name)
	switch kind {
	case hdrContentType:
		e.ctype = parseContentType(value, e.ctype, &e.boundary, &e.hasBoundary)
	case hdrContentLength:
		if n, ok := contentLength(value); ok {
			e.contentLength = n
		}
	}
	d.connectionHeader(kind, value)
	d.c.evHeader(d.orig, kind, name, value)
}

const (
	boundaryNone = iota
	boundaryOpen
	boundaryClose
)

// checkBoundary tells whether line is "--boundary" (opening a part) or
// "--boundary--" (closing the multipart), as CheckBoundaryDelimiter does:
// anything may follow the boundary.
func checkBoundary(boundary, line []byte) int {
	if len(line) < 2+len(boundary) || line[0] != '-' || line[1] != '-' ||
		string(line[2:2+len(boundary)]) != string(boundary) {
		return boundaryNone
	}
	rest := line[2+len(boundary):]
	if len(rest) >= 2 && rest[0] == '-' && rest[1] == '-' {
		return boundaryClose
	}
	return boundaryOpen
}

package http

import (
	"bytes"

	"github.com/wirebench/wirebench/internal/filemagic"
)

// MIME types of bodies, as Zeek's file analysis finds them: the HTTP
// analyzer hands each entity's body, after transfer decoding and
// decompression, to the files framework, which matches its first
// default_file_bof_buffer_size bytes against the file-magic signatures
// when that many have arrived, or at the end of the body, or at a gap
// (File::DataIn, EndOfFile, Gap); file_sniff then appends the type to the
// record's orig_mime_types or resp_mime_types (base/protocols/http/
// entities.zeek). Multipart and message bodies are files part by part
// (see partBegin).
//
// A body's first bytes are matched where they lie when its first delivery
// holds them all, or the whole body; otherwise they are copied into a
// buffer lent by the analyzer until there are enough. A compressed body's
// first bytes are its decompressed ones, which the inflater writes into
// such a buffer (it only counts the rest). As zlib hands Zeek its output in 4 KiB pieces and
// a piece with an error is dropped, a compressed body that fails, or is
// cut by a gap, before 4 KiB of output has none to match.

// DefaultSniffBudget is the default for WithSniffBudget.
const DefaultSniffBudget = 8 << 20

// sniffer is the sniffing state of one message's body.
type sniffer struct {
	started, done bool
	zipped        bool
	buf           []byte // lent by the analyzer while collecting
}

// sniffPool lends buffers of filemagic.BOFSize bytes for the bytes
// collected, within a budget of bytes held.
type sniffPool struct {
	free   [][]byte
	held   int // bytes of the buffers lent out
	budget int
}

// get returns an empty buffer of filemagic.BOFSize bytes, nil when that
// would pass the budget.
func (p *sniffPool) get() []byte {
	if p.held+filemagic.BOFSize > p.budget {
		return nil
	}
	p.held += filemagic.BOFSize
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return make([]byte, 0, filemagic.BOFSize)
}

// lend gives s a buffer from the analyzer's pool, or counts the budget's
// refusal and reports false.
func (d *direction) lend(s *sniffer) bool {
	a := d.c.a
	if s.buf = a.sniffPool.get(); s.buf == nil {
		a.stats.SniffBudget++
		return false
	}
	return true
}

func (p *sniffPool) put(b []byte) {
	p.held -= cap(b)
	p.free = append(p.free, b[:0:cap(b)])
}

// sniffs says whether the message's body is sniffed as one file.
func (d *direction) sniffs() bool {
	m := &d.msg
	return d.c.a.cfg.sniff && !m.sniff.done && m.ctype != typeMultipart && m.ctype != typeMessage
}

// sniffZipped takes compressed body data the inflater is about to decode:
// at the first, it lends the inflater a buffer to capture the start of its
// output in.
func (d *direction) sniffZipped(data []byte) {
	s := &d.msg.sniff
	if s.started || len(data) == 0 {
		return
	}
	s.started, s.zipped = true, true
	if !d.lend(s) {
		s.done = true
		return
	}
	d.msg.inf.capture = s.buf[:filemagic.BOFSize]
}

// collect takes plain data of a file (a line, with crlf, or plain bytes):
// matched in place when the first piece holds BOFSize bytes or the whole
// body, else collected in a lent buffer until there are that many. Small
// bodies often arrive whole, and copying them would cost more cache
// misses than matching them.
func (d *direction) collect(s *sniffer, data []byte, crlf bool) {
	if s.done {
		return
	}
	if !s.started {
		if len(data) == 0 && !crlf {
			return
		}
		s.started = true
		if len(data) >= filemagic.BOFSize || !crlf && s == &d.msg.sniff && d.msg.endsWith(data) {
			d.sniffed(s, data)
			return
		}
		if !d.lend(s) {
			d.sniffed(s, data) // over budget: match the first delivery alone
			return
		}
	}
	n := min(len(data), cap(s.buf)-len(s.buf))
	s.buf = append(s.buf, data[:n]...)
	if crlf {
		s.buf = append(s.buf, "\r\n"[:min(2, cap(s.buf)-len(s.buf))]...)
	}
	if len(s.buf) >= filemagic.BOFSize {
		d.finish(s)
	}
}

// endsWith says whether data, about to be delivered, completes a body
// whose length its Content-Length gave.
func (m *message) endsWith(data []byte) bool {
	return m.chunk == chunkNone && m.contentLength >= 0 && int64(len(data)) >= m.expect
}

// sniffLines takes a piece of a body read as lines (countLines): each
// line reaches the file with CR LF for its end, whatever ended it (Zeek's
// MIME_Entity::DecodeBinary). The LF of a CR LF split across pieces is
// skipped by Feed before it gets here.
func (d *direction) sniffLines(data []byte) {
	s := &d.msg.sniff
	if !s.started {
		if !d.lend(s) {
			s.done = true
			return
		}
		s.started = true
	}
	s.buf = appendLines(s.buf, data)
	if len(s.buf) >= filemagic.BOFSize {
		d.finish(s)
	}
}

// appendLines appends to buf, up to its capacity, the lines of data, each
// with CR LF for its end (a CR LF, a lone LF or a lone CR).
func appendLines(buf, data []byte) []byte {
	// Every byte taken writes one at least: no more than the room left
	// need be looked at.
	data = data[:min(len(data), cap(buf)-len(buf))]
	for len(data) > 0 && len(buf) < cap(buf) {
		i := lineEnd(data)
		buf = append(buf, data[:min(i, cap(buf)-len(buf))]...)
		if i == len(data) {
			break
		}
		buf = append(buf, "\r\n"[:min(2, cap(buf)-len(buf))]...)
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return buf
}

// lineEnd returns the index of the first CR or LF in data, or len(data).
func lineEnd(data []byte) int {
	i := bytes.IndexByte(data, '\n')
	if i < 0 {
		i = len(data)
	}
	if j := bytes.IndexByte(data[:i], '\r'); j >= 0 {
		i = j
	}
	return i
}

// sniffZippedProgress matches a compressed body's first bytes once the
// inflater has written them.
func (d *direction) sniffZippedProgress() {
	m := &d.msg
	if m.sniff.started && !m.sniff.done && (m.inf.total >= filemagic.BOFSize || m.inf.failed) {
		d.finish(&m.sniff)
	}
}

// Parts of multipart and message bodies are files of their own, as in
// Zeek: the body of each part that is not itself multipart or a message,
// its lines with CR LF ends. Zeek decodes a part's Content-Transfer-
// Encoding (base64, quoted-printable) before the files framework sees it;
// that is not reproduced, so such parts are matched as they were sent.

// partBegin starts the file of a part's body.
func (d *direction) partBegin() {
	d.release(&d.msg.part)
	d.msg.part = sniffer{done: !d.c.a.cfg.sniff}
}

// partData takes a piece of a part's body.
func (d *direction) partData(data []byte, crlf bool) { d.collect(&d.msg.part, data, crlf) }

// sniffEnd matches what was collected of the message's body and of the
// part open in it: the body ended, or a gap interrupted it.
func (d *direction) sniffEnd() {
	d.finish(&d.msg.sniff)
	d.finish(&d.msg.part)
}

// finish matches what s collected: the file ended, a gap interrupted it,
// or enough arrived. A file whose first bytes are missing (a gap before
// any data) has none to match, as in Zeek.
func (d *direction) finish(s *sniffer) {
	if s.done {
		return
	}
	s.done = true
	if !s.started {
		return
	}
	bof := s.buf
	if s.zipped {
		// The output handed out: whole 4 KiB pieces, and the rest once the
		// stream ended or the body did (flush).
		inf := &d.msg.inf
		bof = s.buf[:min(inf.total-inf.pending, filemagic.BOFSize)]
		inf.capture = nil
	}
	if len(bof) > 0 {
		d.sniffed(s, bof)
	}
	d.release(s)
}

// sniffRelease returns the buffers lent to the message's sniffers.
func (d *direction) sniffRelease() {
	d.release(&d.msg.sniff)
	d.release(&d.msg.part)
}

func (d *direction) release(s *sniffer) {
	if s.buf != nil {
		d.c.a.sniffPool.put(s.buf)
	}
	s.buf = nil
}

// sniffed reports the type of a file whose first bytes are bof.
func (d *direction) sniffed(s *sniffer, bof []byte) {
	s.done = true
	if mime, ok := d.c.a.matcher().Sniff(bof); ok {
		d.c.evFileMIME(d.orig, mime)
	}
}

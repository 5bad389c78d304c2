package http

import "github.com/wirebench/wirebench/internal/filemagic"

// MIME types of bodies, as Zeek's file analysis finds them: the HTTP
// analyzer hands each entity's body, after transfer decoding and
// decompression, to the files framework, which matches its first
// default_file_bof_buffer_size bytes against the file-magic signatures
// when that many have arrived, or at the end of the body, or at a gap
// (File::DataIn, EndOfFile, Gap); file_sniff then appends the type to the
// record's orig_mime_types or resp_mime_types (base/protocols/http/
// entities.zeek). Multipart and message bodies are files part by part in
// Zeek; their parts are not sniffed here (see the package documentation).
//
// A body's first bytes are matched where they lie when its first delivery
// holds them all; otherwise they are copied into a buffer lent by the
// analyzer until there are enough. A compressed body's first bytes are
// its decompressed ones, which the inflater writes into such a buffer (it
// only counts the rest). As zlib hands Zeek its output in 4 KiB pieces and
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

// sniffPool lends buffers of the bytes collected, within a budget of bytes
// held.
type sniffPool struct {
	free   [][]byte
	held   int // bytes of the buffers lent out
	budget int
}

func (p *sniffPool) get(size int) []byte {
	if p.held+size > p.budget {
		return nil
	}
	p.held += size
	for i := len(p.free) - 1; i >= 0; i-- {
		if b := p.free[i]; cap(b) >= size {
			p.free[i] = p.free[len(p.free)-1]
			p.free = p.free[:len(p.free)-1]
			return b[:0:size]
		}
	}
	return make([]byte, 0, size)
}

func (p *sniffPool) put(b []byte) {
	p.held -= cap(b)
	p.free = append(p.free, b[:0:cap(b)])
}

// sniffs says whether the message's body is sniffed as one file.
func (d *direction) sniffs() bool {
	m := &d.msg
	return d.c.a.magic != nil && !m.sniff.done && m.ctype != typeMultipart && m.ctype != typeMessage
}

// sniffBody takes body data (a line, with crlf, or plain bytes) before it
// is counted; zipped says it is compressed data the inflater decodes, of
// which it takes the output.
func (d *direction) sniffBody(data []byte, crlf, zipped bool) {
	s := &d.msg.sniff
	if !s.started {
		if len(data) == 0 && !crlf {
			return
		}
		s.started, s.zipped = true, zipped
		if !zipped && len(data) >= filemagic.BOFSize {
			d.sniffed(data)
			return
		}
		a := d.c.a
		if s.buf = a.sniffPool.get(filemagic.BOFSize); s.buf == nil {
			// Over budget: match the first delivery alone.
			a.stats.SniffBudget++
			if zipped {
				s.done = true
			} else {
				d.sniffed(data)
			}
			return
		}
		if zipped {
			d.msg.inf.capture = s.buf[:filemagic.BOFSize]
		}
	}
	if zipped {
		return
	}
	n := min(len(data), cap(s.buf)-len(s.buf))
	s.buf = append(s.buf, data[:n]...)
	if crlf {
		s.buf = append(s.buf, "\r\n"[:min(2, cap(s.buf)-len(s.buf))]...)
	}
	if len(s.buf) >= filemagic.BOFSize {
		d.sniffEnd()
	}
}

// sniffLines takes a piece of a body read as lines (countLines): each
// line reaches the file with CR LF for its end, whatever ended it (Zeek's
// MIME_Entity::DecodeBinary). The LF of a CR LF split across pieces is
// skipped by Feed before it gets here.
func (d *direction) sniffLines(data []byte) {
	s := &d.msg.sniff
	if !s.started {
		a := d.c.a
		if s.buf = a.sniffPool.get(filemagic.BOFSize); s.buf == nil {
			a.stats.SniffBudget++
			s.done = true
			return
		}
		s.started = true
	}
	buf := s.buf
	for i := 0; i < len(data) && len(buf) < cap(buf); i++ {
		switch c := data[i]; c {
		case '\r':
			if i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			fallthrough
		case '\n':
			buf = append(buf, "\r\n"[:min(2, cap(buf)-len(buf))]...)
		default:
			buf = append(buf, c)
		}
	}
	s.buf = buf
	if len(buf) >= filemagic.BOFSize {
		d.sniffEnd()
	}
}

// sniffZippedProgress matches a compressed body's first bytes once the
// inflater has written them.
func (d *direction) sniffZippedProgress() {
	m := &d.msg
	if m.sniff.started && !m.sniff.done && (m.inf.total >= filemagic.BOFSize || m.inf.failed) {
		d.sniffEnd()
	}
}

// sniffEnd matches what was collected: the body ended, a gap interrupted
// it, or enough arrived. A body whose first bytes are missing (a gap
// before any data) has none to match, as in Zeek.
func (d *direction) sniffEnd() {
	m := &d.msg
	s := &m.sniff
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
		n := m.inf.total - m.inf.pending
		bof = s.buf[:min(n, filemagic.BOFSize)]
		m.inf.capture = nil
	}
	if len(bof) > 0 {
		d.sniffed(bof)
	}
	d.sniffRelease()
}

// sniffRelease returns a lent buffer.
func (d *direction) sniffRelease() {
	s := &d.msg.sniff
	if s.buf != nil {
		d.c.a.sniffPool.put(s.buf)
	}
	s.buf = nil
}

// sniffed reports the type of a body whose first bytes are bof.
func (d *direction) sniffed(bof []byte) {
	d.msg.sniff.done = true
	if mime, ok := d.c.a.magic.Sniff(bof); ok {
		d.c.evFileMIME(d.orig, mime)
	}
}

package dns

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/parsers"
)

// dirParser is the Parser of one direction of a connection. On block
// connections every Feed is one message; on stream connections (DNS over
// TCP) messages are framed by a 2-byte length and may be split across Feeds
// at any byte, so an incomplete message waits in buf (at most 2+65535
// bytes: the framing itself bounds it).
type dirParser struct {
	cs   *connState
	role parsers.Role
	buf  []byte
	// skip counts bytes still to ignore of a message that a gap damaged;
	// after them the next length prefix follows.
	skip int
	// dead is set once the framing is lost for good.
	dead bool
	done bool
}

func (d *dirParser) reset() {
	d.buf = d.buf[:0]
	d.skip = 0
	d.dead, d.done = false, false
}

// Feed takes the next chunk: a whole message (block) or the next bytes of
// the stream.
func (d *dirParser) Feed(data []byte) {
	cs := d.cs
	if !cs.stream {
		cs.message(data)
		return
	}
	st := &cs.a.stats
	for len(data) > 0 {
		switch {
		case d.dead:
			st.StreamDropped += int64(len(data))
			return
		case d.skip > 0:
			n := min(d.skip, len(data))
			d.skip -= n
			data = data[n:]
			continue
		case len(d.buf) == 0 && len(data) >= 2:
			// Fast path: a whole message in the chunk, parsed in place.
			n := int(binary.BigEndian.Uint16(data))
			if len(data) >= 2+n {
				cs.message(data[2 : 2+n])
				data = data[2+n:]
				continue
			}
		}
		data = d.buffer(data)
	}
}

// buffer moves bytes of data into buf until it holds a whole message, which
// it then parses; it returns what is left of data.
func (d *dirParser) buffer(data []byte) []byte {
	if len(d.buf) < 2 {
		n := min(2-len(d.buf), len(data))
		d.buf = append(d.buf, data[:n]...)
		data = data[n:]
		if len(d.buf) < 2 {
			return data
		}
	}
	want := 2 + int(binary.BigEndian.Uint16(d.buf))
	n := min(want-len(d.buf), len(data))
	d.buf = append(d.buf, data[:n]...)
	data = data[n:]
	if len(d.buf) == want {
		d.cs.message(d.buf[2:])
		d.buf = d.buf[:0]
	}
	return data
}

// Gap says n bytes of the stream are missing. A gap inside a message whose
// length is known costs that message only: the bytes after it up to the
// next length prefix are skipped. A gap that swallows a length prefix loses
// the framing, and the direction is given up.
func (d *dirParser) Gap(n int) {
	cs := d.cs
	if !cs.stream || n <= 0 || d.dead {
		return
	}
	st := &cs.a.stats
	st.StreamGaps++
	switch {
	case d.skip > 0:
		if n < d.skip {
			d.skip -= n
			return
		}
	case len(d.buf) >= 2:
		left := 2 + int(binary.BigEndian.Uint16(d.buf)) - len(d.buf)
		if n < left {
			d.buf = d.buf[:0]
			d.skip = left - n
			st.StreamResyncs++
			return
		}
		if n == left {
			d.buf = d.buf[:0]
			st.StreamResyncs++
			return
		}
	}
	if d.skip == n {
		d.skip = 0
		st.StreamResyncs++
		return
	}
	d.buf = d.buf[:0]
	d.skip = 0
	d.dead = true
	st.StreamAbandoned++
}

// Finish ends the direction. As Zeek does when a TCP connection closes, an
// incomplete message is parsed for what it holds.
func (d *dirParser) Finish() { d.finish() }

func (d *dirParser) finish() {
	if d.done {
		return
	}
	d.done = true
	if d.cs.stream && !d.dead && len(d.buf) > 2 {
		d.cs.a.stats.StreamPartial++
		d.cs.message(d.buf[2:])
	}
	d.buf = d.buf[:0]
}

package dns

import "encoding/binary"

// Framer splits one direction of a DNS-over-TCP stream into its messages:
// each follows a 2-byte length (RFC 1035, section 4.2.2) and may be split
// across the stream's chunks at any byte. A message a chunk holds whole is
// returned in place; one split across chunks waits in the Framer's
// buffer, which the framing bounds to 2+65535 bytes. Gaps in the stream
// cost the message they hit, or the framing when they swallow a length
// (see [Framer.Gap]).
//
// The native parser frames its TCP connections with it, and a parser of
// another implementation can, to read the stream as the native one does.
// The zero Framer is ready to use.
type Framer struct {
	buf []byte
	// skip counts bytes still to ignore of a message that a gap damaged;
	// after them the next length follows.
	skip int
	lost bool
}

// Next returns the next whole message of data, and the data after it;
// msg is nil once data holds no further whole message (its bytes then
// wait in the Framer for the next chunk). msg is valid until the next
// call. Once the framing is lost, Next returns nothing.
func (f *Framer) Next(data []byte) (msg, rest []byte) {
	for len(data) > 0 && !f.lost {
		if f.skip > 0 {
			n := min(f.skip, len(data))
			f.skip -= n
			data = data[n:]
			continue
		}
		if len(f.buf) == 0 && len(data) >= 2 {
			if n := 2 + int(binary.BigEndian.Uint16(data)); len(data) >= n {
				return data[2:n:n], data[n:]
			}
		}
		if msg, data = f.buffer(data); msg != nil {
			return msg, data
		}
	}
	return nil, nil
}

// buffer moves bytes of data into buf until it holds a whole message,
// which it returns with what is left of data.
func (f *Framer) buffer(data []byte) (msg, rest []byte) {
	if len(f.buf) < 2 {
		n := min(2-len(f.buf), len(data))
		f.buf = append(f.buf, data[:n]...)
		data = data[n:]
		if len(f.buf) < 2 {
			return nil, data
		}
	}
	want := 2 + int(binary.BigEndian.Uint16(f.buf))
	n := min(want-len(f.buf), len(data))
	f.buf = append(f.buf, data[:n]...)
	data = data[n:]
	if len(f.buf) < want {
		return nil, data
	}
	msg = f.buf[2:want:want]
	f.buf = f.buf[:0]
	return msg, data
}

// GapEffect says what a gap did to the framing of a stream.
type GapEffect uint8

// The effects of [Framer.Gap].
const (
	// GapNone: the gap was empty, or the framing was lost before it.
	GapNone GapEffect = iota
	// GapSkipped: the gap fell inside a message an earlier gap damaged,
	// whose rest is skipped anyway.
	GapSkipped
	// GapResynced: the message the gap hit is lost; the framing goes on
	// at the length after it.
	GapResynced
	// GapLost: the gap swallowed a length, and with it the framing: the
	// direction is given up.
	GapLost
)

// Gap says n bytes of the stream are missing. A gap inside a message
// whose length is known costs that message only: the bytes after the gap
// up to the next length are skipped. A gap that swallows a length loses
// the framing for good.
func (f *Framer) Gap(n int) GapEffect {
	if n <= 0 || f.lost {
		return GapNone
	}
	left := f.skip
	if len(f.buf) >= 2 {
		left = 2 + int(binary.BigEndian.Uint16(f.buf)) - len(f.buf)
	}
	inSkip := f.skip > 0
	f.buf = f.buf[:0]
	switch {
	case n < left && inSkip:
		f.skip = left - n
		return GapSkipped
	case n <= left:
		f.skip = left - n
		return GapResynced
	}
	f.skip = 0
	f.lost = true
	return GapLost
}

// Lost reports whether a gap lost the framing.
func (f *Framer) Lost() bool { return f.lost }

// Partial returns the bytes of the incomplete message waiting for more
// (after its length), or nil if none has any, and forgets them: at the
// end of a stream, Zeek parses what such a message holds. The bytes are
// valid until the next call.
func (f *Framer) Partial() []byte {
	var p []byte
	if len(f.buf) > 2 { // empty once framing is lost: Gap empties it, Next keeps nothing
		p = f.buf[2:len(f.buf):len(f.buf)]
	}
	f.buf = f.buf[:0]
	return p
}

// Held returns the bytes the Framer's buffer holds, waiting or not.
func (f *Framer) Held() int { return cap(f.buf) }

// Reset makes f ready for a new stream. It keeps its buffer's storage
// unless that holds more than keep bytes, so that a flood of split
// messages does not stay held by a pool of Framers.
func (f *Framer) Reset(keep int) {
	buf := f.buf[:0]
	if cap(buf) > keep {
		buf = nil
	}
	*f = Framer{buf: buf}
}

package dns

import (
	"github.com/wirebench/wirebench/parsers"
)

// dirParser is the Parser of one direction of a connection. On block
// connections every Feed is one message; on stream connections (DNS over
// TCP) a Framer splits the stream into its messages.
type dirParser struct {
	cs    *connState
	role  parsers.Role
	frame Framer
	done  bool
}

// reset makes d ready for a new connection, keeping at most keep bytes
// of its buffer. Only a stream connection uses the Framer: a block
// connection leaves it as the last reset left it.
func (d *dirParser) reset(keep int) {
	if d.cs.stream {
		d.frame.Reset(keep)
	}
	d.done = false
}

// Feed takes the next chunk: a whole message (block) or the next bytes of
// the stream.
func (d *dirParser) Feed(data []byte) {
	cs := d.cs
	if !cs.stream {
		cs.message(data)
		return
	}
	if d.frame.Lost() {
		cs.a.stats.StreamDropped += int64(len(data))
		return
	}
	for msg, rest := d.frame.Next(data); msg != nil; msg, rest = d.frame.Next(rest) {
		cs.message(msg)
	}
}

// Gap says n bytes of the stream are missing (see Framer.Gap).
func (d *dirParser) Gap(n int) {
	if !d.cs.stream {
		return
	}
	e := d.frame.Gap(n)
	if e == GapNone {
		return
	}
	st := &d.cs.a.stats
	st.StreamGaps++
	switch e {
	case GapResynced:
		st.StreamResyncs++
	case GapLost:
		st.StreamAbandoned++
	}
}

// Finish ends the direction. As Zeek does when a TCP connection closes, an
// incomplete message is parsed for what it holds.
func (d *dirParser) Finish() { d.finish() }

// finish is small enough to be inlined: a block connection's directions,
// finished twice each (Finish, then Close), have nothing to finish.
func (d *dirParser) finish() {
	if !d.done {
		d.done = true
		if d.cs.stream {
			d.finishStream()
		}
	}
}

// finishStream parses what is left of an unfinished message.
func (d *dirParser) finishStream() {
	if p := d.frame.Partial(); p != nil {
		d.cs.a.stats.StreamPartial++
		d.cs.message(p)
	}
}

package preprocess

import (
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/flow"
)

// recorder is a flow.Handler that records the connections it is given in a
// Spicy batch file, as Zeek's record-spicy-batch.zeek does, so that the
// file replays in spicy-driver and in wirebench's replay binaries alike:
//
//   - A connection is named <orig_h>-<orig_p>-<resp_h>-<resp_p>-<proto>
//     (IPv6 addresses printed as Zeek prints them, without brackets), its
//     flows <id>-orig and <id>-resp, and its parsers <resp_p>/<proto>%orig
//     and <resp_p>/<proto>%resp, such as 80/tcp%orig.
//   - A TCP connection is a "stream" connection, begun (@begin-conn) when it
//     starts, even if it never carries data; its data is written in the
//     order reassembly delivers it, its gaps as @gap, and empty chunks not
//     at all.
//   - A UDP connection is a "block" connection, begun at its first
//     datagram; a connection without datagrams leaves no trace. Every
//     datagram is one @data record, empty ones included.
//   - @end-conn is written when the connection ends, for every connection
//     begun. No @end-flow is written.
//
// Other protocols are ignored. One difference from Zeek is deliberate: Zeek
// begins a UDP connection only once per address/port tuple for the whole
// run, so a later connection on the same tuple has its data recorded after
// the first one's @end-conn, and replay drops it; the Recorder begins every
// connection.
//
// The Recorder keeps its state of a connection in Conn.User, building the
// names once per connection. flow.Handler methods cannot return errors:
// the first error is kept (see Err), everything written before it is
// flushed, and later events are ignored. Call Close at the end, also when
// the run fails, so that the file ends with complete records.
type recorder struct {
	w      *batch.Writer
	err    error
	closed bool
	stats  RecorderStats

	open    recConn    // sentinel of the list of connections not yet ended, oldest first
	free    []*recConn // ended connections' state, for reuse
	scratch []byte     // for building names
}

// RecorderStats counts what a Recorder wrote.
type RecorderStats struct {
	Conns    int64 // connections begun (@begin-conn)
	Data     int64 // @data records
	Bytes    int64 // data bytes in them
	Gaps     int64 // @gap records
	GapBytes int64 // bytes reported missing in them
}

// recConnCost is what the Recorder holds per connection, counted against
// the flow engine's memory budget: its state and the bytes of its names.
const recConnCost = int(unsafe.Sizeof(recConn{})) + 160

// recConn is the Recorder's state of one connection.
type recConn struct {
	names      connNames
	kind       batch.Kind
	begun      bool
	prev, next *recConn
}

// newRecorder writes the batch header to w and returns a Recorder writing
// the records that follow.
func newRecorder(w io.Writer) (*recorder, error) {
	bw, err := batch.NewWriter(w)
	if err != nil {
		return nil, err
	}
	r := &recorder{w: bw}
	r.open.prev, r.open.next = &r.open, &r.open
	return r, nil
}

// BeginConn starts recording a connection; a TCP connection is begun in the
// file at once.
func (r *recorder) BeginConn(c *flow.Conn) {
	if r.stopped() {
		return
	}
	var kind batch.Kind
	var proto string
	switch c.Key.Proto {
	case flow.ProtoTCP:
		kind, proto = batch.Stream, "tcp"
	case flow.ProtoUDP:
		kind, proto = batch.Block, "udp"
	default:
		return
	}
	rc := r.newConn()
	rc.names, r.scratch = makeConnNames(c.Key, proto, r.scratch)
	rc.kind = kind
	c.User = rc
	if kind == batch.Stream {
		r.begin(rc)
	}
}

// Data records the next chunk of one direction.
func (r *recorder) Data(c *flow.Conn, dir flow.Dir, data []byte) {
	rc := r.conn(c)
	if rc == nil || (len(data) == 0 && rc.kind == batch.Stream) {
		return
	}
	if !rc.begun && !r.begin(rc) {
		return
	}
	if err := r.w.Data(rc.names.flowID(dir), data); err != nil {
		r.fail(fmt.Errorf("recording data of %s: %w", rc.names.cid, err))
		return
	}
	r.stats.Data++
	r.stats.Bytes += int64(len(data))
}

// Gap records n missing bytes of one direction.
func (r *recorder) Gap(c *flow.Conn, dir flow.Dir, n int) {
	rc := r.conn(c)
	if rc == nil || n <= 0 {
		return
	}
	if !rc.begun && !r.begin(rc) {
		return
	}
	if err := r.w.Gap(rc.names.flowID(dir), int64(n)); err != nil {
		r.fail(fmt.Errorf("recording a gap of %s: %w", rc.names.cid, err))
		return
	}
	r.stats.Gaps++
	r.stats.GapBytes += int64(n)
}

// EndConn ends a connection begun in the file.
func (r *recorder) EndConn(c *flow.Conn) {
	rc := r.conn(c)
	if rc == nil {
		return
	}
	r.end(rc)
	c.User = nil
	r.free = append(r.free, rc)
}

// Err returns the first error that happened while recording, if any.
func (r *recorder) Err() error { return r.err }

// Stats returns what the Recorder wrote so far.
func (r *recorder) Stats() RecorderStats { return r.stats }

// Close ends the connections still open, as Zeek does when it terminates,
// flushes the file and returns the first error of the recording. Events
// after Close are ignored.
func (r *recorder) Close() error {
	if r.closed {
		return r.err
	}
	for r.open.next != &r.open {
		r.end(r.open.next)
	}
	r.closed = true
	r.flush()
	return r.err
}

// flush writes out the records written so far; an error is kept as the
// Recorder's.
func (r *recorder) flush() {
	if err := r.w.Flush(); err != nil && r.err == nil {
		r.err = fmt.Errorf("recording: %w", err)
	}
}

// errClosed is kept as the Recorder's error when events arrive after Close.
var errClosed = errors.New("recording: event after Close")

func (r *recorder) stopped() bool {
	if r.closed && r.err == nil {
		r.err = errClosed
	}
	return r.err != nil
}

// conn returns the Recorder's state of c, or nil when it does not record c
// or has stopped.
func (r *recorder) conn(c *flow.Conn) *recConn {
	if r.stopped() {
		return nil
	}
	rc, _ := c.User.(*recConn)
	return rc
}

func (r *recorder) newConn() *recConn {
	var rc *recConn
	if n := len(r.free); n > 0 {
		rc, r.free = r.free[n-1], r.free[:n-1]
		*rc = recConn{}
	} else {
		rc = new(recConn)
	}
	rc.prev, rc.next = r.open.prev, &r.open
	rc.prev.next, r.open.prev = rc, rc
	return rc
}

// begin writes the @begin-conn record; it reports whether that worked.
func (r *recorder) begin(rc *recConn) bool {
	n := &rc.names
	if err := r.w.BeginConn(n.cid, rc.kind, n.origID, n.origParser, n.respID, n.respParser); err != nil {
		r.fail(fmt.Errorf("recording the start of %s: %w", n.cid, err))
		return false
	}
	rc.begun = true
	r.stats.Conns++
	return true
}

// end writes @end-conn for a begun connection and unlinks it.
func (r *recorder) end(rc *recConn) {
	if rc.begun && r.err == nil {
		if err := r.w.EndConn(rc.names.cid); err != nil {
			r.fail(fmt.Errorf("recording the end of %s: %w", rc.names.cid, err))
		}
	}
	rc.prev.next, rc.next.prev = rc.next, rc.prev
	rc.prev, rc.next = nil, nil
}

// fail keeps the first error and flushes the complete records written
// before it.
func (r *recorder) fail(err error) {
	if r.err == nil {
		r.err = err
		r.w.Flush()
	}
}

package analyzer

import (
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/tunnel"
)

// udpTunnel decapsulates a datagram of a UDP connection that may carry a
// tunnel, following Zeek's rules for each kind (see the package
// documentation), and queues the inner frame.
func (a *Analyzer) udpTunnel(c *flow.Conn, ci *connInfo, dir flow.Dir, data []byte) {
	var in tunnel.Inner
	var err error
	var parent string // the connection's uid, asked for once something is queued
	switch ci.tkind {
	case tunnel.Teredo: // found, or to be looked for, by Data
		if in, err = tunnel.DecodeTeredo(data); err != nil {
			ci.violated = true
			return
		}
		ci.valid[dir] = true
		if ci.valid[flow.Orig] && ci.valid[flow.Resp] {
			ci.confirm(tunnel.Teredo.Service())
		}
	case tunnel.AYIYA, tunnel.GTPv1:
		if ci.tkind == tunnel.AYIYA {
			in, err = tunnel.DecodeAYIYA(data)
		} else {
			in, err = tunnel.DecodeGTPv1(data)
		}
		if err != nil {
			return
		}
		ci.confirm(ci.tkind.Service())
	case tunnel.VXLAN, tunnel.Geneve:
		// Zeek confirms these on a valid header, whatever follows it, and
		// stops decapsulating the connection after an invalid one.
		if ci.violated {
			return
		}
		if ci.tkind == tunnel.VXLAN {
			in, err = tunnel.DecodeVXLAN(data)
		} else {
			in, err = tunnel.DecodeGeneve(data)
		}
		if !tunnel.HeaderValid(err) {
			ci.violated = true
			return
		}
		ci.confirm(ci.tkind.Service())
		if err != nil {
			return
		}
	case tunnel.GRE:
		if in, err = tunnel.DecodeGRE(data); err != nil {
			return
		}
		// GRE over UDP is a GRE tunnel between the two hosts, as over IP:
		// the UDP connection is not its parent and gets no service.
		parent = a.ipTunnelUID(c.Key.Orig.Addr(), c.Key.Resp.Addr(), flow.ProtoUDP, c.Last)
	default:
		return
	}
	if parent == "" {
		parent = a.uid(c, ci)
	}
	a.queue.push(in, c.Last, parent, ci.depth+1)
}

// frame is a decapsulated frame waiting to be analyzed.
type frame struct {
	data     []byte // a copy, in a buffer the queue reuses
	linkType uint16
	ts       int64
	parent   string
	depth    int
}

// frameQueue holds decapsulated frames until the flow engine has finished
// with the packet that carried them (a handler must not call the engine
// that calls it). The frames are copied because the outer packet's bytes
// (or the engine's reassembly buffer) are reused. It holds the frames of
// one outer packet at a time, so it stays small; its buffers are reused.
type frameQueue struct {
	frames []frame
	head   int
}

func (q *frameQueue) push(in tunnel.Inner, ts int64, parent string, depth int) {
	n := len(q.frames)
	if n < cap(q.frames) {
		q.frames = q.frames[:n+1]
	} else {
		q.frames = append(q.frames, frame{})
	}
	f := &q.frames[n]
	f.data = append(f.data[:0], in.Data...)
	f.linkType, f.ts, f.parent, f.depth = in.LinkType, ts, parent, depth
}

// waiting says frames wait to be popped: a test cheap enough to make after
// every packet, which seldom carries a tunnel.
func (q *frameQueue) waiting() bool { return q.head < len(q.frames) }

// pop returns the oldest waiting frame; its data stays valid until reset.
func (q *frameQueue) pop() (frame, bool) {
	if !q.waiting() {
		return frame{}, false
	}
	f := q.frames[q.head]
	q.head++
	return f, true
}

// reset empties the queue, keeping its buffers.
func (q *frameQueue) reset() {
	q.frames = q.frames[:0]
	q.head = 0
}

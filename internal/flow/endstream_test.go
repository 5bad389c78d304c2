package flow

import (
	"fmt"
	"strings"
	"testing"
)

// enderRecorder is a recorder that also logs EndStream events.
type enderRecorder struct {
	*recorder
	eofs map[uint64][2]int // EndStream calls per connection and direction
}

func (r *enderRecorder) EndStream(c *Conn, d Dir) {
	cr := r.rec(c, "EndStream")
	if cr.ended {
		r.t.Errorf("EndStream after EndConn for connection %d", c.ID)
	}
	n := r.eofs[c.ID]
	n[d]++
	r.eofs[c.ID] = n
	r.log = append(r.log, fmt.Sprintf("eof %d %v after %d bytes", c.ID, d, len(cr.data[d])))
}

func TestEndStream(t *testing.T) {
	req, resp := "GET / HTTP/1.0\r\n\r\n", "HTTP/1.0 200 OK\r\n\r\nbody until close"
	c1, s1 := uint32(cISN+1), uint32(sISN+1)
	rq, rs := uint32(len(req)), uint32(len(resp))
	tests := []struct {
		name string
		segs []seg
		// want are the log lines of EndStream events, in order.
		want []string
	}{{
		name: "both directions close in order",
		segs: join(handshake(), []seg{
			{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req},
			{from: cli, to: srv, flags: "FA", seq: c1 + rq, ack: s1},
			{from: srv, to: cli, flags: "PA", seq: s1, ack: c1 + rq + 1, data: resp},
			{from: srv, to: cli, flags: "FA", seq: s1 + rs, ack: c1 + rq + 1},
			{from: cli, to: srv, flags: "A", seq: c1 + rq + 1, ack: s1 + rs + 1},
		}),
		want: []string{"eof 1 orig after 18 bytes", "eof 1 resp after 35 bytes"},
	}, {
		name: "a FIN ahead of a missing segment waits for it",
		segs: join(handshake(), []seg{
			{from: srv, to: cli, flags: "PA", seq: s1 + 8, ack: c1, data: resp[8:]},
			{from: srv, to: cli, flags: "FA", seq: s1 + rs, ack: c1},
			{from: srv, to: cli, flags: "PA", seq: s1, ack: c1, data: resp[:8]},
		}),
		want: []string{"eof 1 resp after 35 bytes"},
	}, {
		name: "no FIN, no EndStream",
		segs: join(handshake(), []seg{
			{from: cli, to: srv, flags: "PA", seq: c1, ack: s1, data: req},
			{from: srv, to: cli, flags: "RA", seq: s1, ack: c1 + rq},
		}),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &enderRecorder{recorder: newRecorder(t), eofs: map[uint64][2]int{}}
			e := New(Config{}, r)
			for _, p := range segs(tt.segs...) {
				e.Packet(p)
			}
			e.Flush()
			var got []string
			for _, l := range r.log {
				if strings.HasPrefix(l, "eof ") {
					got = append(got, l)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("EndStream events:\n%s\nwant:\n%s\nall events:\n%s",
					strings.Join(got, "\n"), strings.Join(tt.want, "\n"), strings.Join(r.log, "\n"))
			}
		})
	}
}

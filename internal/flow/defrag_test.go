package flow

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

func TestDefrag(t *testing.T) {
	payload := strings.Repeat("0123456789abcdef", 40) // 640 bytes
	v4 := udpPacket(t0, "10.0.0.1:1000", "10.0.0.2:53", payload)
	v6 := udpPacket(t0, "[2001:db8::1]:1000", "[2001:db8::2]:53", payload)
	tcp := seg{from: cli, to: srv, flags: "S", seq: cISN, data: payload}.packet()

	reversed := func(p []*capture.Packet) []*capture.Packet {
		q := slices.Clone(p)
		slices.Reverse(q)
		return q
	}
	tests := []struct {
		name      string
		pkts      []*capture.Packet
		want      string // data delivered to the handler
		reasm     int64
		dropped   int64
		timeouts  int64
		overlaps  int64
		inconsist int64
		cfg       Config
	}{
		{name: "ipv4 in order", pkts: fragments(v4, 7, 200), want: payload, reasm: 1},
		{name: "ipv6 in order", pkts: fragments(v6, 7, 200), want: payload, reasm: 1},
		{name: "ipv4 out of order", pkts: reversed(fragments(v4, 7, 104)), want: payload, reasm: 1},
		{name: "ipv6 out of order", pkts: reversed(fragments(v6, 7, 104)), want: payload, reasm: 1},
		{name: "tcp in fragments", pkts: reversed(fragments(tcp, 9, 64)), want: payload, reasm: 1},
		{
			name: "duplicate fragment", want: payload, reasm: 1, overlaps: 1,
			pkts: func() []*capture.Packet {
				f := fragments(v4, 7, 200)
				return []*capture.Packet{f[0], f[1], f[1], f[2], f[3]}
			}(),
		},
		{
			name: "overlap with different data: first wins", reasm: 1, overlaps: 1, inconsist: 1,
			pkts: func() []*capture.Packet {
				f := fragments(v4, 7, 200)
				bad := *f[1]
				bad.FragOffset = 192
				bad.IPPayload = bytes.Repeat([]byte("X"), 208)
				return []*capture.Packet{f[0], f[1], &bad, f[2], f[3]}
			}(),
			want: payload,
		},
		{
			name: "overlap fills a hole, first bytes win",
			pkts: func() []*capture.Packet {
				f := fragments(v4, 7, 200)
				wide := *f[1]
				wide.IPPayload = bytes.Repeat([]byte("Y"), 400) // offsets 200..600
				return []*capture.Packet{f[0], f[2], &wide, f[3]}
			}(),
			want:  payload[:192] + strings.Repeat("Y", 200) + payload[392:],
			reasm: 1, overlaps: 1, inconsist: 1,
		},
		{
			name: "missing fragment times out", dropped: 3, timeouts: 1, // the late one is left at Flush
			pkts: func() []*capture.Packet {
				f := fragments(v4, 7, 200)
				late := *f[2]
				late.TS = at(time.Minute)
				return []*capture.Packet{f[0], f[1], &late}
			}(),
		},
		{
			name: "too many fragments", dropped: 3, cfg: Config{MaxFragsPerDatagram: 2},
			pkts: fragments(v4, 7, 200)[:3],
		},
		{
			name: "too many datagrams: the oldest goes", cfg: Config{MaxFragDatagrams: 1}, want: payload,
			reasm: 1, dropped: 1,
			pkts: append([]*capture.Packet{fragments(v4, 1, 200)[0]}, fragments(v4, 2, 200)...),
		},
		{
			name: "left at flush", dropped: 1,
			pkts: fragments(v6, 3, 200)[:1],
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, st := run(t, tt.cfg, tt.pkts...)
			var got []byte
			for _, id := range r.order {
				got = append(got, r.conns[id].data[Orig]...)
			}
			if string(got) != tt.want {
				t.Errorf("delivered %q\nwant %q", got, tt.want)
			}
			if st.FragsReassembled != tt.reasm || st.FragsDropped != tt.dropped || st.FragTimeouts != tt.timeouts {
				t.Errorf("reassembled %d dropped %d timeouts %d, want %d %d %d",
					st.FragsReassembled, st.FragsDropped, st.FragTimeouts, tt.reasm, tt.dropped, tt.timeouts)
			}
			if st.FragOverlaps != tt.overlaps || st.FragInconsistent != tt.inconsist {
				t.Errorf("overlaps %d inconsistent %d, want %d %d", st.FragOverlaps, st.FragInconsistent, tt.overlaps, tt.inconsist)
			}
		})
	}
}

func TestDefragIPLen(t *testing.T) {
	payload := strings.Repeat("z", 1000)
	for _, p := range []*capture.Packet{
		udpPacket(t0, "10.0.0.1:1000", "10.0.0.2:53", payload),
		udpPacket(t0, "[2001:db8::1]:1000", "[2001:db8::2]:53", payload),
	} {
		var c *Conn
		var ipBytes int64
		h := &funcHandler{end: func(cc *Conn) { c = cc; ipBytes = cc.Stats[Orig].IPBytes }}
		e := New(Config{}, h)
		for _, f := range fragments(p, 5, 296) {
			e.Packet(f)
		}
		e.Flush()
		if c == nil || ipBytes != int64(p.IPLen) {
			t.Errorf("IPv%d: reassembled ip bytes %d, want %d", p.IPVersion, ipBytes, p.IPLen)
		}
	}
}

package analyzer

import (
	"io"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// FuzzFrames feeds arbitrary Ethernet frames to an analyzer with every
// feature on: nothing may panic, and Close must succeed. The input is a
// sequence of frames, each preceded by its length byte; the ports and
// tunnels of the seeds steer the fuzzer towards DPD and decapsulation.
func FuzzFrames(f *testing.F) {
	seed := func(frames ...[]byte) []byte {
		var out []byte
		for _, fr := range frames {
			if len(fr) > 255 {
				fr = fr[:255]
			}
			out = append(out, byte(len(fr)))
			out = append(out, fr...)
		}
		return out
	}
	s := tcpSession(7777, "GET / HTTP/1.1\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n")
	f.Add(seed(s...))
	f.Add(seed(udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(innerDNS()))))
	f.Add(seed(udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 6081, geneve(0x6558, innerDNS()))))))
	f.Add(seed(udp("10.1.1.1", "10.1.1.2", 2152, 2152, append([]byte{0x30, 0xff, 0, 45, 0, 0, 0, 1}, innerDNS()...))))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := New(Config{Parsers: builtin.Std}, Output{Conn: io.Discard, Logs: map[string]io.Writer{"http": io.Discard, "dns": io.Discard}})
		if err != nil {
			t.Fatal(err)
		}
		var p capture.Packet
		ts := t0
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			frame := data[1 : 1+n]
			data = data[1+n:]
			ts += 1e6
			p = capture.Packet{TS: ts, Data: frame, OrigLen: len(frame), LinkType: capture.LinkTypeEthernet}
			if err := a.Frame(&p); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

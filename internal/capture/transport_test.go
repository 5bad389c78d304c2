package capture

import (
	"bytes"
	"testing"
)

func TestDecodeTransport(t *testing.T) {
	tcp := []byte{
		0x1f, 0x90, 0x00, 0x50, // ports 8080 -> 80
		0, 0, 0, 1, 0, 0, 0, 2, // seq 1, ack 2
		0x50, 0x18, 0x01, 0x00, // data offset 5, PSH|ACK, window 256
		0, 0, 0, 0, // checksum, urgent
		'G', 'E', 'T',
	}
	badOffset := append([]byte(nil), tcp[:20]...)
	badOffset[12] = 0xf0 // header claims 60 bytes
	udp := []byte{0x30, 0x39, 0x00, 0x35, 0x00, 0x0b, 0, 0, 'a', 'b', 'c', 0xff}
	tests := []struct {
		name    string
		proto   uint8
		in      []byte
		ok      bool
		sport   uint16
		dport   uint16
		payload []byte
	}{
		{"tcp", 6, tcp, true, 8080, 80, []byte("GET")},
		{"tcp short", 6, tcp[:19], false, 0, 0, nil},
		{"tcp offset beyond data", 6, badOffset, false, 0, 0, nil},
		{"udp trims to its length", 17, udp, true, 12345, 53, []byte("abc")},
		{"udp short", 17, udp[:7], false, 0, 0, nil},
		{"icmp", 1, []byte{8, 0, 0, 0, 'x'}, true, 0, 0, []byte("x")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Packet
			if got := p.DecodeTransport(tt.proto, tt.in); got != tt.ok {
				t.Fatalf("DecodeTransport = %v, want %v", got, tt.ok)
			}
			if p.SrcPort != tt.sport || p.DstPort != tt.dport || !bytes.Equal(p.Payload, tt.payload) {
				t.Errorf("got ports %d->%d payload %q, want %d->%d %q", p.SrcPort, p.DstPort, p.Payload, tt.sport, tt.dport, tt.payload)
			}
			if p.Truncated == tt.ok {
				t.Errorf("Truncated = %v with ok = %v", p.Truncated, tt.ok)
			}
		})
	}
}

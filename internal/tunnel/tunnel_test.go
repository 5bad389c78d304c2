package tunnel

import (
	"errors"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
)

// inner6 is a raw IPv6/UDP packet; its source is a Teredo address when
// teredo is set.
func inner6(teredo bool) []byte {
	src := "2001:db8::1"
	if teredo {
		src = "2001:0:4137:9e50:8000:f12a:b9c8:2815"
	}
	ip := capturetest.IPv6(src, "2001:db8::2", layers.IPProtocolUDP)
	return capturetest.Serialize(ip, capturetest.UDP(1000, 53, ip), gopacket.Payload("query"))
}

func inner4() []byte {
	ip := capturetest.IPv4("10.0.0.1", "10.0.0.2", layers.IPProtocolUDP)
	return capturetest.Serialize(ip, capturetest.UDP(1000, 53, ip), gopacket.Payload("query"))
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// bubble is a Teredo bubble: an IPv6 header with no next header and no
// payload.
func bubble() []byte {
	b := make([]byte, 40)
	b[0] = 0x60
	b[6] = 59
	return b
}

var (
	origin = []byte{0, 0, 0x12, 0x34, 1, 2, 3, 4}
	auth   = cat([]byte{0, 1, 2, 3}, []byte("id"), []byte("abc"), make([]byte, 9))
)

func TestDecode(t *testing.T) {
	v6, v4 := inner6(false), inner4()
	eth := capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4), gopacket.Payload(v4))
	gtp := func(flags, typ byte, rest ...[]byte) []byte {
		body := cat(rest...)
		n := len(body)
		return cat([]byte{flags, typ, byte(n >> 8), byte(n), 0, 0, 0, 1}, body)
	}
	ayiya := func(op, next byte, pkt []byte) []byte {
		// identity length 2^1 = 2 bytes, signature 1*4 bytes
		return cat([]byte{0x11, 0x10, 0x10 | op, next, 0, 0, 0, 0}, []byte("id"), []byte("sig!"), pkt)
	}
	tests := []struct {
		name   string
		decode func([]byte) (Inner, error)
		in     []byte
		want   []byte // the inner frame; nil with err
		lt     uint16
		err    error
	}{
		{"teredo plain", DecodeTeredo, v6, v6, capture.LinkTypeRaw, nil},
		{"teredo origin", DecodeTeredo, cat(origin, v6), v6, capture.LinkTypeRaw, nil},
		{"teredo auth origin", DecodeTeredo, cat(auth, origin, v6), v6, capture.LinkTypeRaw, nil},
		{"teredo origin auth", DecodeTeredo, cat(origin, auth, v6), nil, 0, ErrBadHeader},
		{"teredo two origins", DecodeTeredo, cat(origin, origin, v6), nil, 0, ErrBadHeader},
		{"teredo ipv4", DecodeTeredo, v4, nil, 0, ErrBadHeader},
		{"teredo trailing bytes", DecodeTeredo, cat(v6, []byte{0}), nil, 0, ErrInnerLength},
		{"teredo cut", DecodeTeredo, v6[:len(v6)-1], nil, 0, ErrInnerTrunc},
		{"teredo short header", DecodeTeredo, v6[:39], nil, 0, ErrTruncated},
		{"teredo bubble", DecodeTeredo, bubble(), bubble(), capture.LinkTypeRaw, nil},
		{"teredo bubble with payload", DecodeTeredo, cat(bubble(), []byte{1, 2}), cat(bubble(), []byte{1, 2}), capture.LinkTypeRaw, nil},
		{"teredo empty", DecodeTeredo, nil, nil, 0, ErrTruncated},

		{"ayiya v6", DecodeAYIYA, ayiya(1, 41, v6), v6, capture.LinkTypeRaw, nil},
		{"ayiya v4", DecodeAYIYA, ayiya(1, 4, v4), v4, capture.LinkTypeRaw, nil},
		{"ayiya version mismatch", DecodeAYIYA, ayiya(1, 41, v4), nil, 0, ErrInnerVersion},
		{"ayiya heartbeat", DecodeAYIYA, ayiya(0, 59, nil), nil, 0, ErrNoInnerPacket},
		{"ayiya other next header", DecodeAYIYA, ayiya(1, 17, v4), nil, 0, ErrUnsupported},
		{"ayiya short", DecodeAYIYA, ayiya(1, 4, v4)[:12], nil, 0, ErrTruncated},

		{"vxlan", DecodeVXLAN, cat([]byte{8, 0, 0, 0, 0, 0, 1, 0}, eth), eth, capture.LinkTypeEthernet, nil},
		{"vxlan short", DecodeVXLAN, []byte{8, 0, 0, 0, 0, 0, 1}, nil, 0, ErrTruncated},
		{"vxlan without the I flag", DecodeVXLAN, cat([]byte{0, 0, 0, 0, 0, 0, 1, 0}, eth), nil, 0, ErrBadHeader},
		{"vxlan header alone", DecodeVXLAN, []byte{8, 0, 0, 0, 0, 0, 1, 0}, nil, 0, ErrNoInnerPacket},
		{"vxlan cut frame", DecodeVXLAN, []byte{8, 0, 0, 0, 0, 0, 1, 0, 1}, []byte{1}, capture.LinkTypeEthernet, nil},

		{"geneve ethernet", DecodeGeneve, cat([]byte{0, 0, 0x65, 0x58, 0, 0, 1, 0}, eth), eth, capture.LinkTypeEthernet, nil},
		{"geneve options", DecodeGeneve, cat([]byte{2, 0, 0x65, 0x58, 0, 0, 1, 0}, []byte{1, 2, 3, 1, 0, 0, 0, 0}, eth), eth, capture.LinkTypeEthernet, nil},
		{"geneve ipv4", DecodeGeneve, cat([]byte{0, 0, 0x08, 0x00, 0, 0, 1, 0}, v4), v4, capture.LinkTypeRaw, nil},
		{"geneve 0x08dd", DecodeGeneve, cat([]byte{0, 0, 0x08, 0xdd, 0, 0, 1, 0}, v6), v6, capture.LinkTypeRaw, nil},
		{"geneve 0x86dd", DecodeGeneve, cat([]byte{0, 0, 0x86, 0xdd, 0, 0, 1, 0}, v6), nil, 0, ErrUnsupported},
		{"geneve arp", DecodeGeneve, cat([]byte{0, 0, 0x08, 0x06, 0, 0, 1, 0}, make([]byte, 28)), nil, 0, ErrUnsupported},
		{"geneve header alone", DecodeGeneve, []byte{0, 0, 0x65, 0x58, 0, 0, 1, 0}, nil, 0, ErrNoInnerPacket},
		{"geneve version 1", DecodeGeneve, cat([]byte{0x40, 0, 0x65, 0x58, 0, 0, 1, 0}, eth), nil, 0, ErrBadHeader},
		{"geneve options cut", DecodeGeneve, []byte{3, 0, 0x65, 0x58, 0, 0, 1, 0, 1, 2, 3, 4}, nil, 0, ErrTruncated},
		{"geneve short", DecodeGeneve, []byte{0, 0, 0x65, 0x58}, nil, 0, ErrTruncated},

		{"gtp g-pdu", DecodeGTPv1, gtp(0x30, 0xff, v4), v4, capture.LinkTypeRaw, nil},
		{"gtp g-pdu v6", DecodeGTPv1, gtp(0x30, 0xff, v6), v6, capture.LinkTypeRaw, nil},
		{"gtp sequence", DecodeGTPv1, gtp(0x32, 0xff, []byte{0, 1, 0, 0}, v4), v4, capture.LinkTypeRaw, nil},
		{"gtp extension", DecodeGTPv1, gtp(0x34, 0xff, []byte{0, 0, 0, 0x85}, []byte{1, 0xaa, 0xbb, 0}, v4), v4, capture.LinkTypeRaw, nil},
		{"gtp echo", DecodeGTPv1, gtp(0x32, 1, []byte{0, 1, 0, 0}), nil, 0, ErrNoInnerPacket},
		{"gtp version 2", DecodeGTPv1, gtp(0x48, 0xff, v4), nil, 0, ErrBadHeader},
		{"gtp prime", DecodeGTPv1, gtp(0x20, 0xff, v4), nil, 0, ErrBadHeader},
		{"gtp not ip", DecodeGTPv1, gtp(0x30, 0xff, []byte("Pello, world")), nil, 0, ErrInnerVersion},
		{"gtp dns query", DecodeGTPv1, []byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, nil, 0, ErrBadHeader},

		{"gre ipv4", DecodeGRE, cat([]byte{0, 0, 8, 0}, v4), v4, capture.LinkTypeRaw, nil},
		{"gre key seq ipv6", DecodeGRE, cat([]byte{0x30, 0, 0x86, 0xdd}, make([]byte, 8), v6), v6, capture.LinkTypeRaw, nil},
		{"gre bridged", DecodeGRE, cat([]byte{0, 0, 0x65, 0x58}, eth), eth, capture.LinkTypeEthernet, nil},
		{"gre erspan ii", DecodeGRE, cat([]byte{0x10, 0, 0x88, 0xbe}, make([]byte, 4), make([]byte, 8), eth), eth, capture.LinkTypeEthernet, nil},
		{"gre erspan i", DecodeGRE, cat([]byte{0, 0, 0x88, 0xbe}, eth), eth, capture.LinkTypeEthernet, nil},
		{"gre erspan iii", DecodeGRE, cat([]byte{0x10, 0, 0x22, 0xeb}, make([]byte, 4), make([]byte, 12), eth), eth, capture.LinkTypeEthernet, nil},
		{"gre pptp", DecodeGRE, cat([]byte{0x30, 0x01, 0x88, 0x0b}, make([]byte, 8), []byte{0xff, 0x03, 0x00, 0x21}, v4), v4, capture.LinkTypeRaw, nil},
		{"gre pptp compressed", DecodeGRE, cat([]byte{0x20, 0x81, 0x88, 0x0b}, make([]byte, 8), []byte{0x57}, v6), v6, capture.LinkTypeRaw, nil},
		{"gre pptp lcp", DecodeGRE, cat([]byte{0x30, 0x01, 0x88, 0x0b}, make([]byte, 8), []byte{0xff, 0x03, 0xc0, 0x21, 1}), nil, 0, ErrUnsupported},
		{"gre pptp ack only", DecodeGRE, cat([]byte{0x20, 0x81, 0x88, 0x0b}, make([]byte, 8)), nil, 0, ErrNoInnerPacket},
		{"gre version 2", DecodeGRE, cat([]byte{0, 2, 8, 0}, v4), nil, 0, ErrBadHeader},
		{"gre routing", DecodeGRE, cat([]byte{0x40, 0, 8, 0}, make([]byte, 4), v4), nil, 0, ErrUnsupported},
		{"gre unknown type", DecodeGRE, cat([]byte{0, 0, 0x12, 0x34}, v4), nil, 0, ErrUnsupported},
		{"gre short", DecodeGRE, []byte{0x30, 0, 8, 0, 1}, nil, 0, ErrTruncated},

		{"ip in ip", func(b []byte) (Inner, error) { return DecodeIPinIP(4, b) }, v4, v4, capture.LinkTypeRaw, nil},
		{"6in4", func(b []byte) (Inner, error) { return DecodeIPinIP(41, b) }, v6, v6, capture.LinkTypeRaw, nil},
		{"6in4 trailing", func(b []byte) (Inner, error) { return DecodeIPinIP(41, b) }, cat(v6, []byte{0}), cat(v6, []byte{0}), capture.LinkTypeRaw, nil},
		{"6in4 wrong version", func(b []byte) (Inner, error) { return DecodeIPinIP(41, b) }, v4, nil, 0, ErrInnerVersion},
		{"ip in ip cut", func(b []byte) (Inner, error) { return DecodeIPinIP(4, b) }, v4[:25], nil, 0, ErrInnerTrunc},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if string(got.Data) != string(tt.want) || got.LinkType != tt.lt {
				t.Errorf("inner %x (link type %d), want %x (%d)", got.Data, got.LinkType, tt.want, tt.lt)
			}
		})
	}
}

func TestDetectTeredo(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want bool
	}{
		{"teredo source", inner6(true), true},
		{"other ipv6", inner6(false), false},
		{"origin indication", cat(origin, inner6(false)), true},
		{"auth and origin", cat(auth, origin, inner6(false)), true},
		{"auth without origin", cat(auth, inner6(false)), false},
		{"ipv4", inner4(), false},
		{"dns", cat([]byte{0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}, make([]byte, 40)), false},
		{"short", inner6(true)[:39], false},
	}
	for _, tt := range tests {
		if got := DetectTeredo(tt.in); got != tt.want {
			t.Errorf("%s: DetectTeredo = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestForUDPPort(t *testing.T) {
	for port, want := range map[uint16]Kind{3544: Teredo, 5072: AYIYA, 4789: VXLAN, 2152: GTPv1, 2123: GTPv1, 4754: GRE, 6081: Geneve, 53: None} {
		if got := ForUDPPort(port); got != want {
			t.Errorf("ForUDPPort(%d) = %v, want %v", port, got, want)
		}
	}
	if Teredo.Service() != "teredo" || GTPv1.Service() != "gtpv1" || GRE.Service() != "" {
		t.Errorf("services: %q %q %q", Teredo.Service(), GTPv1.Service(), GRE.Service())
	}
}

func TestNoAllocs(t *testing.T) {
	v6 := cat(origin, inner6(true))
	junk := []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	n := testing.AllocsPerRun(100, func() {
		DecodeTeredo(v6)
		DecodeTeredo(junk)
		DetectTeredo(junk)
		DecodeGTPv1(junk)
		DecodeGRE(junk)
		DecodeAYIYA(junk)
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

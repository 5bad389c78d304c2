package main

import (
	"bytes"
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/miekg/dns"
)

// frameWithChecksums serializes a frame with gopacket, checksums computed.
func frameWithChecksums(t *testing.T, v6, tcp bool) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4}
	var nl gopacket.SerializableLayer
	var netl gopacket.NetworkLayer
	proto := layers.IPProtocolUDP
	if tcp {
		proto = layers.IPProtocolTCP
	}
	if v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip := &layers.IPv6{Version: 6, NextHeader: proto, HopLimit: 64, SrcIP: net.ParseIP("::1"), DstIP: net.ParseIP("::1")}
		nl, netl = ip, ip
	} else {
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.IPv4(127, 0, 0, 1), DstIP: net.IPv4(127, 0, 0, 1)}
		nl, netl = ip, ip
	}
	var tl gopacket.SerializableLayer
	if tcp {
		l := &layers.TCP{SrcPort: 43210, DstPort: 80, Seq: 1, Ack: 2, ACK: true, PSH: true, Window: 512}
		l.SetNetworkLayerForChecksum(netl)
		tl = l
	} else {
		l := &layers.UDP{SrcPort: 53, DstPort: 40000}
		l.SetNetworkLayerForChecksum(netl)
		tl = l
	}
	buf := gopacket.NewSerializeBuffer()
	err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{ComputeChecksums: true, FixLengths: true},
		eth, nl, tl, gopacket.Payload("GET / HTTP/1.1\r\nHost: x\r\n\r\n!"))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFixFrame(t *testing.T) {
	for _, c := range []struct {
		name    string
		v6, tcp bool
		csumOff int // of the transport checksum in the frame
	}{
		{"IPv4 TCP", false, true, 14 + 20 + 16},
		{"IPv4 UDP", false, false, 14 + 20 + 6},
		{"IPv6 TCP", true, true, 14 + 40 + 16},
		{"IPv6 UDP", true, false, 14 + 40 + 6},
	} {
		want := frameWithChecksums(t, c.v6, c.tcp)
		got := append([]byte(nil), want...)
		// What loopback captures hold: the transport checksum is not the
		// real one (and here the IPv4 header checksum is wrong too).
		got[c.csumOff], got[c.csumOff+1] = 0x12, 0x34
		if !c.v6 {
			got[14+10], got[14+11] = 0, 0
		}
		if !fixFrame(got) {
			t.Fatalf("%s: fixFrame did not understand the frame", c.name)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: fixed frame\n% x\nwant\n% x", c.name, got, want)
		}
	}
}

func FuzzFixFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 60))
	f.Fuzz(func(t *testing.T, b []byte) {
		fixFrame(b) // must not panic, whatever the bytes
	})
}

// fakeWriter captures the reply of a dns.Handler.
type fakeWriter struct {
	dns.ResponseWriter
	udp bool
	msg *dns.Msg
}

func (w *fakeWriter) RemoteAddr() net.Addr {
	if w.udp {
		return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
	}
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}

func (w *fakeWriter) WriteMsg(m *dns.Msg) error { w.msg = m; return nil }

func ask(t *testing.T, z *zone, name string, qtype uint16, udp bool) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	w := &fakeWriter{udp: udp}
	z.ServeDNS(w, q)
	if w.msg == nil {
		t.Fatalf("%s %s: no reply", name, dns.TypeToString[qtype])
	}
	return w.msg
}

func TestZone(t *testing.T) {
	z := newZone()
	if m := ask(t, z, "www.example.test.", dns.TypeA, true); m.Rcode != dns.RcodeSuccess || len(m.Answer) != 3 {
		t.Errorf("www A: %v", m)
	}
	if m := ask(t, z, "nothing.example.test.", dns.TypeA, true); m.Rcode != dns.RcodeNameError || len(m.Ns) != 1 {
		t.Errorf("NXDOMAIN: %v", m)
	}
	if m := ask(t, z, "www.example.invalid.", dns.TypeA, true); m.Rcode != dns.RcodeRefused {
		t.Errorf("outside the zones: %v", m)
	}
	udp := ask(t, z, "big.example.test.", dns.TypeTXT, true)
	packed, _ := udp.Pack()
	if !udp.Truncated || len(packed) > 512 {
		t.Errorf("big TXT over UDP: truncated %v, %d bytes", udp.Truncated, len(packed))
	}
	if tcp := ask(t, z, "big.example.test.", dns.TypeTXT, false); tcp.Truncated || len(tcp.Answer) != 30 {
		t.Errorf("big TXT over TCP: truncated %v, %d answers", tcp.Truncated, len(tcp.Answer))
	}
}

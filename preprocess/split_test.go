package preprocess_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/preprocess"
)

func TestParsePorts(t *testing.T) {
	tests := []struct {
		in   string
		want []uint16
		err  string
	}{
		{"80", []uint16{80}, ""},
		{"80,8080", []uint16{80, 8080}, ""},
		{" 80 , 8080 ", []uint16{80, 8080}, ""},
		{"8000-8003,53", []uint16{8000, 8001, 8002, 8003, 53}, ""},
		{"0,65535", []uint16{0, 65535}, ""},
		{"", []uint16{}, ""},
		{"80,", nil, `port list "80,": "" is not a port (want a number from 0 to 65535)`},
		{"http", nil, `port list "http": "http" is not a port (want a number from 0 to 65535)`},
		{"65536", nil, `port list "65536": "65536" is not a port (want a number from 0 to 65535)`},
		{"-1", nil, `port list "-1": "" is not a port (want a number from 0 to 65535)`},
		{"90-80", nil, `port list "90-80": range "90-80" runs backwards`},
	}
	for _, tt := range tests {
		got, err := preprocess.ParsePorts(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParsePorts(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePorts(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

// decodePacket decodes a frame of link type lt.
func decodePacket(t testing.TB, lt uint16, frame []byte, origLen int) *capture.Packet {
	t.Helper()
	if origLen == 0 {
		origLen = len(frame)
	}
	p := &capture.Packet{Data: frame, OrigLen: origLen, LinkType: lt}
	if err := capture.NewDecoder().Decode(p); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	a4, b4 = "192.0.2.1", "198.51.100.2"
	a6, b6 = "2001:db8::1", "2001:db8::2"
)

func TestClassify(t *testing.T) {
	http80 := ct.TCP4(a4, b4, 40000, 80, []byte("GET / HTTP/1.1\r\n\r\n"))
	llc, snap := ct.LLCSNAP(layers.EthernetTypeIPv4)
	ip := ct.IPv4(a4, b4, layers.IPProtocolTCP)
	ip6 := ct.IPv6(a6, b6, layers.IPProtocolUDP)
	ip6.NextHeader = 60
	custom := preprocess.PortRules([]uint16{8080, 8000}, []uint16{5353})
	tests := []struct {
		name  string
		rules preprocess.Rules
		lt    uint16
		frame []byte
		orig  int
		want  preprocess.Class
	}{
		{"tcp to 80", preprocess.DefaultRules(), 1, http80, 0, preprocess.HTTP},
		{"tcp from 80", preprocess.DefaultRules(), 1, ct.TCP4(b4, a4, 80, 40000, nil), 0, preprocess.HTTP},
		{"tcp 8080", preprocess.DefaultRules(), 1, ct.TCP4(a4, b4, 40000, 8080, nil), 0, preprocess.Other},
		{"udp to 53", preprocess.DefaultRules(), 1, ct.UDP4(a4, b4, 40000, 53, []byte("q")), 0, preprocess.DNS},
		{"udp from 53", preprocess.DefaultRules(), 1, ct.UDP6(a6, b6, 53, 40000, []byte("r")), 0, preprocess.DNS},
		{"dns over tcp", preprocess.DefaultRules(), 1, ct.TCP4(a4, b4, 40000, 53, nil), 0, preprocess.Other},
		{"udp to 80", preprocess.DefaultRules(), 1, ct.UDP4(a4, b4, 40000, 80, nil), 0, preprocess.Other},
		{"mdns", preprocess.DefaultRules(), 1, ct.UDP4(a4, b4, 5353, 5353, nil), 0, preprocess.Other},
		{"ipv6 tcp 80", preprocess.DefaultRules(), 1, ct.TCP6(a6, b6, 40000, 80, nil), 0, preprocess.HTTP},
		{"qinq", preprocess.DefaultRules(), 1, ct.Serialize(ct.Ether(layers.EthernetTypeQinQ), ct.VLAN(1, layers.EthernetTypeDot1Q), ct.VLAN(2, layers.EthernetTypeIPv4), ip, ct.TCP(1, 80, ip)), 0, preprocess.HTTP},
		{"mpls", preprocess.DefaultRules(), 1, ct.Serialize(ct.Ether(layers.EthernetTypeMPLSUnicast), &layers.MPLS{Label: 5, StackBottom: true}, ip, ct.TCP(1, 80, ip)), 0, preprocess.HTTP},
		{"llc snap", preprocess.DefaultRules(), 1, ct.Serialize(&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeLLC}, llc, snap, ip, ct.TCP(1, 80, ip)), 0, preprocess.HTTP},
		{"ipv6 destination options", preprocess.DefaultRules(), 1, ct.Serialize(ct.Ether(layers.EthernetTypeIPv6), ip6, ct.IPv6Ext(60, layers.IPProtocolUDP, 0), ct.UDP(1, 53, ip6)), 0, preprocess.DNS},
		{"raw ip", preprocess.DefaultRules(), 101, http80[14:], 0, preprocess.HTTP},
		{"linux sll2", preprocess.DefaultRules(), 276, append(ct.SLL2(0x0800), http80[14:]...), 0, preprocess.HTTP},
		{"tcp header cut after the ports", preprocess.DefaultRules(), 1, http80[:14+20+4], len(http80), preprocess.HTTP},
		{"tcp header cut inside the ports", preprocess.DefaultRules(), 1, http80[:14+20+3], len(http80), preprocess.Other},
		{"arp", preprocess.DefaultRules(), 1, ct.Serialize(ct.Ether(layers.EthernetTypeARP), gopacket.Payload(make([]byte, 28))), 0, preprocess.Other},
		{"custom http port", custom, 1, ct.TCP4(a4, b4, 40000, 8000, nil), 0, preprocess.HTTP},
		{"custom rules drop 80", custom, 1, http80, 0, preprocess.Other},
		{"custom dns port", custom, 1, ct.UDP4(a4, b4, 5353, 5353, nil), 0, preprocess.DNS},
		{"no ports at all", preprocess.Rules{}, 1, http80, 0, preprocess.Other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decodePacket(t, tt.lt, tt.frame, tt.orig)
			if got := preprocess.NewClassifier(tt.rules).Classify(p); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
		})
	}
}

// fragments returns the decoded fragments of a UDP datagram from sport to
// dport (IPv4 or IPv6), 24 payload bytes each, at timestamp ts.
func fragments(t *testing.T, v6 bool, sport, dport uint16, id uint32, ts int64) []*capture.Packet {
	var frames [][]byte
	if v6 {
		frames = ct.Fragment6(ct.UDP6(a6, b6, sport, dport, make([]byte, 50)), 14, 24, id)
	} else {
		dgram := ct.UDP4(a4, b4, sport, dport, make([]byte, 50))
		dgram[14+4], dgram[14+5] = byte(id>>8), byte(id)
		frames = ct.Fragment4(dgram, 14, 24)
	}
	var ps []*capture.Packet
	for _, f := range frames {
		p := decodePacket(t, 1, f, 0)
		p.TS = ts
		ps = append(ps, p)
	}
	return ps
}

func TestClassifyFragments(t *testing.T) {
	type step struct {
		p    *capture.Packet
		want preprocess.Class
	}
	sec := int64(time.Second)
	tests := []struct {
		name  string
		rules preprocess.Rules
		steps func(t *testing.T) []step
		stats preprocess.ClassifierStats
	}{
		{"ipv4 in order", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, false, 40000, 53, 1, 0)
			return []step{{f[0], preprocess.DNS}, {f[1], preprocess.DNS}, {f[2], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 2}},
		{"ipv6 in order", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, true, 53, 40000, 1, 0)
			return []step{{f[0], preprocess.DNS}, {f[1], preprocess.DNS}, {f[2], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 2}},
		{"datagram that does not match", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, false, 40000, 5000, 1, 0)
			return []step{{f[0], preprocess.Other}, {f[1], preprocess.Other}, {f[2], preprocess.Other}}
		}, preprocess.ClassifierStats{FragsOther: 2}},
		{"datagram that does not match, last fragment first", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, false, 40000, 5000, 1, 0)
			return []step{{f[2], preprocess.Other}, {f[0], preprocess.Other}, {f[1], preprocess.Other}}
		}, preprocess.ClassifierStats{FragsOther: 1, FragsUnmatched: 1}},
		{"last fragment first", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, false, 40000, 53, 1, 0)
			return []step{{f[2], preprocess.Other}, {f[0], preprocess.DNS}, {f[1], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 1, FragsUnmatched: 1}},
		{"interleaved datagrams", preprocess.DefaultRules(), func(t *testing.T) []step {
			a := fragments(t, false, 40000, 53, 1, 0)
			b := fragments(t, false, 40000, 5000, 2, 0)
			c := fragments(t, true, 40000, 53, 1, 0) // same id as a, other addresses
			return []step{{a[0], preprocess.DNS}, {b[0], preprocess.Other}, {c[0], preprocess.DNS},
				{b[1], preprocess.Other}, {a[1], preprocess.DNS}, {c[2], preprocess.DNS}, {a[2], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 3, FragsOther: 1}},
		{"table full", preprocess.PortRules(nil, []uint16{53}).WithFragTable(2), func(t *testing.T) []step {
			a := fragments(t, false, 1, 53, 1, 0)
			b := fragments(t, false, 1, 53, 2, 0)
			c := fragments(t, false, 1, 53, 3, 0)
			return []step{{a[0], preprocess.DNS}, {b[0], preprocess.DNS}, {c[0], preprocess.DNS},
				{a[1], preprocess.Other}, {b[1], preprocess.DNS}, {c[1], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 2, FragsUnmatched: 1, FragsForgotten: 1}},
		{"table full of expired datagrams", preprocess.PortRules(nil, []uint16{53}).WithFragTable(1), func(t *testing.T) []step {
			a := fragments(t, false, 1, 53, 1, 0)
			b := fragments(t, false, 1, 53, 2, 120*sec)
			return []step{{a[0], preprocess.DNS}, {b[0], preprocess.DNS}, {b[1], preprocess.DNS}}
		}, preprocess.ClassifierStats{FragsMatched: 1}},
		{"timeout", preprocess.DefaultRules(), func(t *testing.T) []step {
			f := fragments(t, false, 40000, 53, 1, 0)
			f[1].TS = 59 * sec
			f[2].TS = 61 * sec
			return []step{{f[0], preprocess.DNS}, {f[1], preprocess.DNS}, {f[2], preprocess.Other}}
		}, preprocess.ClassifierStats{FragsMatched: 1, FragsUnmatched: 1}},
		{"http datagram", preprocess.DefaultRules(), func(t *testing.T) []step {
			dgram := ct.TCP4(a4, b4, 40000, 80, make([]byte, 60))
			var s []step
			for _, f := range ct.Fragment4(dgram, 14, 32) {
				s = append(s, step{decodePacket(t, 1, f, 0), preprocess.HTTP})
			}
			return s
		}, preprocess.ClassifierStats{FragsMatched: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := preprocess.NewClassifier(tt.rules)
			for i, s := range tt.steps(t) {
				if got := c.Classify(s.p); got != s.want {
					t.Errorf("step %d (fragment at %d): %v, want %v", i, s.p.FragOffset, got, s.want)
				}
			}
			if got := c.Stats(); got != tt.stats {
				t.Errorf("stats %+v, want %+v", got, tt.stats)
			}
		})
	}
}

// TestSplitterOutput splits inputs of several shapes and checks that each
// sub-trace holds exactly the packets of its class, unchanged, in a file
// with the input's link type, snap length and timestamp resolution.
func TestSplitterOutput(t *testing.T) {
	base := int64(1_700_000_000_000_000_000)
	mk := func(link func([]byte) []byte) (recs []ct.Record, http, dns []int) {
		frames := [][]byte{
			ct.TCP4(a4, b4, 40000, 80, []byte("GET / HTTP/1.1\r\n\r\n")),
			ct.UDP4(a4, b4, 40001, 53, []byte("query")),
			ct.UDP4(a4, b4, 40002, 123, []byte("ntp")),
			ct.TCP6(a6, b6, 80, 40000, bytes.Repeat([]byte("x"), 300)),
			ct.UDP6(a6, b6, 53, 40001, []byte("reply")),
		}
		for i, f := range frames {
			recs = append(recs, ct.Record{TS: base + int64(i)*1_000_000_123, Data: link(f)})
		}
		// The same HTTP segment cut by a 100-byte snap length.
		recs = append(recs, ct.Record{TS: base + 9e9, Data: recs[3].Data[:100], OrigLen: len(recs[3].Data)})
		return recs, []int{0, 3, 5}, []int{1, 4}
	}
	ethRecs, ethHTTP, ethDNS := mk(func(f []byte) []byte { return f })
	rawRecs, rawHTTP, rawDNS := mk(func(f []byte) []byte { return f[14:] })
	sll2Recs, sll2HTTP, sll2DNS := mk(func(f []byte) []byte {
		proto := uint16(0x0800)
		if f[12] == 0x86 {
			proto = 0x86dd
		}
		return append(ct.SLL2(proto), f[14:]...)
	})
	// Microsecond files carry microseconds only.
	usRecs := slices.Clone(ethRecs)
	for i := range usRecs {
		usRecs[i].TS -= usRecs[i].TS % 1000
	}
	tests := []struct {
		name      string
		input     []byte
		recs      []ct.Record
		http, dns []int
		hdr       capture.Header
	}{
		{"pcap µs", ct.Pcap(ct.PcapOptions{LinkType: 1, Snaplen: 1500}, usRecs...), usRecs, ethHTTP, ethDNS, capture.Header{LinkType: 1, Snaplen: 1500}},
		{"pcap ns big-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true, BigEndian: true}, ethRecs...), ethRecs, ethHTTP, ethDNS, capture.Header{LinkType: 1, Snaplen: 262144, Nanos: true}},
		{"pcap raw ip gzip", ct.Gzip(ct.Pcap(ct.PcapOptions{LinkType: 101, Nanos: true}, rawRecs...)), rawRecs, rawHTTP, rawDNS, capture.Header{LinkType: 101, Snaplen: 262144, Nanos: true}},
		{"pcapng ns sll2", ct.Pcapng(false, []ct.Interface{{LinkType: 276, TSResol: 9, Snaplen: 9000}}, sll2Recs...), sll2Recs, sll2HTTP, sll2DNS, capture.Header{LinkType: 276, Snaplen: 9000, Nanos: true}},
		{"pcapng µs", ct.Pcapng(true, nil, usRecs...), usRecs, ethHTTP, ethDNS, capture.Header{LinkType: 1, Snaplen: 262144}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := split(t, "in", tt.input, preprocess.DefaultRules())
			if res.err != nil {
				t.Fatal(res.err)
			}
			for _, sub := range []struct {
				name string
				out  []byte
				idx  []int
			}{{"HTTP", res.http, tt.http}, {"DNS", res.dns, tt.dns}} {
				got, err := readPcap(sub.name, sub.out)
				if err != nil {
					t.Fatal(err)
				}
				want := pcapFile{hdr: tt.hdr}
				for _, i := range sub.idx {
					r := tt.recs[i]
					want.frames = append(want.frames, pframe{r.TS, r.Data, max(r.OrigLen, len(r.Data))})
				}
				if d := diffPcap(got, want); d != "" {
					t.Errorf("%s sub-trace: %s", sub.name, d)
				}
			}
			if st := res.stats; st.Packets != int64(len(tt.recs)) || st.SubTraces[0] != int64(len(tt.http)) || st.SubTraces[1] != int64(len(tt.dns)) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestSplitterEmptyInput(t *testing.T) {
	res := split(t, "in", ct.Pcap(ct.PcapOptions{LinkType: 113, Snaplen: 65535}), preprocess.DefaultRules())
	for _, out := range [][]byte{res.http, res.dns} {
		f, err := readPcap("out", out)
		if err != nil || len(f.frames) != 0 || f.hdr != (capture.Header{LinkType: 113, Snaplen: 65535}) {
			t.Errorf("empty input gave %+v, %v", f, err)
		}
	}
}

// TestSplitterMixedLinkTypes splits pcapng inputs whose interfaces have
// different link types: fine while the packets of each sub-trace share
// the first interface's type, an error naming both types otherwise, with
// every packet before it written.
func TestSplitterMixedLinkTypes(t *testing.T) {
	ifaces := []ct.Interface{{LinkType: 1}, {LinkType: 101}}
	http := ct.TCP4(a4, b4, 40000, 80, nil)
	other := ct.UDP4(a4, b4, 1, 2, nil)
	fine := ct.Pcapng(false, ifaces,
		ct.Record{Data: http}, ct.Record{Data: other[14:], Iface: 1}, ct.Record{Data: http})
	res := split(t, "fine.pcapng", fine, preprocess.DefaultRules())
	if res.err != nil {
		t.Fatalf("other link type without HTTP or DNS: %v", res.err)
	}
	bad := ct.Pcapng(false, ifaces,
		ct.Record{Data: http}, ct.Record{Data: http[14:], Iface: 1}, ct.Record{Data: http})
	res = split(t, "bad.pcapng", bad, preprocess.DefaultRules())
	var le *capture.LinkTypeMismatchError
	if !errors.As(res.err, &le) || le.File != 1 || le.Packet != 101 {
		t.Fatalf("error %v, want a LinkTypeMismatchError", res.err)
	}
	if msg := res.err.Error(); !strings.HasPrefix(msg, "http sub-trace: packet of link type 101 (raw IP) cannot go into a pcap file of link type 1 (Ethernet)") {
		t.Errorf("error message %q", msg)
	}
	f, err := readPcap("http", res.http)
	if err != nil || len(f.frames) != 1 {
		t.Errorf("HTTP sub-trace up to the error: %d packets, %v; want the 1 before it", len(f.frames), err)
	}
}

func TestSplitterWithoutWriters(t *testing.T) {
	s, err := preprocess.NewSplitter(preprocess.DefaultRules(), capture.Header{LinkType: 1}, nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := s.Packet(decodePacket(t, 1, ct.TCP4(a4, b4, 1, 80, nil), 0))
	if cls != preprocess.HTTP || err != nil {
		t.Errorf("Packet = %v, %v; want an HTTP packet", cls, err)
	}
	cls, err = s.Packet(decodePacket(t, 1, ct.UDP4(a4, b4, 1, 53, nil), 0))
	if cls != preprocess.DNS || err != nil {
		t.Errorf("Packet = %v, %v; want a DNS packet", cls, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// failWriter fails every write after the first n bytes.
type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestSplitterWriteError(t *testing.T) {
	s, err := preprocess.NewSplitter(preprocess.DefaultRules(), capture.Header{LinkType: 1}, &failWriter{n: 100}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := decodePacket(t, 1, ct.TCP4(a4, b4, 1, 80, make([]byte, 1000)), 0)
	for range 100 {
		if _, err = s.Packet(p); err != nil {
			break
		}
	}
	if err == nil {
		err = s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "http sub-trace: disk full") {
		t.Errorf("error %v, want the write error", err)
	}
}

// TestSplitterAllocs proves that classifying and writing a packet
// allocates nothing, fragments included once the table is warm.
func TestSplitterAllocs(t *testing.T) {
	s, err := preprocess.NewSplitter(preprocess.DefaultRules(), capture.Header{LinkType: 1}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ps := []*capture.Packet{
		decodePacket(t, 1, ct.TCP4(a4, b4, 1, 80, []byte("GET /")), 0),
		decodePacket(t, 1, ct.UDP6(a6, b6, 53, 1, []byte("reply")), 0),
		decodePacket(t, 1, ct.TCP4(a4, b4, 1, 443, nil), 0),
	}
	ps = append(ps, fragments(t, false, 1, 53, 7, 0)...)
	ps = append(ps, fragments(t, true, 1, 53, 7, 0)...)
	run := func() {
		for _, p := range ps {
			if _, err := s.Packet(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if allocs := testing.AllocsPerRun(100, run); allocs != 0 {
		t.Errorf("Splitter.Packet allocates %.1f times per run of %d packets, want 0", allocs, len(ps))
	}
}

// TestClassifierFragmentTableAllocs proves that a full fragment table
// forgets and remembers datagrams without allocating.
func TestClassifierFragmentTableAllocs(t *testing.T) {
	c := preprocess.NewClassifier(preprocess.PortRules(nil, []uint16{53}).WithFragTable(16))
	var firsts []*capture.Packet
	for id := range 50 {
		firsts = append(firsts, fragments(t, id%2 == 0, 1, 53, uint32(id), 0)[0])
	}
	i := 0
	allocs := testing.AllocsPerRun(500, func() {
		c.Classify(firsts[i%len(firsts)])
		i++
	})
	if allocs != 0 {
		t.Errorf("Classify allocates %.2f times per first fragment, want 0", allocs)
	}
	if c.Stats().FragsForgotten == 0 {
		t.Error("the table never filled")
	}
}

package capture_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

// The seed corpora under testdata/fuzz are written by writeSeeds from the
// builders below: go test -run TestFuzzSeeds -update-seeds.
var updateSeeds = flag.Bool("update-seeds", false, "rewrite the fuzz seed corpora in testdata/fuzz")

// FuzzReader reads and decodes every packet of arbitrary input: no panic,
// errors that name the input, packets within bounds.
func FuzzReader(f *testing.F) {
	for _, s := range readerSeeds() {
		f.Add(s.data)
	}
	d := capture.NewDecoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := capture.NewReader(bytes.NewReader(data), "fuzz.pcap")
		if err != nil {
			checkErr(t, err)
			return
		}
		// A lending reader, whose leases are all held, reads the same.
		lr, _ := capture.NewReader(bytes.NewReader(data), "fuzz.pcap")
		lr.Lend()
		var p, lp capture.Packet
		var held *capture.Lease
		for range 100000 {
			err, lerr := r.Next(&p), lr.Next(&lp)
			if fmt.Sprint(err) != fmt.Sprint(lerr) || r.Offset() != lr.Offset() {
				t.Fatalf("lending reader: %v at offset %d, want %v at %d", lerr, lr.Offset(), err, r.Offset())
			}
			if err == io.EOF {
				return
			}
			if err != nil {
				checkErr(t, err)
				return
			}
			if l := lp.Lease; l != nil && l != held {
				l.Hold()
				held = l
			}
			if !bytes.Equal(p.Data, lp.Data) || p.TS != lp.TS || p.OrigLen != lp.OrigLen || p.LinkType != lp.LinkType || p.Lease != nil {
				t.Fatalf("lending reader read %x, want %x", lp.Data, p.Data)
			}
			if len(p.Data) > capture.MaxSnaplen || len(p.Data) > p.OrigLen {
				t.Fatalf("frame of %d bytes, original length %d", len(p.Data), p.OrigLen)
			}
			checkDecode(t, d, &p)
		}
	})
}

// FuzzDecode decodes arbitrary bytes as a frame of each link type.
func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds() {
		f.Add(s.linkType, s.data)
	}
	d, ref := capture.NewDecoder(), capture.NewRefDecoder()
	f.Fuzz(func(t *testing.T, linkType uint16, data []byte) {
		// The hand-written decoder agrees with the gopacket-based one.
		if diff := sameDecode(ref, d, linkType, data, len(data)); diff != "" {
			t.Fatalf("link type %d, frame %x: %s", linkType, data, diff)
		}
		p := capture.Packet{Data: data, OrigLen: len(data), LinkType: linkType}
		checkDecode(t, d, &p)
		// The same bytes cut by a snap length.
		if len(data) > 1 {
			p = capture.Packet{Data: data[:len(data)/2], OrigLen: len(data), LinkType: linkType}
			checkDecode(t, d, &p)
		}
	})
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, "fuzz.pcap: ") || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
		t.Fatalf("error %q does not name the input on one line", msg)
	}
}

// checkDecode decodes p and checks that every slice and offset it set lies
// within the frame.
func checkDecode(t *testing.T, d *capture.Decoder, p *capture.Packet) {
	t.Helper()
	if err := d.Decode(p); err != nil {
		if strings.Contains(err.Error(), "panic") {
			t.Fatalf("a layer panicked: %v", err)
		}
		return
	}
	within := func(name string, s []byte) {
		if len(s) == 0 {
			return
		}
		start := cap(p.Data) - cap(s)
		if start < 0 || start+len(s) > len(p.Data) {
			t.Fatalf("%s [%d:%d] lies outside the %d-byte frame", name, start, start+len(s), len(p.Data))
		}
	}
	within("IPPayload", p.IPPayload)
	within("Payload", p.Payload)
	if p.IPVersion != 0 {
		if p.IPVersion != 4 && p.IPVersion != 6 {
			t.Fatalf("IPVersion %d", p.IPVersion)
		}
		if p.IPOffset < 0 || p.IPOffset > p.IPPayloadOffset || p.IPPayloadOffset > len(p.Data) {
			t.Fatalf("offsets %d %d in a %d-byte frame", p.IPOffset, p.IPPayloadOffset, len(p.Data))
		}
		if len(p.IPPayload) > 0 && cap(p.Data)-cap(p.IPPayload) != p.IPPayloadOffset {
			t.Fatalf("IPPayloadOffset %d is not where IPPayload starts", p.IPPayloadOffset)
		}
	}
	if p.Fragment && (p.SrcPort != 0 || p.Payload != nil) {
		t.Fatalf("transport fields set for a fragment")
	}
}

type seed struct {
	name     string
	linkType uint16
	data     []byte
}

// readerSeeds are capture files of every shape the reader knows, and a few
// damaged ones.
func readerSeeds() []seed {
	recs := sampleRecords()
	eth := recs[0].Data
	ng := ct.NewNG(false).IDB(ct.Interface{LinkType: 1}).IDB(ct.Interface{LinkType: 101, TSResol: 9}).
		IDB(ct.Interface{LinkType: 276, TSResol: 0x80 | 20, TSOffset: 5})
	ng.EPB(0, 1, eth, len(eth)).EPB(1, 2, eth[14:], len(eth)-14).EPB(2, 3, append(ct.SLL2(0x0800), eth[14:]...), len(eth)+6)
	ng.ISB(0).Block(0xbad, []byte("custom")).SPB(eth, len(eth)).PB(1, 4, eth[14:], len(eth)-14)
	twoSections := append(ct.Pcapng(false, nil, recs[0]), ct.Pcapng(true, []ct.Interface{{LinkType: 229}}, ct.Record{Data: ct.UDP6(v6a, v6b, 1, 53, nil)[14:]})...)
	// The if_tsresol that makes pcapgo's NgReader divide by zero.
	badResol := ct.NewNG(false).Block(1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 1, 0, 64, 0, 0, 0}).EPB(0, 1, eth, len(eth)).Bytes()
	hugeCaplen := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs[0])
	binary.LittleEndian.PutUint32(hugeCaplen[24+8:], 0xfffffff0)
	seeds := []seed{
		{name: "pcap-le", data: ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)},
		{name: "pcap-be-ns", data: ct.Pcap(ct.PcapOptions{LinkType: 1, BigEndian: true, Nanos: true}, recs...)},
		{name: "pcap-raw", data: ct.Pcap(ct.PcapOptions{LinkType: 101}, ct.Record{Data: eth[14:]})},
		{name: "pcap-null", data: ct.Pcap(ct.PcapOptions{LinkType: 0}, ct.Record{Data: append(ct.Loopback(30, binary.LittleEndian), ct.TCP6(v6a, v6b, 1, 80, nil)[14:]...)})},
		{name: "pcap-sll", data: ct.Pcap(ct.PcapOptions{LinkType: 113}, ct.Record{Data: append(ct.SLL(0x0800), eth[14:]...)})},
		{name: "pcap-gz", data: ct.Gzip(ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...))},
		{name: "pcapng-multi", data: ng.Bytes()},
		{name: "pcapng-sections", data: twoSections},
		{name: "pcapng-gz", data: ct.Gzip(ng.Bytes())},
		{name: "pcapng-bad-tsresol", data: badResol},
		{name: "pcap-huge-caplen", data: hugeCaplen},
		{name: "pcap-cut", data: ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)[:100]},
		{name: "pcap-v21", data: ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...)},
		{name: "pcap-radiotap", data: ct.Pcap(ct.PcapOptions{LinkType: 127}, ct.Record{Data: linkTypeFrames()[127][3]})},
	}
	return seeds
}

// decodeSeeds are frames of every link type and shape the decoder knows.
func decodeSeeds() []seed {
	raw4 := ct.Serialize(ipv4TCP("GET / HTTP/1.1\r\n")...)
	raw6 := ct.Serialize(ipv6(true, "dns", 0)...)
	llc, snap := ct.LLCSNAP(layers.EthernetTypeIPv4)
	frags := ct.Fragment4(ct.UDP4(v4a, v4b, 1, 53, make([]byte, 40)), 14, 24)
	frags6 := ct.Fragment6(ct.UDP6(v6a, v6b, 1, 53, make([]byte, 40)), 14, 24, 7)
	lt := linkTypeFrames()
	wifi, radio := lt[105], lt[127]
	return []seed{
		{"ethernet-tcp", 1, ct.TCP4(v4a, v4b, 40000, 80, []byte("GET /"))},
		{"ethernet-udp6", 1, ct.UDP6(v6a, v6b, 5353, 53, []byte("query"))},
		{"qinq", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeQinQ), ct.VLAN(1, layers.EthernetTypeDot1Q), ct.VLAN(2, layers.EthernetTypeIPv4)}, ipv4UDP("q"))},
		{"llc-snap", 1, build([]gopacket.SerializableLayer{&layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeLLC}, llc, snap}, ipv4TCP("s"))},
		{"mpls", 1, build([]gopacket.SerializableLayer{ct.Ether(layers.EthernetTypeMPLSUnicast), &layers.MPLS{Label: 1}, &layers.MPLS{Label: 2, StackBottom: true}}, ipv4TCP("m"))},
		{"ipv6-ext", 1, build(eth(layers.EthernetTypeIPv6), ipv6(true, "x", 0, ct.IPv6Ext(0, 43, 0), ct.IPv6Ext(43, 44, 1), ct.IPv6Frag(60, 0, false, 1), ct.IPv6Ext(60, 51, 0), ct.IPv6AH(layers.IPProtocolUDP)))},
		{"ipv4-fragment", 1, frags[1]},
		{"ipv6-fragment", 1, frags6[0]},
		{"fddi", 10, build([]gopacket.SerializableLayer{ct.FDDI(), llc, snap}, ipv4UDP("f"))},
		{"null", 0, append(ct.Loopback(2, binary.LittleEndian), raw4...)},
		{"loop", 108, append(ct.Loopback(24, binary.BigEndian), raw6...)},
		{"sll", 113, append(ct.SLL(0x86dd), raw6...)},
		{"sll2", 276, append(ct.SLL2(0x0800), raw4...)},
		{"raw", 101, raw6},
		{"raw-dlt12", 12, raw4},
		{"ipv4", 228, raw4},
		{"ipv6", 229, raw6},
		{"ppp", 9, append(ct.PPP(0x21, true), raw4...)},
		{"ppp-hdlc", 50, append(ct.PPP(0x57, true), raw6...)},
		{"chdlc", 104, append(ct.CHDLC(0x0800), raw4...)},
		{"wifi-qos", 105, wifi[6]},
		{"wifi-4addr-ipv6", 105, wifi[5]},
		{"wifi-amsdu", 105, wifi[12]},
		{"radiotap-pad", 127, radio[len(radio)-1]},
		{"nflog", 239, lt[239][0]},
	}
}

// TestFuzzSeeds checks that the committed seed corpora are what the
// builders make (or rewrites them with -update-seeds).
func TestFuzzSeeds(t *testing.T) {
	want := map[string]string{}
	for _, s := range readerSeeds() {
		want[filepath.Join("FuzzReader", "seed-"+s.name)] = fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
	}
	for _, s := range decodeSeeds() {
		want[filepath.Join("FuzzDecode", "seed-"+s.name)] = fmt.Sprintf("go test fuzz v1\nuint16(%d)\n[]byte(%q)\n", s.linkType, s.data)
	}
	dir := filepath.Join("testdata", "fuzz")
	if *updateSeeds {
		for name, content := range want {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want[name] {
			t.Errorf("%s is missing or stale: run go test -run TestFuzzSeeds -update-seeds", name)
		}
	}
}

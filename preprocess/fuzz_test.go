package preprocess_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/gopacket/layers"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/preprocess"
)

// The seed corpus under testdata/fuzz/FuzzProcess is written from
// processSeeds: go test -run TestFuzzProcessSeeds -update-seeds.
var updateSeeds = flag.Bool("update-seeds", false, "rewrite the fuzz seed corpus in testdata/fuzz")

// FuzzProcess preprocesses arbitrary input: no panic, no error or a
// one-line error naming the input, and, once the input's header was read,
// pcap files holding the packets the summary counts and batch files that
// read to the end with every connection ended.
//
// Its seeds are the committed corpus (see TestFuzzProcessSeeds).
func FuzzProcess(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		res := processBytes(preprocess.DefaultConfig(), "fuzz.pcap", data)
		if res.err != nil {
			checkOneLine(t, res.err, "fuzz.pcap")
		}
		if res.sum.Inputs == nil {
			if n := len(res.httpPcap) + len(res.httpDat) + len(res.dnsPcap) + len(res.dnsDat); n > 0 {
				t.Fatalf("no summary, but %d bytes written", n)
			}
			return
		}
		for _, sub := range []struct {
			name string
			out  []byte
			n    int64
		}{{"http", res.httpPcap, res.sum.SubTrace("http").Packets}, {"dns", res.dnsPcap, res.sum.SubTrace("dns").Packets}} {
			p, err := readPcap(sub.name, sub.out)
			if err != nil || int64(len(p.frames)) != sub.n {
				t.Fatalf("%s pcap: %d frames, %v; the summary says %d", sub.name, len(p.frames), err, sub.n)
			}
		}
		for _, b := range []struct {
			name string
			out  []byte
			n    int64
		}{{"http.dat", res.httpDat, res.sum.SubTrace("http").Connections}, {"dns.dat", res.dnsDat, res.sum.SubTrace("dns").Connections}} {
			f, err := parseBatch(b.name, b.out)
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(f.conns)) != b.n {
				t.Fatalf("%s: %d connections, the summary says %d", b.name, len(f.conns), b.n)
			}
		}
	})
}

type seed struct {
	name string
	data []byte
}

// processSeeds are inputs of every shape Process meets: pcap and pcapng,
// gzip, link types, VLAN, IPv6, fragments, out-of-order and lost TCP
// segments, and cut files.
func processSeeds() []seed {
	recs, _, _ := conversation()
	var raw []ct.Record
	for _, r := range recs {
		raw = append(raw, ct.Record{TS: r.TS, Data: r.Data[14:]})
	}
	// The conversation with the request's segment lost and the response
	// before the client's ack: a gap, and data buffered out of order.
	lossy := slices.Clone(recs)
	lossy = slices.Delete(lossy, 4, 5)
	lossy[2], lossy[5] = lossy[5], lossy[2]

	ip := ct.IPv4(a4, b4, layers.IPProtocolTCP)
	vlan := ct.Serialize(ct.Ether(layers.EthernetTypeDot1Q), ct.VLAN(7, layers.EthernetTypeIPv4), ip, ct.TCP(40000, 80, ip))
	var frags []ct.Record
	for i, fr := range ct.Fragment4(ct.UDP4(a4, b4, 40000, 53, make([]byte, 60)), 14, 24) {
		frags = append(frags, ct.Record{TS: t0 + int64(i), Data: fr})
	}
	for i, fr := range ct.Fragment6(ct.UDP6(a6, b6, 53, 40000, make([]byte, 60)), 14, 24, 9) {
		frags = append(frags, ct.Record{TS: t0 + int64(i+10), Data: fr})
	}
	pcap := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	return []seed{
		{"pcap", pcap},
		{"pcap-cut", pcap[:len(pcap)-20]},
		{"pcap-ns-big-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, Nanos: true, BigEndian: true}, recs...)},
		{"pcapng", ct.Pcapng(false, []ct.Interface{{LinkType: 1, TSResol: 9}}, recs...)},
		{"pcapng-gzip", ct.Gzip(ct.Pcapng(true, nil, recs...))},
		{"raw-ip", ct.Pcap(ct.PcapOptions{LinkType: 101}, raw...)},
		{"lossy", ct.Pcap(ct.PcapOptions{LinkType: 1}, lossy...)},
		{"vlan-ipv6", ct.Pcap(ct.PcapOptions{LinkType: 1},
			ct.Record{TS: t0, Data: vlan},
			ct.Record{TS: t0 + int64(time.Second), Data: ct.TCP6(a6, b6, 40000, 80, []byte(request))},
			ct.Record{TS: t0 + 2*int64(time.Second), Data: ct.UDP6(a6, b6, 40000, 53, []byte("query"))})},
		{"fragments", ct.Pcap(ct.PcapOptions{LinkType: 1}, frags...)},
		{"mixed-link-types", ct.Pcapng(false, []ct.Interface{{LinkType: 1}, {LinkType: 101}},
			ct.Record{Data: recs[0].Data}, ct.Record{Data: raw[1].Data, Iface: 1})},
		// The crasher FuzzProcess found: a pcapng whose first interface has
		// a link type no decoder knows (12336, "00"), whose number the
		// sub-traces took as theirs.
		{"pcapng-unsupported-link-type", ct.Pcapng(false, []ct.Interface{{LinkType: 12336}, {LinkType: 1}},
			ct.Record{Data: recs[0].Data, Iface: 1})},
	}
}

// TestFuzzProcessSeeds checks that the committed seed corpus is what
// processSeeds makes, and rewrites it with -update-seeds.
func TestFuzzProcessSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzProcess")
	for _, s := range processSeeds() {
		path := filepath.Join(dir, "seed-"+s.name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
		if *updateSeeds {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != want {
			t.Errorf("%s is missing or stale: run go test -run TestFuzzProcessSeeds -update-seeds", path)
		}
	}
}

package preprocess_test

import (
	"math/rand/v2"
	"testing"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/preprocess"
)

// checkSplitCuts splits input cut at many offsets. Whatever the cut, the
// sub-traces written up to the end or the error must be valid pcap files
// holding exactly the packets the uncut split gives for the input packets
// read before the cut.
func checkSplitCuts(t *testing.T, name string, input []byte) {
	full := split(t, name, input, preprocess.DefaultRules())
	if full.err != nil {
		t.Fatal(full.err)
	}
	fullHTTP, err := readPcap("http", full.http)
	if err != nil {
		t.Fatal(err)
	}
	fullDNS, err := readPcap("dns", full.dns)
	if err != nil {
		t.Fatal(err)
	}
	var cuts []int
	if len(input) <= 1000 {
		for i := range len(input) {
			cuts = append(cuts, i)
		}
	} else {
		rng := rand.New(rand.NewPCG(uint64(len(input)), 2))
		for range 80 {
			cuts = append(cuts, rng.IntN(len(input)))
		}
	}
	for _, cut := range cuts {
		res := split(t, name, input[:cut], preprocess.DefaultRules())
		var nHTTP, nDNS int
		for _, c := range full.classes[:res.packets] {
			switch c {
			case preprocess.HTTP:
				nHTTP++
			case preprocess.DNS:
				nDNS++
			}
		}
		for _, sub := range []struct {
			name string
			out  []byte
			full pcapFile
			n    int
		}{{"HTTP", res.http, fullHTTP, nHTTP}, {"DNS", res.dns, fullDNS, nDNS}} {
			if res.packets == 0 && res.err != nil && len(sub.out) == 0 {
				continue // the input header itself was cut: no output was started
			}
			got, err := readPcap(sub.name, sub.out)
			if err != nil {
				t.Fatalf("cut at %d: %s sub-trace is not a valid pcap file: %v", cut, sub.name, err)
			}
			want := pcapFile{hdr: sub.full.hdr, frames: sub.full.frames[:sub.n]}
			if res.packets == 0 {
				// Cut before the first packet, a pcapng input may not
				// have declared its interfaces yet: any header will do.
				want.hdr = got.hdr
			}
			if d := diffPcap(got, want); d != "" {
				t.Fatalf("cut at %d after %d input packets: %s sub-trace: %s", cut, res.packets, sub.name, d)
			}
		}
	}
}

func TestSplitTruncatedOwn(t *testing.T) {
	var recs []ct.Record
	for i := range 12 {
		recs = append(recs,
			ct.Record{TS: int64(i) * 1e9, Data: ct.TCP4(a4, b4, 40000, 80, make([]byte, i*10))},
			ct.Record{TS: int64(i)*1e9 + 1000, Data: ct.UDP6(a6, b6, 53, 40000, make([]byte, i))},
			ct.Record{TS: int64(i)*1e9 + 2000, Data: ct.UDP4(a4, b4, 1, 2, nil)})
	}
	for name, input := range map[string][]byte{
		"own.pcap":      ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...),
		"own.pcapng":    ct.Pcapng(false, []ct.Interface{{LinkType: 1, TSResol: 9}}, recs...),
		"own.pcapng.gz": ct.Gzip(ct.Pcapng(true, nil, recs...)),
	} {
		t.Run(name, func(t *testing.T) { checkSplitCuts(t, name, input) })
	}
}

package preprocess_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// checkProcessCuts preprocesses input cut at the given offsets, as a
// capture cut off by a full disk or a killed tcpdump would be. Whatever
// the cut, Process must end with no error or a one-line error naming the
// input, never panic, and leave four valid files complete up to the last
// whole packet: pcap files holding exactly the packets the uncut input
// gives up to there, and batch files that read to the end, with every
// connection ended, agreeing with the uncut input's.
func checkProcessCuts(t *testing.T, name string, input []byte, cuts []int) {
	cfg := preprocess.DefaultConfig()
	full := processBytes(cfg, name, input)
	if full.err != nil {
		t.Fatal(full.err)
	}
	classes := split(t, name, input, cfg.Rules).classes
	fullHTTP, err := readPcap("http", full.httpPcap)
	if err != nil {
		t.Fatal(err)
	}
	fullDNS, err := readPcap("dns", full.dnsPcap)
	if err != nil {
		t.Fatal(err)
	}
	fullHB := mustParseBatch(t, "http.dat", full.httpDat)
	fullDB := mustParseBatch(t, "dns.dat", full.dnsDat)

	for _, cut := range cuts {
		res := processBytes(cfg, name, input[:cut])
		if res.err != nil {
			checkOneLine(t, res.err, name)
		}
		if res.sum.Inputs == nil {
			// The file header was cut: nothing may be written.
			if res.err == nil || len(res.httpPcap)+len(res.httpDat)+len(res.dnsPcap)+len(res.dnsDat) > 0 {
				t.Fatalf("cut at %d: no summary, error %v, %d bytes written", cut, res.err, len(res.httpPcap)+len(res.httpDat)+len(res.dnsPcap)+len(res.dnsDat))
			}
			continue
		}
		n := res.sum.Packets
		var nHTTP, nDNS int
		for _, c := range classes[:n] {
			switch c {
			case preprocess.HTTP:
				nHTTP++
			case preprocess.DNS:
				nDNS++
			}
		}
		where := fmt.Sprintf("cut at %d after %d packets", cut, n)
		for _, sub := range []struct {
			name string
			out  []byte
			full pcapFile
			n    int
		}{{"HTTP", res.httpPcap, fullHTTP, nHTTP}, {"DNS", res.dnsPcap, fullDNS, nDNS}} {
			got, err := readPcap(sub.name, sub.out)
			if err != nil {
				t.Fatalf("%s: %s pcap: %v", where, sub.name, err)
			}
			want := pcapFile{hdr: sub.full.hdr, frames: sub.full.frames[:sub.n]}
			if n == 0 {
				want.hdr = got.hdr // a pcapng input may not have declared its interfaces yet
			}
			if d := diffPcap(got, want); d != "" {
				t.Fatalf("%s: %s pcap: %s", where, sub.name, d)
			}
		}
		for _, sub := range []struct {
			name       string
			out        []byte
			full       *batchFile
			wantStream bool
		}{{"http.dat", res.httpDat, fullHB, true}, {"dns.dat", res.dnsDat, fullDB, false}} {
			b, err := parseBatch(sub.name, sub.out)
			if err != nil {
				t.Fatalf("%s: %v", where, err)
			}
			if err := batchPrefix(b, sub.full); err != nil {
				t.Fatalf("%s: %s: %v", where, sub.name, err)
			}
		}
	}
}

// batchPrefix checks that a batch file recorded from the first packets of
// an input agrees with the one recorded from all of them: its connections
// are the first ones of the full file, in the same order; each datagram
// flow holds the first datagrams of the full one; each stream flow holds
// no more than the full one, and where it holds data the full one holds
// the same bytes (where the full one has data, the cut one may have a gap:
// the retransmission came after the cut).
func batchPrefix(cut, full *batchFile) error {
	if len(cut.conns) > len(full.conns) {
		return fmt.Errorf("%d connections, the whole input gives %d", len(cut.conns), len(full.conns))
	}
	for i, c := range cut.conns {
		f := full.conns[i]
		if c.cid != f.cid || c.kind != f.kind {
			return fmt.Errorf("connection %d is %s %s, the whole input's %s %s", i, c.cid, c.kind, f.cid, f.kind)
		}
		for dir := range 2 {
			if err := chunksPrefix(c.chunks[dir], f.chunks[dir], c.kind.String() == "stream"); err != nil {
				return fmt.Errorf("%s direction %d: %v", c.cid, dir, err)
			}
		}
	}
	return nil
}

func chunksPrefix(cut, full []chunk, stream bool) error {
	if !stream {
		if len(cut) > len(full) {
			return fmt.Errorf("%d datagrams, the whole input gives %d", len(cut), len(full))
		}
		for i, c := range cut {
			if !bytes.Equal(c.data, full[i].data) {
				return fmt.Errorf("datagram %d differs", i)
			}
		}
		return nil
	}
	// Lay the full stream out by offset.
	var whole []byte
	var known []bool
	for _, c := range full {
		if c.gap > 0 {
			whole = append(whole, make([]byte, c.gap)...)
			known = append(known, make([]bool, c.gap)...)
			continue
		}
		whole = append(whole, c.data...)
		for range c.data {
			known = append(known, true)
		}
	}
	off := int64(0)
	for _, c := range cut {
		n := c.gap + int64(len(c.data))
		if off+n > int64(len(whole)) {
			return fmt.Errorf("stream goes to offset %d, the whole input's ends at %d", off+n, len(whole))
		}
		for i, b := range c.data {
			if !known[off+int64(i)] || whole[off+int64(i)] != b {
				return fmt.Errorf("byte at offset %d differs from the whole input's", off+int64(i))
			}
		}
		off += n
	}
	return nil
}

// cutOffsets returns every offset below head (file header, first records)
// and n random ones.
func cutOffsets(input []byte, head, n int) []int {
	var cuts []int
	for i := range min(head, len(input)) {
		cuts = append(cuts, i)
	}
	rng := rand.New(rand.NewPCG(uint64(len(input)), 3))
	for range n {
		cuts = append(cuts, rng.IntN(len(input)))
	}
	return cuts
}

func TestProcessTruncatedOwn(t *testing.T) {
	recs, _, _ := conversation()
	for name, input := range map[string][]byte{
		"own.pcap":      ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...),
		"own.pcapng":    ct.Pcapng(false, []ct.Interface{{LinkType: 1, TSResol: 9}}, recs...),
		"own.pcapng.gz": ct.Gzip(ct.Pcapng(true, nil, recs...)),
	} {
		t.Run(name, func(t *testing.T) { checkProcessCuts(t, name, input, cutOffsets(input, 200, 60)) })
	}
}

// TestProcessTruncatedCorpus cuts every corpus trace that has packets to
// preprocess at 40 random offsets. (It also covers what a Splitter-level
// test of the corpus would: the pcap files are checked the same way.)
func TestProcessTruncatedCorpus(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	for _, e := range c.Entries {
		if _, fails := corpusFailures[e.Trace]; fails {
			continue
		}
		if e.Tcpdump == nil || e.Tcpdump.TCPPort80+e.Tcpdump.UDPPort53 == 0 && len(splitDeviations[e.Trace].why) == 0 {
			continue // nothing to preprocess
		}
		t.Run(e.Trace, func(t *testing.T) {
			input, err := os.ReadFile(e.File(c))
			if err != nil {
				t.Fatal(err)
			}
			checkProcessCuts(t, e.Trace, input, cutOffsets(input, 0, 40))
		})
	}
}

package capture_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// fullRead is a file read to its end: its frames, and the offset (in the
// decompressed data) at which each frame's record or block ends.
type fullRead struct {
	frames []frame
	ends   []int64
	sizes  []int // captured bytes of each frame
}

func readFull(t *testing.T, name string, data []byte) fullRead {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	var f fullRead
	var p capture.Packet
	for {
		err := r.Next(&p)
		if err == io.EOF {
			return f
		}
		if err != nil {
			t.Fatal(err)
		}
		f.frames = append(f.frames, frame{p.TS, bytes.Clone(p.Data), p.OrigLen, p.LinkType})
		f.ends = append(f.ends, r.Offset())
		f.sizes = append(f.sizes, len(p.Data))
	}
}

// cutPoints returns every offset of a small file, and for a large one the
// first and last kilobyte, the bytes around a sample of record ends, and
// random offsets.
func cutPoints(size int, ends []int64, gz bool) []int {
	if size <= 3000 {
		cuts := make([]int, size)
		for i := range cuts {
			cuts[i] = i
		}
		return cuts
	}
	var cuts []int
	for i := 0; i < 1024; i += 7 {
		cuts = append(cuts, i, size-1-i)
	}
	rng := rand.New(rand.NewPCG(uint64(size), 1))
	if !gz {
		for range 40 {
			e := int(ends[rng.IntN(len(ends))])
			cuts = append(cuts, e-1, e, e+1)
		}
	}
	for range 100 {
		cuts = append(cuts, rng.IntN(size))
	}
	return cuts
}

// checkCuts reads data cut at many offsets and checks that each cut gives
// exactly the whole packets before it, then a clean end or an error that
// names the file: never a panic, never a lost or altered packet.
func checkCuts(t *testing.T, name string, data []byte) {
	full := readFull(t, name, data)
	gz := len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b
	for _, cut := range cutPoints(len(data), full.ends, gz) {
		part := data[:cut]
		// The bytes a reader can get out of the cut input.
		avail := int64(cut)
		if gz {
			avail = gunzipLen(part)
		}
		whole := 0
		for whole < len(full.ends) && full.ends[whole] <= avail {
			whole++
		}
		got, _, err := readAll(t, name, part)
		if len(got) != whole {
			t.Fatalf("%s cut at %d: delivered %d packets, want the %d whole ones (err %v)", name, cut, len(got), whole, err)
		}
		for i := range got {
			if g, w := got[i], full.frames[i]; g.TS != w.TS || !bytes.Equal(g.Data, w.Data) || g.OrigLen != w.OrigLen || g.LinkType != w.LinkType {
				t.Fatalf("%s cut at %d: packet %d differs from the uncut read", name, cut, i)
			}
		}
		if err != nil {
			var ce *capture.Error
			if !errors.As(err, &ce) || ce.File != name || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s cut at %d: error %q is not a one-line capture.Error naming the file", name, cut, err)
			}
		}
		// A cut inside the data of the next packet must be reported.
		if whole < len(full.ends) && avail > full.ends[whole]-int64(full.sizes[whole]) && err == nil {
			t.Fatalf("%s cut at %d, inside packet %d: clean end instead of an error", name, cut, whole)
		}
		if !gz && whole > 0 && avail == full.ends[whole-1] && err != nil {
			t.Fatalf("%s cut at %d, right after packet %d: %v instead of a clean end", name, cut, whole-1, err)
		}
	}
}

// gunzipLen returns how many bytes a gzip reader gets out of a cut gzip
// stream.
func gunzipLen(z []byte) int64 {
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, zr)
	return n
}

func TestTruncatedOwnFiles(t *testing.T) {
	recs := sampleRecords()
	ng := ct.NewNG(false).IDB(ct.Interface{LinkType: 1}).IDB(ct.Interface{LinkType: 101, TSResol: 9})
	for i, r := range recs {
		ng.EPB(i%2, uint64(i+1)*1000, r.Data, max(r.OrigLen, len(r.Data)))
		ng.ISB(0)
	}
	ng.SPB(recs[0].Data, len(recs[0].Data)).Block(0xbad, []byte("skip me"))
	ng.PB(0, 5, recs[1].Data, len(recs[1].Data))
	files := map[string][]byte{
		"le.pcap":      ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...),
		"be-ns.pcap":   ct.Pcap(ct.PcapOptions{LinkType: 1, BigEndian: true, Nanos: true}, recs...),
		"multi.pcapng": ng.Bytes(),
		"be.pcapng":    ct.Pcapng(true, nil, recs...),
	}
	for _, name := range []string{"le.pcap", "multi.pcapng"} {
		files[name+".gz"] = ct.Gzip(files[name])
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) { checkCuts(t, name, data) })
	}
}

func TestTruncatedCorpus(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	for _, e := range c.Entries {
		if corpusOutcome[e.Trace] != "" {
			continue
		}
		t.Run(e.Trace, func(t *testing.T) {
			data, err := os.ReadFile(e.File(c))
			if err != nil {
				t.Fatal(err)
			}
			checkCuts(t, e.Trace, data)
		})
	}
}

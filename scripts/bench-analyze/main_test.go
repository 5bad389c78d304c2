package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

func TestMedianCPU(t *testing.T) {
	us := func(secs ...float64) []usage {
		var out []usage
		for _, s := range secs {
			out = append(out, usage{cpu: time.Duration(s * float64(time.Second))})
		}
		return out
	}
	for _, tt := range []struct {
		in   []usage
		want time.Duration
	}{
		{us(3), 3 * time.Second},
		{us(5, 1, 3), 3 * time.Second},
		{us(4, 1, 3, 2), 2500 * time.Millisecond},
	} {
		if got := medianCPU(tt.in); got != tt.want {
			t.Errorf("medianCPU(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestAnalyzeCounts(t *testing.T) {
	line := "# user_time=0.1 sys_time=0.0 memory=1 bytes=2 packets=3 conns=4 http=5 dns=6 throughput=1.00MB/s\n"
	if got, want := analyzeCounts([]byte(line)), "conns=4 http=5 dns=6"; got != want {
		t.Errorf("analyzeCounts = %q, want %q", got, want)
	}
}

func TestCountLines(t *testing.T) {
	n, err := countLines(strings.NewReader(strings.Repeat("frame\n", 100000)))
	if err != nil || n != 100000 {
		t.Errorf("countLines = %d, %v, want 100000", n, err)
	}
}

// TestSameLinkType keeps the captures of the link type with the most
// bytes, as inflate-trace writes one link type.
func TestSameLinkType(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lt uint16, n int) string {
		var recs []ct.Record
		for range n {
			recs = append(recs, ct.Record{TS: 1, Data: ct.UDP4("10.0.0.1", "10.0.0.2", 1, 53, []byte("x"))})
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, ct.Pcap(ct.PcapOptions{LinkType: uint32(lt)}, recs...), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.pcap", capture.LinkTypeEthernet, 3)
	b := write("b.pcap", capture.LinkTypeRaw, 1)
	c := write("c.pcap", capture.LinkTypeEthernet, 2)
	got := sameLinkType([]string{a, b, c, filepath.Join(dir, "missing.pcap")})
	if strings.Join(got, " ") != a+" "+c {
		t.Errorf("sameLinkType = %v, want the two Ethernet files", got)
	}
}

func TestFloorLine(t *testing.T) {
	runs := func(secs ...float64) *variant {
		v := &variant{name: "analyze (native)"}
		for _, s := range secs {
			v.runs = append(v.runs, usage{cpu: time.Duration(s * float64(time.Second))})
		}
		return v
	}
	inf := &decompression{order: []string{"ours", "theirs"},
		cpu: map[string][]float64{"ours": {30e6, 50e6, 40e6}, "theirs": {20e6, 80e6, 90e6}}}
	for _, tt := range []struct {
		name          string
		tshark        time.Duration
		native        *variant
		decode, write *variant
		inf           *decompression
		want          string
	}{
		{"with tshark", 6 * time.Second, runs(0.12), runs(0.04, 0.03, 0.05), runs(0.02), nil,
			"floor: read + decode 0.040 s + writing the native logs 0.020 s = 0.060 s, 100x tshark; analyze (native) 2.00x the floor"},
		{"without tshark", 0, nil, runs(0.04), runs(0.02), nil,
			"floor: read + decode 0.040 s + writing the native logs 0.020 s = 0.060 s"},
		{"decompression", 6 * time.Second, runs(0.2), runs(0.04), runs(0.02), inf,
			"floor: read + decode 0.040 s + writing the native logs 0.020 s + decompressing the bodies 0.040 s (ours) = 0.100 s, 60x tshark; analyze (native) 2.00x the floor"},
		{"decode failed", time.Second, nil, &variant{failed: "exit status 1"}, runs(0.02), nil, ""},
		{"write not run", time.Second, nil, runs(0.04), runs(), nil, ""},
	} {
		if got := floorLine(tt.tshark, tt.native, tt.decode, tt.write, tt.inf); got != tt.want {
			t.Errorf("%s: floorLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestDecompressionParse reads BenchmarkInflateBodies' output, medians
// per inflater, and picks the fastest.
func TestDecompressionParse(t *testing.T) {
	out := `goos: linux
BenchmarkInflateBodies/inflater=wirebench-2         	      18	  84705462 ns/op	 164.98 MB/s	  66480444 cpu-ns/op	  52872248 out-B/op	     569 B/op	       0 allocs/op
BenchmarkInflateBodies/inflater=klauspost-2         	       4	 274963682 ns/op	  50.82 MB/s	 171000500 cpu-ns/op	  52872248 out-B/op	  119554 B/op	    4580 allocs/op
BenchmarkInflateBodies/inflater=wirebench-2         	      18	  84705462 ns/op	 164.98 MB/s	  60000000 cpu-ns/op	  52872248 out-B/op	     569 B/op	       0 allocs/op
BenchmarkInflateBodies/inflater=klauspost-2         	       4	 274963682 ns/op	  50.82 MB/s	 170000000 cpu-ns/op	  52872248 out-B/op	  119554 B/op	    4580 allocs/op
BenchmarkInflateBodies/inflater=wirebench-2         	      18	  84705462 ns/op	 164.98 MB/s	  70000000 cpu-ns/op	  52872248 out-B/op	     569 B/op	       0 allocs/op
BenchmarkInflateBodies/inflater=klauspost-2         	       4	 274963682 ns/op	  50.82 MB/s	  10000000 cpu-ns/op	  52872248 out-B/op	  119554 B/op	    4580 allocs/op
PASS
`
	d := &decompression{bodies: "bodies=3 bytes=100"}
	if err := d.parse(out); err != nil {
		t.Fatal(err)
	}
	if name, cpu := d.fastest(); name != "wirebench" || cpu != 66480444 {
		t.Errorf("fastest = %s %v, want wirebench 66.480444ms", name, cpu)
	}
	want := "decompressing the compressed bodies (bodies=3 bytes=100, to 52.9 MB), CPU s of one pass, median of 3: wirebench 0.066 s, klauspost 0.170 s; fastest: wirebench"
	if got := d.line(); got != want {
		t.Errorf("line = %q\nwant %q", got, want)
	}
	if err := new(decompression).parse("PASS\n"); err == nil {
		t.Error("parse of no results: no error")
	}
	if err := new(decompression).parse("BenchmarkInflateBodies/inflater=x-2 1 5 ns/op\n"); err == nil {
		t.Error("parse of a line without cpu-ns/op: no error")
	}
}

// TestDirSize counts the regular files of a directory, not its
// subdirectories, and 0 for a directory that is not there.
func TestDirSize(t *testing.T) {
	dir := t.TempDir()
	for name, n := range map[string]int{"conn.log": 100, "dns.log": 23} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := dirSize(dir); got != 123 {
		t.Errorf("dirSize = %d, want 123", got)
	}
	if got := dirSize(filepath.Join(dir, "missing")); got != 0 {
		t.Errorf("dirSize(missing) = %d, want 0", got)
	}
}

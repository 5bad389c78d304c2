package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statResults are ten runs of four variants: http-opt 20 % faster than
// http-static, http-static-std as fast, http-tshark three runs only, and
// dns-static with one outlying run.
func statResults() []Result {
	run := func(cpu float64, passes int) Run {
		d := time.Duration(cpu * float64(time.Second))
		return Run{Measurement: Measurement{User: d, Wall: d, TimeKnown: true}, Passes: passes, Bytes: int64(passes) * 50_000_000}
	}
	noise := []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.005, 0.995, 1.015, 0.985, 1.0}
	series := func(scale float64, passes, n int) []Run {
		var runs []Run
		for _, x := range noise[:n] {
			runs = append(runs, run(scale*x*float64(passes), passes))
		}
		return runs
	}
	v := func(name, proto string, kind Kind) Variant { return Variant{Name: name, Protocol: proto, Kind: kind} }
	dns := series(0.3, 2, 10)
	dns[4] = run(0.3*2*3, 2) // one run three times as long
	return []Result{
		{Variant: v("http-static", "http", Replay), Passes: 10, Runs: series(0.05, 10, 10)},
		{Variant: v("http-opt", "http", Replay), Passes: 12, Runs: series(0.04, 12, 10)},
		{Variant: v("http-static-std", "http", Replay), Passes: 3, Runs: series(0.05, 3, 10)},
		{Variant: v("http-tshark", "http", TShark), Passes: 1, Runs: series(2.9, 1, 3)},
		{Variant: v("dns-static", "dns", Replay), Passes: 2, Runs: dns},
		{Variant: v("dns-opt", "dns", Replay), Passes: 2, Runs: []Run{{Measurement: Measurement{Err: os.ErrNotExist, ExitCode: 1}}}},
	}
}

func TestStatistics(t *testing.T) {
	sts := Statistics(statResults(), "")
	byName := map[string]Stat{}
	for _, s := range sts {
		byName[s.Variant] = s
	}
	ref := byName["http-static"]
	if ref.Comparison != nil || ref.Reference != "http-static" || len(ref.Times) != 10 {
		t.Errorf("reference: %+v", ref)
	}
	// Per execution: 0.05 s, 50 MB, so 1000 MB/s.
	if ref.Median < 0.0499 || ref.Median > 0.0501 || ref.MBPerSecond < 999 || ref.MBPerSecond > 1001 {
		t.Errorf("reference median %g s, %g MB/s", ref.Median, ref.MBPerSecond)
	}
	// Runs of different passes compare per execution.
	opt := byName["http-opt"].Comparison
	if opt == nil || opt.Ratio < 0.79 || opt.Ratio > 0.81 || !opt.HasInterval || opt.Lo > 0.8 || opt.Hi < 0.8 || !opt.Significant {
		t.Errorf("http-opt against http-static: %+v", opt)
	}
	if std := byName["http-static-std"].Comparison; std == nil || std.Significant || std.Ratio < 0.99 || std.Ratio > 1.01 {
		t.Errorf("http-static-std, as fast: %+v", std)
	}
	// Three runs against ten have an interval (P(U = 0) = 1/286).
	if ts := byName["http-tshark"]; ts.TooFewRuns() || ts.Comparison.Ratio < 57 || ts.Comparison.Ratio > 59 {
		t.Errorf("tshark, three runs: %+v", ts)
	}
	if d := byName["dns-static"]; len(d.Outliers) != 1 || d.Outliers[0] != 4 {
		t.Errorf("dns-static outliers %v", d.Outliers)
	}
	if d := byName["dns-opt"]; d.Comparison != nil || len(d.Times) != 0 {
		t.Errorf("dns-opt, failed: %+v", d)
	}

	// Another reference.
	for _, c := range []struct{ ref, http, dns string }{
		{"P-opt", "http-opt", "dns-opt"},
		{"opt", "http-opt", "dns-opt"},
		{"http-static-std", "http-static-std", "dns-static"},
	} {
		if got := referenceFor("http", c.ref); got != c.http {
			t.Errorf("--reference %s: http against %s, want %s", c.ref, got, c.http)
		}
		if got := referenceFor("dns", c.ref); got != c.dns {
			t.Errorf("--reference %s: dns against %s, want %s", c.ref, got, c.dns)
		}
	}
	sts = Statistics(statResults(), "P-opt")
	if s := sts[0]; s.Reference != "http-opt" || s.Comparison == nil || s.Comparison.Ratio < 1.24 || s.Comparison.Ratio > 1.26 {
		t.Errorf("http-static against http-opt: %+v", s)
	}
	// dns-opt has no successful run: no reference for DNS.
	if s := sts[4]; s.Reference != "" || s.Comparison != nil {
		t.Errorf("dns-static without reference: %+v", s)
	}
}

func TestWriteStatistics(t *testing.T) {
	var b bytes.Buffer
	if err := WriteStatistics(&b, Statistics(statResults(), "")); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "statistics.golden")
	if *update {
		os.WriteFile(golden, b.Bytes(), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("statistics section:\n%s\nwant (%s):\n%s", b.String(), golden, want)
	}
	if err := WriteStatistics(failingWriter{}, Statistics(statResults(), "")); err == nil {
		t.Error("a write error is not reported")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestStatWarnings(t *testing.T) {
	results := statResults()
	warns := StatWarnings(results, Statistics(results, ""))
	var text []string
	for _, w := range warns {
		text = append(text, string(w.Kind)+": "+w.Message)
	}
	all := strings.Join(text, "\n")
	// The runs of 10 x 0.05 s are 0.5 s; 12 x 0.04 and 3 x 0.05 are not;
	// tshark is not a wirebench variant.
	if !strings.Contains(all, "short-runs: the median user time of http-opt (0.480 s), http-static-std (0.150 s) is below 500ms") ||
		strings.Contains(all, "http-static (") || strings.Contains(all, "tshark") {
		t.Errorf("short-run warning:\n%s", all)
	}
	if !strings.Contains(all, "outlier-runs: dns-static: 1 of 10 runs are outliers (0.900 s against a median of 0.301 s") {
		t.Errorf("outlier warning:\n%s", all)
	}
}

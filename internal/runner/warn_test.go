package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func warningsOf(ws []Warning, kind WarningKind) []Warning {
	var out []Warning
	for _, w := range ws {
		if w.Kind == kind {
			out = append(out, w)
		}
	}
	return out
}

var testCheck = CheckConfig{BuildCommand: "run-benchmark build", PreprocessCommand: "run-benchmark preprocess -o DIR TRACE"}

func TestCheckMissingBinariesAndData(t *testing.T) {
	cfg := fakeBench(t, map[string]string{"http": "native=1", "dns": "native=1"})
	if err := os.Remove(filepath.Join(cfg.WorkDir, "http-opt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(cfg.TraceDir, "spicy-dns.dat")); err != nil {
		t.Fatal(err)
	}
	runnable, warns := Check(Variants(cfg), testCheck)
	if got, want := strings.Join(Names(runnable), " "),
		"http-static http-static-std http-analyze http-analyze-opt http-analyze-std http-tshark dns-analyze dns-analyze-opt dns-analyze-std dns-tshark"; got != want {
		t.Errorf("runnable:\n%s\nwant\n%s", got, want)
	}
	bins := warningsOf(warns, MissingBinary)
	if len(bins) != 1 {
		t.Fatalf("missing-binary warnings %v, want one", bins)
	}
	for _, want := range []string{filepath.Join(cfg.WorkDir, "http-opt") + " does not exist", "did you run `run-benchmark build`?", "(skipping http-opt)"} {
		if !strings.Contains(bins[0].Message, want) {
			t.Errorf("warning %q lacks %q", bins[0], want)
		}
	}
	data := warningsOf(warns, MissingData)
	if len(data) != 1 {
		t.Fatalf("missing-data warnings %v, want one for spicy-dns.dat", data)
	}
	for _, want := range []string{"spicy-dns.dat does not exist", "run `run-benchmark preprocess -o " + cfg.TraceDir + " TRACE` first",
		"(skipping dns-static, dns-opt, dns-static-std)"} {
		if !strings.Contains(data[0].Message, want) {
			t.Errorf("warning %q lacks %q", data[0], want)
		}
	}
	if !strings.HasPrefix(data[0].String(), "warning: ") {
		t.Errorf("String() = %q", data[0].String())
	}
}

// With nothing built and no data, two warnings say so instead of one per file.
func TestCheckNothingThere(t *testing.T) {
	empty := t.TempDir()
	runnable, warns := Check(Variants(VariantConfig{TraceDir: empty, WorkDir: empty}), testCheck)
	if len(runnable) != 0 || len(warns) != 2 {
		t.Fatalf("runnable %v, warnings %v; want none runnable and two warnings", Names(runnable), warns)
	}
	want := []string{
		empty + " holds none of the binaries (http-static, http-opt, analyze-static, analyze-opt, dns-static, dns-opt): did you run `run-benchmark build`?",
		empty + " holds none of the data files (spicy-http.dat, spicy-http.pcap, spicy-dns.dat, spicy-dns.pcap): run `run-benchmark preprocess -o " + empty + " TRACE` first",
	}
	for i, w := range warns {
		if w.Message != want[i] {
			t.Errorf("warning %d:\n%s\nwant\n%s", i, w.Message, want[i])
		}
	}
	// A tshark that is not there is named as such.
	_, warns = Check(Variants(VariantConfig{TraceDir: empty, WorkDir: empty, TShark: "/nonexistent/tshark"}), testCheck)
	if w := warns[len(warns)-1]; w.Message != "/nonexistent/tshark does not exist (skipping http-tshark, dns-tshark)" {
		t.Errorf("last warning %q, want one about tshark", w)
	}
}

func TestDebugSettings(t *testing.T) {
	tests := []struct {
		settings map[string]string
		want     []string
	}{
		{map[string]string{"-trimpath": "true", "CGO_ENABLED": "0", "-pgo": "default.pgo"}, nil},
		{map[string]string{"-race": "true"}, []string{"-race"}},
		{map[string]string{"-cover": "true"}, []string{"-cover"}},
		{map[string]string{"-gcflags": "-N -l"}, []string{`-gcflags="-N -l" (optimisations and inlining disabled)`}},
		{map[string]string{"-gcflags": "all=-N -l"}, []string{"optimisations and inlining disabled"}},
		{map[string]string{"-gcflags": "all=-l"}, []string{"inlining disabled"}},
		{map[string]string{"-gcflags": "-N"}, []string{"optimisations disabled"}},
		{map[string]string{"-gcflags": "-m -B"}, nil},
		{map[string]string{"-asan": "true", "-race": "false"}, []string{"-asan"}},
	}
	for _, tt := range tests {
		info := &debug.BuildInfo{}
		for k, v := range tt.settings {
			info.Settings = append(info.Settings, debug.BuildSetting{Key: k, Value: v})
		}
		got := DebugSettings(info)
		if len(got) != len(tt.want) {
			t.Errorf("DebugSettings(%v) = %q, want %d problems", tt.settings, got, len(tt.want))
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("DebugSettings(%v)[%d] = %q, want it to contain %q", tt.settings, i, got[i], tt.want[i])
			}
		}
	}
}

// Binaries really built with -race, -cover and -gcflags=-N -l are flagged.
func TestCheckFlagsDebugBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds instrumented binaries (-race compiles the runtime for it)")
	}
	cfg := fakeBench(t, map[string]string{"http": "native=1"})
	cfg.Protocols = []string{"http"}
	builds := map[string][]string{
		"http-static":    {"-race"},
		"http-opt":       {"-cover"},
		"analyze-static": {"-gcflags=-N -l"},
	}
	for name, flags := range builds {
		// Replace the link to the shared fake, never write through it.
		dst := filepath.Join(cfg.WorkDir, name)
		os.Remove(dst)
		args := append(append([]string{"build"}, flags...), "-o", dst, "./testdata/fakechild")
		cmd := exec.Command("go", args...)
		if flags[0] == "-race" {
			cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			if flags[0] != "-race" {
				t.Fatalf("go %v: %v\n%s", args, err, out)
			}
			t.Logf("not testing a -race binary: go build -race failed (no C toolchain?): %v\n%s", err, out)
			linkFake(t, cfg.WorkDir, name)
			delete(builds, name)
		}
	}
	_, warns := Check(Variants(cfg), testCheck)
	debugs := warningsOf(warns, DebugBuild)
	for name, flags := range builds {
		found := false
		for _, w := range debugs {
			setting, _, _ := strings.Cut(flags[0], "=")
			if strings.Contains(w.Message, filepath.Join(cfg.WorkDir, name)+" was built with "+setting) {
				found = true
				if !strings.Contains(w.Message, "rebuild with `run-benchmark build`") {
					t.Errorf("warning %q does not say what to do", w)
				}
			}
		}
		if !found {
			t.Errorf("no warning about %s built with %v; warnings: %v", name, flags, debugs)
		}
	}
	if len(debugs) != len(builds) {
		t.Errorf("%d debug-build warnings for %d debug binaries (each binary once): %v", len(debugs), len(builds), debugs)
	}
}

func TestCheckFlagsNonGoBinary(t *testing.T) {
	cfg := fakeBench(t, map[string]string{"http": "native=1"})
	cfg.Protocols = []string{"http"}
	script := filepath.Join(cfg.WorkDir, "http-static")
	os.Remove(script)
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, warns := Check(Variants(cfg), testCheck)
	if u := warningsOf(warns, UnknownBuild); len(u) != 1 || !strings.Contains(u[0].Message, "http-static") {
		t.Errorf("unknown-build warnings %v, want one about http-static", u)
	}
}

// writeSourceTree makes a minimal wirebench source tree.
func writeSourceTree(t *testing.T, files map[string]string) string {
	t.Helper()
	src := t.TempDir()
	files["go.mod"] = "module " + ModulePath + "\n\ngo 1.26\n"
	writeFiles(t, src, files)
	return src
}

func TestCheckFlagsStaleBinaries(t *testing.T) {
	cfg := fakeBench(t, map[string]string{"dns": "native=1"})
	cfg.Protocols = []string{"dns"}
	src := writeSourceTree(t, map[string]string{"cmd/dns-parser/main.go": "package main\n"})
	// The source changed an hour ago, after the fakes were linked but
	// before dns-opt was built.
	hourAgo := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(src, "go.mod"), hourAgo.Add(-time.Hour), hourAgo.Add(-time.Hour))
	os.Chtimes(filepath.Join(src, "cmd/dns-parser/main.go"), hourAgo, hourAgo)
	old := time.Now().Add(-2 * time.Hour)
	// A copy, so that changing its time leaves the shared fake alone.
	stale := filepath.Join(cfg.WorkDir, "dns-opt")
	os.Remove(stale)
	data, _ := os.ReadFile(fakeChild)
	if err := os.WriteFile(stale, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	// Test files, testdata and hidden directories do not make a binary stale.
	future := time.Now().Add(time.Hour)
	for _, f := range []string{"cmd/dns-parser/main_test.go", "testdata/x.go", ".git/y.go"} {
		p := filepath.Join(src, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("package x\n"), 0o644)
		os.Chtimes(p, future, future)
	}
	cc := testCheck
	cc.Source = src
	_, warns := Check(Variants(cfg), cc)
	stales := warningsOf(warns, StaleBinary)
	if len(stales) != 1 {
		t.Fatalf("stale warnings %v, want one about dns-opt", stales)
	}
	for _, want := range []string{stale + " is older than the source", "cmd/dns-parser/main.go changed", "rebuild with `run-benchmark build`"} {
		if !strings.Contains(stales[0].Message, want) {
			t.Errorf("warning %q lacks %q", stales[0], want)
		}
	}
}

func TestCheckLoad(t *testing.T) {
	tests := []struct {
		load      float64
		busyCores float64
		want      string // in the message; "" for no warning
	}{
		{1.5, -1, ""},
		{1.5, 1.8, ""}, // the load average decides first
		{3.25, -1, "busy: load average 3.25 over the last minute (2.50 over 5 minutes) on 2 cores"},
		{3.25, 1.4, "busy: other processes keep 1.4 of 2 cores busy, load average 3.25"},
		{3.25, 0.2, ""}, // what is left of a build that just ended
	}
	for _, tt := range tests {
		w := CheckLoad([3]float64{tt.load, 2.5, 1}, 2, tt.busyCores)
		switch {
		case tt.want == "" && w != nil:
			t.Errorf("load %.2f, busy %.1f: %v", tt.load, tt.busyCores, w)
		case tt.want != "" && (w == nil || w.Kind != BusyMachine || !strings.Contains(w.Message, tt.want)):
			t.Errorf("load %.2f, busy %.1f: %v; want a warning with %q", tt.load, tt.busyCores, w, tt.want)
		}
	}
	load, err := parseLoadAvg("0.52 0.58 0.59 2/1180 123456\n")
	if err != nil || load != [3]float64{0.52, 0.58, 0.59} {
		t.Errorf("parseLoadAvg = %v, %v", load, err)
	}
	if _, err := parseLoadAvg("0.5 x"); err == nil {
		t.Error("parseLoadAvg accepted garbage")
	}
}

func TestParseCPUTimes(t *testing.T) {
	const stat = "cpu  100 5 50 800 20 3 2 10 7 0\n" +
		"cpu0 50 2 25 400 10 1 1 5 3 0\n" +
		"cpu1 50 3 25 400 10 2 1 5 4 0\n" +
		"intr 12345 0 0\nctxt 99\n"
	got, err := parseCPUTimes(stat)
	want := cpuTimes{busy: 100 + 5 + 50 + 3 + 2 + 10, total: 990, cpus: 2}
	if err != nil || got != want {
		t.Errorf("parseCPUTimes = %+v, %v; want %+v", got, err, want)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu 1 2\ncpu0 1 2\n", "cpu 1 2 x 4\ncpu0 1 2 3 4\n", "cpu 1 2 3 4\n"} {
		if _, err := parseCPUTimes(bad); err == nil {
			t.Errorf("parseCPUTimes(%q) accepted it", bad)
		}
	}
}

func TestBusyCores(t *testing.T) {
	if got := BusyCores(filepath.Join(t.TempDir(), "none"), time.Millisecond); got != -1 {
		t.Errorf("BusyCores of a missing file = %v, want -1", got)
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc/stat here")
	}
	got := BusyCores("/proc/stat", 50*time.Millisecond)
	if got < 0 || got > float64(runtime.NumCPU())+0.01 {
		t.Errorf("BusyCores = %v, want between 0 and %d", got, runtime.NumCPU())
	}
}

func TestCountMismatches(t *testing.T) {
	rs := tableResults()
	warns := CountMismatches(rs, "benchmark/output")
	if len(warns) != 1 {
		t.Fatalf("warnings %v, want one: http.log differs", warns)
	}
	want := "http variants disagree on http.log: 4833 (http-static, http-opt, http-analyze) vs 4906 (http-analyze-std) vs 4830 (http-tshark) records; compare the logs under benchmark/output/http-*"
	if warns[0].Message != want || warns[0].Kind != CountMismatch {
		t.Errorf("warning\n%q, want\n%q", warns[0].Message, want)
	}

	// Agreeing variants give no warning; runs of one variant that disagree do.
	agree := []Result{rs[0], rs[1], rs[2]}
	if w := CountMismatches(agree, "o"); len(w) != 0 {
		t.Errorf("agreeing counts: %v", w)
	}
	flaky := rs[2]
	flaky.Runs = []Run{okRun(1), okRun(1)}
	flaky.Runs[0].Counts = counts("conn.log", 2752, "http.log", 4833)
	flaky.Runs[1].Counts = counts("conn.log", 2752, "http.log", 4832)
	w := CountMismatches([]Result{flaky}, "o")
	if len(w) != 1 || !strings.Contains(w[0].Message, "http-analyze wrote different logs in different runs") {
		t.Errorf("flaky runs: %v", w)
	}
}

// A newer PGO profile makes the binaries built with it stale, not the
// static ones, which do not use it.
func TestCheckStaleProfileConcernsOptBinariesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := buildTree(t)
	cfg := fakeBench(t, map[string]string{"http": "native=1"})
	cfg.Protocols = []string{"http"}
	for _, name := range []string{"http-static", "http-opt"} {
		os.Remove(filepath.Join(cfg.WorkDir, name))
	}
	targets := []Target{{"http-static", "cmd/http-parser", Static}, {"http-opt", "cmd/http-parser", Opt}}
	if _, err := Build(context.Background(), BuildConfig{Source: src, WorkDir: cfg.WorkDir, Targets: targets}, GOAMD64Choice{Level: "v3"}); err != nil {
		t.Fatal(err)
	}
	past, future := time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	for _, f := range []string{"go.mod", "cmd/http-parser/main.go", "cmd/dns-parser/main.go", "cmd/analyze/main.go"} {
		os.Chtimes(filepath.Join(src, f), past, past)
	}
	os.Chtimes(filepath.Join(src, "cmd", "http-parser", "default.pgo"), future, future)
	vs, err := Select(Variants(cfg), []string{"http-static", "http-opt"})
	if err != nil {
		t.Fatal(err)
	}
	cc := testCheck
	cc.Source = src
	_, warns := Check(vs, cc)
	stales := warningsOf(warns, StaleBinary)
	if len(stales) != 1 || !strings.Contains(stales[0].Message, filepath.Join(cfg.WorkDir, "http-opt")+" is older than the source: cmd/http-parser/default.pgo changed") {
		t.Errorf("stale warnings %v, want one: http-opt is older than cmd/http-parser/default.pgo", stales)
	}
}

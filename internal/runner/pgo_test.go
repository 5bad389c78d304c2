package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func pprofTop(t *testing.T, profile string) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", profile).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", profile, err, out)
	}
	return string(out)
}

func TestGeneratePGO(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "40ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2", "dns": "native=2 std=2 conn=2"})
	os.Remove(filepath.Join(cfg.TraceDir, "spicy-dns.dat"))
	src := buildTree(t)

	var log bytes.Buffer
	res, err := GeneratePGO(context.Background(), PGOConfig{
		Source: src, WorkDir: cfg.WorkDir, DataDir: cfg.TraceDir, CPU: -1, MinCPU: 100 * time.Millisecond, MaxRuns: 5,
	}, &log)
	if err != nil {
		t.Fatal(err)
	}
	// The native parsers of every static binary on each input there is;
	// each command runs until its runs used 100ms of CPU: 40ms at a time
	// plus the start-up, so two or three times.
	var ran []string
	for _, c := range res.Commands {
		switch {
		case c.Variant == "dns-static":
			if !strings.Contains(c.Skipped, "spicy-dns.dat does not exist") {
				t.Errorf("dns-static without its data: %+v", c)
			}
			continue
		case c.Skipped != "":
			t.Errorf("%s skipped: %s", c.Variant, c.Skipped)
		case c.Runs < 2 || c.Runs > 3 || c.CPU < 100*time.Millisecond:
			t.Errorf("%s: %d runs, %v of CPU; want 2 or 3 runs, at least 100ms", c.Variant, c.Runs, c.CPU)
		}
		ran = append(ran, c.Variant)
		if !strings.Contains(log.String(), "profiling "+c.Command) || strings.Contains(c.Command, " std") {
			t.Errorf("%s: command %q not in the log or not native:\n%s", c.Variant, c.Command, log.String())
		}
	}
	if got := strings.Join(ran, " "); got != "http-static http-analyze dns-analyze" {
		t.Errorf("profiled %s, want http-static http-analyze dns-analyze", got)
	}
	// One profile, the same in every opt package, holding the work.
	var want []string
	for _, pkg := range []string{"http-parser", "dns-parser", "analyze"} {
		want = append(want, filepath.Join(src, "cmd", pkg, "default.pgo"))
	}
	if !slices.Equal(res.Files, want) {
		t.Fatalf("profiles written: %q, want %q", res.Files, want)
	}
	first, _ := os.ReadFile(res.Files[0])
	for _, f := range res.Files[1:] {
		if data, _ := os.ReadFile(f); !bytes.Equal(data, first) {
			t.Errorf("%s differs from %s", f, res.Files[0])
		}
	}
	if top := pprofTop(t, res.Files[0]); !strings.Contains(top, "main.burn") {
		t.Errorf("the profile does not hold the profiled work:\n%s", top)
	}
	if p, ok := sharedProfile(src, DefaultTargets()[3:]); !ok || p != filepath.Join("cmd", "http-parser", "default.pgo") {
		t.Errorf("sharedProfile = %q, %v after GeneratePGO; want cmd/http-parser/default.pgo", p, ok)
	}
	// Profiled runs leave the output directory alone.
	if _, err := os.Stat(cfg.OutDir()); !os.IsNotExist(err) {
		t.Errorf("GeneratePGO wrote into %s", cfg.OutDir())
	}
	var report bytes.Buffer
	WritePGOReport(&report, res)
	for _, want := range []string{"not profiled: dns-static: ", "  http-analyze     ", "little CPU time",
		"PGO profile from ", "written to " + strings.Join(want, ", ")} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
}

// A failing profiled run leaves the old profiles; so does data that
// gives nothing to profile.
func TestGeneratePGOKeepsOldProfiles(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "5ms")
	src := buildTree(t)
	old := filepath.Join(src, "cmd", "http-parser", "default.pgo")
	before, _ := os.ReadFile(old)
	check := func(what string, res PGOResult, err error, wantErr string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: error %v, want one saying %q", what, err, wantErr)
		}
		if after, _ := os.ReadFile(old); len(res.Files) > 0 || !bytes.Equal(after, before) {
			t.Errorf("%s: profiles written: %v", what, res.Files)
		}
		if _, err := os.Stat(filepath.Join(src, "cmd", "analyze", "default.pgo")); !os.IsNotExist(err) {
			t.Errorf("%s: cmd/analyze/default.pgo written", what)
		}
	}

	cfg := fakeBench(t, map[string]string{"http": "native=1 std=1 conn=1"})
	t.Setenv("FAKECHILD_FAIL", "analyze-static")
	res, err := GeneratePGO(context.Background(), PGOConfig{Source: src, WorkDir: cfg.WorkDir, DataDir: cfg.TraceDir, CPU: -1, MaxRuns: 1}, io.Discard)
	check("a failing run", res, err, "analyze-static: failing as asked")

	t.Setenv("FAKECHILD_FAIL", "")
	res, err = GeneratePGO(context.Background(), PGOConfig{Source: src, WorkDir: cfg.WorkDir, DataDir: t.TempDir(), CPU: -1, MaxRuns: 1}, io.Discard)
	check("no data", res, err, "nothing to profile")
}

func TestProfile(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "20ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=1"})
	vs := Variants(cfg)
	v, err := Find(vs, "http-opt")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	// One run of 20 ms gives two samples: it runs again until 300 ms.
	res, err := Profile(context.Background(), v, ProfileConfig{OutDir: cfg.OutDir(), NodeCount: 5, CPU: -1, MinCPU: 300 * time.Millisecond}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != filepath.Join(cfg.OutDir(), "http-opt.pprof") || res.Runs < 5 || res.CPU < 300*time.Millisecond {
		t.Errorf("profile %s from %d runs, %v of CPU", res.Path, res.Runs, res.CPU)
	}
	for _, want := range []string{fmt.Sprintf("http-opt: %d runs, ", res.Runs), "samples", "profile: " + res.Path, "flat%", "main.burn"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// The merged profile holds the samples of every run.
	top, err := exec.Command("go", "tool", "pprof", "-top", res.Path).Output()
	if err != nil {
		t.Fatal(err)
	}
	// One run burns 20ms, two samples; the merged profile holds those of
	// every run (less what the profiler misses: start-up, the kernel).
	if d := sampledCPU(t, string(top)); d < 60*time.Millisecond {
		t.Errorf("the profile holds %v of samples, want those of the runs' %v, more than one run's", d, res.CPU)
	}
	ts, _ := Find(vs, "http-tshark")
	if _, err := Profile(context.Background(), ts, ProfileConfig{OutDir: cfg.OutDir(), CPU: -1}, &out); err == nil || !strings.Contains(err.Error(), "perf record") {
		t.Errorf("profiling tshark: %v", err)
	}
	if _, err := Find(vs, "http-nope"); err == nil || !strings.Contains(err.Error(), "http-static") {
		t.Errorf("Find of an unknown variant: %v", err)
	}
}

// sampledCPU returns the CPU time a profile's samples add up to, as
// go tool pprof -top prints it ("Total samples = 300ms").
func sampledCPU(t *testing.T, top string) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`Total samples = (\S+)`).FindStringSubmatch(top)
	if m == nil {
		t.Fatalf("no total in pprof's output:\n%s", top)
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeBench lays out a work directory whose binaries are the fake child
// and a trace directory whose data files tell the fakes how many records to
// log: per protocol, "native=N std=M conn=C tshark=T".
func fakeBench(t *testing.T, data map[string]string) VariantConfig {
	t.Helper()
	root := t.TempDir()
	cfg := VariantConfig{TraceDir: filepath.Join(root, "data"), WorkDir: filepath.Join(root, "bench")}
	for _, dir := range []string{cfg.TraceDir, cfg.WorkDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"http-static", "http-opt", "dns-static", "dns-opt", "analyze-static", "analyze-opt", "tshark"} {
		linkFake(t, cfg.WorkDir, name)
	}
	cfg.TShark = filepath.Join(cfg.WorkDir, "tshark")
	for proto, keys := range data {
		for _, ext := range []string{".dat", ".pcap"} {
			if err := os.WriteFile(filepath.Join(cfg.TraceDir, "spicy-"+proto+ext), []byte(keys+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return cfg
}

func resultByName(t *testing.T, rs []Result, name string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Variant.Name == name {
			return r
		}
	}
	t.Fatalf("no result for %s", name)
	return Result{}
}

func TestRunAllEndToEnd(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "5ms")
	cfg := fakeBench(t, map[string]string{"http": "native=10 std=12 conn=7 tshark=9", "dns": "native=4 std=4 conn=4 tshark=4"})
	vs := Variants(cfg)
	var table bytes.Buffer
	results := RunAll(context.Background(), vs, RunConfig{Runs: 2, Warmup: 1, CPU: -1, OutDir: cfg.OutDir(), Table: &table})
	if len(results) != len(vs) {
		t.Fatalf("%d results for %d variants", len(results), len(vs))
	}
	if err := Failures(results, cfg.OutDir()); err != nil {
		t.Fatal(err)
	}

	// The table printed while running is the table of the results.
	var want bytes.Buffer
	WriteTable(&want, results, 2)
	if table.String() != want.String() {
		t.Errorf("table printed while running:\n%s\ndiffers from WriteTable:\n%s", table.String(), want.String())
	}

	wantCounts := map[string]string{
		"http-static": "http.log=10", "http-opt": "http.log=10", "http-static-std": "http.log=12",
		"http-analyze": "conn.log=7 http.log=10", "http-analyze-opt": "conn.log=7 http.log=10",
		"http-analyze-std": "conn.log=7 http.log=12", "http-tshark": "http.log=9",
		"dns-static": "dns.log=4", "dns-analyze": "conn.log=4 dns.log=4", "dns-tshark": "dns.log=4",
	}
	for name, want := range wantCounts {
		r := resultByName(t, results, name)
		if got := countsString(r.Counts); got != want {
			t.Errorf("%s counts %q, want %q", name, got, want)
		}
	}
	for _, r := range results {
		v := r.Variant
		if len(r.Runs) != 3 || !r.Runs[0].Warmup || r.Runs[1].Warmup || len(r.Timed()) != 2 {
			t.Errorf("%s: %d runs, want one warm-up and two timed", v.Name, len(r.Runs))
		}
		// Replay binaries log only in the extra counting run.
		if (v.Kind == Replay) != (r.CountRun != nil) {
			t.Errorf("%s (%s): counting run %v", v.Name, v.Kind, r.CountRun != nil)
		}
		for _, run := range r.Runs {
			if run.User <= 0 || run.Wall <= 0 || run.MaxRSS <= 0 {
				t.Errorf("%s: run not measured: %+v", v.Name, run.Measurement)
			}
			if v.Kind == Replay && (run.Logged || run.Counts != nil || slices.Contains(run.Command, "--log-dir")) {
				t.Errorf("%s: timed replay run wrote logs: %v", v.Name, run.Command)
			}
		}
		for _, f := range []string{v.Name + ".cmd", v.Name + ".stderr", v.Name + "/" + v.Logs[len(v.Logs)-1]} {
			if _, err := os.Stat(filepath.Join(cfg.OutDir(), f)); err != nil {
				t.Errorf("%s: output file missing: %v", v.Name, err)
			}
		}
	}

	// The replay's own -U line is kept, and gives the bytes processed.
	r := resultByName(t, results, "http-static")
	run := r.Timed()[0]
	if run.Reported["user_time"] == "" || run.Reported["transactions"] != "10" || run.BytesSrc != "reported" {
		t.Errorf("http-static reported %v, bytes from %q", run.Reported, run.BytesSrc)
	}
	if a := resultByName(t, results, "http-analyze").Timed()[0]; a.BytesSrc != "input" || a.Bytes != int64(len("native=10 std=12 conn=7 tshark=9\n")) {
		t.Errorf("http-analyze bytes %d from %q, want the input's size", a.Bytes, a.BytesSrc)
	}
	cmd, err := os.ReadFile(filepath.Join(cfg.OutDir(), "http-static.cmd"))
	if err != nil || !strings.Contains(string(cmd), "--log-dir") || !strings.HasPrefix(string(cmd), cfg.WorkDir+"/http-static -U -F ") {
		t.Errorf("http-static.cmd = %q, %v", cmd, err)
	}
	tcmd, _ := os.ReadFile(filepath.Join(cfg.OutDir(), "http-tshark.cmd"))
	if !strings.Contains(string(tcmd), "-Y http.request") || !strings.Contains(string(tcmd), "> ") {
		t.Errorf("http-tshark.cmd = %q", tcmd)
	}
}

func TestRunAllTimedLogs(t *testing.T) {
	cfg := fakeBench(t, map[string]string{"dns": "native=3 std=3 conn=2 tshark=3"})
	cfg.Protocols = []string{"dns"}
	vs, err := Select(Variants(cfg), []string{"dns-static"})
	if err != nil {
		t.Fatal(err)
	}
	results := RunAll(context.Background(), vs, RunConfig{Runs: 2, CPU: -1, TimedLogs: true, OutDir: cfg.OutDir()})
	r := results[0]
	if r.CountRun != nil {
		t.Error("a counting run despite TimedLogs")
	}
	for i, run := range r.Runs {
		if !run.Logged || countsString(run.Counts) != "dns.log=3" {
			t.Errorf("run %d: logged %v, counts %v", i, run.Logged, run.Counts)
		}
	}
}

func TestRunAllReportsFailures(t *testing.T) {
	t.Setenv("FAKECHILD_FAIL", "http-opt")
	cfg := fakeBench(t, map[string]string{"http": "native=5 std=5 conn=5 tshark=5"})
	cfg.Protocols = []string{"http"}
	vs, _ := Select(Variants(cfg), []string{"http-static", "http-opt"})
	var table bytes.Buffer
	results := RunAll(context.Background(), vs, RunConfig{CPU: -1, OutDir: cfg.OutDir(), Table: &table})
	if results[0].Failed() || !results[1].Failed() {
		t.Fatalf("failed: http-static %v, http-opt %v", results[0].Failed(), results[1].Failed())
	}
	lines := strings.Split(table.String(), "\n")
	if want := "       http-opt  <fail>      <fail>      <fail>        http.log=<n/a>"; lines[1] != want {
		t.Errorf("row of the failing variant\n%q, want\n%q", lines[1], want)
	}
	err := Failures(results, cfg.OutDir())
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("Failures = %v, want ErrFailed", err)
	}
	kept := filepath.Join(cfg.OutDir(), "http-opt.failed.stderr")
	for _, want := range []string{"1 of 2 variants failed", "http-opt: run 1: exit status 1: http-opt: failing as asked", kept} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Failures error %q lacks %q", err, want)
		}
	}
	if data, err := os.ReadFile(kept); err != nil || !strings.Contains(string(data), "failing as asked") {
		t.Errorf("%s: %q, %v", kept, data, err)
	}
}

func TestRunAllStopsWhenCancelled(t *testing.T) {
	cfg := fakeBench(t, map[string]string{"http": "native=1 std=1 conn=1 tshark=1"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	results := RunAll(ctx, Variants(cfg), RunConfig{CPU: -1, OutDir: cfg.OutDir()})
	if len(results) != 0 {
		t.Errorf("%d results after cancellation", len(results))
	}
}

func TestSelect(t *testing.T) {
	vs := Variants(VariantConfig{TraceDir: "d", WorkDir: "w", TShark: "tshark"})
	got, err := Select(vs, []string{"*-opt", "http-static"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "http-static http-opt http-analyze-opt dns-opt dns-analyze-opt"; strings.Join(Names(got), " ") != want {
		t.Errorf("Select = %v, want %s (table order)", Names(got), want)
	}
	if _, err := Select(vs, []string{"ftp-*"}); err == nil {
		t.Error("a pattern matching nothing was accepted")
	}
	if _, err := Select(vs, []string{"[x"}); err == nil {
		t.Error("a malformed pattern was accepted")
	}
	if len(Variants(VariantConfig{})) != 12 {
		t.Error("without tshark there should be 6 variants per protocol")
	}
}

func TestRunAllMinTime(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "5ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=3"})
	vs, err := Select(Variants(cfg), []string{"http-static", "http-analyze"})
	if err != nil {
		t.Fatal(err)
	}
	const minTime = 40 * time.Millisecond
	results := RunAll(context.Background(), vs, RunConfig{Runs: 2, CPU: -1, OutDir: cfg.OutDir(), MinTime: minTime})
	for _, r := range results {
		if r.Failed() {
			t.Fatalf("%s failed: %v", r.Variant.Name, Failures(results, cfg.OutDir()))
		}
		if r.Passes < 2 {
			t.Errorf("%s: %d passes for runs of %v of a child burning 5ms", r.Variant.Name, r.Passes, minTime)
		}
		if len(r.Runs) != 3 || !r.Runs[0].Calibration || !r.Runs[0].Warmup {
			t.Fatalf("%s: want the calibration run first, then 2 runs: %+v", r.Variant.Name, r.Runs)
		}
		// Calibration executes until the user time adds up to minTime;
		// a run is as many executions as take a tenth more.
		cal := r.Runs[0]
		perExec := cal.User / time.Duration(cal.Passes)
		if want := int((minTime*11/10 + perExec - 1) / perExec); cal.User < minTime || cal.Passes < 2 || r.Passes != want {
			t.Errorf("%s: calibration of %d executions, %v of user time, gave runs of %d, want %d", r.Variant.Name, cal.Passes, cal.User, r.Passes, want)
		}
		for _, run := range r.Timed() {
			if run.Passes != r.Passes {
				t.Errorf("%s: a run of %d passes, want %d", r.Variant.Name, run.Passes, r.Passes)
			}
			// The calibration run may have been slower than these; half
			// the minimum leaves room for that.
			if cpu := run.User + run.Sys; cpu < minTime/2 {
				t.Errorf("%s: a run of %d passes took %v of CPU, want about %v", r.Variant.Name, run.Passes, cpu, minTime)
			}
			if in, err := os.Stat(r.Variant.Input); err == nil && run.BytesSrc == "input" && run.Bytes != int64(run.Passes)*in.Size() {
				t.Errorf("%s: %d bytes for %d passes over %d", r.Variant.Name, run.Bytes, run.Passes, in.Size())
			}
		}
		// Logs are counted once, not once per pass.
		if got := countsString(r.Counts); !strings.Contains(got, "http.log=3") {
			t.Errorf("%s: counts %s", r.Variant.Name, got)
		}
	}
}

// A variant whose one execution lasts longer than MinTime (tshark) runs
// once per run.
func TestRunAllMinTimeLongVariant(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "30ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=3"})
	vs, err := Select(Variants(cfg), []string{"http-tshark"})
	if err != nil {
		t.Fatal(err)
	}
	results := RunAll(context.Background(), vs, RunConfig{Runs: 1, CPU: -1, OutDir: cfg.OutDir(), MinTime: time.Millisecond})
	if r := results[0]; r.Passes != 1 || r.Timed()[0].Passes != 1 {
		t.Errorf("runs of %d executions for a variant of 30ms and --min-time 1ms", r.Passes)
	}
}

func TestRunAllInterleave(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "1ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=3"})
	vs, err := Select(Variants(cfg), []string{"http-static", "http-opt", "http-tshark"})
	if err != nil {
		t.Fatal(err)
	}
	for _, interleave := range []bool{false, true} {
		var order []string
		var table bytes.Buffer
		results := RunAll(context.Background(), vs, RunConfig{
			Runs: 2, CPU: -1, OutDir: cfg.OutDir(), Interleave: interleave, Table: &table,
			Progress: func(name string, run, runs int) { order = append(order, fmt.Sprintf("%s:%d", name, run)) },
		})
		want := "http-static:1 http-static:2 http-opt:1 http-opt:2 http-tshark:1 http-tshark:2"
		if interleave {
			want = "http-static:1 http-opt:1 http-tshark:1 http-static:2 http-opt:2 http-tshark:2"
		}
		if got := strings.Join(order, " "); got != want {
			t.Errorf("interleave %v: runs in the order\n%s\nwant\n%s", interleave, got, want)
		}
		var wantTable bytes.Buffer
		WriteTable(&wantTable, results, 2)
		if table.String() != wantTable.String() {
			t.Errorf("interleave %v: table\n%s\nwant\n%s", interleave, table.String(), wantTable.String())
		}
		if err := Failures(results, cfg.OutDir()); err != nil {
			t.Error(err)
		}
	}
}

func TestRunAllTSharkRuns(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "1ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=3"})
	vs, err := Select(Variants(cfg), []string{"http-static", "http-tshark"})
	if err != nil {
		t.Fatal(err)
	}
	for _, interleave := range []bool{false, true} {
		var table bytes.Buffer
		results := RunAll(context.Background(), vs, RunConfig{Runs: 3, TSharkRuns: 1, CPU: -1, OutDir: cfg.OutDir(), Interleave: interleave, Table: &table})
		if n := len(resultByName(t, results, "http-static").Timed()); n != 3 {
			t.Errorf("interleave %v: http-static ran %d times, want 3", interleave, n)
		}
		if n := len(resultByName(t, results, "http-tshark").Timed()); n != 1 {
			t.Errorf("interleave %v: http-tshark ran %d times, want 1", interleave, n)
		}
		if !strings.Contains(table.String(), "Each line is three executions of the same command. Values are user time in seconds.\nThe tshark lines are one execution.\n") {
			t.Errorf("footer:\n%s", table.String())
		}
	}
}

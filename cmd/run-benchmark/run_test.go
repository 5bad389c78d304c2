package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runnerBench lays out, for the run, build and profile commands, a work
// directory whose binaries are the runner's fake child
// (internal/runner/testdata/fakechild) and a data directory for HTTP.
func runnerBench(t *testing.T) (data, work string) {
	t.Helper()
	root := t.TempDir()
	data, work = filepath.Join(root, "data"), filepath.Join(root, "work")
	os.MkdirAll(data, 0o755)
	os.MkdirAll(work, 0o755)
	fake := filepath.Join(root, "fakechild")
	cmd := exec.Command("go", "build", "-o", fake, "../../internal/runner/testdata/fakechild")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake child: %v\n%s", err, out)
	}
	for _, name := range []string{"http-static", "http-opt", "analyze-static", "analyze-opt", "tshark"} {
		if err := os.Link(fake, filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ext := range []string{".dat", ".pcap"} {
		os.WriteFile(filepath.Join(data, "spicy-http"+ext), []byte("native=4 std=4 conn=2 tshark=4\n"), 0o644)
	}
	t.Setenv("FAKECHILD_BURN", "5ms")
	return data, work
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExitStatus(t *testing.T) {
	data, work := runnerBench(t)
	tshark := filepath.Join(work, "tshark")
	usage := [][]string{
		{"run", "-n", "0"},
		{"run", "--warmup", "-1"},
		{"run", "-p", "ftp"},
		{"run", "--format", "xml"},
		{"run", "extra"},
		{"run", "--variants", "ftp-*"},
		{"run", "--no-such-flag"},
		{"run", "--cpu", "4096"},
		{"profile"},
		{"profile", "http-nope"},
		{"build", "extra"},
		{"build", "--goamd64", "v9"},
	}
	for _, args := range usage {
		if code, _, stderr := runCLI(append([]string{"-t", data, "-d", work}, args...)...); code != 2 {
			t.Errorf("%v: exit status %d, want 2 (usage); stderr:\n%s", args, code, stderr)
		}
	}

	for _, args := range [][]string{{"run", "--help"}, {"profile", "--help"}, {"build", "--help"}} {
		code, stdout, _ := runCLI(args...)
		if code != 0 || !strings.Contains(stdout, "Usage: run-benchmark "+args[0]) || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%v: exit status %d, stdout:\n%s", args, code, stdout)
		}
	}

	// Nothing to run: warnings say what to do, exit status 1.
	empty := t.TempDir()
	code, _, stderr := runCLI("-t", empty, "-d", empty, "run", "--tshark", "none")
	if code != 1 || !strings.Contains(stderr, "did you run `run-benchmark -d "+empty+" build`?") ||
		!strings.Contains(stderr, "run `run-benchmark preprocess -o "+empty+" TRACE` first") || !strings.Contains(stderr, "nothing to run") {
		t.Errorf("empty directories: exit status %d, stderr:\n%s", code, stderr)
	}

	// Every variant runs: exit status 0; the table is on stdout.
	code, stdout, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", tshark, "-n", "2")
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"    http-static  ", "http.log=4", "conn.log=2  http.log=4", "Each line is two executions"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	// One variant fails: the table is still printed, exit status 1.
	t.Setenv("FAKECHILD_FAIL", "http-opt")
	code, stdout, stderr = runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "-n", "1")
	if code != 1 || !strings.Contains(stdout, "       http-opt  <fail>") || !strings.Contains(stdout, "Each line is one execution") ||
		!strings.Contains(stderr, "1 of 6 variants failed") || !strings.Contains(stderr, "http-opt: run 1: exit status 1") {
		t.Errorf("failing variant: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestRunOutputs(t *testing.T) {
	data, work := runnerBench(t)
	dir := t.TempDir()
	jsonFile, svgFile := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.svg")
	code, stdout, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none",
		"--variants", "http-static,http-analyze*", "--format", "gobench", "--json", jsonFile, "--svg", svgFile, "--warmup", "1")
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	// gobench on stdout, the table on stderr.
	if !strings.HasPrefix(stdout, "goos: ") || strings.Count(stdout, "BenchmarkRun/proto=http/variant=static 1 ") != 3 || strings.Contains(stdout, "http.log=") {
		t.Errorf("gobench stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "    http-static  ") || strings.Contains(stderr, "http-opt") {
		t.Errorf("table on stderr (only the selected variants):\n%s", stderr)
	}
	var report struct {
		Schema   string
		Variants []struct {
			Name string
			Runs []struct{ Kind string }
		}
	}
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	if report.Schema != "wirebench.run.v1" || len(report.Variants) != 4 || len(report.Variants[0].Runs) != 5 {
		t.Errorf("report: schema %q, %d variants, %d runs of the first (want 1 warm-up, 3 timed, 1 count)",
			report.Schema, len(report.Variants), len(report.Variants[0].Runs))
	}
	if svg, err := os.ReadFile(svgFile); err != nil || !bytes.HasPrefix(svg, []byte("<svg ")) {
		t.Errorf("svg: %v %.40q", err, svg)
	}

	code, stdout, _ = runCLI("-t", data, "-d", work, "run", "--list", "--tshark", "none")
	if code != 0 || !strings.Contains(stdout, "http-static-std  "+filepath.Join(work, "http-static")+" -U --parsers std -F ") {
		t.Errorf("--list: %d\n%s", code, stdout)
	}
}

// Variants that disagree on a log's records are named after the table;
// the run still succeeds.
func TestRunWarnsAboutDisagreeingCounts(t *testing.T) {
	data, work := runnerBench(t)
	for _, ext := range []string{".dat", ".pcap"} {
		os.WriteFile(filepath.Join(data, "spicy-http"+ext), []byte("native=4 std=5 conn=2 tshark=4\n"), 0o644)
	}
	code, stdout, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", filepath.Join(work, "tshark"), "-n", "1")
	want := "warning: http variants disagree on http.log: 4 (http-static, http-opt, http-analyze, http-analyze-opt, http-tshark) vs " +
		"5 (http-static-std, http-analyze-std) records; compare the logs under " + filepath.Join(work, "output", "http-*")
	if code != 0 || !strings.Contains(stderr, want) || !strings.Contains(stdout, "http-analyze-std  ") {
		t.Errorf("exit status %d, want 0 and the warning\n%s\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	if strings.Contains(stderr, "conn.log") {
		t.Errorf("conn.log agrees, yet a warning names it:\n%s", stderr)
	}
}

func TestProfileCommand(t *testing.T) {
	data, work := runnerBench(t)
	code, stdout, stderr := runCLI("-t", data, "-d", work, "profile", "--nodecount", "3", "--min-cpu", "100ms", "http-analyze")
	if code != 0 || !strings.Contains(stdout, "flat%") || !strings.Contains(stdout, filepath.Join(work, "output", "http-analyze.pprof")) {
		t.Errorf("profile: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestBuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := t.TempDir()
	files := map[string]string{"go.mod": "module github.com/wirebench/wirebench\n\ngo 1.26\n"}
	for _, pkg := range []string{"http-parser", "dns-parser", "analyze"} {
		// The same program, profile and flags as internal/runner's TestBuild,
		// so that both share the build cache.
		files["cmd/"+pkg+"/main.go"] = "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(len(os.Args) - 1) }\n"
	}
	pgo, err := os.ReadFile("../../internal/runner/testdata/buildtree/default.pgo")
	if err != nil {
		t.Fatal(err)
	}
	files["cmd/http-parser/default.pgo"] = string(pgo)
	for name, content := range files {
		os.MkdirAll(filepath.Join(src, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(src, name), []byte(content), 0o644)
	}
	work := filepath.Join(t.TempDir(), "bench")
	code, stdout, stderr := runCLI("-b", src, "build", "-d", work, "--goamd64", "v3")
	if code != 0 {
		t.Fatalf("build: exit status %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"static: CGO_ENABLED=0 go build -trimpath -pgo=off", "opt: CGO_ENABLED=0 GOAMD64=v3 go build -trimpath -pgo=auto",
		filepath.Join(work, "http-opt"), "PGO cmd/http-parser/default.pgo", "without PGO: cmd/analyze/default.pgo does not exist", "built 6 binaries"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("build output lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := runCLI("-b", t.TempDir(), "build"); code != 1 || !strings.Contains(stderr, "not a wirebench source tree") {
		t.Errorf("build from a non-source tree: %d\n%s", code, stderr)
	}
}

// The wrapper builds the tool into the source tree's bin/ and runs it from
// any directory.
func TestWrapperScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds run-benchmark into the source tree's bin/")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script, err := filepath.Abs("../../scripts/run-benchmark")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script, "run", "--list", "--tshark", "none", "-p", "dns")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	if !strings.Contains(string(out), "     dns-static  benchmark/dns-static -U -F spicy-dns.dat") {
		t.Errorf("wrapper output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(script)), "bin", "run-benchmark")); err != nil {
		t.Errorf("the wrapper left no bin/run-benchmark: %v", err)
	}
}

// failWriter fails every write, as standard output redirected to /dev/full.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

func TestRunRoughEdges(t *testing.T) {
	data, work := runnerBench(t)
	tshark := filepath.Join(work, "tshark")

	// Before build, only tshark can run: that is no benchmark.
	empty := t.TempDir()
	code, stdout, stderr := runCLI("-t", data, "-d", empty, "run", "-p", "http", "--tshark", tshark, "-n", "1")
	if code != 1 || !strings.Contains(stderr, "none of the variants built by `run-benchmark -d "+empty+" build` ran") {
		t.Errorf("run before build: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// A table that cannot be written is a failure.
	var errb bytes.Buffer
	if code := run([]string{"-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "--variants", "http-static", "-n", "1"},
		failWriter{}, &errb); code != 1 || !strings.Contains(errb.String(), "no space left on device") {
		t.Errorf("table to a full disk: exit status %d, stderr:\n%s", code, errb.String())
	}

	// Output files that cannot be created are found before the first run.
	for _, flag := range []string{"--json", "--svg", "--markdown"} {
		bad := filepath.Join(t.TempDir(), "no-such-dir", "out")
		out := filepath.Join(work, "output")
		os.RemoveAll(out)
		code, _, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "-n", "1", flag, bad)
		if code != 2 || !strings.Contains(stderr, flag+" "+bad) {
			t.Errorf("%s into a missing directory: exit status %d, stderr:\n%s", flag, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "http-static.cmd")); err == nil {
			t.Errorf("%s into a missing directory: the variants ran first", flag)
		}
	}

	// A failed run's summary gives the child's error, not its -U line.
	t.Setenv("FAKECHILD_FAIL", "http-opt")
	code, _, stderr = runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "-n", "1", "--variants", "http-static,http-opt")
	if code != 1 || !strings.Contains(stderr, "http-opt: run 1: exit status 1: http-opt: failing as asked by FAKECHILD_FAIL") {
		t.Errorf("failed run: exit status %d, stderr:\n%s", code, stderr)
	}
	t.Setenv("FAKECHILD_FAIL", "")

	// -t naming a file (a trace, not preprocess's directory) says what to run.
	trace := filepath.Join(t.TempDir(), "trace.pcap")
	os.WriteFile(trace, []byte("not a directory"), 0o644)
	code, _, stderr = runCLI("-t", trace, "-d", work, "run", "--tshark", "none")
	if code != 2 || !strings.Contains(stderr, "-t "+trace+" is a file") ||
		!strings.Contains(stderr, "run-benchmark preprocess -o "+trace+".data "+trace) {
		t.Errorf("-t FILE: exit status %d, stderr:\n%s", code, stderr)
	}

	// --json - writes the report to standard output, the table to standard error.
	code, stdout, stderr = runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "--variants", "http-static", "-n", "1", "--json", "-")
	var report map[string]any
	if code != 0 || json.Unmarshal([]byte(stdout), &report) != nil || report["schema"] == nil || !strings.Contains(stderr, "    http-static  ") {
		t.Errorf("--json -: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// A device is written in place; a file is readable by all, as os.Create makes it.
	file := filepath.Join(t.TempDir(), "run.md")
	code, _, stderr = runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "--variants", "http-static", "-n", "1",
		"--json", os.DevNull, "--markdown", file)
	if fi, err := os.Stat(file); code != 0 || err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("--json %s --markdown FILE: exit status %d, %v, stderr:\n%s", os.DevNull, code, err, stderr)
	}
}

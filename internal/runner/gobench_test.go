package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchstatVersion is the benchstat the project uses.
const benchstatVersion = "golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da"

func TestGoBenchName(t *testing.T) {
	for in, want := range map[string]string{
		"http-static":      "BenchmarkRun/proto=http/variant=static",
		"dns-analyze-std":  "BenchmarkRun/proto=dns/variant=analyze-std",
		"http-tshark":      "BenchmarkRun/proto=http/variant=tshark",
		"http-analyze-opt": "BenchmarkRun/proto=http/variant=analyze-opt",
	} {
		proto, _, _ := strings.Cut(in, "-")
		if got := GoBenchName(Variant{Name: in, Protocol: proto}); got != want {
			t.Errorf("GoBenchName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteGoBench(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteGoBench(&buf, testMachine(), tableResults()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if want := []string{"goos: linux", "goarch: amd64", "cpu: Test CPU @ 3.00GHz"}; strings.Join(lines[:3], "\n") != strings.Join(want, "\n") {
		t.Errorf("header %q, want %q", lines[:3], want)
	}
	want := "BenchmarkRun/proto=http/variant=static 1 1630000000 ns/op 1580000000 user-ns/op 20000000 sys-ns/op 1600000000 cpu-ns/op 31.90 MB/s 12582912 maxrss-B"
	if lines[3] != want {
		t.Errorf("first line\n%q, want\n%q", lines[3], want)
	}
	// A run of several executions gives per-execution values; zeros are left out.
	r := tableResults()[0]
	r.Runs = []Run{{Measurement: Measurement{User: secs(0.5), Wall: secs(0.6), TimeKnown: true}, Passes: 10, Bytes: 10}}
	buf.Reset()
	WriteGoBench(&buf, testMachine(), []Result{r})
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n")[3]; got != "BenchmarkRun/proto=http/variant=static 10 60000000 ns/op 50000000 user-ns/op 50000000 cpu-ns/op" {
		t.Errorf("run of 10 executions: %q", got)
	}
	// One line per successful timed run: no warm-up, no failed run, no run without time.
	n := map[string]int{}
	for _, l := range lines[3:] {
		n[strings.Fields(l)[0]]++
	}
	for name, want := range map[string]int{"BenchmarkRun/proto=http/variant=static": 3, "BenchmarkRun/proto=http/variant=opt": 2,
		"BenchmarkRun/proto=http/variant=tshark": 0, "BenchmarkRun/proto=dns/variant=static": 0, "BenchmarkRun/proto=dns/variant=analyze": 3} {
		if n[name] != want {
			t.Errorf("%s: %d lines, want %d", name, n[name], want)
		}
	}
}

// benchstatTables parses benchstat's CSV output: per unit, per benchmark,
// the row's fields.
func benchstatTables(out string) map[string]map[string][]string {
	tables := map[string]map[string][]string{}
	unit := ""
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		f := strings.Split(line, ",")
		switch {
		case len(f) > 2 && f[0] == "" && f[1] == "old.txt" && i+1 < len(lines):
			unit = strings.Split(lines[i+1], ",")[1]
			tables[unit] = map[string][]string{}
		case unit != "" && len(f) > 2 && f[0] != "":
			tables[unit][f[0]] = f
		}
	}
	return tables
}

// benchstat reads two gobench outputs and compares them per variant: six
// runs of http-static that got twice as fast show as a significant -50%.
func TestGoBenchWithBenchstat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchstat with go run")
	}
	dir := t.TempDir()
	sample := func(scale float64) []Result {
		r := tableResults()[0]
		r.Runs = nil
		for _, user := range []float64{1.58, 1.54, 1.56, 1.57, 1.55, 1.59} {
			r.Runs = append(r.Runs, okRun(user*scale))
		}
		return []Result{r, tableResults()[2]}
	}
	for name, rs := range map[string][]Result{"old.txt": sample(1), "new.txt": sample(0.5)} {
		var buf bytes.Buffer
		if err := WriteGoBench(&buf, testMachine(), rs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", benchstatVersion, "-format", "csv", "old.txt", "new.txt")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "go: ") {
			t.Skipf("cannot fetch or build %s (%v): %s", benchstatVersion, err, stderr.String())
		}
		t.Fatalf("benchstat: %v\n%s", err, stderr.String())
	}
	tables := benchstatTables(string(out))
	for _, unit := range []string{"sec/op", "user-sec/op", "sys-sec/op", "B/s", "maxrss-B"} {
		if tables[unit] == nil {
			t.Errorf("benchstat output has no %s table:\n%s", unit, out)
		}
	}
	user := tables["user-sec/op"]["Run/proto=http/variant=static"]
	if len(user) < 7 || !strings.HasPrefix(user[1], "1.56") || user[5] != "-50.00%" {
		t.Errorf("http-static user time row %q: want median 1.565 and a significant -50.00%%\n%s", user, out)
	}
	if row := tables["user-sec/op"]["Run/proto=http/variant=analyze"]; len(row) < 6 || row[5] != "~" {
		t.Errorf("http-analyze did not change, benchstat row %q", row)
	}

	// The variants of one run side by side: benchstat -col /variant.
	cmd = exec.Command("go", "run", benchstatVersion, "-col", "/variant", "old.txt")
	cmd.Dir = dir
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("benchstat -col /variant: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(string(out), "static") || !strings.Contains(string(out), "analyze") || !strings.Contains(string(out), "Run/proto=http") {
		t.Errorf("benchstat -col /variant:\n%s", out)
	}
}

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
		"http-static":      "BenchmarkHTTPStatic",
		"dns-analyze-std":  "BenchmarkDNSAnalyzeStd",
		"http-tshark":      "BenchmarkHTTPTshark",
		"http-analyze-opt": "BenchmarkHTTPAnalyzeOpt",
	} {
		if got := GoBenchName(in); got != want {
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
	want := "BenchmarkHTTPStatic 1 1630000000 ns/op 1580000000 user-ns/op 20000000 sys-ns/op 31.90 MB/s 12582912 maxrss-B"
	if lines[3] != want {
		t.Errorf("first line\n%q, want\n%q", lines[3], want)
	}
	// One line per successful timed run: no warm-up, no failed run, no run without time.
	n := map[string]int{}
	for _, l := range lines[3:] {
		n[strings.Fields(l)[0]]++
	}
	for name, want := range map[string]int{"BenchmarkHTTPStatic": 3, "BenchmarkHTTPOpt": 2, "BenchmarkHTTPTshark": 0, "BenchmarkDNSStatic": 0, "BenchmarkDNSAnalyze": 3} {
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
	user := tables["user-sec/op"]["HTTPStatic"]
	if len(user) < 7 || !strings.HasPrefix(user[1], "1.56") || user[5] != "-50.00%" {
		t.Errorf("HTTPStatic user time row %q: want median 1.565 and a significant -50.00%%\n%s", user, out)
	}
	if row := tables["user-sec/op"]["HTTPAnalyze"]; len(row) < 6 || row[5] != "~" {
		t.Errorf("HTTPAnalyze did not change, benchstat row %q", row)
	}
}

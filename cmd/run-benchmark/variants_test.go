package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rows of a variants file are in the table, the statistics, the
// agreement, --json, --format gobench and --svg like the built-in ones:
// here a Go entry's rows (the fake child standing in for the binaries
// build would make) and Zeek and Suricata stand-ins.
func TestRunVariantsFile(t *testing.T) {
	data, work := runnerBench(t)
	for _, name := range []string{"http-peer-static", "http-peer-opt", "analyze-peer-static"} {
		if err := os.Link(filepath.Join(work, "http-static"), filepath.Join(work, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ext := range []string{".dat", ".pcap"} {
		os.WriteFile(filepath.Join(data, "spicy-http"+ext), []byte("native=4 std=4 peer=4 conn=2 tshark=4\n"), 0o644)
	}
	standins, err := filepath.Abs(filepath.Join("..", "..", "internal", "runner", "testdata", "standin"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "mine.toml")
	os.WriteFile(file, []byte(`
[[variant]]
name = "peer"
kind = "go"
package = "example.com/peer"
version = "v1.0.0"
protocols = ["http"]

[[variant]]
name = "{protocol}-suricata"
kind = "program"
command = ["`+standins+`/suricata", "-r", "{pcap}", "-l", "{logdir}"]
input = "pcap"
count = "eve"
logs = ["{protocol}"]

[[variant]]
name = "{protocol}-zeek"
kind = "program"
command = ["`+standins+`/zeek", "-C", "-r", "{pcap}"]
cwd = "{logdir}"
input = "pcap"
logs = ["conn.log", "{protocol}.log"]

[[variant]]
name = "*-std"
drop = true
`), 0o644)
	dir := t.TempDir()
	jsonFile, svgFile := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.svg")
	code, stdout, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "-n", "2",
		"--variants-file", file, "--format", "gobench", "--json", jsonFile, "--svg", svgFile)
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	rows := []string{"http-static", "http-opt", "http-analyze", "http-analyze-opt",
		"http-peer-static", "http-peer-opt", "http-analyze-peer", "http-suricata", "http-zeek"}
	for _, want := range []string{"http-peer-static  ", "\nhttp-analyze-peer  ", "  http-suricata  ", "eve.json:http=2", "conn.log=3  http.log=2"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("table lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "-std ") {
		t.Errorf("the dropped rows are in the table:\n%s", stderr)
	}
	for _, r := range rows[1:] {
		if !strings.Contains(stdout, "BenchmarkRun/proto=http/variant="+strings.TrimPrefix(r, "http-")+" ") {
			t.Errorf("gobench lacks %s:\n%s", r, stdout)
		}
	}
	var report struct {
		Variants   []struct{ Name, Kind string }
		Statistics []struct{ Variant string }
		Agreement  []struct{ Variant string }
	}
	raw, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	var names, stats, agreed []string
	for _, v := range report.Variants {
		names = append(names, v.Name)
	}
	for _, s := range report.Statistics {
		stats = append(stats, s.Variant)
	}
	for _, a := range report.Agreement {
		agreed = append(agreed, a.Variant)
	}
	if !slices.Equal(names, rows) {
		t.Errorf("--json variants %q, want %q", names, rows)
	}
	for _, r := range rows {
		if !slices.Contains(stats, r) {
			t.Errorf("--json statistics lack %s: %q", r, stats)
		}
	}
	for _, r := range []string{"http-peer-static", "http-analyze-peer", "http-zeek"} {
		if !slices.Contains(agreed, r) {
			t.Errorf("--json agreement lacks %s: %q", r, agreed)
		}
	}
	svg, err := os.ReadFile(svgFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !strings.Contains(string(svg), ">"+r+"<") {
			t.Errorf("--svg lacks %s", r)
		}
	}
	if !strings.Contains(string(svg), ">program</text>") {
		t.Errorf("--svg has no legend for the program rows")
	}

	// A malformed file is a usage error naming the file, line and key,
	// before anything runs.
	os.WriteFile(file, []byte("[[variant]]\nname = \"x\"\nkind = \"program\"\ncommand = [\"true\"]\ninput = \"pcap\"\ncount = \"words\"\n"), 0o644)
	for _, cmd := range []string{"run", "build"} {
		code, _, stderr = runCLI("-t", data, "-d", work, cmd, "--variants-file", file)
		if code != 2 || !strings.Contains(stderr, file+`:6: variant "x": count: "words": want logs, eve or stdout`) {
			t.Errorf("%s with a malformed file: exit status %d, stderr:\n%s", cmd, code, stderr)
		}
	}
}

// The work directory's variants.toml is read when no file is given, and
// says so; --variants-file none leaves it out.
func TestRunVariantsFileInWorkDir(t *testing.T) {
	data, work := runnerBench(t)
	os.WriteFile(filepath.Join(work, "variants.toml"), []byte("[[variant]]\nname = \"http-opt\"\ndrop = true\n"), 0o644)
	code, stdout, stderr := runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "--list")
	if code != 0 || strings.Contains(stdout, "http-opt") || !strings.Contains(stderr, "reading the variants in "+filepath.Join(work, "variants.toml")) {
		t.Errorf("exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, stdout, _ = runCLI("-t", data, "-d", work, "run", "-p", "http", "--tshark", "none", "--list", "--variants-file", "none")
	if code != 0 || !strings.Contains(stdout, "http-opt") {
		t.Errorf("--variants-file none: exit status %d\nstdout:\n%s", code, stdout)
	}
}

package runner

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func testMachine() Machine {
	return Machine{CPUModel: "Test CPU @ 3.00GHz", Cores: 2, OS: "linux", Arch: "amd64",
		Kernel: "Linux 6.1.0", GoVersion: "go1.26.8", LoadAverage: []float64{0.5, 0.25, 0.125}}
}

func testReport() Report {
	cpu := 1
	return NewReport(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), testMachine(),
		ReportSettings{TraceDir: "my-data", WorkDir: "benchmark", Runs: 3, Warmup: 1, CPU: &cpu},
		[]ReportBinary{{Path: "benchmark/http-static", Modified: time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC),
			GoVersion: "go1.26.8", Settings: map[string]string{"-pgo": "off", "CGO_ENABLED": "0", "-trimpath": "true"}}},
		tableResults(), Statistics(tableResults(), ""), []Warning{{BusyMachine, "the machine is busy"}})
}

// The report's layout is its schema: the golden file pins every key, and
// a change to it must come with a new ReportSchema version.
func TestReportGolden(t *testing.T) {
	var got bytes.Buffer
	if err := testReport().WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("report differs from %s (if the layout changed on purpose, bump ReportSchema and run go test -update):\n%s", golden, got.Bytes())
	}
}

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a JSON object", v)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestReportSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := testReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "wirebench.run.v1" {
		t.Errorf("schema = %v", doc["schema"])
	}
	want := map[string][]string{
		"report":   {"binaries", "machine", "schema", "settings", "started", "statistics", "variants", "warnings"},
		"machine":  {"arch", "cores", "cpu_model", "go_version", "kernel", "load_average", "os"},
		"settings": {"cpu", "interleave", "min_time_s", "reference", "runs", "source", "timed_logs", "trace_dir", "tshark_runs", "warmup", "work_dir"},
		"binary":   {"go_version", "modified", "path", "settings"},
		"variant":  {"binary", "command", "counts", "input", "input_bytes", "kind", "name", "ok", "parsers", "protocol", "runs", "user_seconds"},
		"summary":  {"max", "median", "min", "n"},
		// error, counts and reported are omitted when empty.
		"run": {"bytes", "bytes_source", "command", "exit_code", "kind", "max_rss_bytes", "mb_per_s", "mb_per_user_s", "ok", "passes", "sys_seconds", "user_seconds", "wall_seconds"},
		"stat": {"cpu_seconds", "mb_per_cpu_s", "median_cpu_s", "n", "outliers", "p", "passes", "protocol", "ratio", "ratio_hi", "ratio_lo",
			"reference", "significant", "too_few_runs", "variant"},
		"warning": {"kind", "message"},
	}
	check := func(name string, v any) {
		t.Helper()
		if got := keysOf(t, v); !slices.Equal(got, want[name]) {
			t.Errorf("%s keys %v, want %v", name, got, want[name])
		}
	}
	check("report", doc)
	check("stat", doc["statistics"].([]any)[1])
	check("machine", doc["machine"])
	check("settings", doc["settings"])
	check("binary", doc["binaries"].([]any)[0])
	check("warning", doc["warnings"].([]any)[0])
	variants := doc["variants"].([]any)
	if len(variants) != len(tableResults()) {
		t.Fatalf("%d variants", len(variants))
	}
	v := variants[0].(map[string]any)
	check("variant", v)
	check("summary", v["user_seconds"])
	check("run", v["runs"].([]any)[0])

	// Strict decoding into the documented types loses nothing.
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	hs := r.Variants[0]
	if hs.UserSeconds != (Summary{N: 3, Min: 1.54, Median: 1.56, Max: 1.58}) {
		t.Errorf("http-static user summary %+v", hs.UserSeconds)
	}
	if len(hs.Runs) != 4 || hs.Runs[0].Kind != "warmup" || hs.Runs[1].Kind != "timed" || *hs.Counts["http.log"] != 4833 {
		t.Errorf("http-static runs %+v counts %v", hs.Runs, hs.Counts)
	}
	if run := hs.Runs[1]; run.Bytes != 52_000_000 || run.MBPerSecond < 31.8 || run.MBPerSecond > 32 || run.MBPerUserSecond < 32.9 || run.MBPerUserSecond > 33 {
		t.Errorf("throughput of 52 MB in 1.58s user, 1.63s wall: %+v", run)
	}
	ds := r.Variants[5]
	if ds.OK || ds.Runs[0].Error != "exit status 1" || ds.Runs[0].ExitCode != 1 || ds.UserSeconds.N != 0 {
		t.Errorf("failed dns-static: %+v", ds)
	}
	if c, ok := ds.Counts["dns.log"]; !ok || c != nil {
		t.Errorf("absent dns.log should be null, got %v", ds.Counts)
	}
	if *r.Settings.CPU != 1 {
		t.Errorf("settings %+v", r.Settings)
	}
}

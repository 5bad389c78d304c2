package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The entries of examples/tools.toml for Zeek, spicy-driver and Suricata
// run with stand-ins of those tools (testdata/standin), which write the
// logs in each tool's format, and their records are counted from them:
// Zeek's TSV logs without their # lines, Zeek's JSON logs a line a
// record, spicy-driver's lines on standard output, Suricata's eve.json by
// event_type.
func TestToolEntries(t *testing.T) {
	standins, err := filepath.Abs(filepath.Join("testdata", "standin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", standins+string(os.PathListSeparator)+os.Getenv("PATH"))
	f, err := ReadVariantsFile(filepath.Join("..", "..", "examples", "tools.toml"))
	if err != nil {
		t.Fatal(err)
	}
	data := preprocessed(t, filepath.Join("..", "..", "traces", "http-dns-plain.pcap"))
	conns := strings.Count(readString(t, filepath.Join(data, "spicy-http.dat")), "\n@begin-conn ")
	// spicy-driver loads the HLTO named relative to where the run is.
	t.Chdir(t.TempDir())
	if err := os.WriteFile("http.hlto", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	work := "work"
	vs := Variants(VariantConfig{TraceDir: data, WorkDir: work, File: f})
	vs = slices.DeleteFunc(vs, func(v Variant) bool { return v.Kind != Program })
	runnable, warns := Check(vs, CheckConfig{})
	if len(warns) != 0 || len(runnable) != len(vs) {
		t.Fatalf("warnings %v; %d of %d runnable", warns, len(runnable), len(vs))
	}
	// The stand-in writes every log whatever the trace; the logs beyond
	// those the entry names follow them.
	want := map[string]string{
		"http-zeek":      "conn.log=3 http.log=2 dns.log=3",
		"http-zeek-json": "conn.log=2 http.log=1 dns.log=1",
		"http-spicy":     "http.log=" + itoa(conns),
		"http-suricata":  "eve.json:http=2",
		"dns-zeek":       "conn.log=3 dns.log=3 http.log=2",
		"dns-zeek-json":  "conn.log=2 dns.log=1 http.log=1",
		"dns-suricata":   "eve.json:dns=2",
	}
	if got := Names(vs); len(got) != len(want) {
		t.Fatalf("rows %q, want %d", got, len(want))
	}
	results := RunAll(context.Background(), vs, RunConfig{Runs: 1, OutDir: filepath.Join(work, "output"), CPU: -1})
	for _, r := range results {
		if r.Failed() {
			t.Errorf("%s failed: %v", r.Variant.Name, Failures([]Result{r}, filepath.Join(work, "output")))
			continue
		}
		if got := countsString(r.Counts); got != want[r.Variant.Name] {
			t.Errorf("%s counted %s, want %s", r.Variant.Name, got, want[r.Variant.Name])
		}
		if r.Variant.Name == "http-spicy" && r.Runs[0].Reported["user_time"] == "" {
			t.Errorf("http-spicy: the -U line of spicy-driver was not read: %v", r.Runs[0].Reported)
		}
	}
	if conns == 0 {
		t.Errorf("spicy-http.dat has no connections")
	}
}

// A program that is not installed, or whose check fails, is one warning
// line and its rows are skipped.
func TestToolEntriesMissing(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("PATH", empty)
	f, err := ReadVariantsFile(filepath.Join("..", "..", "examples", "tools.toml"))
	if err != nil {
		t.Fatal(err)
	}
	vs := slices.DeleteFunc(Variants(VariantConfig{TraceDir: "testdata", WorkDir: "w", File: f}),
		func(v Variant) bool { return v.Kind != Program })
	runnable, warns := Check(vs, CheckConfig{})
	if len(runnable) != 0 {
		t.Errorf("runnable %q", Names(runnable))
	}
	var lines []string
	for _, w := range warningsOf(warns, MissingBinary) {
		lines = append(lines, w.Message)
	}
	wantLines := []string{
		"zeek is not on PATH (skipping http-zeek, http-zeek-json, dns-zeek, dns-zeek-json)",
		"spicy-driver is not on PATH (skipping http-spicy)",
		"suricata is not on PATH (skipping http-suricata, dns-suricata)",
	}
	if !slices.Equal(lines, wantLines) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}

	// A check that fails.
	standins, _ := filepath.Abs(filepath.Join("testdata", "standin"))
	sh, err := ReadVariantsFile(writeTemp(t, `
[[variant]]
name = "{protocol}-zeek"
kind = "program"
command = ["`+filepath.Join(standins, "zeek")+`", "-C", "-r", "{pcap}"]
input = "pcap"
check = ["`+filepath.Join(standins, "zeek")+`", "--no-such-flag"]
`))
	if err != nil {
		t.Fatal(err)
	}
	data := preprocessed(t, filepath.Join("..", "..", "traces", "http-dns-plain.pcap"))
	vs = slices.DeleteFunc(Variants(VariantConfig{TraceDir: data, WorkDir: "w", File: sh}),
		func(v Variant) bool { return v.Kind != Program })
	runnable, warns = Check(vs, CheckConfig{})
	if len(runnable) != 0 || len(warns) != 1 || !strings.Contains(warns[0].Message, "--no-such-flag` failed: exit status 1: zeek stand-in: unexpected argument --no-such-flag (skipping http-zeek, dns-zeek)") {
		t.Errorf("runnable %q, warnings %v", Names(runnable), warns)
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeTemp(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "variants.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func itoa(n int) string { return strconv.Itoa(n) }

package fingertest_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/runner"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/parsers/internal/fingertest"
	"github.com/wirebench/wirebench/preprocess"
)

// TestPipeline takes the third protocol, registered here beside the
// built-in ones, through the benchmark's pipeline: preprocess cuts its
// sub-trace by the rule of its descriptor, "run-benchmark build" builds
// its replay binary from the package its descriptor names, run times it
// on the batch file and counts its finger.log, and the analyzer logs the
// sub-trace's pcap.
func TestPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a replay binary")
	}
	protos := append(builtin.Protocols(), fingertest.Protocol)
	dir := t.TempDir()
	trace := filepath.Join(dir, "finger.pcap")
	if err := os.WriteFile(trace, fingerSession("alice\r\n", "Login: alice\r\nNo plan.\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	traceDir := filepath.Join(dir, "data")
	sum, err := preprocess.Run(context.Background(), preprocess.Config{Rules: preprocess.RulesFor(protos)}, traceDir, trace)
	if err != nil {
		t.Fatal(err)
	}
	st := sum.SubTrace("finger")
	if st == nil || st.Rule != "tcp port 79" || st.Packets != 8 || st.Connections != 1 || st.DataBytes != 7+24 {
		t.Fatalf("finger sub-trace %+v, want 8 packets and one connection of 31 bytes on tcp port 79", st)
	}
	if http := sum.SubTrace("http"); http == nil || http.Packets != 0 {
		t.Errorf("http sub-trace %+v, want an empty one", http)
	}

	src, err := runner.FindSource(".")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	targets := runner.ReplayTargets([]*parsers.Protocol{fingertest.Protocol})
	if len(targets) != 2 || targets[0] != (runner.Target{Name: "finger-static", Package: "parsers/internal/fingertest/cmd/finger-parser", Mode: runner.Static}) {
		t.Fatalf("replay targets %+v", targets)
	}
	if _, err := runner.Build(context.Background(), runner.BuildConfig{Source: src, WorkDir: work, Targets: targets[:1]}, runner.GOAMD64Choice{}); err != nil {
		t.Fatal(err)
	}

	cfg := runner.VariantConfig{TraceDir: traceDir, WorkDir: work, Protocols: []string{"finger"}, Known: protos}
	vs := runner.Variants(cfg)
	if got, want := strings.Join(runner.Names(vs), " "), "finger-static finger-opt"; got != want {
		t.Errorf("variants %s, want %s (no std implementation, no tshark command, not a protocol of the analyzer binary)", got, want)
	}
	v, err := runner.Find(vs, "finger-static")
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	res := runner.RunAll(context.Background(), []runner.Variant{v}, runner.RunConfig{Runs: 1, OutDir: cfg.OutDir(), Table: &table})
	if len(res) != 1 || res[0].Failed() {
		t.Fatalf("run failed: %+v\n%s", res, table.String())
	}
	if c := res[0].Counts; len(c) != 1 || c[0] != (runner.Count{Log: "finger.log", Records: 1, Present: true}) {
		t.Errorf("counts %+v, want one record in finger.log\n%s", c, table.String())
	}
	log, err := os.ReadFile(filepath.Join(v.LogDir, "finger.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "\t\"alice\"\tF\t24\t0\n") {
		t.Errorf("finger.log of the run:\n%s", log)
	}

	var conn, finger bytes.Buffer
	a, err := analyzer.New(analyzer.Config{Protocols: protos},
		analyzer.Output{Conn: &conn, Logs: map[string]io.Writer{"finger": &finger}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReadTrace(st.Pcap); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := withoutUIDs(finger.String()), withoutUIDs(string(log)); got != want {
		t.Errorf("the analyzer's finger.log of the sub-trace differs from the replay's:\n%s\nreplay:\n%s", got, want)
	}
}

// withoutUIDs returns the records of a TSV log without their first field,
// the uid, which the analyzer and the replay binaries derive differently.
func withoutUIDs(log string) string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			_, rest, _ := strings.Cut(line, "\t")
			out = append(out, rest)
		}
	}
	return strings.Join(out, "\n")
}

package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/logdiff"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/preprocess"
)

// analyzerDifferences analyzes trace with the native and with the
// standard parsers and returns, per field of log, how many records differ
// ("missing" and "extra": how many only one of them logged). The
// analyzer's TestNativeVsStdFields lists these differences with their
// reasons.
func analyzerDifferences(t *testing.T, trace, log string) map[string]int {
	t.Helper()
	var logs [2]bytes.Buffer
	for i, impl := range impls {
		out := analyzer.Output{Conn: io.Discard, Logs: map[string]io.Writer{log: &logs[i]}}
		a, err := analyzer.New(analyzer.Config{Parsers: impl}, out)
		if err != nil {
			t.Fatal(err)
		}
		readErr := a.ReadTrace(trace)
		if err := errors.Join(readErr, a.Close()); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := logdiff.SchemaFor(log)
	res, err := logdiff.Compare(s, logdiff.NewReader(&logs[0], "native"), logdiff.NewReader(&logs[1], "std"), logdiff.Options{Unset: true})
	if err != nil {
		t.Fatal(err)
	}
	return differences(res)
}

// differences returns the differing records of a comparison per field,
// with "missing" and "extra".
func differences(res *logdiff.Result) map[string]int {
	d := map[string]int{"missing": res.Missing, "extra": res.Extra}
	for _, f := range res.Fields {
		d[f.Field] = f.Differ
	}
	return d
}

// TestBundledNativeVsStdFields preprocesses every bundled trace, replays
// its batch files with the native and with the standard parsers as the
// replay binaries do (--log-dir), and compares the logs record by record
// on every field: the fields and records on which they differ must be
// those on which the analyzer's logs of the trace differ, where its
// TestNativeVsStdFields says why (the parsers are the same; the replay
// binaries only get them through batch files).
func TestBundledNativeVsStdFields(t *testing.T) {
	traces := corpustest.BundledTraces(t)
	for _, trace := range traces {
		name := filepath.Base(trace)
		dir := t.TempDir()
		if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace); err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			proto *parsers.Protocol
			file  string
		}{{HTTP, preprocess.BatchFile("http")}, {DNS, preprocess.BatchFile("dns")}} {
			logs := map[string]string{}
			for _, impl := range impls {
				logDir := t.TempDir()
				code, _, stderr := runMain(t, p.proto, "", "--parsers", impl, "-F", filepath.Join(dir, p.file), "--log-dir", logDir)
				if code != ExitOK {
					t.Fatalf("%s %s %s: exit %d: %s", name, p.proto.Name, impl, code, stderr)
				}
				logs[impl] = filepath.Join(logDir, p.proto.Log.Name+".log")
			}
			s, _ := logdiff.SchemaFor(p.proto.Log.Name)
			res, err := logdiff.CompareFiles(s, logs["native"], logs["std"], logdiff.Options{Unset: true})
			if err != nil {
				t.Fatal(err)
			}
			got := differences(res)
			want := analyzerDifferences(t, trace, p.proto.Name)
			for _, m := range []map[string]int{got, want} {
				// Batch files have no times: the replay logs leave
				// them unset.
				maps.DeleteFunc(m, func(field string, _ int) bool { return s.IsTime(field) })
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s %s.log: records differing per field between native and std: %v; in the analyzer's logs %v",
					name, p.proto.Log.Name, nonZero(got), nonZero(want))
			}
			t.Logf("%s %s.log: std against native: %s", name, p.proto.Log.Name, res.Summary())
		}
	}
}

func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

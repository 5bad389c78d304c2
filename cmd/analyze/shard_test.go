package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/shard"
)

// sortedRecords returns a log's records, sorted, and its header lines
// other than #open and #close.
func sortedRecords(t *testing.T, path string) (header, recs []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		switch {
		case strings.HasPrefix(line, "#open") || strings.HasPrefix(line, "#close"):
		case strings.HasPrefix(line, "#"):
			header = append(header, line)
		default:
			recs = append(recs, line)
		}
	}
	slices.Sort(recs)
	return header, recs
}

// TestShardMerge runs analyze on three shards of the bundled traces, two
// workers each, merges their logs as "run-benchmark merge" does, and
// checks that the merged logs are those of one run over the whole, and
// that --workers alone writes them too.
func TestShardMerge(t *testing.T) {
	traces := corpustest.BundledTraces(t)
	dir := t.TempDir()
	analyze := func(out string, flags ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append([]string{"-o", filepath.Join(dir, out)}, flags...)
		if st := run(append(args, traces...), nil, &stdout, &stderr); st != exitOK {
			t.Fatalf("analyze %v: exit status %d: %s", flags, st, stderr.String())
		}
	}
	analyze("whole")
	analyze("workers", "--workers", "3")
	const n = 3
	for k := 1; k <= n; k++ {
		analyze(fmt.Sprint("shard", k), "--shard", fmt.Sprintf("%d/%d", k, n), "-j", "2")
	}
	for _, log := range []string{"conn.log", "http.log", "dns.log"} {
		var inputs []shard.Input
		for k := 1; k <= n; k++ {
			f, err := os.Open(filepath.Join(dir, fmt.Sprint("shard", k), log))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			inputs = append(inputs, shard.Input{Name: f.Name(), R: f})
		}
		merged := filepath.Join(dir, "merged-"+log)
		var b bytes.Buffer
		if err := shard.MergeLogs(&b, inputs...); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(merged, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		wh, wr := sortedRecords(t, filepath.Join(dir, "whole", log))
		for _, got := range []string{merged, filepath.Join(dir, "workers", log)} {
			gh, gr := sortedRecords(t, got)
			if !slices.Equal(wh, gh) || !slices.Equal(wr, gr) {
				t.Errorf("%s: %d records, header %q; want the whole run's %d, header %q", got, len(gr), gh, len(wr), wh)
			}
		}
		if len(wr) == 0 {
			t.Errorf("%s is empty: the test proves nothing", log)
		}
		if c := strings.Count(b.String(), "#close"); c != 1 || !strings.HasSuffix(b.String(), "\n") {
			t.Errorf("merged %s has %d #close lines, want 1 at the end", log, c)
		}
	}
}

func TestShardUsage(t *testing.T) {
	trace := corpustest.BundledTraces(t)[0]
	for _, args := range [][]string{
		{"--shard", "0/3"}, {"--shard", "4/3"}, {"--shard", "x"}, {"--workers", "-1"},
	} {
		var stdout, stderr bytes.Buffer
		st := run(append(append(args, "-o", t.TempDir()), trace), nil, &stdout, &stderr)
		if st != exitUsage || !strings.Contains(stderr.String(), args[0]) {
			t.Errorf("analyze %v: exit status %d, %q; want %d naming the flag", args, st, stderr.String(), exitUsage)
		}
	}
}

package analyzer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/shard"
	"github.com/wirebench/wirebench/internal/zeeklog"
)

// parallelRun is what one Parallel run wrote: the logs by name ("conn",
// "http", "dns") and the counters.
type parallelRun struct {
	logs  map[string]string
	stats Stats
}

var fixedNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// runParallel analyzes the traces at paths with sh.
func runParallel(t *testing.T, sh Sharding, format zeeklog.Format, paths ...string) parallelRun {
	t.Helper()
	bufs := map[string]*bytes.Buffer{"conn": {}, "http": {}, "dns": {}}
	out := Output{Conn: bufs["conn"], Logs: map[string]io.Writer{"http": bufs["http"], "dns": bufs["dns"]}}
	pa, err := NewParallel(Config{Format: format, Now: fixedNow}, out, sh)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := pa.ReadContext(context.Background(), r); err != nil {
			t.Logf("%v (what came before is analyzed)", err)
		}
		r.Close()
	}
	if err := pa.Close(); err != nil {
		t.Fatal(err)
	}
	run := parallelRun{logs: map[string]string{}, stats: pa.Stats()}
	for name, b := range bufs {
		run.logs[name] = b.String()
	}
	return run
}

// sortedLog returns a log's header lines as written and its records
// sorted: what equal logs share whatever the order of their records.
func sortedLog(log string) (header, records []string) {
	for line := range strings.Lines(log) {
		if strings.HasPrefix(line, "#") {
			header = append(header, line)
		} else {
			records = append(records, line)
		}
	}
	slices.Sort(records)
	return header, records
}

// sameLogs fails unless b's logs are a's as sorted records, with the
// same header lines.
func sameLogs(t *testing.T, what string, a, b parallelRun) {
	t.Helper()
	for name := range a.logs {
		ha, ra := sortedLog(a.logs[name])
		hb, rb := sortedLog(b.logs[name])
		if !slices.Equal(ha, hb) {
			t.Errorf("%s: %s.log header differs:\n%s\nwant\n%s", what, name, strings.Join(hb, ""), strings.Join(ha, ""))
		}
		if !slices.Equal(ra, rb) {
			t.Errorf("%s: %s.log: %d records, want %d as one worker writes them; first difference:\n%s", what, name, len(rb), len(ra), firstDiff(ra, rb))
		}
	}
}

func firstDiff(want, got []string) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("got  %swant %s", got[i], want[i])
		}
	}
	if len(want) > len(got) {
		return "missing " + want[len(got)]
	}
	return "extra " + got[len(want)]
}

// sameCounts fails unless the counters that do not depend on how the
// connections are split agree.
func sameCounts(t *testing.T, what string, a, b Stats) {
	t.Helper()
	type count struct {
		name string
		a, b int64
	}
	for _, c := range []count{
		{"packets", a.Packets, b.Packets}, {"bytes", a.Bytes, b.Bytes}, {"decode errors", a.DecodeErrors, b.DecodeErrors},
		{"conns", a.Conns, b.Conns}, {"http", a.Records["http"], b.Records["http"]}, {"dns", a.Records["dns"], b.Records["dns"]},
		{"decapsulated", a.Decapsulated, b.Decapsulated}, {"flow connections", a.Flow.Connections, b.Flow.Connections},
		{"fragments reassembled", a.Flow.FragsReassembled, b.Flow.FragsReassembled}, {"dropped", a.Flow.DroppedTotal(), b.Flow.DroppedTotal()},
	} {
		if c.a != c.b {
			t.Errorf("%s: %s %d, want %d as with one worker", what, c.name, c.b, c.a)
		}
	}
}

// parallelTraces returns the bundled traces and, when ../shared/corpus is
// there, every trace of Zeek's corpus (fragments, tunnels of every kind,
// link types).
func parallelTraces(t *testing.T) []string {
	paths := corpustest.BundledTraces(t)
	c, err := corpustest.FindCorpus()
	if err != nil {
		t.Logf("no corpus traces: %v", err)
		return paths
	}
	for _, e := range c.Entries {
		paths = append(paths, e.File(c))
	}
	return paths
}

// TestParallelSameLogs checks that 2, 3 and 7 workers write the logs one
// worker writes, as sorted records with one header, and the same counts.
func TestParallelSameLogs(t *testing.T) {
	for _, path := range parallelTraces(t) {
		name, _ := filepath.Rel(filepath.Dir(filepath.Dir(path)), path)
		t.Run(name, func(t *testing.T) {
			one := runParallel(t, Sharding{Workers: 1}, zeeklog.TSV, path)
			for _, n := range []int{2, 3, 7} {
				got := runParallel(t, Sharding{Workers: n, Seed: uint64(n)}, zeeklog.TSV, path)
				what := fmt.Sprintf("%d workers", n)
				sameLogs(t, what, one, got)
				sameCounts(t, what, one.stats, got.stats)
			}
		})
	}
}

// TestParallelJSON checks the JSON layout, which has no header to merge,
// and several traces read as one capture.
func TestParallelJSON(t *testing.T) {
	paths := corpustest.BundledTraces(t)
	one := runParallel(t, Sharding{Workers: 1}, zeeklog.JSON, paths...)
	got := runParallel(t, Sharding{Workers: 3}, zeeklog.JSON, paths...)
	sameLogs(t, "3 workers, JSON", one, got)
	if strings.Contains(got.logs["conn"], "#") {
		t.Error("a JSON log has a header line")
	}
}

// TestShardsPartition checks that the shards of a trace, with any number
// of workers each, write together exactly the records of the whole.
func TestShardsPartition(t *testing.T) {
	for _, path := range corpustest.BundledTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			whole := runParallel(t, Sharding{Workers: 1}, zeeklog.TSV, path)
			const n = 3
			merged := parallelRun{logs: map[string]string{}}
			var skipped int64
			for k := 1; k <= n; k++ {
				part := runParallel(t, Sharding{Workers: k, Shard: shard.Spec{K: k, N: n}, Seed: 42}, zeeklog.TSV, path)
				for name, log := range part.logs {
					h, recs := sortedLog(log)
					if merged.logs[name] == "" {
						merged.logs[name] = strings.Join(h, "")
					}
					if len(recs) == len(strings.Split(strings.TrimSpace(log), "\n")) {
						t.Fatalf("shard %d/%d: %s.log has no header", k, n, name)
					}
					merged.logs[name] += strings.Join(recs, "")
				}
				shard.Sum(&merged.stats, &part.stats)
				skipped += whole.stats.Packets - part.stats.Packets
			}
			sameLogs(t, "3 shards", whole, merged)
			sameCounts(t, "3 shards", whole.stats, merged.stats)
			if skipped != 2*whole.stats.Packets {
				t.Errorf("the shards skipped %d frames in all, want %d (each frame in exactly one shard)", skipped, 2*whole.stats.Packets)
			}
		})
	}
}

// TestParallelInterrupt checks that a cancelled read stops with the
// interrupt's cause and leaves closed logs.
func TestParallelInterrupt(t *testing.T) {
	paths := corpustest.BundledTraces(t)
	var conn bytes.Buffer
	pa, err := NewParallel(Config{Now: fixedNow}, Output{Conn: &conn}, Sharding{Workers: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := fmt.Errorf("test interrupt")
	cancel(cause)
	r, err := capture.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	err = pa.ReadContext(ctx, r)
	if err == nil || !strings.Contains(err.Error(), "interrupted at offset") || !errors.Is(err, cause) {
		t.Fatalf("ReadContext = %v, want an interruption by %v", err, cause)
	}
	if err := pa.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(conn.String(), "#close\t2026-01-02-03-04-05\n") || strings.Count(conn.String(), "#fields") != 1 {
		t.Errorf("conn.log after an interrupt does not have one header and end with #close:\n%s", conn.String())
	}
}

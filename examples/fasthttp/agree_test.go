package fasthttp

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/logdiff"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/replay"
)

// tracesDir holds the traces wirebench bundles, made by its trace
// generator: this module lives two levels below wirebench's root.
const tracesDir = "../../traces"

// bundledTraces returns the bundled capture files.
func bundledTraces(t testing.TB) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(tracesDir, "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if filepath.Ext(f) != ".json" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no bundled trace in %s", tracesDir)
	}
	return out
}

// preprocessTrace writes the batch files of trace into a new directory.
func preprocessTrace(t testing.TB, trace string) string {
	t.Helper()
	cfg := preprocess.DefaultConfig()
	dir := t.TempDir()
	if _, err := preprocess.Run(context.Background(), cfg, dir, trace); err != nil {
		t.Fatal(err)
	}
	return dir
}

var usageRE = regexp.MustCompile(`(?m)^# user_time=.* transactions=(\d+) `)

// replayLog replays batch with the implementation impl as the replay
// binary does, into a new log directory, and returns it with the
// transaction count of the -U line.
func replayLog(t *testing.T, batch, impl string) (dir, count string) {
	t.Helper()
	dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"--parsers", impl, "-U", "--log-dir", dir, "-F", batch}
	if code := replay.Main("http-fasthttp-parser", http.Protocol, args, strings.NewReader(""), &stdout, &stderr); code != replay.ExitOK {
		t.Fatalf("%s %v: exit %d\n%s", impl, args, code, stderr.Bytes())
	}
	m := usageRE.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("%s: no -U line in %q", impl, stderr.String())
	}
	return dir, m[1]
}

// TestBundledTraces replays the HTTP batch file of every bundled trace with
// native and with fasthttp: the same number of transactions, and http.log
// the same record for record and field by field (the fields logdiff
// compares: orig_mime_types and resp_mime_types are not among them, see
// the README).
func TestBundledTraces(t *testing.T) {
	for _, trace := range bundledTraces(t) {
		t.Run(filepath.Base(trace), func(t *testing.T) {
			batch := filepath.Join(preprocessTrace(t, trace), preprocess.BatchFile("http"))
			native, nativeN := replayLog(t, batch, parsers.Native)
			peer, peerN := replayLog(t, batch, Name)
			if nativeN != peerN {
				t.Errorf("%s transactions, native %s", peerN, nativeN)
			}
			schema, _ := logdiff.SchemaFor("http")
			res, err := logdiff.CompareFiles(schema, filepath.Join(native, "http.log"), filepath.Join(peer, "http.log"), logdiff.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d records; %s", res.ARecords, res.Summary())
			if !res.Same() {
				var out strings.Builder
				if err := res.WriteText(&out); err != nil {
					t.Fatal(err)
				}
				t.Errorf("http.log differs from native's:\n%s", out.String())
			}
		})
	}
}

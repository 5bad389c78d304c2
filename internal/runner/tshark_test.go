package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/traces"
)

// bundledTraces returns the traces in the repository's traces/ directory
// that come with a truth file.
func bundledTraces(t *testing.T) []string {
	t.Helper()
	truths, err := filepath.Glob(filepath.Join("..", "..", "traces", "*.truth.json"))
	if err != nil || len(truths) == 0 {
		t.Fatalf("no truth files in ../../traces (%v)", err)
	}
	var out []string
	for _, f := range truths {
		out = append(out, strings.TrimSuffix(f, ".truth.json"))
	}
	return out
}

// The tshark variants print one line per record that Zeek's log would
// hold for what tshark can see. On the sub-traces of each bundled trace:
// http.log, every HTTP request that lost no bytes to the capture (tshark
// does not show a message with a hole; Zeek logs it); dns.log, every DNS
// query over UDP (the sub-trace is udp port 53; the queries over TCP are
// the retries of truncated replies, one query and one reply each), with
// every reply matched to its query.
func TestTSharkVariantsCountTheTruth(t *testing.T) {
	tshark := corpustest.NeedTool(t, "tshark")
	for _, trace := range bundledTraces(t) {
		t.Run(filepath.Base(trace), func(t *testing.T) {
			t.Parallel()
			truth, err := traces.ReadTruth(trace + ".truth.json")
			if err != nil {
				t.Fatal(err)
			}
			data := t.TempDir()
			if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), data, trace); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{
				"http": truth.HTTPRequests - truth.HTTPRequestsWithGaps,
				"dns":  truth.DNSQueries - truth.DNSTCPMessages/2,
			}
			cfg := VariantConfig{TraceDir: data, WorkDir: t.TempDir(), TShark: tshark}
			for _, v := range Variants(cfg) {
				if v.Kind != TShark {
					continue
				}
				run := execVariant(context.Background(), v, RunConfig{OutDir: cfg.OutDir(), CPU: -1}, true)
				if !run.OK() {
					t.Fatalf("%s: %v", v.CommandLine(true), run.Err)
				}
				log := v.Protocol + ".log"
				if got := countsString(run.Counts); got != fmt.Sprintf("%s=%d", log, want[v.Protocol]) {
					t.Errorf("%s counts %s, want %s=%d", v.Name, got, log, want[v.Protocol])
				}
			}
		})
	}
}

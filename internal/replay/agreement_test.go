package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/logdiff"
	"github.com/wirebench/wirebench/preprocess"
)

// replayDifferences lists, as "TRACE LOG FIELD", the fields on which the
// replay binaries' logs with the native and with the standard parsers
// differ on the bundled traces, with the number of records and the
// reason; "missing" and "extra" count the records only one of them
// logged. The records are those the analyzer's TestNativeVsStdFields
// lists: the parsers are the same, fed from the batch files.
var replayDifferences = map[string]struct {
	n   int
	why string
}{
	"http-dns-plain.pcap http response_body_len":    {1, untilClose},
	"http-dns-impaired.pcap http response_body_len": {9, stdStopsAtGap},
	"http-dns-impaired.pcap http version":           {7, stdStopsAtGap},
	"http-dns-impaired.pcap http status_code":       {7, stdStopsAtGap},
	"http-dns-impaired.pcap http status_msg":        {7, stdStopsAtGap},
	"http-dns-impaired.pcap http method":            {4, stdStopsAtGap},
	"http-dns-impaired.pcap http host":              {4, stdStopsAtGap},
	"http-dns-impaired.pcap http uri":               {4, stdStopsAtGap},
	"http-dns-impaired.pcap http user_agent":        {4, stdStopsAtGap},
	"http-dns-impaired.pcap http referrer":          {3, stdStopsAtGap},
	"http-dns-impaired.pcap http request_body_len":  {1, stdStopsAtGap},
}

const (
	untilClose = "a reply body read until the connection closes: Zeek, and the native parser, count 2 bytes " +
		"for every line end and for the end of the stream; net/http counts the bytes sent"
	stdStopsAtGap = "the trace loses packets: net/http cannot skip a gap and ends the direction at its first " +
		"gap; Zeek and the native parser skip it and go on"
)

// TestBundledNativeVsStdFields preprocesses every bundled trace, replays
// its batch files with the native and with the standard parsers as the
// replay binaries do (--log-dir), and compares the logs record by record
// on every field (see replayDifferences).
func TestBundledNativeVsStdFields(t *testing.T) {
	traces, err := filepath.Glob(filepath.Join("..", "..", "traces", "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	traces = slices.DeleteFunc(traces, func(p string) bool { return strings.HasSuffix(p, ".json") })
	if len(traces) == 0 {
		t.Fatal("no bundled traces in ../../traces")
	}
	seen := map[string]bool{}
	for _, trace := range traces {
		name := filepath.Base(trace)
		dir := t.TempDir()
		if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace); err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			proto Protocol
			file  string
		}{{HTTP, preprocess.HTTPBatchFile}, {DNS, preprocess.DNSBatchFile}} {
			logs := map[string]string{}
			for _, impl := range impls {
				logDir := t.TempDir()
				code, _, stderr := runMain(t, p.proto, "", "--parsers", impl, "-F", filepath.Join(dir, p.file), "--log-dir", logDir)
				if code != ExitOK {
					t.Fatalf("%s %s %s: exit %d: %s", name, p.proto.Name, impl, code, stderr)
				}
				logs[impl] = filepath.Join(logDir, p.proto.Log+".log")
			}
			s, _ := logdiff.SchemaFor(p.proto.Log)
			res, err := logdiff.CompareFiles(s, logs["native"], logs["std"], logdiff.Options{Unset: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{"missing": res.Missing, "extra": res.Extra}
			for _, f := range res.Fields {
				got[f.Field] = f.Differ
			}
			for field, n := range got {
				key := fmt.Sprintf("%s %s %s", name, p.proto.Log, field)
				want, listed := replayDifferences[key]
				seen[key] = true
				switch {
				case n == 0 && listed:
					t.Errorf("%s: native and std agree now; remove it from replayDifferences (%q)", key, want.why)
				case n != want.n:
					t.Errorf("%s: %d records differ, replayDifferences lists %d (fix it, or list it with the reason)", key, n, want.n)
				}
			}
			t.Logf("%s %s.log: std against native: %s", name, p.proto.Log, res.Summary())
		}
	}
	for key := range replayDifferences {
		if !seen[key] {
			t.Errorf("replayDifferences lists %q, which was not compared", key)
		}
	}
}

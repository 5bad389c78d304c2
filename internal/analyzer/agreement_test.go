package analyzer

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/logdiff"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// difference is a listed disagreement: how many records differ, with why.
type difference struct {
	n      int
	reason string
}

// Why the native and the standard parsers disagree on the bundled traces.
const (
	untilCloseCRLF = "a reply body that runs until the connection closes and does not end in CRLF: Zeek ends " +
		"the last line at the end of the stream and counts 2 bytes more, as the native parser does; " +
		"net/http counts the bytes sent (13 against 11 on http-dns-plain.pcap)"
	untilEndCRLF = "a push stream without Content-Length (Yahoo's finance streamer) still open when the trace " +
		"ends, its last piece not ending in CRLF: Zeek and the native parser count the 2 bytes of the line end " +
		"Zeek adds at the end of the stream, net/http does not (109700 against 109698)"
	stdStopsAtGap = "the trace loses packets: net/http cannot skip a gap, so the standard parser ends a " +
		"direction at its first gap (the body is cut short, and the requests or replies after it are " +
		"logged without that side); Zeek and the native parser skip the gap and go on"
)

// nativeVsStd lists every field, as "TRACE LOG FIELD", on which the
// analyzer's logs with the native and with the standard parsers differ on
// the bundled traces (and the real-traffic sample in ../shared/real, when
// it is there), with the number of records and the reason; "missing" and
// "extra" stand for the records only the native or only the standard
// parsers logged. Every compared field counts, also those one
// implementation never sets. TestNativeVsStdFields fails on a difference
// not listed here, and on a listed one whose count changed or that is gone.
var nativeVsStd = map[string]difference{
	"http-dns-plain.pcap http response_body_len":    {1, untilCloseCRLF},
	"http-dns-impaired.pcap http response_body_len": {9, stdStopsAtGap},
	"http-dns-impaired.pcap http version":           {7, stdStopsAtGap},
	"http-dns-impaired.pcap http status_code":       {7, stdStopsAtGap},
	"http-dns-impaired.pcap http status_msg":        {7, stdStopsAtGap},
	"http-dns-impaired.pcap http method":            {4, stdStopsAtGap},
	"http-dns-impaired.pcap http host":              {4, stdStopsAtGap},
	"http-dns-impaired.pcap http uri":               {4, stdStopsAtGap},
	"http-dns-impaired.pcap http user_agent":        {4, stdStopsAtGap},
	"http-dns-impaired.pcap http ts":                {3, stdStopsAtGap},
	"http-dns-impaired.pcap http referrer":          {3, stdStopsAtGap},
	"http-dns-impaired.pcap http request_body_len":  {1, stdStopsAtGap},
	"m57-day11-18-10k.pcap http response_body_len":  {1, untilEndCRLF},
}

// TestNativeVsStdFields analyzes the bundled traces with the native and
// with the standard parsers and compares the logs record by record on
// every field logdiff compares (see nativeVsStd).
func TestNativeVsStdFields(t *testing.T) {
	traces, err := filepath.Glob(filepath.Join("..", "..", "traces", "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	traces = slices.DeleteFunc(traces, func(p string) bool { return strings.HasSuffix(p, ".json") })
	if len(traces) == 0 {
		t.Fatal("no bundled traces in ../../traces")
	}
	t.Run("real", func(t *testing.T) {
		traces := append(traces[:0:0], corpustest.RealTrace(t, "m57-day11-18-10k.pcap"))
		compareImpls(t, traces, false)
	})
	compareImpls(t, traces, true)
}

// compareImpls compares the native and the standard parsers' logs of
// traces with nativeVsStd; bundled says whether these are the bundled
// traces (every listed bundled difference must then have been seen).
func compareImpls(t *testing.T, traces []string, bundled bool) {
	seen := map[string]bool{}
	report := map[string][]string{} // "TRACE LOG: reason" -> "field n"
	for _, trace := range traces {
		name := filepath.Base(trace)
		native := analyzeTrace(t, trace, builtin.Native)
		std := analyzeTrace(t, trace, builtin.Std)
		for _, log := range []string{"conn", "http", "dns"} {
			s, _ := logdiff.SchemaFor(log)
			res, err := logdiff.Compare(s, logdiff.NewReader(bytes.NewReader(native.logs[log]), "native "+log+".log"),
				logdiff.NewReader(bytes.NewReader(std.logs[log]), "std "+log+".log"), logdiff.Options{Unset: true})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]int{"missing": res.Missing, "extra": res.Extra}
			for _, f := range res.Fields {
				got[f.Field] = f.Differ
			}
			for field, n := range got {
				key := name + " " + log + " " + field
				want, listed := nativeVsStd[key]
				seen[key] = true
				switch {
				case n == 0 && listed:
					t.Errorf("%s: native and std agree now; remove it from nativeVsStd (%q)", key, want.reason)
				case n != 0 && !listed:
					t.Errorf("%s: %d records differ: a new difference (fix it, or list it with its reason in nativeVsStd); the first:\n%s",
						key, n, firstExamples(res, field))
				case n != want.n:
					t.Errorf("%s: %d records differ, nativeVsStd lists %d (%q)", key, n, want.n, want.reason)
				case n != 0:
					k := fmt.Sprintf("%s %s.log (%d records): %s", name, log, res.Matched, want.reason)
					report[k] = append(report[k], fmt.Sprintf("%s %d", field, n))
				}
			}
			t.Logf("%s %s.log: std against native: %s", name, log, res.Summary())
		}
	}
	for key := range nativeVsStd {
		if strings.HasPrefix(key, "m57-") == bundled {
			continue
		}
		if !seen[key] {
			t.Errorf("nativeVsStd lists %q, which was not compared", key)
		}
	}
	var lines []string
	for k, fields := range report {
		sort.Strings(fields)
		name, reason, _ := strings.Cut(k, ": ")
		lines = append(lines, fmt.Sprintf("%s: %s\n    %s", name, strings.Join(fields, ", "), reason))
	}
	sort.Strings(lines)
	t.Logf("listed differences:\n%s", strings.Join(lines, "\n"))
}

// firstExamples renders the examples of a result that concern field.
func firstExamples(res *logdiff.Result, field string) string {
	var b strings.Builder
	kept := *res
	kept.Examples = slices.DeleteFunc(slices.Clone(res.Examples), func(ex logdiff.Example) bool {
		return ex.Kind == "differ" && !slices.Contains(ex.Differ, field)
	})
	if len(kept.Examples) > 3 {
		kept.Examples = kept.Examples[:3]
	}
	kept.WriteText(&b)
	return b.String()
}

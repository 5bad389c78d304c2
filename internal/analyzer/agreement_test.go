package analyzer

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	untilCloseCRLF = "a reply body that runs until the connection closes: Zeek reads it as lines and counts " +
		"2 bytes for every line end (a bare CR or LF too) and for the end of the stream, as the native " +
		"parser does; net/http counts the bytes sent (13 against 11 on http-dns-plain.pcap)"
	untilEndCRLF = "a push stream without Content-Length (Yahoo's finance streamer) still open when the trace " +
		"ends: as for a body read until the connection closes, Zeek and the native parser count 2 bytes for " +
		"the line end Zeek adds at the end of the stream, net/http does not (109700 against 109698)"
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
	"http-dns-impaired.pcap http resp_mime_types":   {2, stdStopsAtGap},
	"m57-day11-18-10k.pcap http response_body_len":  {1, untilEndCRLF},
}

// TestNativeVsStdFields analyzes the bundled traces with the native and
// with the standard parsers and compares the logs record by record on
// every field logdiff compares (see nativeVsStd).
func TestNativeVsStdFields(t *testing.T) {
	traces := corpustest.BundledTraces(t)
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

var updateAgreement = flag.Bool("update-agreement", false, "rewrite "+zeekAgreementFile+" with the shares measured")

// zeekAgreementFile holds the shares TestCorpusAgreesWithZeek must keep.
const zeekAgreementFile = "testdata/zeek-agreement.txt"

// share is how many of Zeek's records matched a record of the analyzer
// with an equal value of a field, out of how many Zeek logged.
type share struct{ equal, total int }

func (s share) percent() float64 { return 100 * float64(s.equal) / float64(max(s.total, 1)) }

// TestCorpusAgreesWithZeek analyzes every corpus trace whose Zeek baseline
// holds full logs (not zeek-cut projections) from a plain run of Zeek, and
// compares each log with Zeek's, record by record: per log and field, the
// share of Zeek's records that a record of the analyzer matched (by the
// key: endpoints, trans_depth, ...) with an equal value. "(matched)" is
// the share matched at all. Fields only one of the two sets count too (the
// MIME types the analyzer does not sniff yet). The times Zeek's test
// baselines mask (ts) are not compared. The shares must not drop below those
// committed in testdata/zeek-agreement.txt; -update-agreement rewrites it.
func TestCorpusAgreesWithZeek(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	shares := map[string]*share{} // "LOG FIELD"
	add := func(log, field string, equal, total int) {
		k := log + " " + field
		if shares[k] == nil {
			shares[k] = &share{}
		}
		shares[k].equal += equal
		shares[k].total += total
	}
	logs := 0
	for _, e := range c.Entries {
		if !e.Clean || len(e.Expected) == 0 || e.Test == "" {
			continue
		}
		runs := &corpusRuns{t: t, path: e.File(c)}
		for _, log := range []string{"conn", "http", "dns"} {
			base := filepath.Join(c.Dir, "baselines", e.Test, log+".log")
			zeek, err := os.ReadFile(base)
			if err != nil {
				continue
			}
			r, _ := runs.log(log)
			s, _ := logdiff.SchemaFor(log)
			res, err := logdiff.Compare(s, logdiff.NewReader(bytes.NewReader(zeek), base),
				logdiff.NewReader(bytes.NewReader(r.logs[log]), e.Trace+" "+log+".log"), logdiff.Options{Unset: true})
			if err != nil {
				t.Fatal(err)
			}
			logs++
			add(log, "(matched)", res.Matched, res.ARecords)
			for _, f := range res.Fields {
				if s.IsTime(f.Field) && (f.Skipped > 0 || f.Equal+f.Differ == 0) {
					continue // masked, or no record to tell
				}
				add(log, f.Field, f.Equal, res.ARecords)
			}
			if !res.Same() {
				t.Logf("%s %s.log: the analyzer against Zeek: %s", e.Trace, log, res.Summary())
			}
		}
	}
	if logs == 0 {
		t.Fatal("no corpus baseline with full logs")
	}
	var keys []string
	for k := range shares {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var table strings.Builder
	for _, k := range keys {
		log, field, _ := strings.Cut(k, " ")
		sh := shares[k]
		fmt.Fprintf(&table, "%-5s %-18s %5d of %5d  %5.1f %%\n", log, field, sh.equal, sh.total, sh.percent())
	}
	t.Logf("%d logs compared; share of Zeek's records matched with equal values:\n%s", logs, table.String())
	if *updateAgreement {
		head := "# Share of Zeek's records, per log and field, that the analyzer logged with an equal value\n" +
			"# on the corpus traces whose Zeek baseline holds full logs; TestCorpusAgreesWithZeek fails\n" +
			"# when a share drops below this. Rewrite: go test ./internal/analyzer -run TestCorpusAgreesWithZeek -update-agreement\n"
		if err := os.WriteFile(zeekAgreementFile, []byte(head+table.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := readShares(zeekAgreementFile)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range committed {
		got, ok := shares[k]
		switch {
		case !ok:
			t.Errorf("%s: not compared any more (committed %.1f %%)", k, want)
		case got.percent() < want-0.05:
			t.Errorf("%s: %d of Zeek's %d records equal (%.1f %%), fewer than the committed %.1f %%",
				k, got.equal, got.total, got.percent(), want)
		case got.percent() > want+0.05:
			t.Logf("%s: %.1f %%, up from %.1f %%: rewrite %s with -update-agreement", k, got.percent(), want, zeekAgreementFile)
		}
	}
	for k := range shares {
		if _, ok := committed[k]; !ok {
			t.Errorf("%s: compared, but not in %s (rewrite it with -update-agreement)", k, zeekAgreementFile)
		}
	}
}

// readShares reads the committed shares: "LOG FIELD EQUAL of TOTAL SHARE %"
// lines, # comments.
func readShares(name string) (map[string]float64, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for i, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 7 || f[3] != "of" || f[6] != "%" {
			return nil, fmt.Errorf("%s:%d: %q: want LOG FIELD EQUAL of TOTAL SHARE %%", name, i+1, line)
		}
		v, err := strconv.ParseFloat(f[5], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		out[f[0]+" "+f[1]] = v
	}
	return out, nil
}

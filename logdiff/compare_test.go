package logdiff

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// httpLog renders a small http.log in TSV with the columns given, one
// record per row.
func httpLog(cols string, rows ...string) string {
	return "#separator \\x09\n#fields\t" + strings.ReplaceAll(cols, " ", "\t") + "\n" +
		strings.ReplaceAll(strings.Join(rows, "\n"), " ", "\t") + "\n#close\tnow\n"
}

func compareText(t *testing.T, log, a, b string, opt Options) *Result {
	t.Helper()
	s, _ := SchemaFor(log)
	r, err := Compare(s, NewReader(strings.NewReader(a), "a.log"), NewReader(strings.NewReader(b), "b.log"), opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const httpCols = "ts uid id.orig_h id.orig_p id.resp_h id.resp_p trans_depth method uri response_body_len"

func TestCompare(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b string
		opt  Options
		// want: matched equal differ missing extra
		want    [5]int
		summary string
		fields  map[string][3]int // equal, differ, skipped
		not     []string          // fields not compared
	}{
		{
			name: "same records, other uids and order",
			a: httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10",
				"1.5 Ca 10.0.0.1 1000 10.0.0.2 80 2 GET /b 20"),
			b: httpLog(httpCols, "1.5 Cx 10.0.0.1 1000 10.0.0.2 80 2 GET /b 20",
				"1.0 Cy 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			want: [5]int{2, 2, 0, 0, 0}, summary: "agree 100.0 %  (2 records)",
			fields: map[string][3]int{"uri": {2, 0, 0}, "ts": {2, 0, 0}},
		},
		{
			name: "a field differs, one missing, one extra",
			a: httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10",
				"1.5 Ca 10.0.0.1 1000 10.0.0.2 80 2 GET /b 20",
				"2.0 Cb 10.0.0.1 1001 10.0.0.2 80 1 GET /c 30"),
			b: httpLog(httpCols, "1.0 Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 11",
				"1.5 Cx 10.0.0.1 1000 10.0.0.2 80 2 GET /B 21",
				"3.0 Cz 10.0.0.3 1002 10.0.0.2 80 1 GET /d 40"),
			want:    [5]int{2, 0, 2, 1, 1},
			summary: "agree   0.0 %  (2 differ: response_body_len 2, uri 1; 1 missing; 1 extra)",
			fields:  map[string][3]int{"uri": {1, 1, 0}, "response_body_len": {0, 2, 0}, "method": {2, 0, 0}},
		},
		{
			name: "duplicate keys matched in order",
			a: httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /first 10",
				"9.0 Cb 10.0.0.1 1000 10.0.0.2 80 1 GET /second 10"),
			b: httpLog(httpCols, "1.0 Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /first 10",
				"9.0 Cy 10.0.0.1 1000 10.0.0.2 80 1 GET /second 10"),
			want: [5]int{2, 2, 0, 0, 0},
		},
		{
			name: "times within the tolerance",
			a:    httpLog(httpCols, "1.000000 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10", "2.000000 Ca 10.0.0.1 1000 10.0.0.2 80 2 GET /a 10"),
			b:    httpLog(httpCols, "1.001000 Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10", "2.001001 Cx 10.0.0.1 1000 10.0.0.2 80 2 GET /a 10"),
			want: [5]int{2, 1, 1, 0, 0}, fields: map[string][3]int{"ts": {1, 1, 0}},
		},
		{
			name: "a wider tolerance",
			a:    httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			b:    httpLog(httpCols, "1.5 Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			opt:  Options{Tolerance: time.Second},
			want: [5]int{1, 1, 0, 0, 0},
		},
		{
			name: "masked times are skipped",
			a:    httpLog(httpCols, "XXXXXXXXXX.XXXXXX Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			b:    httpLog(httpCols, "1.5 Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			want: [5]int{1, 1, 0, 0, 0}, fields: map[string][3]int{"ts": {0, 0, 1}},
		},
		{
			name: "a field never set in B is not compared",
			a:    httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			b:    httpLog(httpCols, "- Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			want: [5]int{1, 1, 0, 0, 0}, not: []string{"ts"},
		},
		{
			name: "unless asked to",
			a:    httpLog(httpCols, "1.0 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			b:    httpLog(httpCols, "- Cx 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10"),
			opt:  Options{Unset: true},
			want: [5]int{1, 0, 1, 0, 0}, fields: map[string][3]int{"ts": {0, 1, 0}},
		},
		{
			name: "tsv against json",
			a:    httpLog(httpCols+" tags", "1.000000 Ca 10.0.0.1 1000 10.0.0.2 80 1 GET /a 10 (empty)"),
			b: `{"ts":1.0,"uid":"Cx","id.orig_h":"10.0.0.1","id.orig_p":1000,"id.resp_h":"10.0.0.2","id.resp_p":80,` +
				`"trans_depth":1,"method":"GET","uri":"/a","response_body_len":10,"tags":[]}` + "\n",
			want: [5]int{1, 1, 0, 0, 0}, fields: map[string][3]int{"tags": {1, 0, 0}, "id.orig_p": {}},
		},
		{
			name: "no key columns: matched as multisets",
			a:    "method\turi\nGET\t/a\nGET\t/a\nPOST\t/b\n",
			b:    "uri\tmethod\n/a\tGET\n/c\tPOST\n/a\tGET\n",
			want: [5]int{2, 2, 0, 1, 1}, not: []string{"id.orig_h", "trans_depth", "ts", "host"},
		},
		{
			name: "nothing in common: counts",
			a:    "method\nGET\nGET\nPOST\n",
			b:    "frame.number\n1\n2\n",
			want: [5]int{2, 2, 0, 1, 0}, not: []string{"method"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := compareText(t, "http", tt.a, tt.b, tt.opt)
			got := [5]int{r.Matched, r.Equal, r.Differ, r.Missing, r.Extra}
			if got != tt.want {
				t.Errorf("matched, equal, differ, missing, extra = %v, want %v", got, tt.want)
			}
			if tt.summary != "" && r.Summary() != tt.summary {
				t.Errorf("summary %q, want %q", r.Summary(), tt.summary)
			}
			for f, want := range tt.fields {
				fr, ok := r.Field(f)
				if want == [3]int{} {
					if ok {
						t.Errorf("field %s compared (a key field)", f)
					}
					continue
				}
				if got := [3]int{fr.Equal, fr.Differ, fr.Skipped}; !ok || got != want {
					t.Errorf("field %s: equal, differ, skipped = %v (compared %v), want %v", f, got, ok, want)
				}
			}
			for _, f := range tt.not {
				if !slices.ContainsFunc(r.NotCompared, func(n NotCompared) bool { return n.Field == f }) {
					t.Errorf("%s is compared; want it in NotCompared %v", f, r.NotCompared)
				}
			}
			if n := r.Differ + r.Missing + r.Extra; len(r.Examples) != n {
				t.Errorf("%d examples, want %d", len(r.Examples), n)
			}
			if r.Same() != (tt.want[2]+tt.want[3]+tt.want[4] == 0) {
				t.Errorf("Same() = %v", r.Same())
			}
		})
	}
}

func TestCompareExamplesCapped(t *testing.T) {
	var a, b []string
	for i := range 50 {
		a = append(a, fmt.Sprintf("1.0 C 10.0.0.1 %d 10.0.0.2 80 1 GET /a 10", i))
		b = append(b, fmt.Sprintf("1.0 C 10.0.0.1 %d 10.0.0.2 80 1 GET /b 10", i))
	}
	r := compareText(t, "http", httpLog(httpCols, a...), httpLog(httpCols, b...), Options{Examples: 3})
	if r.Differ != 50 || len(r.Examples) != 3 {
		t.Errorf("%d differ, %d examples; want 50 and 3", r.Differ, len(r.Examples))
	}
	ex := r.Examples[0]
	if ex.Kind != "differ" || ex.ALine != 3 || ex.BLine != 3 || !slices.Equal(ex.Differ, []string{"uri"}) {
		t.Errorf("first example %+v", ex)
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== http.log\nA: a.log\nB: b.log\nagree   0.0 %  (50 differ: uri 50)\n",
		"matched on: id.orig_h, id.orig_p, id.resp_h, id.resp_p, trans_depth\n",
		"differ: A line 3, B line 3\n", "* uri ", "not compared: host (in neither log)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestCompareBudget(t *testing.T) {
	rows := make([]string, 1000)
	for i := range rows {
		rows[i] = fmt.Sprintf("1.0 C 10.0.0.1 %d 10.0.0.2 80 1 GET /a 10", i)
	}
	log := httpLog(httpCols, rows...)
	s, _ := SchemaFor("http")
	_, err := Compare(s, NewReader(strings.NewReader(log), "a.log"), NewReader(strings.NewReader(log), "b.log"), Options{MaxBytes: 300 << 10})
	if !errors.Is(err, ErrBudget) || !strings.HasPrefix(err.Error(), "b.log: line ") {
		t.Errorf("error %v, want ErrBudget in b.log", err)
	}
	if _, err := Compare(s, NewReader(strings.NewReader(log), "a.log"), NewReader(strings.NewReader(log), "b.log"), Options{MaxBytes: 1 << 20}); err != nil {
		t.Errorf("within 1 MiB: %v", err)
	}
}

// BenchmarkCompareOneKey compares logs whose records all share one key,
// the worst case of the matching, at two sizes: the time per record
// (ns/record) stays the same when the log is a hundred times longer.
func BenchmarkCompareOneKey(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		var log strings.Builder
		log.WriteString("#fields\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\ttrans_depth\turi\n")
		for range n {
			log.WriteString("10.0.0.1\t1\t10.0.0.2\t80\t1\t/a\n")
		}
		text := log.String()
		s, _ := SchemaFor("http")
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			b.SetBytes(int64(2 * len(text)))
			for b.Loop() {
				r, err := Compare(s, NewReader(strings.NewReader(text), "a"), NewReader(strings.NewReader(text), "b"), Options{})
				if err != nil || r.Equal != n {
					b.Fatalf("%v, %+v", err, r)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
		})
	}
}

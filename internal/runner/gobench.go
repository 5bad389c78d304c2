package runner

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteGoBench writes the timed runs that succeeded in Go's benchmark
// format, one line per run, so that benchstat can compare two runs of the
// benchmark:
//
//	goos: linux
//	goarch: amd64
//	cpu: AMD EPYC 7B13
//	BenchmarkHTTPStatic 1 1603412000 ns/op 1580000000 user-ns/op 21000000 sys-ns/op 52.31 MB/s 12582912 maxrss-B
//
// ns/op is the wall time of the run, as in go test; user-ns/op and
// sys-ns/op its CPU time (user-ns/op is what the table shows); MB/s the
// bytes processed per second of wall time (the payload bytes a replay
// binary reports on its -U line, else the input file's size; left out
// when unknown); maxrss-B the peak resident set size. Each run is one
// iteration. The benchmark name is the variant's, in Go's style:
// http-analyze-std becomes BenchmarkHTTPAnalyzeStd.
func WriteGoBench(w io.Writer, m Machine, results []Result) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\n", m.OS, m.Arch)
	if m.CPUModel != "" {
		fmt.Fprintf(w, "cpu: %s\n", m.CPUModel)
	}
	for _, r := range results {
		name := GoBenchName(r.Variant.Name)
		for _, run := range r.Timed() {
			if !run.OK() || !run.TimeKnown {
				continue
			}
			fmt.Fprintf(w, "%s 1 %d ns/op %d user-ns/op %d sys-ns/op", name,
				run.Wall.Nanoseconds(), run.User.Nanoseconds(), run.Sys.Nanoseconds())
			if run.Bytes > 0 && run.Wall > 0 {
				fmt.Fprintf(w, " %.2f MB/s", float64(run.Bytes)/1e6/run.Wall.Seconds())
			}
			if run.MaxRSS > 0 {
				fmt.Fprintf(w, " %d maxrss-B", run.MaxRSS)
			}
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
	}
	return nil
}

// GoBenchName turns a variant name into a Go benchmark name: the protocol
// in capitals, every other word capitalised ("dns-static-std" ->
// "BenchmarkDNSStaticStd").
func GoBenchName(variant string) string {
	var b strings.Builder
	b.WriteString("Benchmark")
	for i, word := range strings.FieldsFunc(variant, func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		if i == 0 && slices.Contains(Protocols(), word) {
			b.WriteString(strings.ToUpper(word))
			continue
		}
		b.WriteString(strings.ToUpper(word[:1]) + word[1:])
	}
	return b.String()
}

package runner

import (
	"fmt"
	"io"
	"strings"
)

// WriteGoBench writes the timed runs that succeeded in Go's benchmark
// format, one line per run, so that benchstat can compare two runs of the
// benchmark, or the variants of one:
//
//	goos: linux
//	goarch: amd64
//	cpu: AMD EPYC 7B13
//	BenchmarkRun/proto=http/variant=opt 10 160341200 ns/op 158000000 user-ns/op 2100000 sys-ns/op 160100000 cpu-ns/op 52.31 MB/s 12582912 maxrss-B
//
// The name carries the protocol and the variant as keys (GoBenchName), so
// that "benchstat -col /variant" puts the variants of a run side by side
// and "benchstat old.txt new.txt" compares two runs. The iterations are
// the executions a run is made of (RunConfig.MinTime), and every value is
// per execution: ns/op is wall time, as in go test; user-ns/op, sys-ns/op
// and cpu-ns/op CPU time (user-ns/op is what the table shows per run;
// cpu-ns/op, their sum, is what the statistics use: the kernel splits it
// between the two by clock ticks); MB/s the bytes processed per second of
// wall time (the payload bytes a replay binary reports on its -U line,
// else the input file's size); maxrss-B the peak resident set size. A
// value that is zero or unknown (sys time of a short run, MB/s of an input
// of unknown size) is left out, not written as 0, as benchstat cannot take
// ratios of zeros.
func WriteGoBench(w io.Writer, m Machine, results []Result) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\n", m.OS, m.Arch)
	if m.CPUModel != "" {
		fmt.Fprintf(w, "cpu: %s\n", m.CPUModel)
	}
	for _, r := range results {
		name := GoBenchName(r.Variant)
		for _, run := range r.Timed() {
			if !run.OK() || !run.TimeKnown {
				continue
			}
			n := int64(max(run.Passes, 1))
			var b strings.Builder
			fmt.Fprintf(&b, "%s %d", name, n)
			metric := func(v int64, unit string) {
				if v/n > 0 {
					fmt.Fprintf(&b, " %d %s", v/n, unit)
				}
			}
			metric(run.Wall.Nanoseconds(), "ns/op")
			metric(run.User.Nanoseconds(), "user-ns/op")
			metric(run.Sys.Nanoseconds(), "sys-ns/op")
			metric((run.User + run.Sys).Nanoseconds(), "cpu-ns/op")
			if mbps := float64(run.Bytes) / 1e6 / run.Wall.Seconds(); run.Bytes > 0 && run.Wall > 0 && mbps >= 0.005 {
				fmt.Fprintf(&b, " %.2f MB/s", mbps)
			}
			if run.MaxRSS > 0 {
				fmt.Fprintf(&b, " %d maxrss-B", run.MaxRSS)
			}
			if _, err := fmt.Fprintln(w, b.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// GoBenchName is a variant's Go benchmark name, with its protocol and the
// rest of its name as keys: http-analyze-std is
// "BenchmarkRun/proto=http/variant=analyze-std".
func GoBenchName(v Variant) string {
	variant := strings.TrimPrefix(v.Name, v.Protocol+"-")
	return "BenchmarkRun/proto=" + v.Protocol + "/variant=" + variant
}

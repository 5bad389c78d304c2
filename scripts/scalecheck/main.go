// Command scalecheck measures what --workers buys: it writes a large trace
// (1 GB by default) with inflate-trace into a temporary directory, runs
// analyze (and run-benchmark preprocess) on it with --workers 1 and
// --workers N in alternation, and prints per command the median wall and
// CPU seconds of each, the speedup (wall time of one worker over N's), the
// CPU ratio (N's CPU seconds over one's), the peak resident set size
// against the memory budget, and whether the outputs agree (logs as
// sorted records, batch files by size and pcap files byte for byte). It
// fails when the speedup of analyze is below -speedup or its CPU ratio
// above -cpu. "make scalecheck" builds the tools and runs it.
//
// Usage:
//
//	scalecheck -analyze bin/analyze -run-benchmark bin/run-benchmark -inflate-trace bin/inflate-trace [flags] TRACE...
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/rusage"
	"github.com/wirebench/wirebench/traces"
)

const usage = `Usage: scalecheck -analyze BIN -run-benchmark BIN -inflate-trace BIN [flags] TRACE...

Writes a trace of -size bytes from the TRACEs (pcap or pcapng files of one
link type) with inflate-trace into a temporary directory (or reads the
trace -trace), then runs "analyze" and "run-benchmark preprocess" on it
with --workers 1 and --workers -workers, alternating, -runs times each,
and prints the median wall and CPU seconds, the speedup, the CPU ratio
and the peak RSS of each. It fails (exit status 1) when analyze's speedup
is below -speedup, its CPU ratio above -cpu, a peak RSS above the memory
budget, or the outputs of the two differ. The machine's load average is
printed first and last: on a busy machine the wall times say little.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	analyze, runBenchmark, inflateTrace string
	trace                               string
	size                                int64
	runs, workers                       int
	budget                              string
	speedup, cpu                        float64
	preprocess                          bool
	inputs                              []string
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "scalecheck: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ok, err := o.check(ctx, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "scalecheck: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("scalecheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	fs.StringVar(&o.analyze, "analyze", "", "the analyze `binary` (required)")
	fs.StringVar(&o.runBenchmark, "run-benchmark", "", "the run-benchmark `binary` (required with -preprocess)")
	fs.StringVar(&o.inflateTrace, "inflate-trace", "", "the inflate-trace `binary` (required without -trace)")
	fs.StringVar(&o.trace, "trace", "", "time this trace `FILE` instead of making one")
	size := fs.String("size", "1GB", "size of the trace made")
	fs.IntVar(&o.runs, "runs", 3, "runs of each worker count, alternating")
	fs.IntVar(&o.workers, "workers", 2, "the worker count timed against 1")
	fs.StringVar(&o.budget, "max-memory", "448MiB", "the --max-memory `SIZE` given to both, which the peak RSS must stay under")
	fs.Float64Var(&o.speedup, "speedup", 1.7, "the least wall-clock speedup of analyze")
	fs.Float64Var(&o.cpu, "cpu", 1.15, "the largest CPU ratio of analyze")
	fs.BoolVar(&o.preprocess, "preprocess", true, "time run-benchmark preprocess too (reported, not checked against -speedup and -cpu)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.inputs = fs.Args()
	var err error
	if o.size, err = traces.ParseSize(*size); err != nil {
		return nil, fmt.Errorf("-size: %v", err)
	}
	switch {
	case o.analyze == "":
		return nil, errors.New("-analyze is required (make scalecheck sets it)")
	case o.preprocess && o.runBenchmark == "":
		return nil, errors.New("-run-benchmark is required with -preprocess")
	case o.trace == "" && (o.inflateTrace == "" || len(o.inputs) == 0):
		return nil, errors.New("want -trace FILE, or -inflate-trace BIN and the TRACEs to inflate")
	case o.runs < 1 || o.workers < 2:
		return nil, errors.New("want -runs >= 1 and -workers >= 2")
	}
	return o, nil
}

// sample is one timed run.
type sample struct {
	wall, cpu time.Duration
	rss       int64
}

func (o *options) check(ctx context.Context, stdout io.Writer) (bool, error) {
	fmt.Fprintf(stdout, "load before: %s\n", loadAverage())
	tmp, err := os.MkdirTemp("", "scalecheck-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	trace := o.trace
	if trace == "" {
		trace = filepath.Join(tmp, "big.pcap")
		inflate := exec.CommandContext(ctx, o.inflateTrace, append([]string{"-o", trace, "-size", strconv.FormatInt(o.size, 10)}, o.inputs...)...)
		inflate.Stdout, inflate.Stderr = stdout, os.Stderr
		if err := inflate.Run(); err != nil {
			return false, fmt.Errorf("inflate-trace: %w", err)
		}
	}
	budget, err := traces.ParseSize(o.budget)
	if err != nil {
		return false, fmt.Errorf("-max-memory: %v", err)
	}
	type command struct {
		name    string
		args    func(workers int, out string) (string, []string)
		checked bool
	}
	commands := []command{{"analyze", func(workers int, out string) (string, []string) {
		return o.analyze, []string{"--workers", strconv.Itoa(workers), "--max-memory", o.budget, "-o", out, "-r", trace}
	}, true}}
	if o.preprocess {
		commands = append(commands, command{"preprocess", func(workers int, out string) (string, []string) {
			return o.runBenchmark, []string{"preprocess", "--workers", strconv.Itoa(workers), "--max-memory", o.budget, "-o", out, trace}
		}, false})
	}
	ok := true
	for _, c := range commands {
		counts := []int{1, o.workers}
		samples := map[int][]sample{}
		for i := range o.runs {
			for _, n := range counts {
				out := filepath.Join(tmp, fmt.Sprintf("%s-%d", c.name, n))
				os.RemoveAll(out)
				bin, args := c.args(n, out)
				s, err := timeRun(ctx, bin, args)
				if err != nil {
					return false, fmt.Errorf("%s --workers %d (run %d): %w", c.name, n, i+1, err)
				}
				samples[n] = append(samples[n], s)
			}
		}
		same, err := sameOutputs(filepath.Join(tmp, c.name+"-1"), filepath.Join(tmp, fmt.Sprintf("%s-%d", c.name, o.workers)))
		if err != nil {
			return false, err
		}
		one, many := median(samples[1]), median(samples[o.workers])
		speedup := one.wall.Seconds() / many.wall.Seconds()
		cpuRatio := many.cpu.Seconds() / one.cpu.Seconds()
		peak := max(maxRSS(samples[1]), maxRSS(samples[o.workers]))
		fmt.Fprintf(stdout, "%s, medians of %d alternating runs:\n", c.name, o.runs)
		fmt.Fprintf(stdout, "  --workers 1: %6.2f s wall, %6.2f s CPU, peak RSS %5.1f MB\n", one.wall.Seconds(), one.cpu.Seconds(), float64(maxRSS(samples[1]))/1e6)
		fmt.Fprintf(stdout, "  --workers %d: %6.2f s wall, %6.2f s CPU, peak RSS %5.1f MB\n", o.workers, many.wall.Seconds(), many.cpu.Seconds(), float64(maxRSS(samples[o.workers]))/1e6)
		fmt.Fprintf(stdout, "  speedup %.2fx, CPU ratio %.2f, peak RSS %.1f MB of a %s budget, outputs %s\n",
			speedup, cpuRatio, float64(peak)/1e6, o.budget, map[bool]string{true: "equal", false: "DIFFERENT"}[same])
		if !same || peak > budget {
			ok = false
		}
		if c.checked && (speedup < o.speedup || cpuRatio > o.cpu) {
			fmt.Fprintf(stdout, "  FAIL: want a speedup of at least %.2fx and a CPU ratio of at most %.2f\n", o.speedup, o.cpu)
			ok = false
		}
	}
	fmt.Fprintf(stdout, "load after: %s\n", loadAverage())
	return ok, nil
}

// timeRun runs bin and measures its wall time, CPU time and peak RSS.
func timeRun(ctx context.Context, bin string, args []string) (sample, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	wall := time.Since(start)
	u := rusage.Child(cmd.ProcessState)
	return sample{wall: wall, cpu: u.User + u.Sys, rss: u.MaxRSS}, nil
}

// median returns the sample of median wall time and, apart, the median
// CPU time.
func median(s []sample) sample {
	walls := make([]time.Duration, len(s))
	cpus := make([]time.Duration, len(s))
	for i := range s {
		walls[i], cpus[i] = s[i].wall, s[i].cpu
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	return sample{wall: walls[len(s)/2], cpu: cpus[len(s)/2]}
}

func maxRSS(s []sample) int64 {
	var m int64
	for _, x := range s {
		m = max(m, x.rss)
	}
	return m
}

// sameOutputs compares two output directories: .log files as multisets
// of records without #open and #close (by a fingerprint, so that this
// process stays small: a child started from it reports the parent's
// resident set in its peak RSS), .pcap files byte for byte, other files by
// size (a batch file's connections may come in another order).
func sameOutputs(a, b string) (bool, error) {
	entries, err := os.ReadDir(a)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		pa, pb := filepath.Join(a, e.Name()), filepath.Join(b, e.Name())
		var same bool
		switch filepath.Ext(e.Name()) {
		case ".log":
			var fa, fb fingerprint
			if fa, err = logFingerprint(pa); err == nil {
				fb, err = logFingerprint(pb)
			}
			same = fa == fb
		case ".pcap":
			same, err = sameBytes(pa, pb)
		default:
			var sa, sb os.FileInfo
			if sa, err = os.Stat(pa); err == nil {
				sb, err = os.Stat(pb)
			}
			same = err == nil && sa.Size() == sb.Size()
		}
		if err != nil {
			return false, err
		}
		if !same {
			return false, nil
		}
	}
	return true, nil
}

// fingerprint is a multiset of lines: their count and two sums of
// hashes of them, which do not depend on their order.
type fingerprint struct{ n, sum, sum2 uint64 }

func logFingerprint(path string) (fingerprint, error) {
	f, err := os.Open(path)
	if err != nil {
		return fingerprint{}, err
	}
	defer f.Close()
	var fp fingerprint
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte("#open")) || bytes.HasPrefix(line, []byte("#close")) {
			continue
		}
		h := fnv.New64a()
		h.Write(line)
		x := h.Sum64()
		fp.n++
		fp.sum += x
		fp.sum2 += x * (x | 1)
	}
	return fp, sc.Err()
}

func sameBytes(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	bufA, bufB := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := io.ReadFull(ra, bufA)
		nb, eb := io.ReadFull(rb, bufB)
		if na != nb || string(bufA[:na]) != string(bufB[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return ea == eb || (ea == io.ErrUnexpectedEOF && eb == io.ErrUnexpectedEOF), nil
		}
	}
}

// loadAverage returns the load averages of /proc/loadavg, or "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ") + " (1, 5, 15 min)"
}

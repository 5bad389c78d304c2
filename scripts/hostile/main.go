// Command hostile writes traces made to hurt a flow engine, from a seed,
// and checks that analyze and run-benchmark preprocess stay linear in time
// and bounded in memory on them: for each attack it runs both on the
// attack's trace and on a trace of random SYNs of the same size, and
// prints a table of CPU seconds and peak RSS. It fails (exit status 1)
// when either program takes more than -max-ratio times the CPU time it
// takes on the random SYNs, or more than -limit of memory. "make hostile"
// builds the programs and runs it.
//
// Usage:
//
//	hostile [-o DIR] [-seed N] [-scale F] [-only LIST] [-analyze BIN -run-benchmark BIN]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/runner"
	"github.com/wirebench/wirebench/traces"
)

const usage = `Usage: hostile [flags]

Writes the hostile traces below (pcap files, the same bytes for the same
-seed and -scale) into -o, each with a trace of random SYNs to port 80 of
the same size (NAME.baseline.pcap). With -analyze and -run-benchmark it
then runs "analyze -r TRACE" and "run-benchmark preprocess TRACE" on
every trace, prints a table of CPU seconds (user + system) and peak
resident set size per attack, and fails (exit status 1) when a program
takes more than -max-ratio times its CPU time on the baseline (times
under -min-cpu count as -min-cpu: they are noise), or more than -limit
of memory. Without -o the traces go to a temporary directory, removed at
the end.

Attacks:
%s
Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	dir, analyze, runBenchmark string
	seed                       uint64
	scale, maxRatio            float64
	minCPU                     time.Duration
	limit                      int64
	only                       []attack
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "hostile: %v (see -help)\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := o.main(ctx, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "hostile: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var about strings.Builder
	for _, a := range attacks {
		fmt.Fprintf(&about, "  %-15s %s\n", a.name, a.about)
	}
	fs.Usage = func() {
		fmt.Fprintf(stderr, usage, about.String())
		fs.PrintDefaults()
	}
	o := &options{}
	fs.StringVar(&o.dir, "o", "", "write the traces into `DIR` and keep them (default: a temporary directory)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the traces' random addresses, ports and sequence numbers")
	fs.Float64Var(&o.scale, "scale", 1, "multiply every attack's size by `F` (2: twice the sizes above)")
	only := fs.String("only", "", "only these attacks (comma-separated `LIST`)")
	fs.StringVar(&o.analyze, "analyze", "", "the analyze binary to check")
	fs.StringVar(&o.runBenchmark, "run-benchmark", "", "the run-benchmark binary whose preprocess to check")
	fs.Float64Var(&o.maxRatio, "max-ratio", 3, "fail above this many times the CPU time on random SYNs of the same size")
	fs.DurationVar(&o.minCPU, "min-cpu", 500*time.Millisecond, "count CPU times under this as this when comparing")
	limit := fs.String("limit", "512MB", "fail when a program's peak RSS exceeds this `SIZE`")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.scale <= 0 {
		return nil, fmt.Errorf("-scale %v: want a positive factor", o.scale)
	}
	if (o.analyze == "") != (o.runBenchmark == "") {
		return nil, errors.New("give both -analyze and -run-benchmark, or neither")
	}
	var err error
	if o.limit, err = traces.ParseSize(*limit); err != nil {
		return nil, fmt.Errorf("-limit: %v", err)
	}
	o.only = attacks
	if *only != "" {
		o.only = nil
		for name := range strings.SplitSeq(*only, ",") {
			a, err := findAttack(strings.TrimSpace(name))
			if err != nil {
				return nil, err
			}
			o.only = append(o.only, a)
		}
	}
	return o, nil
}

func (o *options) main(ctx context.Context, stdout, stderr io.Writer) (bool, error) {
	dir := o.dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hostile-")
		if err != nil {
			return false, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	var results []result
	for i, a := range o.only {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		rng := rand.New(rand.NewPCG(o.seed, uint64(i)))
		r := result{attack: a, path: filepath.Join(dir, a.name+".pcap"), base: filepath.Join(dir, a.name+".baseline.pcap")}
		fmt.Fprintf(stderr, "hostile: writing %s\n", r.path)
		var err error
		if r.size, r.packets, err = writeTrace(r.path, func(fw *frameWriter, _ func() int64) error { return a.gen(fw, rng, o.scale) }); err != nil {
			return false, err
		}
		if _, r.basePackets, err = writeTrace(r.base, func(fw *frameWriter, written func() int64) error {
			return randomSYNs(fw, rng, r.size, written)
		}); err != nil {
			return false, err
		}
		if o.analyze != "" {
			if err := o.measure(ctx, stderr, dir, &r); err != nil {
				return false, err
			}
		}
		results = append(results, r)
	}
	if o.analyze == "" {
		fmt.Fprintf(stdout, "wrote %d attack traces and their baselines into %s\n", len(results), dir)
		return true, nil
	}
	return o.report(stdout, results), nil
}

// writeTrace writes a pcap file with gen and returns its size and packet
// count; gen may ask how many bytes are written so far.
func writeTrace(path string, gen func(*frameWriter, func() int64) error) (int64, int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	w, err := capture.NewWriter(f, capture.Header{LinkType: capture.LinkTypeEthernet})
	if err != nil {
		return 0, 0, err
	}
	var size int64 = 24
	fw := &frameWriter{w: w}
	written := func() int64 { return size }
	fw.onWrite = func(n int) { size += 16 + int64(n) } // record header and frame
	if err := gen(fw, written); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	return size, w.Packets(), nil
}

// result is what the programs did on one attack and its baseline.
type result struct {
	attack               attack
	path, base           string
	size                 int64
	packets, basePackets int64
	// m holds the measurements: [program][0: attack, 1: baseline], the
	// programs being analyze and preprocess.
	m [2][2]runner.Measurement
}

var programs = [2]string{"analyze", "preprocess"}

func (o *options) measure(ctx context.Context, stderr io.Writer, dir string, r *result) error {
	out := filepath.Join(dir, "out")
	for i, trace := range []string{r.path, r.base} {
		for p, args := range [2][]string{
			{o.analyze, "-r", trace, "-o", out},
			{o.runBenchmark, "preprocess", "-o", out, trace},
		} {
			fmt.Fprintf(stderr, "hostile: %s %s\n", programs[p], filepath.Base(trace))
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			errf, err := os.CreateTemp(dir, "stderr-")
			if err != nil {
				return err
			}
			cmd.Stderr = errf
			m := runner.Exec(cmd, -1)
			msg, _ := os.ReadFile(errf.Name())
			errf.Close()
			os.Remove(errf.Name())
			if !m.OK() {
				return fmt.Errorf("%s on %s: %v: %s", programs[p], trace, m.Err, strings.TrimSpace(string(msg)))
			}
			r.m[p][i] = m
		}
	}
	return os.RemoveAll(out)
}

func cpu(m runner.Measurement) time.Duration { return m.User + m.Sys }

// report prints the table and says whether every attack stayed within
// the limits.
func (o *options) report(w io.Writer, results []result) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "attack\tMB\tpackets\tanalyze s\tbaseline s\tratio\tRSS MB\tpreprocess s\tbaseline s\tratio\tRSS MB\t\t")
	ok := true
	for _, r := range results {
		row := fmt.Sprintf("%s\t%.1f\t%d", r.attack.name, float64(r.size)/1e6, r.packets)
		var bad []string
		for p := range programs {
			got, base := cpu(r.m[p][0]), cpu(r.m[p][1])
			ratio := float64(max(got, o.minCPU)) / float64(max(base, o.minCPU))
			rss := r.m[p][0].MaxRSS
			row += fmt.Sprintf("\t%.2f\t%.2f\t%.1fx\t%.0f", got.Seconds(), base.Seconds(), ratio, float64(rss)/1e6)
			if ratio > o.maxRatio {
				bad = append(bad, fmt.Sprintf("%s %.1fx the CPU time", programs[p], ratio))
			}
			if rss > o.limit || r.m[p][1].MaxRSS > o.limit {
				bad = append(bad, fmt.Sprintf("%s above %.0f MB", programs[p], float64(o.limit)/1e6))
			}
		}
		verdict := "ok"
		if len(bad) > 0 {
			verdict, ok = "FAIL: "+strings.Join(bad, ", "), false
		}
		fmt.Fprintf(tw, "%s\t%s\t\n", row, verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "limits: at most %.1fx the CPU time on random SYNs of the same size (times under %v count as %v), peak RSS at most %.0f MB\n",
		o.maxRatio, o.minCPU, o.minCPU, float64(o.limit)/1e6)
	return ok
}

// Command memcheck checks that run-benchmark preprocess and the analyzer
// work in constant memory: it writes a large trace (1 GB by default) with
// inflate-trace into a temporary directory, preprocesses it (and, with
// -analyze, analyzes it), and fails when the peak resident set size of
// either exceeds a limit (150 MB by default). It also times tcpdump splitting the same file ('tcp port 80'), alternating
// runs of the two so that both meet the same load, and reports each one's
// throughput. The temporary directory is removed at the end, also on
// failure or interrupt. "make memcheck" builds the tools and runs it.
//
// Usage:
//
//	memcheck -run-benchmark bin/run-benchmark -inflate-trace bin/inflate-trace [-analyze bin/analyze] [flags] TRACE...
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/runner"
	"github.com/wirebench/wirebench/traces"
)

const usage = `Usage: memcheck -run-benchmark BIN -inflate-trace BIN [-analyze BIN] [flags] TRACE...

Writes a trace of -size bytes from the TRACEs (pcap or pcapng files of one
link type) with inflate-trace into a temporary directory, runs
"run-benchmark preprocess" on it -runs times (and "analyze" as many times,
with -analyze) and fails (exit status 1) when the peak resident set size of
either exceeds -limit. tcpdump -w 'tcp port 80'
on the same file is timed alongside, when installed. The temporary
directory ($TMPDIR) is removed at the end. Both programs write their
sub-traces there, so on a disk their wall time depends on how fast it
takes the writes; set TMPDIR to a tmpfs (/dev/shm) to time the programs
alone. The time per CPU second varies less.

Flags:
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	runBenchmark, inflateTrace, analyze, tcpdump string
	size, limit                                  int64
	runs                                         int
	inputs                                       []string
}

// run executes the command line and returns the exit status: 0 when
// preprocess stayed under the limit, 1 when it did not or failed, 2 on a
// usage error.
func run(args []string, stdout, stderr io.Writer) int {
	o, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "memcheck: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ok, err := o.check(ctx, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "memcheck: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("memcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.runBenchmark, "run-benchmark", "", "the run-benchmark `binary` to check (required)")
	fs.StringVar(&o.inflateTrace, "inflate-trace", "", "the inflate-trace `binary` (required)")
	fs.StringVar(&o.analyze, "analyze", "", "the analyze `binary` (cmd/analyze) to check as well; none when empty")
	fs.StringVar(&o.tcpdump, "tcpdump", "tcpdump", "tcpdump `program` to compare with; \"none\" leaves it out")
	size := fs.String("size", "1GB", "size of the trace to write: bytes or with a unit (MB, GB, MiB, GiB)")
	limit := fs.String("limit", "150MB", "peak resident set size preprocess and analyze must stay under")
	fs.IntVar(&o.runs, "runs", 3, "runs of each program; the median time is reported")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if o.size, err = parseSize(*size); err != nil {
		return nil, fmt.Errorf("-size: %v", err)
	}
	if o.limit, err = parseSize(*limit); err != nil {
		return nil, fmt.Errorf("-limit: %v", err)
	}
	switch {
	case o.runBenchmark == "" || o.inflateTrace == "":
		return nil, errors.New("-run-benchmark and -inflate-trace are required (make memcheck sets them)")
	case fs.NArg() == 0:
		return nil, errors.New("no input traces (make memcheck takes the bundled traces in traces/; set MEMCHECK_INPUTS to use others)")
	case o.runs < 1:
		return nil, fmt.Errorf("-runs %d: want at least 1", o.runs)
	}
	o.inputs = fs.Args()
	return o, nil
}

// parseSize parses a positive size as gen-trace's --size does: "150MB",
// "1GB", "512MiB", "100000" (MB and GB are powers of 1000).
func parseSize(s string) (int64, error) {
	n, err := traces.ParseSize(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (want for example 1GB, 150MB or 500MiB)", s)
	}
	return n, nil
}

// check makes the trace, measures, prints the figures and reports whether
// preprocess stayed under the limit.
func (o *options) check(ctx context.Context, stdout io.Writer) (bool, error) {
	tmp, err := os.MkdirTemp("", "wirebench-memcheck-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	// An interrupt stops the child; the deferred RemoveAll still runs.

	big := filepath.Join(tmp, "big.pcap")
	fmt.Fprintf(stdout, "memcheck: writing a %.2f GB trace from %d input(s) into %s\n", float64(o.size)/1e9, len(o.inputs), tmp)
	inflate := exec.CommandContext(ctx, o.inflateTrace, append([]string{"-o", big, "-size", strconv.FormatInt(o.size, 10)}, o.inputs...)...)
	inflate.Stdout, inflate.Stderr = stdout, os.Stderr
	if err := inflate.Run(); err != nil {
		return false, fmt.Errorf("inflate-trace: %v", err)
	}
	fi, err := os.Stat(big)
	if err != nil {
		return false, err
	}
	if err := warm(big); err != nil {
		return false, err
	}

	progs := []*program{{
		name:    "run-benchmark preprocess",
		args:    []string{o.runBenchmark, "preprocess", "--json", "-o", filepath.Join(tmp, "out"), big},
		limited: true,
	}}
	if o.analyze != "" {
		progs = append(progs, &program{
			name:    "analyze",
			args:    []string{o.analyze, "-o", filepath.Join(tmp, "logs"), "-r", big},
			limited: true,
		})
	}
	if o.tcpdump != "none" {
		if path, err := exec.LookPath(o.tcpdump); err == nil {
			progs = append(progs, &program{
				name: "tcpdump -w 'tcp port 80'",
				args: []string{path, "-r", big, "-w", filepath.Join(tmp, "tcpdump-http.pcap"), "tcp port 80"},
			})
		} else {
			fmt.Fprintf(stdout, "memcheck: %s is not installed: preprocess is timed alone\n", o.tcpdump)
		}
	}
	// Alternate the programs so that both meet the same machine load.
	for range o.runs {
		for _, p := range progs {
			if err := p.measure(ctx); err != nil {
				return false, err
			}
		}
	}
	for _, p := range progs {
		p.report(stdout, fi.Size())
	}
	pre := progs[0]
	if pre.summary != nil {
		fmt.Fprintf(stdout, "preprocess wrote %d HTTP and %d DNS connections (%.1f MB of HTTP data)\n",
			pre.summary.HTTP.Connections, pre.summary.DNS.Connections, float64(pre.summary.HTTP.DataBytes)/1e6)
	}
	ok := true
	for _, p := range progs {
		if !p.limited {
			continue
		}
		peak := p.peakRSS()
		verdict, relation := "ok", "is under"
		if peak > o.limit {
			ok, verdict, relation = false, "FAIL", "exceeds"
		}
		fmt.Fprintf(stdout, "memcheck: %s: %s: peak RSS %.1f MB %s the limit of %.1f MB\n",
			verdict, p.name, float64(peak)/1e6, relation, float64(o.limit)/1e6)
	}
	return ok, nil
}

// warm reads the file once so that every run finds it in the page cache.
func warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// program is one command measured several times.
type program struct {
	name    string
	args    []string
	limited bool // its peak RSS must stay under -limit
	runs    []runner.Measurement
	summary *struct {
		HTTP, DNS struct {
			Connections int64 `json:"connections"`
			DataBytes   int64 `json:"data_bytes"`
		}
	}
}

func (p *program) measure(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, p.args[0], p.args[1:]...)
	out, err := os.CreateTemp("", "memcheck-out-")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var errb strings.Builder
	cmd.Stdout, cmd.Stderr = out, &errb
	m := runner.Exec(cmd, -1)
	if !m.OK() {
		return fmt.Errorf("%s: %v: %s", p.name, m.Err, strings.TrimSpace(errb.String()))
	}
	p.runs = append(p.runs, m)
	if _, err := out.Seek(0, io.SeekStart); err == nil && strings.HasPrefix(p.name, "run-benchmark") {
		json.NewDecoder(out).Decode(&p.summary)
	}
	return nil
}

func (p *program) peakRSS() int64 {
	var peak int64
	for _, m := range p.runs {
		peak = max(peak, m.MaxRSS)
	}
	return peak
}

// report prints the median wall time, the throughput it gives, the
// throughput per CPU second (user + system, which varies less on a shared
// machine) and the peak RSS over all runs.
func (p *program) report(w io.Writer, size int64) {
	walls := make([]time.Duration, len(p.runs))
	cpus := make([]time.Duration, len(p.runs))
	for i, m := range p.runs {
		walls[i], cpus[i] = m.Wall, m.User+m.Sys
	}
	wall, cpu := median(walls), median(cpus)
	fmt.Fprintf(w, "%-26s median of %d: %6.2f s wall %7.1f MB/s   %6.2f s CPU %7.1f MB/s per CPU second   peak RSS %6.1f MB\n",
		p.name, len(p.runs), wall.Seconds(), float64(size)/1e6/wall.Seconds(),
		cpu.Seconds(), float64(size)/1e6/cpu.Seconds(), float64(p.peakRSS())/1e6)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/runner"
)

const runAbout = `
Run every variant -n times (3 by default) and print Spicy's table: the user
CPU time of each run in seconds, then the records in each log the variant
wrote. For each protocol P (-p http,dns) the variants are:

  P-static       ./benchmark/P-static -U -F DIR/spicy-P.dat     (replay, native parsers)
  P-opt          ./benchmark/P-opt -U -F DIR/spicy-P.dat        (PGO build)
  P-static-std   ./benchmark/P-static -U --parsers std -F ...   (standard parsers)
  P-analyze      ./benchmark/analyze-static -r DIR/spicy-P.pcap -o LOGDIR --parsers native
  P-analyze-opt  the same with ./benchmark/analyze-opt
  P-analyze-std  the same with --parsers std (net/http, miekg/dns)
  P-tshark       tshark -n -r DIR/spicy-P.pcap -Y FILTER -T fields -e FIELD
                 when tshark is installed, printing one line per record of
                 P's log, the way Zeek counts them: per HTTP request (the
                 method of each request in a frame matching http.request),
                 or per DNS query plus per reply tshark could not match to a
                 query (frames matching dns.flags.response == 0 ||
                 (dns.flags.response == 1 && !dns.response_to)); tshark
                 shows no HTTP message that lost bytes to the capture

DIR is -t (spicy-P.{dat,pcap} made by "run-benchmark preprocess"), the
binaries come from "run-benchmark build" into -d. Variants whose binary or
data is missing are skipped with a warning.

These rows come from a built-in variants file; --variants-file FILE (or
WORK/variants.toml when it exists, unless --variants-file none) adds
rows of your own, replaces rows of the same name, or drops rows
(drop = true): a Go implementation registered from your module (built by
"run-benchmark build --variants-file FILE" as P-NAME-static, P-NAME-opt
and P-analyze-NAME), or any program, such as Zeek, spicy-driver or
Suricata, from a command template with {dat}, {pcap}, {logdir} and
{workdir}, its records counted from Zeek's TSV or JSON logs, Suricata's
eve.json or its standard output. A program not installed, or whose check
command fails, is one warning and its rows are skipped; a malformed file
is an error naming its line and key before anything runs. Every key is in
the README, "Benchmark your own parser"; examples/peers.toml and
examples/tools.toml are examples.

Times are the user time of each child process as the kernel accounts it
(rusage), not the output of time(1); system time, wall time and peak RSS are
in --json. Replay binaries only parse while timed, as spicy-driver does;
one more, untimed run with --log-dir writes the logs that are counted
(--timed-logs makes every timed run write them instead). The analyzer and
tshark write their logs in every run.

The variants run round-robin (--interleave, the default): run 1 of each,
then run 2 of each, and so on, so that a change in the machine's load hits
every variant alike; the table is printed when all runs are done.
--interleave=false runs each variant's runs in a row, printing each as it
ends. --min-time 0.5s makes every run last at least that much user time:
an untimed calibration run executes each variant until their user time
adds up to it, and each run is then as many executions in a row as take a
tenth more than that (whole processes, start-up included); a run of a few
clock ticks cannot be resolved, and a warning says when a median is below
0.5 s.

After the table comes the statistics section: per protocol, each variant's
median CPU time (user+system) per execution and MB per CPU second, and its
ratio to the reference variant (--reference, P-static by default) with a
95 % confidence interval and the p-value of a Mann-Whitney U test, the
test benchstat uses ("faster" or "slower" when p < 0.05, "~" otherwise).
Fewer than 4 runs a side give no 95 % interval ("too few runs"). Runs far
from the others (modified z-score above 14.8, as hyperfine flags them) are
warned about.

After the statistics, the agreement section compares, per protocol and log,
each variant's log with the reference's record by record and field by
field (as "run-benchmark diff" does): the reference is the first variant
of the protocol that ran and wrote the log (P-static for P.log,
P-analyze for conn.log), or with --reference-logs DIR the log another
tool wrote on the same trace (Zeek's conn.log, http.log, dns.log; TSV or
JSON, with or without the # headers, or zeek-cut projections). One line
per variant and log, e.g.
  http-static-std  agree  99.4 %  (12 differ: response_body_len 9, uri 3; 2 missing)
tshark's one line per record is compared on what it gives (HTTP's
methods; for DNS, the number of records).

Left in WORK/output: NAME.cmd (command lines), NAME.stdout and NAME.stderr
of the last run, NAME.failed.stderr of the last failed run, NAME/ with
the logs of the last run, and NAME.diff with the variant's comparisons
(counts per field, the first differing records side by side).

--json writes every run (user, system and wall time, peak RSS, bytes and
throughput, log counts, the child's own -U line), the statistics, the
agreement, each binary's build settings, the source commit and the
machine; its schema is
versioned ("schema" field) and documented field by field in
internal/runner/report.go ("go doc ./internal/runner Report" in the source
tree). --format gobench prints one Go benchmark line per run, named
BenchmarkRun/proto=P/variant=V (ns/op is wall time; user-ns/op, sys-ns/op,
cpu-ns/op, MB/s, maxrss-B, per execution), so that "benchstat old.txt
new.txt" compares two runs and "benchstat -col /variant new.txt" the
variants of one. --markdown writes the table and the statistics as
Markdown; --svg a chart on a log scale (--svg-unit seconds, mbps or ratio).
"-" writes any of them to standard output, the table then going to
standard error. These files are created before the first run, so a path
that cannot be written fails at once.

Warnings on standard error say what to do about missing binaries or data,
debug builds (-race, -gcflags=-N -l, -cover), binaries older than the
source, a busy machine, runs too short to time, outlying runs, and variants
of a protocol that disagree on a log's count (after the table, once counts
are known).

Exit status: 0 when every variant ran, 1 when one failed (the table is
still printed; <fail> marks the run), when nothing could run or none of
the built variants could (tshark alone), or when the table or a file
could not be written; 2 on a usage error.

Examples:
  run-benchmark -t my-data run
  run-benchmark -t my-data run -p http --variants 'http-static,http-opt' -n 10 --warmup 1 --cpu 1
  run-benchmark -t my-data run --format gobench > new.txt   # then: benchstat old.txt new.txt
  run-benchmark -t my-data run --json run.json --svg run.svg --markdown run.md
  run-benchmark -t my-data run -n 10 --min-time 0.5s --reference P-opt
  run-benchmark -t my-data run --format gobench > run.txt   # then: benchstat -col /variant run.txt
  run-benchmark -t my-data run -p http --reference-logs zeek-logs/   # hold every variant to Zeek
  run-benchmark -t my-data run --variants-file examples/tools.toml   # Zeek, spicy-driver, Suricata too
`

func runRun(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "", runAbout, stdout, stderr)
	o := runOptions{}
	fs.StringVarP(&o.traceDir, "trace-dir", "t", g.traceDir, "directory holding spicy-{http,dns}.{pcap,dat} (from preprocess)")
	fs.StringVarP(&o.workDir, "work-dir", "d", g.workDir, "directory with the built binaries; output goes to its output/")
	fs.StringVarP(&o.srcDir, "source", "b", g.srcDir, "wirebench source tree, to warn about binaries older than it (default: found)")
	fs.StringSliceVarP(&o.protocols, "protocols", "p", runner.Protocols(), "protocols to run, comma-separated")
	fs.StringSliceVar(&o.variants, "variants", nil, "run only the variants matching these comma-separated `patterns` (e.g. '*-opt,http-static')")
	fs.IntVarP(&o.runs, "runs", "n", 3, "timed runs per variant")
	fs.IntVar(&o.tsharkRuns, "tshark-runs", 0, "timed runs of the tshark variants (default: -n); tshark takes far longer and is a reference only")
	fs.IntVar(&o.warmup, "warmup", 0, "untimed runs per variant before the timed ones (warm the page cache)")
	fs.IntVar(&o.cpu, "cpu", -1, "pin every run to this `CPU` (Linux: the child inherits the affinity; -1 does not pin)")
	fs.BoolVar(&o.timedLogs, "timed-logs", false, "replay binaries write their logs in every timed run, as the analyzer does")
	fs.StringVar(&o.tshark, "tshark", "", "tshark `program` for the P-tshark variants (default: tshark on PATH; \"none\" leaves them out)")
	fs.StringVar(&o.format, "format", "table", "standard output: table, or gobench (Go benchmark lines for benchstat; the table goes to standard error)")
	fs.StringVar(&o.referenceLogs, "reference-logs", "", "compare every variant's logs with the conn.log, http.log and dns.log another tool (Zeek) wrote on the same trace into `DIR`")
	fs.DurationVar(&o.minTime, "min-time", 0, "make each run last at least this much user time (e.g. 0.5s): a calibration run sets how many executions in a row a run is (0: one)")
	fs.BoolVar(&o.interleave, "interleave", true, "run the variants round-robin, one run of each in turn (--interleave=false: each variant's runs in a row)")
	fs.StringVar(&o.reference, "reference", runner.DefaultReference, "compare the variants of each protocol against this `variant` in the statistics (P stands for the protocol)")
	fs.StringVar(&o.jsonFile, "json", "", "also write every run, the statistics, the agreement, the build settings and the machine as JSON to `FILE` (- for standard output; schema "+runner.ReportSchema+")")
	fs.StringVar(&o.svgFile, "svg", "", "also draw the median time per variant as an SVG chart into `FILE` (- for standard output)")
	fs.StringVar(&o.svgUnit, "svg-unit", "seconds", "what the SVG shows: seconds (log scale), mbps (MB per CPU second) or ratio (to the reference)")
	fs.StringVar(&o.markdownFile, "markdown", "", "also write the table and the statistics as Markdown to `FILE` (- for standard output)")
	fs.BoolVar(&o.list, "list", false, "list the variants and their commands and exit, running nothing")
	variantsFile := variantsFileFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.validate(fs); err != nil {
		return err
	}
	f, err := loadVariantsFile(*variantsFile, o.workDir, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	o.file = f
	return o.run(stdout, stderr)
}

type runOptions struct {
	traceDir, workDir, srcDir string
	protocols, variants       []string
	runs, warmup, cpu         int
	tsharkRuns                int
	minTime                   time.Duration
	timedLogs, list           bool
	interleave                bool
	tshark, format, reference string
	jsonFile, svgFile         string
	referenceLogs             string
	svgUnit, markdownFile     string
	file                      *runner.VariantsFile // --variants-file
}

func (o *runOptions) validate(fs *pflag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: run takes no arguments, got %q (global flags such as -t go before \"run\" or are given as flags of run)", errUsage, fs.Args())
	}
	for _, p := range o.protocols {
		if !slices.Contains(runner.Protocols(), p) {
			return fmt.Errorf("%w: unknown protocol %q (known: %s)", errUsage, p, strings.Join(runner.Protocols(), ", "))
		}
	}
	if o.runs < 1 {
		return fmt.Errorf("%w: -n %d: want at least one run", errUsage, o.runs)
	}
	if o.warmup < 0 {
		return fmt.Errorf("%w: --warmup %d: want 0 or more", errUsage, o.warmup)
	}
	if o.cpu >= 0 {
		if err := runner.CheckCPU(o.cpu); err != nil {
			return fmt.Errorf("%w: --cpu: %v", errUsage, err)
		}
	}
	if o.format != "table" && o.format != "gobench" {
		return fmt.Errorf("%w: --format %q: want table or gobench", errUsage, o.format)
	}
	if o.referenceLogs != "" {
		if fi, err := os.Stat(o.referenceLogs); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: --reference-logs %s: not a directory", errUsage, o.referenceLogs)
		}
	}
	if o.tsharkRuns < 0 {
		return fmt.Errorf("%w: --tshark-runs %d: want 0 (as -n) or more", errUsage, o.tsharkRuns)
	}
	if o.minTime < 0 {
		return fmt.Errorf("%w: --min-time %v: want 0 or more", errUsage, o.minTime)
	}
	if _, err := runner.ParseChartUnit(o.svgUnit); err != nil {
		return fmt.Errorf("%w: --svg-unit: %v", errUsage, err)
	}
	if fi, err := os.Stat(o.traceDir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%w: -t %s is a file: -t takes the directory preprocess writes its files into, e.g. "+
			"`run-benchmark preprocess -o %s.data %s` and then -t %s.data", errUsage, o.traceDir, o.traceDir, o.traceDir, o.traceDir)
	}
	// Standard output holds one thing: the table, gobench lines, or one of the files.
	var onStdout []string
	if o.format == "gobench" {
		onStdout = append(onStdout, "--format gobench")
	}
	for _, f := range []struct{ flag, file string }{{"--json", o.jsonFile}, {"--svg", o.svgFile}, {"--markdown", o.markdownFile}} {
		if f.file == "-" {
			onStdout = append(onStdout, f.flag+" -")
		}
	}
	if len(onStdout) > 1 {
		return fmt.Errorf("%w: %s all write to standard output; give files to all but one", errUsage, strings.Join(onStdout, " and "))
	}
	return nil
}

func (o *runOptions) variantConfig() runner.VariantConfig {
	cfg := runner.VariantConfig{TraceDir: o.traceDir, WorkDir: o.workDir, Protocols: o.protocols, File: o.file}
	switch o.tshark {
	case "none":
	case "":
		if path, err := exec.LookPath("tshark"); err == nil {
			cfg.TShark = path
		}
	default:
		cfg.TShark = o.tshark
	}
	return cfg
}

func (o *runOptions) run(stdout, stderr io.Writer) error {
	vcfg := o.variantConfig()
	vs, err := runner.Select(runner.Variants(vcfg), o.variants)
	if err != nil {
		return fmt.Errorf("%w: --variants: %v", errUsage, err)
	}
	if o.list {
		width := runner.NameWidth(runner.Names(vs))
		for _, v := range vs {
			fmt.Fprintf(stdout, "%*s  %s\n", width, v.Name, v.CommandLine(o.timedLogs || len(v.LogArgs) == 0))
		}
		return nil
	}
	// The output files are created (under temporary names) before the
	// first run, so that a path that cannot be written fails now.
	outs, err := o.openOutputs(stdout)
	if err != nil {
		return err
	}
	defer outs.discard()

	src, srcErr := sourceDir(o.srcDir)
	if srcErr != nil {
		src = ""
		fmt.Fprintf(stderr, "note: %v; binaries are not checked against the source\n", srcErr)
	}
	build := commandLine(o.workDir, "build")
	runnable, warns := runner.Check(vs, runner.CheckConfig{
		Source:            src,
		BuildCommand:      build,
		PreprocessCommand: "run-benchmark preprocess -o DIR TRACE",
	})
	machine := runner.ReadMachine()
	if w := runner.CheckBusy(machine, 500*time.Millisecond); w != nil {
		warns = append(warns, *w)
	}
	for _, w := range warns {
		fmt.Fprintln(stderr, w)
	}
	if len(runnable) == 0 {
		return fmt.Errorf("nothing to run: none of the %d variants has both its program and its data (see the warnings above)", len(vs))
	}
	if slices.ContainsFunc(vs, isBuilt) && !slices.ContainsFunc(runnable, isBuilt) {
		return fmt.Errorf("none of the variants built by `%s` ran, only %s: nothing to benchmark (see the warnings above)",
			build, strings.Join(runner.Names(runnable), ", "))
	}

	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	table := &errWriter{w: stdout}
	if o.format == "gobench" || outs.stdoutTaken() {
		table.w = stderr
	}
	outDir := vcfg.OutDir()
	show := progress(stderr, o.interleave)
	started := time.Now()
	results := runner.RunAll(ctx, runnable, runner.RunConfig{
		Runs: o.runs, TSharkRuns: o.tsharkRuns, Warmup: o.warmup, CPU: o.cpu, TimedLogs: o.timedLogs, OutDir: outDir, Table: table,
		MinTime: o.minTime, Interleave: o.interleave, Progress: show,
	})
	if show != nil {
		fmt.Fprint(stderr, "\r\033[K")
	}
	mismatches := runner.CountMismatches(results, outDir)
	for _, w := range mismatches {
		fmt.Fprintln(stderr, w)
	}
	warns = append(warns, mismatches...)
	sts := runner.Statistics(results, o.reference)
	fmt.Fprintln(table)
	runner.WriteStatistics(table, sts)
	statWarns := runner.StatWarnings(results, sts)
	for _, w := range statWarns {
		fmt.Fprintln(stderr, w)
	}
	warns = append(warns, statWarns...)

	errs := []error{table.err}
	agreement := runner.CompareLogs(results, runner.AgreementConfig{OutDir: outDir, ReferenceLogs: o.referenceLogs})
	if len(agreement) > 0 {
		fmt.Fprintln(table)
	}
	errs = append(errs, runner.WriteAgreement(table, agreement))
	if o.format == "gobench" {
		errs = append(errs, runner.WriteGoBench(stdout, machine, results))
	}
	settings := runner.ReportSettings{
		TraceDir: o.traceDir, WorkDir: o.workDir, Runs: o.runs, TSharkRuns: o.tsharkRuns, Warmup: o.warmup, TimedLogs: o.timedLogs,
		Interleave: o.interleave, MinTimeSeconds: o.minTime.Seconds(), Reference: o.reference,
	}
	if o.cpu >= 0 {
		settings.CPU = &o.cpu
	}
	if src != "" {
		if rev, err := runner.ReadRevision(ctx, src); err == nil {
			settings.Source = &rev
		}
	}
	errs = append(errs, outs.json.write(func(w io.Writer) error {
		report := runner.NewReport(started, machine, settings, runner.Binaries(results), results, sts, warns)
		report.Agreement = agreement
		return report.WriteJSON(w)
	}))
	errs = append(errs, outs.svg.write(func(w io.Writer) error {
		unit, _ := runner.ParseChartUnit(o.svgUnit)
		return runner.WriteSVG(w, results, sts, runner.ChartOptions{
			Unit: unit, Title: runner.ChartTitle(started, machine, o.traceDir, settings.Source),
		})
	}))
	errs = append(errs, outs.markdown.write(func(w io.Writer) error {
		return runner.WriteMarkdown(w, results, sts, max(o.runs, o.tsharkRuns))
	}))
	if ctx.Err() != nil {
		errs = append(errs, interrupted(ctx, errors.New("the table is incomplete")))
	}
	errs = append(errs, runner.Failures(results, outDir))
	return errors.Join(errs...)
}

func isBuilt(v runner.Variant) bool { return v.Built }

// progress returns a function that shows which run is going on while
// interleaving, when stderr is a terminal; nil otherwise (without
// interleaving, the table shows each run as it finishes).
func progress(stderr io.Writer, interleave bool) func(string, int, int) {
	if !interleave || !isTerminal(stderr) {
		return nil
	}
	return func(name string, run, runs int) {
		what := fmt.Sprintf("run %d of %d", run, runs)
		if run == 0 {
			what = "calibrating"
		}
		fmt.Fprintf(stderr, "\r\033[K%s: %s", name, what)
	}
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = fmt.Errorf("writing the table: %w", err)
	}
	return n, err
}

// runOutputs are the files run writes besides the table.
type runOutputs struct{ json, svg, markdown *outputFile }

func (o *runOptions) openOutputs(stdout io.Writer) (*runOutputs, error) {
	outs := &runOutputs{}
	for _, f := range []struct {
		flag, name string
		out        **outputFile
	}{{"--json", o.jsonFile, &outs.json}, {"--svg", o.svgFile, &outs.svg}, {"--markdown", o.markdownFile, &outs.markdown}} {
		of, err := openOutput(f.name, stdout)
		if err != nil {
			outs.discard()
			return nil, fmt.Errorf("%w: %s %s: %v", errUsage, f.flag, f.name, err)
		}
		*f.out = of
	}
	return outs, nil
}

func (r *runOutputs) stdoutTaken() bool {
	return r.json.isStdout() || r.svg.isStdout() || r.markdown.isStdout()
}

func (r *runOutputs) discard() {
	r.json.discard()
	r.svg.discard()
	r.markdown.discard()
}

// outputFile is a file written once the runs are done: standard output
// for "-", else a temporary file beside the named one, created at once
// and renamed to it when written. A nil outputFile writes nothing.
type outputFile struct {
	name   string
	stdout io.Writer
	device *os.File // a file that is no regular file, opened at once
	tmp    *os.File
}

func openOutput(name string, stdout io.Writer) (*outputFile, error) {
	switch name {
	case "":
		return nil, nil
	case "-":
		return &outputFile{name: "standard output", stdout: stdout}, nil
	}
	fi, err := os.Stat(name)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("is a directory")
	case err == nil && !fi.Mode().IsRegular():
		// A device or a pipe (/dev/stdout, a FIFO): written in place.
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &outputFile{name: name, device: f}, nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return nil, err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return &outputFile{name: name, tmp: tmp}, nil
}

func (f *outputFile) isStdout() bool { return f != nil && f.stdout != nil }

func (f *outputFile) write(fn func(io.Writer) error) error {
	if f == nil {
		return nil
	}
	if f.stdout != nil {
		if err := fn(f.stdout); err != nil {
			return fmt.Errorf("writing to %s: %w", f.name, err)
		}
		return nil
	}
	if f.device != nil {
		err := fn(f.device)
		if cerr := f.device.Close(); err == nil {
			err = cerr
		}
		f.device = nil
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.name, err)
		}
		return nil
	}
	err := fn(f.tmp)
	if cerr := f.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.tmp.Name(), f.name)
	}
	if err != nil {
		os.Remove(f.tmp.Name())
		return fmt.Errorf("writing %s: %w", f.name, err)
	}
	f.tmp = nil
	return nil
}

func (f *outputFile) discard() {
	if f != nil && f.device != nil {
		f.device.Close()
		f.device = nil
	}
	if f != nil && f.tmp != nil {
		f.tmp.Close()
		os.Remove(f.tmp.Name())
		f.tmp = nil
	}
}

// commandLine is how the user runs a command with the work directory they
// chose, for messages.
func commandLine(workDir, cmd string) string {
	if filepath.Clean(workDir) == "benchmark" {
		return "run-benchmark " + cmd
	}
	return fmt.Sprintf("run-benchmark -d %s %s", workDir, cmd)
}

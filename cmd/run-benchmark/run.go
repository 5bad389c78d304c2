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

Times are the user time of each child process as the kernel accounts it
(rusage), not the output of time(1); system time, wall time and peak RSS are
in --json. Replay binaries only parse while timed, as spicy-driver does;
one more, untimed run with --log-dir writes the logs that are counted
(--timed-logs makes every timed run write them instead). The analyzer and
tshark write their logs in every run.

After the table, the agreement section compares, per protocol and log,
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
throughput, log counts, the child's own -U line), each binary's build
settings, the machine and the agreement; its schema is versioned
("schema" field) and documented field by field in internal/runner/report.go
("go doc ./internal/runner Report" in the source tree). --format gobench
prints one Go benchmark line per run (ns/op is wall time; user-ns/op,
sys-ns/op, MB/s, maxrss-B), so that "benchstat old.txt new.txt" compares
two runs.

Warnings on standard error say what to do about missing binaries or data,
debug builds (-race, -gcflags=-N -l, -cover), binaries older than the
source, a busy machine, and variants of a protocol that disagree on a log's
count (after the table, once counts are known).

Exit status: 0 when every variant ran, 1 when one failed (the table is
still printed; <fail> marks the run) or nothing could run, 2 on a usage
error.

Examples:
  run-benchmark -t my-data run
  run-benchmark -t my-data run -p http --variants 'http-static,http-opt' -n 10 --warmup 1 --cpu 1
  run-benchmark -t my-data run --format gobench > new.txt   # then: benchstat old.txt new.txt
  run-benchmark -t my-data run --json run.json --svg run.svg
  run-benchmark -t my-data run -p http --reference-logs zeek-logs/   # hold every variant to Zeek
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
	fs.IntVar(&o.warmup, "warmup", 0, "untimed runs per variant before the timed ones (warm the page cache)")
	fs.IntVar(&o.cpu, "cpu", -1, "pin every run to this `CPU` (Linux: the child inherits the affinity; -1 does not pin)")
	fs.BoolVar(&o.timedLogs, "timed-logs", false, "replay binaries write their logs in every timed run, as the analyzer does")
	fs.StringVar(&o.tshark, "tshark", "", "tshark `program` for the P-tshark variants (default: tshark on PATH; \"none\" leaves them out)")
	fs.StringVar(&o.format, "format", "table", "standard output: table, or gobench (Go benchmark lines for benchstat; the table goes to standard error)")
	fs.StringVar(&o.jsonFile, "json", "", "also write every run, the build settings and the machine as JSON to `FILE` (schema "+runner.ReportSchema+")")
	fs.StringVar(&o.svgFile, "svg", "", "also draw the median user time per variant as an SVG bar chart into `FILE`")
	fs.StringVar(&o.referenceLogs, "reference-logs", "", "compare every variant's logs with the conn.log, http.log and dns.log another tool (Zeek) wrote on the same trace into `DIR`")
	fs.BoolVar(&o.list, "list", false, "list the variants and their commands and exit, running nothing")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.validate(fs); err != nil {
		return err
	}
	return o.run(stdout, stderr)
}

type runOptions struct {
	traceDir, workDir, srcDir string
	protocols, variants       []string
	runs, warmup, cpu         int
	timedLogs, list           bool
	tshark, format            string
	jsonFile, svgFile         string
	referenceLogs             string
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
	return nil
}

func (o *runOptions) variantConfig() runner.VariantConfig {
	cfg := runner.VariantConfig{TraceDir: o.traceDir, WorkDir: o.workDir, Protocols: o.protocols}
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

	src, srcErr := sourceDir(o.srcDir)
	if srcErr != nil {
		src = ""
		fmt.Fprintf(stderr, "note: %v; binaries are not checked against the source\n", srcErr)
	}
	runnable, warns := runner.Check(vs, runner.CheckConfig{
		Source:            src,
		BuildCommand:      commandLine(o.workDir, "build"),
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

	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	table := stdout
	if o.format == "gobench" {
		table = stderr
	}
	outDir := vcfg.OutDir()
	started := time.Now()
	results := runner.RunAll(ctx, runnable, runner.RunConfig{
		Runs: o.runs, Warmup: o.warmup, CPU: o.cpu, TimedLogs: o.timedLogs, OutDir: outDir, Table: table,
	})
	mismatches := runner.CountMismatches(results, outDir)
	for _, w := range mismatches {
		fmt.Fprintln(stderr, w)
	}
	warns = append(warns, mismatches...)
	agreement := runner.CompareLogs(results, runner.AgreementConfig{OutDir: outDir, ReferenceLogs: o.referenceLogs})
	if len(agreement) > 0 {
		fmt.Fprintln(table)
	}
	agreementErr := runner.WriteAgreement(table, agreement)

	errs := []error{agreementErr}
	if o.format == "gobench" {
		errs = append(errs, runner.WriteGoBench(stdout, machine, results))
	}
	if o.jsonFile != "" {
		var cpu *int
		if o.cpu >= 0 {
			cpu = &o.cpu
		}
		report := runner.NewReport(started, machine, runner.ReportSettings{
			TraceDir: o.traceDir, WorkDir: o.workDir, Runs: o.runs, Warmup: o.warmup, CPU: cpu, TimedLogs: o.timedLogs,
		}, runner.Binaries(results), results, warns)
		report.Agreement = agreement
		errs = append(errs, writeFile(o.jsonFile, report.WriteJSON))
	}
	if o.svgFile != "" {
		errs = append(errs, writeFile(o.svgFile, func(w io.Writer) error {
			return runner.WriteSVG(w, results, runner.ChartTitle(started, machine))
		}))
	}
	if ctx.Err() != nil {
		errs = append(errs, interrupted(ctx, errors.New("the table is incomplete")))
	}
	errs = append(errs, runner.Failures(results, outDir))
	return errors.Join(errs...)
}

// commandLine is how the user runs a command with the work directory they
// chose, for messages.
func commandLine(workDir, cmd string) string {
	if filepath.Clean(workDir) == "benchmark" {
		return "run-benchmark " + cmd
	}
	return fmt.Sprintf("run-benchmark -d %s %s", workDir, cmd)
}

// writeFile writes a file through fn, reporting errors with its name.
func writeFile(name string, fn func(io.Writer) error) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

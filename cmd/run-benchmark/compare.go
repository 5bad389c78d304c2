package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/runner"
)

const compareAbout = `
Answer "did my change make it slower?": build two source revisions in the
same modes, run the chosen variants of both on the same data, round-robin
(old, new, old, new, ...), and print per variant the median CPU time per
execution of each, the change with its 95 % confidence interval and the
p-value of a Mann-Whitney U test (as benchstat's). Exit status 1 when a
variant got slower by more than --fail-above percent with significance
(p < 0.05), when the two builds' logs hold different record counts, or
when a build or run failed: a regression gate for CI.

OLD and NEW are source directories (wirebench source trees) or git
revisions (commits, tags, branches) of the source tree (-b, or found as
for build), exported into temporary directories with git archive; NEW
defaults to the source tree as it is, uncommitted changes included. The
binaries go to WORK/compare/old and WORK/compare/new, the runs' output to
WORK/compare/output.

The variants are those of "run-benchmark run --help" built by
run-benchmark (tshark is the same program for both), --variants narrows
them. 10 runs a side by default: fewer than 4 give no 95 % interval, and
a 10 % slowdown needs about 10 on a busy machine (make statcheck checks
that). --min-time makes short runs several executions in a row, as for
run.

Exit status: 0 when nothing got slower by more than --fail-above; 1 when
something did, records differ, or a build or run failed; 2 on a usage
error; 130 or 143 when SIGINT or SIGTERM stopped it.

Examples:
  run-benchmark -t my-data compare HEAD~1               # the last commit against the working tree
  run-benchmark -t my-data compare main my-branch --fail-above 3
  run-benchmark -t my-data compare -p http --variants 'http-static,http-analyze' v1.0 .
  run-benchmark -t my-data compare ../wirebench-old ../wirebench-new
`

func runCompare(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", "OLD [NEW]", compareAbout, stdout, stderr)
	o := compareOptions{}
	fs.StringVarP(&o.traceDir, "trace-dir", "t", g.traceDir, "directory holding spicy-{http,dns}.{pcap,dat} (from preprocess)")
	fs.StringVarP(&o.workDir, "work-dir", "d", g.workDir, "work directory; the builds and runs go to its compare/")
	fs.StringVarP(&o.srcDir, "source", "b", g.srcDir, "wirebench source tree whose git revisions OLD and NEW name (default: found)")
	fs.StringSliceVarP(&o.protocols, "protocols", "p", runner.Protocols(), "protocols to run, comma-separated")
	fs.StringSliceVar(&o.variants, "variants", nil, "compare only the variants matching these comma-separated `patterns` (e.g. 'http-static,*-analyze')")
	fs.IntVarP(&o.runs, "runs", "n", 10, "timed runs per variant and build")
	fs.IntVar(&o.warmup, "warmup", 1, "untimed runs per variant and build before the timed ones")
	fs.DurationVar(&o.minTime, "min-time", 0, "make each run last at least this much user time (see run --help)")
	fs.IntVar(&o.cpu, "cpu", -1, "pin every run to this `CPU` (-1 does not pin)")
	fs.Float64Var(&o.failAbove, "fail-above", 5, "exit 1 when a variant got slower by more than this many `percent`, significantly")
	fs.StringVar(&o.goamd64, "goamd64", "auto", "GOAMD64 `level` of the opt builds of both: auto, v1, v2, v3 or v4")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch fs.NArg() {
	case 1:
		o.old, o.new = fs.Arg(0), ""
	case 2:
		o.old, o.new = fs.Arg(0), fs.Arg(1)
	default:
		return fmt.Errorf("%w: want OLD [NEW], got %d arguments", errUsage, fs.NArg())
	}
	if err := o.validate(); err != nil {
		return err
	}
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	return o.run(ctx, stdout, stderr)
}

type compareOptions struct {
	traceDir, workDir, srcDir string
	protocols, variants       []string
	runs, warmup, cpu         int
	minTime                   time.Duration
	failAbove                 float64
	goamd64, old, new         string
}

func (o *compareOptions) validate() error {
	for _, p := range o.protocols {
		if !slices.Contains(runner.Protocols(), p) {
			return fmt.Errorf("%w: unknown protocol %q (known: %s)", errUsage, p, strings.Join(runner.Protocols(), ", "))
		}
	}
	switch {
	case o.runs < 1:
		return fmt.Errorf("%w: -n %d: want at least one run", errUsage, o.runs)
	case o.warmup < 0 || o.minTime < 0:
		return fmt.Errorf("%w: --warmup and --min-time must not be negative", errUsage)
	case o.failAbove < 0:
		return fmt.Errorf("%w: --fail-above %g: want a percentage of 0 or more", errUsage, o.failAbove)
	}
	switch o.goamd64 {
	case "auto", "v1", "v2", "v3", "v4":
	default:
		return fmt.Errorf("%w: --goamd64 %q: want auto, v1, v2, v3 or v4", errUsage, o.goamd64)
	}
	if o.cpu >= 0 {
		if err := runner.CheckCPU(o.cpu); err != nil {
			return fmt.Errorf("%w: --cpu: %v", errUsage, err)
		}
	}
	if fi, err := os.Stat(o.traceDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: -t %s is not a directory: give the directory preprocess wrote", errUsage, o.traceDir)
	}
	return nil
}

func (o *compareOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	src, srcErr := sourceDir(o.srcDir)
	scratch, err := os.MkdirTemp("", "wirebench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	oldDir, oldName, err := sourceOf(ctx, o.old, src, srcErr, filepath.Join(scratch, "old"))
	if err != nil {
		return err
	}
	newDir, newName := src, "the working tree "+src
	if o.new != "" {
		newDir, newName, err = sourceOf(ctx, o.new, src, srcErr, filepath.Join(scratch, "new"))
	} else if srcErr != nil {
		err = srcErr
	}
	if err != nil {
		return err
	}

	amd64 := runner.ChooseGOAMD64(o.goamd64, os.Getenv("GOAMD64"))
	base := filepath.Join(o.workDir, "compare")
	builds := []struct{ name, src, work string }{{oldName, oldDir, filepath.Join(base, "old")}, {newName, newDir, filepath.Join(base, "new")}}
	var sets [2][]runner.Variant
	for i, b := range builds {
		fmt.Fprintf(stderr, "building %s into %s\n", b.name, b.work)
		built, err := runner.Build(ctx, runner.BuildConfig{Source: b.src, WorkDir: b.work, GoCmd: goCommand()}, amd64)
		if err != nil {
			runner.WriteBuildReport(stderr, built, amd64)
			return fmt.Errorf("building %s: %w", b.name, err)
		}
		vs, err := o.variantsOf(b.work)
		if err != nil {
			return err
		}
		sets[i] = vs
	}
	runnable, warns := runner.Check(sets[1], runner.CheckConfig{
		BuildCommand: "run-benchmark compare", PreprocessCommand: "run-benchmark preprocess -o DIR TRACE",
	})
	for _, w := range warns {
		fmt.Fprintln(stderr, w)
	}
	if len(runnable) == 0 {
		return fmt.Errorf("nothing to compare: no variant has both its program and its data (see the warnings above)")
	}
	old := slices.DeleteFunc(sets[0], func(v runner.Variant) bool {
		return !slices.ContainsFunc(runnable, func(r runner.Variant) bool { return r.Name == v.Name })
	})
	if w := runner.CheckBusy(runner.ReadMachine(), 500*time.Millisecond); w != nil {
		fmt.Fprintln(stderr, w)
	}
	fmt.Fprintf(stderr, "running %d variants of both builds, %d runs each, round-robin\n", len(runnable), o.runs)
	outDir := filepath.Join(base, "output")
	oldRes, newRes := runner.RunComparison(ctx, old, runnable, runner.RunConfig{
		Runs: o.runs, Warmup: o.warmup, CPU: o.cpu, MinTime: o.minTime, OutDir: outDir, Progress: progress(stderr, true),
	})
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	changes := runner.Changes(oldRes, newRes)
	fmt.Fprintf(stdout, "old: %s\nnew: %s\n\n", oldName, newName)
	errs := []error{runner.WriteChanges(stdout, changes, o.failAbove)}
	if ctx.Err() != nil {
		return errors.Join(append(errs, interrupted(ctx, errors.New("the comparison is incomplete")))...)
	}
	errs = append(errs, runner.Failures(append(oldRes, newRes...), outDir))
	var slower, differ []string
	for _, c := range changes {
		if c.Regressed(o.failAbove) {
			slower = append(slower, fmt.Sprintf("%s (%+.1f%%, p=%.3f)", c.Variant, c.Delta(), c.Comparison.Test.P))
		}
		if c.CountsDiffer {
			differ = append(differ, c.Variant)
		}
	}
	if slower != nil {
		errs = append(errs, fmt.Errorf("slower by more than %g%%: %s", o.failAbove, strings.Join(slower, ", ")))
	}
	if differ != nil {
		errs = append(errs, fmt.Errorf("the two builds' logs hold different records: %s (their logs are in %s)", strings.Join(differ, ", "), outDir))
	}
	return errors.Join(errs...)
}

// variantsOf returns the variants to compare of a build in work: the built
// ones (not tshark) matching --variants.
func (o *compareOptions) variantsOf(work string) ([]runner.Variant, error) {
	vs := slices.DeleteFunc(runner.Variants(runner.VariantConfig{TraceDir: o.traceDir, WorkDir: work, Protocols: o.protocols}),
		func(v runner.Variant) bool { return !v.Built })
	vs, err := runner.Select(vs, o.variants)
	if err != nil {
		return nil, fmt.Errorf("%w: --variants: %v", errUsage, err)
	}
	return vs, nil
}

// sourceOf returns the source tree arg names: a directory, or a git
// revision of the repository at repo exported into scratch; and how to
// name it.
func sourceOf(ctx context.Context, arg, repo string, repoErr error, scratch string) (dir, name string, err error) {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return "", "", err
		}
		if err := runner.CheckSource(abs); err != nil {
			return "", "", fmt.Errorf("%w: %v", errUsage, err)
		}
		return abs, "the source tree " + abs, nil
	}
	if repoErr != nil {
		return "", "", fmt.Errorf("%w: %q is not a directory, and no source tree to find it in as a git revision: %v", errUsage, arg, repoErr)
	}
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return "", "", err
	}
	commit, err := runner.ExportRevision(ctx, repo, arg, scratch)
	if err != nil {
		return "", "", fmt.Errorf("%w: %v", errUsage, err)
	}
	return scratch, fmt.Sprintf("%s (commit %s)", arg, commit[:min(12, len(commit))]), nil
}

package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/rusage"
)

// RunConfig says how often and how to run each variant.
type RunConfig struct {
	Runs int // timed runs per variant; 3 when 0
	// TSharkRuns, when positive, is the timed runs of tshark variants,
	// which take far longer than the others and serve as a reference
	// only.
	TSharkRuns int
	Warmup     int // runs before the timed ones, whose results are discarded
	CPU        int // pin every child to this CPU; -1 (or any negative) not to pin
	// TimedLogs makes replay binaries write their logs in every timed run,
	// as the analyzer does. Otherwise they only parse while timed (what
	// Spicy's spicy-driver -U measures), and one more, untimed run writes
	// the logs that are counted.
	TimedLogs bool
	OutDir    string    // where NAME.{cmd,stdout,stderr} go (the variants' LogDirs lie below it)
	Table     io.Writer // the table is printed here; nil prints nothing
	// MinTime, when positive, makes every run of a variant last at least
	// this much user time (what the table shows; CPU time is more): an
	// untimed calibration run executes the variant until their user time
	// adds up to MinTime, and each run is then as many executions in a
	// row as take a tenth more than MinTime (Result.Passes), at most
	// MaxPasses. The unit of a run stays whole processes, start-up and
	// all.
	MinTime time.Duration
	// Interleave runs the variants round-robin, one run of each in turn,
	// so that drifts in the machine's load hit every variant alike. The
	// table is then printed once every run is done.
	Interleave bool
	// Progress, when set, is told about each run as it starts.
	Progress func(variant string, run, runs int)
}

// MaxPasses bounds the executions in a run that RunConfig.MinTime asks for.
const MaxPasses = 1000

func (c RunConfig) runs() int {
	if c.Runs <= 0 {
		return 3
	}
	return c.Runs
}

// runsOf returns the timed runs of v.
func (c RunConfig) runsOf(v Variant) int {
	if v.Kind == TShark && c.TSharkRuns > 0 {
		return c.TSharkRuns
	}
	return c.runs()
}

// Result is what running one variant gave.
type Result struct {
	Variant Variant
	// Runs holds the warm-up runs (Warmup set) and then the timed runs.
	Runs []Run
	// CountRun is the untimed run that wrote the logs when the timed runs
	// did not (replay binaries without RunConfig.TimedLogs).
	CountRun *Run
	// Counts are the records of the logs the last logging run left.
	Counts []Count
	// Passes is how many executions in a row make up one run: 1, or what
	// RunConfig.MinTime asked for.
	Passes int
	// Err is set when the output directory could not be prepared. Failed
	// runs, including runs whose logs could not be counted, are in Runs.
	Err error
}

// Run is one execution of a variant.
type Run struct {
	Measurement
	Command []string
	Warmup  bool // an untimed run: a warm-up or the calibration run
	// Calibration marks the run that measured the variant for
	// RunConfig.MinTime.
	Calibration bool
	// Passes is how many executions this run is; its times, bytes and
	// counts add up theirs (the counts are those of the last).
	Passes int
	Logged bool    // the run wrote the variant's logs
	Counts []Count // records of the logs this run wrote (when Logged)
	// Reported holds the key=value pairs of the "# user_time=..." resource
	// line the child printed on standard error (-U), if any.
	Reported map[string]string
	Bytes    int64  // input bytes processed; -1 when unknown
	BytesSrc string // "reported" (the child's bytes= pair) or "input" (the input file's size)
	// Stderr is the file holding the run's standard error: NAME.stderr,
	// which the next run overwrites, or for a failed run a copy kept as
	// NAME.failed.stderr.
	Stderr string
}

// Timed returns the runs that count: not the warm-up runs.
func (r Result) Timed() []Run {
	var runs []Run
	for _, run := range r.Runs {
		if !run.Warmup {
			runs = append(runs, run)
		}
	}
	return runs
}

// Failed reports whether any run of the variant failed, or its output
// could not be handled.
func (r Result) Failed() bool {
	if r.Err != nil || r.CountRun != nil && !r.CountRun.OK() {
		return true
	}
	return slices.ContainsFunc(r.Runs, func(run Run) bool { return !run.OK() })
}

// RunAll runs every variant: the calibration run (RunConfig.MinTime), the
// warm-up runs, the timed runs, and the counting run when needed; one
// variant after the other, or round-robin with RunConfig.Interleave. It
// prints the table to cfg.Table, a row as each variant finishes (all rows
// at the end when interleaving), a blank line after each protocol and the
// footer at the end. It stops early, returning what it has, when ctx is
// cancelled.
func RunAll(ctx context.Context, vs []Variant, cfg RunConfig) []Result {
	tw := &tableWriter{w: cfg.Table, runs: cfg.runs(), width: NameWidth(Names(vs))}
	if cfg.TSharkRuns > 0 && cfg.TSharkRuns != cfg.runs() && slices.ContainsFunc(vs, func(v Variant) bool { return v.Kind == TShark }) {
		tw.tsharkRuns = cfg.TSharkRuns
	}
	states := make([]*variantRun, len(vs))
	for i, v := range vs {
		states[i] = newVariantRun(v, cfg)
	}
	total := cfg.Warmup + cfg.runs()
	if cfg.TSharkRuns > cfg.runs() {
		total = cfg.Warmup + cfg.TSharkRuns
	}
	if cfg.Interleave {
		for _, s := range states {
			s.calibrate(ctx)
		}
		for i := 0; i < total; i++ {
			for _, s := range states {
				s.step(ctx, i)
			}
		}
	}
	var results []Result
	for _, s := range states {
		if ctx.Err() != nil && len(s.res.Runs) == 0 {
			break
		}
		tw.startRow(s.res.Variant)
		if cfg.Interleave {
			for _, run := range s.res.Timed() {
				tw.cell(run)
			}
		} else {
			s.calibrate(ctx)
			for i := 0; i < total; i++ {
				if run, ok := s.step(ctx, i); ok && !run.Warmup {
					tw.cell(run)
				}
			}
		}
		s.finish(ctx)
		tw.endRow(s.res.Counts)
		results = append(results, s.res)
	}
	tw.finish()
	return results
}

// variantRun is one variant's runs in progress.
type variantRun struct {
	res      Result
	cfg      RunConfig
	countRun bool // an untimed run writes the logs after the timed ones
}

func newVariantRun(v Variant, cfg RunConfig) *variantRun {
	s := &variantRun{res: Result{Variant: v, Passes: 1}, cfg: cfg, countRun: !cfg.TimedLogs && len(v.LogArgs) > 0}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		s.res.Err = err
		return s
	}
	cmdText := v.CommandLine(!s.countRun) + "\n"
	if s.countRun {
		cmdText += "# the timed runs above write no logs; this untimed run then writes the logs that are counted:\n" +
			v.CommandLine(true) + "\n"
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, v.Name+".cmd"), []byte(cmdText), 0o644); err != nil {
		s.res.Err = err
	}
	return s
}

// calibrate sets the passes of a run when RunConfig.MinTime asks for it:
// it executes the variant until the executions' user time adds up to
// MinTime (a sum over many, as one short execution's user time is a few
// clock ticks), and makes each run as many executions as last a tenth
// more than MinTime at the user time per execution it measured, for
// timed runs that go faster than this first one.
func (s *variantRun) calibrate(ctx context.Context) {
	if s.cfg.MinTime <= 0 || s.res.Err != nil || ctx.Err() != nil {
		return
	}
	if s.cfg.Progress != nil {
		s.cfg.Progress(s.res.Variant.Name, 0, s.cfg.runs())
	}
	run := execVariant(ctx, s.res.Variant, s.cfg, !s.countRun)
	for run.OK() && run.User < s.cfg.MinTime && run.Passes < MaxPasses && ctx.Err() == nil {
		run = addRun(run, execVariant(ctx, s.res.Variant, s.cfg, !s.countRun))
	}
	run.Warmup, run.Calibration = true, true
	s.res.Runs = append(s.res.Runs, run)
	if run.OK() && run.User > 0 {
		// Executions for a tenth more than MinTime, at the user time
		// per execution the calibration measured.
		perExec := run.User / time.Duration(run.Passes)
		want := s.cfg.MinTime + s.cfg.MinTime/10
		s.res.Passes = int(min((want+perExec-1)/perExec, MaxPasses))
	}
}

// step makes run i of the variant: a warm-up run for i < Warmup, a timed
// one after.
func (s *variantRun) step(ctx context.Context, i int) (Run, bool) {
	if s.res.Err != nil || ctx.Err() != nil || i >= s.cfg.Warmup+s.cfg.runsOf(s.res.Variant) {
		return Run{}, false
	}
	warm := i < s.cfg.Warmup
	if s.cfg.Progress != nil && !warm {
		s.cfg.Progress(s.res.Variant.Name, i-s.cfg.Warmup+1, s.cfg.runsOf(s.res.Variant))
	}
	run := execRun(ctx, s.res.Variant, s.cfg, !s.countRun, s.res.Passes)
	run.Warmup = warm
	s.res.Runs = append(s.res.Runs, run)
	return run, true
}

// finish makes the counting run and settles the counts.
func (s *variantRun) finish(ctx context.Context) {
	res := &s.res
	if res.Err != nil {
		return
	}
	if s.countRun && ctx.Err() == nil {
		run := execVariant(ctx, res.Variant, s.cfg, true)
		res.CountRun = &run
	}
	// The counts are those of the last run that wrote logs.
	for i := len(res.Runs) - 1; i >= 0 && res.Counts == nil; i-- {
		res.Counts = res.Runs[i].Counts
	}
	if res.CountRun != nil {
		res.Counts = res.CountRun.Counts
	}
	if res.Counts == nil {
		// Nothing logged (every run failed): show the expected logs as absent.
		for _, name := range res.Variant.Logs {
			res.Counts = append(res.Counts, Count{Log: name})
		}
	}
}

// execRun makes one run of passes executions in a row, adding up their
// times and bytes; it stops at the first that fails.
func execRun(ctx context.Context, v Variant, cfg RunConfig, logs bool, passes int) Run {
	run := execVariant(ctx, v, cfg, logs)
	for p := 1; p < passes && run.OK() && ctx.Err() == nil; p++ {
		run = addRun(run, execVariant(ctx, v, cfg, logs))
	}
	return run
}

// addRun returns the run of run's executions and next's: next with the
// times, bytes and passes of both added up.
func addRun(run, next Run) Run {
	next.User += run.User
	next.Sys += run.Sys
	next.Wall += run.Wall
	next.MaxRSS = max(next.MaxRSS, run.MaxRSS)
	next.TimeKnown = next.TimeKnown && run.TimeKnown
	if next.Bytes >= 0 && run.Bytes >= 0 {
		next.Bytes += run.Bytes
	}
	next.Passes = run.Passes + next.Passes
	return next
}

// execVariant runs a variant once with fresh output files and a fresh log
// directory, then counts the logs it wrote.
func execVariant(ctx context.Context, v Variant, cfg RunConfig, logs bool) Run {
	run := Run{Command: v.Command(logs), Logged: logs, Passes: 1}
	fail := func(err error) Run {
		run.ExitCode, run.Err = -1, err
		return run
	}
	if err := os.RemoveAll(v.LogDir); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(v.LogDir, 0o755); err != nil {
		return fail(err)
	}
	stdoutPath := filepath.Join(cfg.OutDir, v.Name+".stdout")
	if v.StdoutLog != "" {
		stdoutPath = filepath.Join(v.LogDir, v.StdoutLog)
	}
	stdout, err := os.Create(stdoutPath)
	if err != nil {
		return fail(err)
	}
	defer stdout.Close()
	stderrPath := filepath.Join(cfg.OutDir, v.Name+".stderr")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return fail(err)
	}
	defer stderr.Close()

	cmd := exec.CommandContext(ctx, run.Command[0], run.Command[1:]...)
	cmd.Dir = v.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	run.Measurement = Exec(cmd, cfg.CPU)
	run.Stderr = stderrPath
	if run.Err != nil {
		if tail := lastLine(stderrPath); tail != "" {
			run.Err = fmt.Errorf("%w: %s", run.Err, tail)
		}
		kept := filepath.Join(cfg.OutDir, v.Name+".failed.stderr")
		if err := copyFile(stderrPath, kept); err == nil {
			run.Stderr = kept
		}
	}
	run.Reported = reportedUsage(stderrPath)
	run.Bytes, run.BytesSrc = -1, ""
	if b, err := strconv.ParseInt(run.Reported["bytes"], 10, 64); err == nil {
		run.Bytes, run.BytesSrc = b, "reported"
	} else if fi, err := os.Stat(v.Input); err == nil {
		run.Bytes, run.BytesSrc = fi.Size(), "input"
	}
	if logs && run.OK() {
		counts, err := countLogs(v)
		if err != nil {
			return fail(fmt.Errorf("counting the logs of %s: %w", v.Name, err))
		}
		run.Counts = counts
	}
	return run
}

// tailSize bounds how much of a child's standard error is read back.
const tailSize = 64 << 10

func readTail(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailSize {
		f.Seek(fi.Size()-tailSize, io.SeekStart)
	}
	data, _ := io.ReadAll(io.LimitReader(f, tailSize))
	return data
}

// lastLine returns the last non-empty line of a file that is not a
// resource line (which a replay binary prints after its error), for
// error messages.
func lastLine(path string) string {
	lines := bytes.Split(bytes.TrimSpace(readTail(path)), []byte("\n"))
	line := ""
	for i := len(lines) - 1; i >= 0 && line == ""; i-- {
		if l := strings.TrimSpace(string(lines[i])); rusage.ParseLine(l) == nil {
			line = l
		}
	}
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return line
}

// reportedUsage returns the key=value pairs of the last resource line
// ("# user_time=... sys_time=... memory=...", FORMATS.md section 2) in a
// child's standard error, or nil.
func reportedUsage(stderrPath string) map[string]string {
	var found map[string]string
	sc := bufio.NewScanner(bytes.NewReader(readTail(stderrPath)))
	sc.Buffer(nil, tailSize)
	for sc.Scan() {
		if kv := rusage.ParseLine(sc.Text()); kv != nil {
			found = kv
		}
	}
	return found
}

// ErrFailed is wrapped by the error RunAll's callers return when a variant
// failed.
var ErrFailed = errors.New("variant failed")

// Failures describes the failed variants of results, one line each with the
// first failure's reason, or returns nil when none failed.
func Failures(results []Result, outDir string) error {
	var lines []string
	for _, r := range results {
		if !r.Failed() {
			continue
		}
		reason, stderr := "", filepath.Join(outDir, r.Variant.Name+".stderr")
		if r.Err != nil {
			reason = r.Err.Error()
		}
		warm, timed := 0, 0
		for _, run := range r.Runs {
			kind := ""
			if run.Warmup {
				warm++
				kind = "warm-up run " + strconv.Itoa(warm)
			} else {
				timed++
				kind = "run " + strconv.Itoa(timed)
			}
			if reason == "" && !run.OK() {
				reason, stderr = kind+": "+run.Err.Error(), run.Stderr
			}
		}
		if reason == "" && r.CountRun != nil && !r.CountRun.OK() {
			reason, stderr = "the counting run: "+r.CountRun.Err.Error(), r.CountRun.Stderr
		}
		lines = append(lines, fmt.Sprintf("%s: %s (see %s)", r.Variant.Name, reason, stderr))
	}
	if lines == nil {
		return nil
	}
	return fmt.Errorf("%w: %d of %d variants failed:\n  %s", ErrFailed, len(lines), len(results), strings.Join(lines, "\n  "))
}

func copyFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, 0o644)
}

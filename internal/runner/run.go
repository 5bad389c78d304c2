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

	"github.com/wirebench/wirebench/internal/rusage"
)

// RunConfig says how often and how to run each variant.
type RunConfig struct {
	Runs   int // timed runs per variant; 3 when 0
	Warmup int // runs before the timed ones, whose results are discarded
	CPU    int // pin every child to this CPU; -1 (or any negative) not to pin
	// TimedLogs makes replay binaries write their logs in every timed run,
	// as the analyzer does. Otherwise they only parse while timed (what
	// Spicy's spicy-driver -U measures), and one more, untimed run writes
	// the logs that are counted.
	TimedLogs bool
	OutDir    string    // where NAME.{cmd,stdout,stderr} go (the variants' LogDirs lie below it)
	Table     io.Writer // the table is printed here as runs finish; nil prints nothing
}

func (c RunConfig) runs() int {
	if c.Runs <= 0 {
		return 3
	}
	return c.Runs
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
	// Err is set when the output directory could not be prepared. Failed
	// runs, including runs whose logs could not be counted, are in Runs.
	Err error
}

// Run is one execution of a variant.
type Run struct {
	Measurement
	Command []string
	Warmup  bool
	Logged  bool    // the run wrote the variant's logs
	Counts  []Count // records of the logs this run wrote (when Logged)
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

// RunAll runs every variant, in order: the warm-up runs, the timed runs,
// and the counting run when needed. It prints the table to cfg.Table as
// runs finish, a blank line after each protocol and the footer at the end.
// It stops early, returning what it has, when ctx is cancelled.
func RunAll(ctx context.Context, vs []Variant, cfg RunConfig) []Result {
	tw := &tableWriter{w: cfg.Table, runs: cfg.runs(), width: NameWidth(Names(vs))}
	var results []Result
	for _, v := range vs {
		if ctx.Err() != nil {
			break
		}
		tw.startRow(v)
		res := runVariant(ctx, v, cfg, tw)
		tw.endRow(res.Counts)
		results = append(results, res)
	}
	tw.finish()
	return results
}

func runVariant(ctx context.Context, v Variant, cfg RunConfig, tw *tableWriter) Result {
	res := Result{Variant: v}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		res.Err = err
		return res
	}
	countRun := !cfg.TimedLogs && len(v.LogArgs) > 0
	cmdText := v.CommandLine(!countRun) + "\n"
	if countRun {
		cmdText += "# the timed runs above write no logs; this untimed run then writes the logs that are counted:\n" +
			v.CommandLine(true) + "\n"
	}
	if err := os.WriteFile(filepath.Join(cfg.OutDir, v.Name+".cmd"), []byte(cmdText), 0o644); err != nil {
		res.Err = err
		return res
	}
	total := cfg.Warmup + cfg.runs()
	for i := 0; i < total && ctx.Err() == nil; i++ {
		run := execVariant(ctx, v, cfg, !countRun)
		run.Warmup = i < cfg.Warmup
		if !run.Warmup {
			tw.cell(run)
		}
		res.Runs = append(res.Runs, run)
	}
	if countRun && ctx.Err() == nil {
		run := execVariant(ctx, v, cfg, true)
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
		for _, name := range v.Logs {
			res.Counts = append(res.Counts, Count{Log: name})
		}
	}
	return res
}

// execVariant runs a variant once with fresh output files and a fresh log
// directory, then counts the logs it wrote.
func execVariant(ctx context.Context, v Variant, cfg RunConfig, logs bool) Run {
	run := Run{Command: v.Command(logs), Logged: logs}
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

// lastLine returns the last non-empty line of a file, for error messages.
func lastLine(path string) string {
	lines := bytes.Split(bytes.TrimSpace(readTail(path)), []byte("\n"))
	line := strings.TrimSpace(string(lines[len(lines)-1]))
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

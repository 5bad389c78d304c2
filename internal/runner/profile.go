package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// ProfileConfig says how to profile a variant.
type ProfileConfig struct {
	OutDir    string // the profile goes to OutDir/NAME.pprof
	GoCmd     string // the go command, for go tool pprof; "go" when empty
	NodeCount int    // functions to list; 20 when 0
	CPU       int    // pin the run to this CPU; -1 not to pin
}

// Profile runs a variant once with its CPU profile flag, leaving the
// profile in OutDir/NAME.pprof, then prints to w the functions that took
// the most time ("go tool pprof -top -nodecount=N BINARY PROFILE"). It
// returns the profile's path and the run's measurement.
func Profile(ctx context.Context, v Variant, cfg ProfileConfig, w io.Writer) (string, Measurement, error) {
	if v.ProfileFlag == "" {
		return "", Measurement{}, fmt.Errorf("%s cannot write a Go CPU profile (%s is not a wirebench binary); use perf record instead", v.Name, filepath.Base(v.Binary))
	}
	for _, f := range []string{v.Binary, v.Input} {
		if !isFile(f) {
			return "", Measurement{}, fmt.Errorf("%s does not exist", f)
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return "", Measurement{}, err
	}
	prof := filepath.Join(cfg.OutDir, v.Name+".pprof")
	// NAME.profile.{stdout,stderr} keep the timed runs' files; the logs
	// (the analyzer's) are rewritten with the same records.
	pv := v
	pv.Name = v.Name + ".profile"
	pv.Args = append(append([]string(nil), v.Args...), v.ProfileFlag, prof)
	run := execVariant(ctx, pv, RunConfig{OutDir: cfg.OutDir, CPU: cfg.CPU}, len(v.LogArgs) == 0)
	if !run.OK() {
		return prof, run.Measurement, fmt.Errorf("%s: %v (see %s)", shellJoin(run.Command), run.Err, run.Stderr)
	}
	fmt.Fprintf(w, "%s: user %.2fs, sys %.2fs, wall %.2fs, max RSS %.1f MB\nprofile: %s\n\n",
		v.Name, run.User.Seconds(), run.Sys.Seconds(), run.Wall.Seconds(), float64(run.MaxRSS)/1e6, prof)

	n := cfg.NodeCount
	if n <= 0 {
		n = 20
	}
	gocmd := cfg.GoCmd
	if gocmd == "" {
		gocmd = "go"
	}
	cmd := exec.CommandContext(ctx, gocmd, "tool", "pprof", "-top", "-nodecount="+strconv.Itoa(n), v.Binary, prof)
	cmd.Stdout = w
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return prof, run.Measurement, fmt.Errorf("%s: %v\n%s", shellJoin(cmd.Args), err, stderr)
	}
	return prof, run.Measurement, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }

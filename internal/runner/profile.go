package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// ProfileConfig says how to profile a variant.
type ProfileConfig struct {
	OutDir    string // the profile goes to OutDir/NAME.pprof
	GoCmd     string // the go command, for go tool pprof; "go" when empty
	NodeCount int    // functions to list; 20 when 0
	CPU       int    // pin the runs to this CPU; -1 not to pin
	// MinCPU is the CPU time (user+system) the profiled runs add up to:
	// the variant runs again until they do, at most MaxRuns times, and
	// the profiles of its runs are merged into one. DefaultPGOMinCPU (some
	// 300 samples at the profiler's 100 Hz) and DefaultProfileMaxRuns
	// when zero.
	MinCPU  time.Duration
	MaxRuns int
}

// DefaultProfileMaxRuns bounds the runs of Profile: a replay binary that
// takes 0.05 s needs 60 runs for 3 s.
const DefaultProfileMaxRuns = 200

// ProfileResult is what Profile did.
type ProfileResult struct {
	Path string        // the merged profile
	Runs int           // how often the variant ran
	CPU  time.Duration // user+system time of those runs
}

// Samples is about how many samples the profile holds: the CPU profiler
// samples 100 times per CPU second.
func (r ProfileResult) Samples() int { return int(r.CPU / (10 * time.Millisecond)) }

// Profile runs a variant with its CPU profile flag until its runs have
// used cfg.MinCPU, merges their profiles into OutDir/NAME.pprof, then
// prints to w the functions that took the most time ("go tool pprof -top
// -nodecount=N BINARY PROFILE"). One run of a fast binary gives a few
// samples, too few to tell its hot functions apart.
func Profile(ctx context.Context, v Variant, cfg ProfileConfig, w io.Writer) (ProfileResult, error) {
	if v.ProfileFlag == "" {
		return ProfileResult{}, fmt.Errorf("%s cannot write a Go CPU profile (%s is not a wirebench binary); use perf record instead", v.Name, filepath.Base(v.Binary))
	}
	for _, f := range []string{v.Binary, v.Input} {
		if !isFile(f) {
			return ProfileResult{}, fmt.Errorf("%s does not exist", f)
		}
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return ProfileResult{}, err
	}
	minCPU, maxRuns := cfg.MinCPU, cfg.MaxRuns
	if minCPU <= 0 {
		minCPU = DefaultPGOMinCPU
	}
	if maxRuns <= 0 {
		maxRuns = DefaultProfileMaxRuns
	}
	scratch, err := os.MkdirTemp("", "wirebench-profile-")
	if err != nil {
		return ProfileResult{}, err
	}
	defer os.RemoveAll(scratch)

	res := ProfileResult{Path: filepath.Join(cfg.OutDir, v.Name+".pprof")}
	var c PGOCommand
	profiles, err := profileRepeatedly(ctx, v, scratch, cfg.CPU, minCPU, maxRuns, &c)
	res.Runs, res.CPU = c.Runs, c.CPU
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err := mergeProfiles(ctx, cfg.GoCmd, profiles, res.Path); err != nil {
		return res, err
	}
	fmt.Fprintf(w, "%s: %d runs, %.2fs of CPU (about %d samples)\nprofile: %s\n\n", v.Name, res.Runs, res.CPU.Seconds(), res.Samples(), res.Path)

	n := cfg.NodeCount
	if n <= 0 {
		n = 20
	}
	gocmd := cfg.GoCmd
	if gocmd == "" {
		gocmd = "go"
	}
	cmd := exec.CommandContext(ctx, gocmd, "tool", "pprof", "-top", "-nodecount="+strconv.Itoa(n), v.Binary, res.Path)
	cmd.Stdout = w
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return res, fmt.Errorf("%s: %v\n%s", shellJoin(cmd.Args), err, stderr)
	}
	return res, nil
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

package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// PGOConfig says where GeneratePGO finds the static binaries and the data
// to profile them on.
type PGOConfig struct {
	Source  string   // the source tree; profiles go to Source/PACKAGE/default.pgo
	WorkDir string   // holds the static binaries (run-benchmark build)
	DataDir string   // holds spicy-{http,dns}.{dat,pcap} (run-benchmark preprocess)
	Targets []Target // DefaultTargets() when nil
	GoCmd   string   // "go" when empty
	CPU     int      // pin the profiled runs; -1 not to pin
	// MinCPU is the CPU time (user+system) each profiled command runs
	// for: it is run again until its runs add up to MinCPU, at most
	// MaxRuns times. DefaultPGOMinCPU and DefaultPGOMaxRuns when zero.
	MinCPU  time.Duration
	MaxRuns int
}

// Defaults of PGOConfig. The CPU profiler samples 100 times a second, so
// 3 s give each command some 300 samples: enough for the compiler to tell
// the hot call sites (those holding 99% of the samples' weight) from the
// rest, where one run of a fast replay binary over a few hundred MB gives
// a few dozen.
const (
	DefaultPGOMinCPU  = 3 * time.Second
	DefaultPGOMaxRuns = 10
)

// minPGOCPU is the CPU time below which a profile is too sparse to guide
// the compiler well; GeneratePGO still writes it, with a warning.
const minPGOCPU = time.Second

// PGOCommand is one profiled command: a static binary on one input.
type PGOCommand struct {
	Variant string        // the variant it runs as, e.g. "http-static"
	Command string        // the command line of its first run
	Runs    int           // how often it ran
	CPU     time.Duration // user+system time of those runs
	Skipped string        // why it did not run; empty when it ran
}

// PGOResult is what GeneratePGO did.
type PGOResult struct {
	// Files are the default.pgo files written, all with the same profile;
	// none when no command ran or one failed.
	Files    []string
	Commands []PGOCommand
}

// CPU returns the CPU time of every profiled run.
func (r PGOResult) CPU() time.Duration {
	var d time.Duration
	for _, c := range r.Commands {
		d += c.CPU
	}
	return d
}

// GeneratePGO regenerates the PGO profiles of the main packages that have
// an Opt target from the user's data. It runs their static binaries with
// --cpuprofile and the native parsers, as the variants P-static and
// P-analyze run them (replay binaries on spicy-P.dat, the analyzer on
// every spicy-P.pcap), each command until it has used MinCPU of CPU time.
// It merges every profile into one with "go tool pprof -proto" and writes
// that as the default.pgo of each of those packages, where "go build
// -pgo=auto" finds it.
//
// The binaries get one profile because they share most of their code
// (the parsers, the batch reader, the flow engine): the analyzer's
// profile covers the replay binaries' hot paths too. Identical profiles
// also let Build compile the packages they share once for all opt
// binaries instead of once per binary: a third of the work from a cold
// build cache.
//
// Commands whose binary or input is missing are skipped. When every
// command is skipped or one fails, no profile is written and the old ones
// stay.
func GeneratePGO(ctx context.Context, cfg PGOConfig, log io.Writer) (PGOResult, error) {
	targets := cfg.Targets
	if targets == nil {
		targets = DefaultTargets()
	}
	minCPU, maxRuns := cfg.MinCPU, cfg.MaxRuns
	if minCPU <= 0 {
		minCPU = DefaultPGOMinCPU
	}
	if maxRuns <= 0 {
		maxRuns = DefaultPGOMaxRuns
	}
	scratch, err := os.MkdirTemp("", "wirebench-pgo-")
	if err != nil {
		return PGOResult{}, err
	}
	defer os.RemoveAll(scratch)

	var res PGOResult
	var packages, profiles, errs []string
	vs := Variants(VariantConfig{TraceDir: cfg.DataDir, WorkDir: cfg.WorkDir})
	for _, opt := range targets {
		if opt.Mode != Opt {
			continue
		}
		packages = append(packages, opt.Package)
		i := slices.IndexFunc(targets, func(t Target) bool { return t.Mode == Static && t.Package == opt.Package })
		if i < 0 {
			continue
		}
		binary := filepath.Join(cfg.WorkDir, targets[i].Name)
		for _, v := range vs {
			if v.Binary != binary || v.Parsers != "native" {
				continue
			}
			c := PGOCommand{Variant: v.Name, Command: profiledVariant(v, scratch, 1).CommandLine(false)}
			switch {
			case !isFile(binary):
				c.Skipped = binary + " does not exist (build the static binaries first)"
			case !isFile(v.Input):
				c.Skipped = v.Input + " does not exist"
			}
			if c.Skipped != "" {
				res.Commands = append(res.Commands, c)
				continue
			}
			fmt.Fprintf(log, "profiling %s\n", c.Command)
			profs, err := profileRepeatedly(ctx, v, scratch, cfg.CPU, minCPU, maxRuns, &c)
			profiles = append(profiles, profs...)
			if err != nil {
				errs = append(errs, err.Error())
			}
			res.Commands = append(res.Commands, c)
		}
	}
	switch {
	case errs != nil:
		return res, fmt.Errorf("making PGO profiles (the old ones are kept):\n  %s", strings.Join(errs, "\n  "))
	case ctx.Err() != nil:
		return res, ctx.Err()
	case len(profiles) == 0:
		return res, fmt.Errorf("making PGO profiles: nothing to profile in %s (run-benchmark preprocess writes spicy-{http,dns}.{dat,pcap}); the old profiles are kept", cfg.DataDir)
	}
	merged := filepath.Join(scratch, "merged.pgo")
	if err := mergeProfiles(ctx, cfg.GoCmd, profiles, merged); err != nil {
		return res, err
	}
	for _, pkg := range packages {
		dst := filepath.Join(cfg.Source, pkg, "default.pgo")
		if err := installFile(merged, dst); err != nil {
			return res, fmt.Errorf("installing %s: %w", dst, err)
		}
		res.Files = append(res.Files, dst)
	}
	return res, nil
}

// profileRepeatedly runs a variant with its profile flag until its runs
// have used minCPU, at most maxRuns times, and returns the profiles
// written. Logs of profiled runs go to scratch, keeping WORK/output as
// the last "run" left it.
func profileRepeatedly(ctx context.Context, v Variant, scratch string, cpu int, minCPU time.Duration, maxRuns int, c *PGOCommand) ([]string, error) {
	var profiles []string
	for c.Runs < maxRuns && c.CPU < minCPU && ctx.Err() == nil {
		pv := profiledVariant(v, scratch, c.Runs+1)
		run := execVariant(ctx, pv, RunConfig{OutDir: scratch, CPU: cpu}, false)
		if !run.OK() {
			return profiles, fmt.Errorf("%s: %v", shellJoin(run.Command), run.Err)
		}
		c.Runs++
		c.CPU += run.User + run.Sys
		profiles = append(profiles, pv.Args[len(pv.Args)-1])
	}
	return profiles, nil
}

// profiledVariant is run n of v with its profile flag, writing the
// profile and the logs into scratch.
func profiledVariant(v Variant, scratch string, n int) Variant {
	pv := v
	pv.Name = fmt.Sprintf("pgo-%s-%d", v.Name, n)
	pv.LogDir = filepath.Join(scratch, pv.Name)
	pv.Args = append(replaceArg(v.Args, v.LogDir, pv.LogDir), v.ProfileFlag, filepath.Join(scratch, pv.Name+".pprof"))
	return pv
}

// WritePGOReport prints what GeneratePGO did.
func WritePGOReport(w io.Writer, r PGOResult) {
	for _, c := range r.Commands {
		if c.Skipped != "" {
			fmt.Fprintf(w, "  not profiled: %s: %s\n", c.Variant, c.Skipped)
			continue
		}
		fmt.Fprintf(w, "  %-15s %2d run(s), %5.1fs of CPU\n", c.Variant, c.Runs, c.CPU.Seconds())
		if c.CPU < minPGOCPU {
			fmt.Fprintf(w, "    warning: that is little CPU time for a representative profile; profile a bigger trace\n")
		}
	}
	if len(r.Files) > 0 {
		fmt.Fprintf(w, "PGO profile from %.1fs of CPU written to %s\n", r.CPU().Seconds(), strings.Join(r.Files, ", "))
	}
}

// mergeProfiles merges CPU profiles into one with "go tool pprof -proto"
// and writes it to dst.
func mergeProfiles(ctx context.Context, gocmd string, profiles []string, dst string) error {
	if gocmd == "" {
		gocmd = "go"
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, gocmd, append([]string{"tool", "pprof", "-proto"}, profiles...)...)
	cmd.Stdout = f
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	err = cmd.Run()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("merging the profiles: %s: %v\n%s", shellJoin(cmd.Args), err, stderr)
	}
	return nil
}

// installFile copies src to dst atomically (through a temporary file in
// dst's directory), readable by everyone.
func installFile(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func replaceArg(args []string, old, new string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == old {
			out[i] = new
		}
	}
	return out
}

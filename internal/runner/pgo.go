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
}

// PGOProfile is the outcome for one main package.
type PGOProfile struct {
	Package string        // e.g. "cmd/http-parser"
	File    string        // the default.pgo written; empty when none was
	Runs    []string      // the command lines profiled
	CPU     time.Duration // user+system time the profiled runs took
	Skipped string        // why no profile was written
}

// minPGOCPU is the CPU time below which a profile is too sparse to guide
// the compiler well; GeneratePGO still writes it, with a warning.
const minPGOCPU = time.Second

// GeneratePGO regenerates the PGO profiles of the main packages that have
// an Opt target: it runs each package's static binary with --cpuprofile on
// the user's data, with the native parsers, as the variants P-static and
// P-analyze do (replay binaries on spicy-P.dat, the analyzer on every
// spicy-P.pcap), merges the profiles of a package with "go tool pprof
// -proto" and writes Source/PACKAGE/default.pgo, where "go build
// -pgo=auto" finds it. Packages without a static binary or without data
// are skipped, keeping their profile.
func GeneratePGO(ctx context.Context, cfg PGOConfig, log io.Writer) ([]PGOProfile, error) {
	targets := cfg.Targets
	if targets == nil {
		targets = DefaultTargets()
	}
	scratch, err := os.MkdirTemp("", "wirebench-pgo-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	vs := Variants(VariantConfig{TraceDir: cfg.DataDir, WorkDir: cfg.WorkDir})
	var out []PGOProfile
	var errs []string
	for _, opt := range targets {
		if opt.Mode != Opt {
			continue
		}
		p := PGOProfile{Package: opt.Package}
		i := slices.IndexFunc(targets, func(t Target) bool { return t.Mode == Static && t.Package == opt.Package })
		if i < 0 {
			p.Skipped = "no static target builds it"
			out = append(out, p)
			continue
		}
		binary := filepath.Join(cfg.WorkDir, targets[i].Name)
		var profiles []string
		for _, v := range vs {
			if v.Binary != binary || v.Parsers != "native" {
				continue
			}
			if !isFile(v.Input) {
				continue
			}
			// Logs of profiled runs go to scratch, keeping WORK/output as the last run left it.
			pv := v
			pv.Name = "pgo-" + v.Name
			pv.LogDir = filepath.Join(scratch, pv.Name)
			pv.Args = replaceArg(v.Args, v.LogDir, pv.LogDir)
			prof := filepath.Join(scratch, pv.Name+".pprof")
			pv.Args = append(pv.Args, v.ProfileFlag, prof)
			fmt.Fprintf(log, "profiling %s\n", pv.CommandLine(false))
			run := execVariant(ctx, pv, RunConfig{OutDir: scratch, CPU: cfg.CPU}, false)
			p.Runs = append(p.Runs, shellJoin(run.Command))
			if !run.OK() {
				errs = append(errs, fmt.Sprintf("%s: %v", shellJoin(run.Command), run.Err))
				continue
			}
			p.CPU += run.User + run.Sys
			profiles = append(profiles, prof)
		}
		switch {
		case !isFile(binary):
			p.Skipped = binary + " does not exist (build the static binaries first)"
		case len(p.Runs) == 0:
			p.Skipped = "no input for it in " + cfg.DataDir
		case len(profiles) == 0:
			p.Skipped = "every profiled run failed"
		}
		if p.Skipped != "" {
			out = append(out, p)
			continue
		}
		dst := filepath.Join(cfg.Source, opt.Package, "default.pgo")
		if err := mergeProfiles(ctx, cfg.GoCmd, profiles, dst); err != nil {
			errs = append(errs, err.Error())
			p.Skipped = "merging failed"
		} else {
			p.File = dst
		}
		out = append(out, p)
	}
	if errs != nil {
		return out, fmt.Errorf("making PGO profiles:\n  %s", strings.Join(errs, "\n  "))
	}
	return out, nil
}

// WritePGOReport prints what GeneratePGO did.
func WritePGOReport(w io.Writer, ps []PGOProfile) {
	for _, p := range ps {
		switch {
		case p.File != "":
			fmt.Fprintf(w, "PGO profile %s from %d run(s), %.1fs of CPU\n", p.File, len(p.Runs), p.CPU.Seconds())
			if p.CPU < minPGOCPU {
				fmt.Fprintf(w, "  warning: that is little CPU time for a representative profile; profile a bigger trace\n")
			}
		default:
			fmt.Fprintf(w, "no new PGO profile for %s: %s\n", p.Package, p.Skipped)
		}
	}
}

// mergeProfiles merges CPU profiles into one with "go tool pprof -proto"
// and installs it at dst atomically.
func mergeProfiles(ctx context.Context, gocmd string, profiles []string, dst string) error {
	if gocmd == "" {
		gocmd = "go"
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".default.pgo-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, gocmd, append([]string{"tool", "pprof", "-proto"}, profiles...)...)
	cmd.Stdout = tmp
	stderr := &tailBuffer{max: 4096}
	cmd.Stderr = stderr
	err = cmd.Run()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", shellJoin(cmd.Args), err, stderr)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
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

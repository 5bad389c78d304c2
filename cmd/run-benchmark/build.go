package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/runner"
)

const buildAbout = `
Build the replay binaries and the analyzer into the work directory (-d,
default ./benchmark), each in two modes:

  static  CGO_ENABLED=0 go build -trimpath -pgo=off
          -> http-static, dns-static, analyze-static
  opt     the same with profile-guided optimisation (the default.pgo
          committed next to each main package, e.g.
          cmd/http-parser/default.pgo) and GOAMD64=v3 when this CPU has it
          -> http-opt, dns-opt, analyze-opt

Both keep symbols and frame pointers, so perf and pprof show Go function
names. The modes are built concurrently. "go version -m BINARY" shows how
a binary was built; "run-benchmark run" checks it. When the default.pgo
files are the same profile (as --pgo-from writes them), one -pgo=FILE
builds every opt binary, compiling the packages they share once; otherwise
-pgo=auto gives each binary its own profile.

--pgo-from DIR remakes the profile from your own data first: it builds the
static binaries, runs them with --cpuprofile and the native parsers on
DIR/spicy-{http,dns}.dat (replay) and DIR/spicy-{http,dns}.pcap
(analyzer), each command until it has used 3 s of CPU (at most 10 times),
merges the profiles with "go tool pprof -proto" into one profile, writes it
as the default.pgo of each opt binary's package in the source tree (review
and commit them, or "git checkout" to go back), then builds the opt
binaries with it. Use data like the traffic you measure: a trace of a few
hundred MB (run-benchmark gen-trace makes one) profiles well.

--variants-file FILE (or WORK/variants.toml when it exists) also builds
the Go entries of a variants file: for an entry NAME naming a package
that registers an implementation (a local module directory, or a module
version), it generates mains around replay.Main and the analyzer in a
module of their own and builds them in both modes as above: P-NAME-static,
P-NAME-opt and analyze-NAME-static. A build error names the entry and
shows the compiler's message. See "Benchmark your own parser" in the
README.

The source tree is -b, or found from where run-benchmark was built or
installed, or from the working directory.

Examples:
  run-benchmark build
  run-benchmark -d /tmp/bench build --pgo-from my-data
  run-benchmark build --variants-file examples/peers.toml
`

func runBuild(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("build", "", buildAbout, stdout, stderr)
	workDir := fs.StringP("work-dir", "d", g.workDir, "directory for the built binaries")
	srcDir := fs.StringP("source", "b", g.srcDir, "wirebench source tree (default: found from the binary or the working directory)")
	pgoFrom := fs.String("pgo-from", "", "remake the PGO profiles from the data in `DIR` (spicy-*.{dat,pcap}) before building the opt binaries")
	goamd64 := fs.String("goamd64", "auto", "GOAMD64 `level` of opt builds: auto (v3 when the CPU has it), v1, v2, v3 or v4")
	variantsFile := variantsFileFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: build takes no arguments, got %q", errUsage, fs.Args())
	}
	switch *goamd64 {
	case "auto", "v1", "v2", "v3", "v4":
	default:
		return fmt.Errorf("%w: --goamd64 %q: want auto, v1, v2, v3 or v4", errUsage, *goamd64)
	}
	if *pgoFrom != "" {
		if fi, err := os.Stat(*pgoFrom); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: --pgo-from %s is not a directory", errUsage, *pgoFrom)
		}
	}
	file, err := loadVariantsFile(*variantsFile, *workDir, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	src, err := sourceDir(*srcDir)
	if err != nil {
		return err
	}
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()

	amd64 := runner.ChooseGOAMD64(*goamd64, os.Getenv("GOAMD64"))
	cfg := runner.BuildConfig{Source: src, WorkDir: *workDir, GoCmd: goCommand(), Variants: file}
	start := time.Now()
	fmt.Fprintf(stdout, "building from %s into %s\n", src, *workDir)
	var built []runner.Built
	if *pgoFrom == "" {
		built, err = runner.Build(ctx, cfg, amd64)
		runner.WriteBuildReport(stdout, built, amd64)
	} else {
		built, err = buildWithNewProfiles(ctx, cfg, amd64, *pgoFrom, stdout)
	}
	if err != nil {
		return interrupted(ctx, err)
	}
	fmt.Fprintf(stdout, "built %d binaries in %.1fs; next: run-benchmark -t DIR run\n", len(built), time.Since(start).Seconds())
	return nil
}

// buildWithNewProfiles builds the static binaries, profiles them on the
// data in dataDir to remake the default.pgo files, then builds the opt
// binaries.
func buildWithNewProfiles(ctx context.Context, cfg runner.BuildConfig, amd64 runner.GOAMD64Choice, dataDir string, stdout io.Writer) ([]runner.Built, error) {
	var static, opt []runner.Target
	for _, t := range runner.DefaultTargets() {
		if t.Mode == runner.Static {
			static = append(static, t)
		} else {
			opt = append(opt, t)
		}
	}
	// A target that fails (say, a package missing from the source tree)
	// does not stop the others: its error is reported at the end.
	var errs []error
	cfg.Targets = static
	built, err := runner.Build(ctx, cfg, amd64)
	runner.WriteBuildReport(stdout, built, amd64)
	errs = append(errs, err)
	if ctx.Err() != nil || len(built) == 0 {
		return built, errors.Join(errs...)
	}
	profiles, err := runner.GeneratePGO(ctx, runner.PGOConfig{
		Source: cfg.Source, WorkDir: cfg.WorkDir, DataDir: dataDir, GoCmd: cfg.GoCmd, CPU: -1,
	}, stdout)
	runner.WritePGOReport(stdout, profiles)
	errs = append(errs, err)
	if ctx.Err() != nil {
		return built, errors.Join(errs...)
	}
	cfg.Targets = opt
	more, err := runner.Build(ctx, cfg, amd64)
	runner.WriteBuildReport(stdout, more, amd64)
	return append(built, more...), errors.Join(append(errs, err)...)
}

// sourceDir returns the source tree: flag when given, else the tree that
// holds the running binary (installed in SRC/bin by the wrapper), the tree
// it was built from (builds without -trimpath record their source paths),
// or the tree around the working directory.
func sourceDir(flag string) (string, error) {
	if flag != "" {
		abs, err := filepath.Abs(flag)
		if err != nil {
			return "", err
		}
		return abs, runner.CheckSource(abs)
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		if exe, err := filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	return runner.FindSource(starts...)
}

// goCommand is the go command builds use: $GO when set (as in the
// Makefile), else go from PATH.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

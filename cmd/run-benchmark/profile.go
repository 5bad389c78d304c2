package main

import (
	"context"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/runner"
)

const profileAbout = `
Run one variant (see "run-benchmark run --help" for the names) with
--cpuprofile until its runs add up to --min-cpu of CPU time (3 s, some 300
samples of the profiler's 100 a second: one run of a fast variant gives a
handful), merge their profiles into WORK/output/VARIANT.pprof and print the
functions that took the most CPU time (go tool pprof -top). Explore further
with:

  go tool pprof -http=: ./benchmark/http-opt ./benchmark/output/http-opt.pprof

The binaries keep their symbols and frame pointers, so perf works on them
too (add -e cpu-clock on a virtual machine without hardware counters):

  perf record -g ./benchmark/http-opt -U -F my-data/spicy-http.dat
  perf report --stdio      # Children: with callees; --no-children: Self

Examples:
  run-benchmark -t my-data profile http-opt
  run-benchmark -t my-data profile --nodecount 40 dns-analyze
`

func runProfile(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("profile", "VARIANT", profileAbout, stdout, stderr)
	traceDir := fs.StringP("trace-dir", "t", g.traceDir, "directory holding spicy-{http,dns}.{pcap,dat} (from preprocess)")
	workDir := fs.StringP("work-dir", "d", g.workDir, "directory with the built binaries; the profile goes to its output/")
	nodes := fs.Int("nodecount", 20, "functions to list")
	cpu := fs.Int("cpu", -1, "pin the runs to this `CPU` (-1 does not pin)")
	minCPU := fs.Duration("min-cpu", runner.DefaultPGOMinCPU, "run the variant again until its runs add up to this much CPU time (100 samples a second)")
	maxRuns := fs.Int("max-runs", runner.DefaultProfileMaxRuns, "run the variant at most this often")
	variantsFile := variantsFileFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: want one variant name, e.g. http-opt (see run-benchmark run --list)", errUsage)
	}
	if *minCPU < 0 || *maxRuns < 1 {
		return fmt.Errorf("%w: --min-cpu %v --max-runs %d: want a duration of 0 or more and at least one run", errUsage, *minCPU, *maxRuns)
	}
	if *nodes < 1 {
		return fmt.Errorf("%w: --nodecount %d: want at least 1", errUsage, *nodes)
	}
	if *cpu >= 0 {
		if err := runner.CheckCPU(*cpu); err != nil {
			return fmt.Errorf("%w: --cpu: %v", errUsage, err)
		}
	}
	file, err := loadVariantsFile(*variantsFile, *workDir, stderr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	vcfg := runner.VariantConfig{TraceDir: *traceDir, WorkDir: *workDir, File: file}
	v, err := runner.Find(runner.Variants(vcfg), fs.Arg(0))
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	_, err = runner.Profile(ctx, v, runner.ProfileConfig{
		OutDir: vcfg.OutDir(), GoCmd: goCommand(), NodeCount: *nodes, CPU: *cpu, MinCPU: *minCPU, MaxRuns: *maxRuns,
	}, stdout)
	return interrupted(ctx, err)
}

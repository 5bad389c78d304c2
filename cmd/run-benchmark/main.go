// Command run-benchmark prepares packet traces for parser benchmarks, builds
// the parser binaries and runs them, the way Spicy's run-benchmark script
// does for Spicy, as one self-contained tool.
//
// Usage:
//
//	run-benchmark [global flags] COMMAND [flags] [args]
//
// Run "run-benchmark --help" for the list of commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/runner"
)

// globals are the flags that come before the command, as in Spicy's script.
type globals struct {
	traceDir string // -t: directory with spicy-*.{pcap,dat}
	workDir  string // -d: where binaries are built and output is left
	srcDir   string // -b: the wirebench source tree
}

// command is one subcommand of run-benchmark.
type command struct {
	name    string
	summary string
	run     func(g *globals, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"preprocess", "split a trace into HTTP and DNS sub-traces and record batch files", runPreprocess},
		{"build", "build the parser and analyzer binaries into the work directory", runBuild},
		{"run", "run every variant and print the timing table and its statistics", runRun},
		{"compare", "build two source revisions, run both round-robin and flag what got slower", runCompare},
		{"profile", "run one variant with --cpuprofile and print its top functions", runProfile},
		{"gen-trace", "generate a synthetic HTTP/DNS trace with ground truth", runGenTrace},
		{"diff", "compare two sets of logs record by record and field by field", runDiff},
		{"merge", "merge the logs, batch files and pcaps of the shards of a trace (--shard K/N)", runMerge},
	}
}

// errUsage marks errors caused by wrong command-line use (exit status 2).
var errUsage = errors.New("usage error")

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit status: 0 on success,
// 1 when the command failed, 2 on a usage error, 130 or 143 when SIGINT or
// SIGTERM stopped it (see package interrupt).
func run(args []string, stdout, stderr io.Writer) int {
	g := &globals{}
	fs := pflag.NewFlagSet("run-benchmark", pflag.ContinueOnError)
	fs.SetInterspersed(false)
	fs.SetOutput(stderr)
	fs.StringVarP(&g.traceDir, "trace-dir", "t", ".", "directory holding spicy-{http,dns}.{pcap,dat} (from preprocess)")
	fs.StringVarP(&g.workDir, "work-dir", "d", "./benchmark", "directory for built binaries and run output")
	fs.StringVarP(&g.srcDir, "source", "b", "", "wirebench source tree (default: found from the binary or the working directory)")
	version := fs.Bool("version", false, "print the version (the source commit run-benchmark was built from) and exit")
	fs.Usage = func() {} // printed below, to stdout when asked for
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(fs, stdout)
			return 0
		}
		fmt.Fprintf(stderr, "run-benchmark: %v (run-benchmark --help lists the commands and flags)\n", err)
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, versionLine())
		return 0
	}
	if fs.NArg() == 0 {
		usage(fs, stderr)
		return 2
	}
	name := fs.Arg(0)
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(g, fs.Args()[1:], stdout, stderr)
		var exit exitError
		switch {
		case err == nil:
			return 0
		case errors.Is(err, pflag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			fmt.Fprintf(stderr, "run-benchmark %s: %v\n", name, err)
			return 2
		case isInterrupt(err):
			fmt.Fprintf(stderr, "run-benchmark %s: %v\n", name, err)
			status, _ := interrupt.ExitStatus(err)
			return status
		case errors.As(err, &exit):
			if !errors.Is(err, errDiffer) { // the output says how the logs differ
				fmt.Fprintf(stderr, "run-benchmark %s: %v\n", name, err)
			}
			return exit.code
		default:
			fmt.Fprintf(stderr, "run-benchmark %s: %v\n", name, err)
			return 1
		}
	}
	if near := closest(name, commandNames()); near != "" {
		fmt.Fprintf(stderr, "run-benchmark: unknown command %q: did you mean %q? (see run-benchmark --help)\n", name, near)
	} else {
		fmt.Fprintf(stderr, "run-benchmark: unknown command %q (see run-benchmark --help)\n", name)
	}
	return 2
}

// exitError is an error with the exit status it calls for, for commands
// whose statuses say more than success and failure (diff: 1 different, 2
// error).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// closest returns the name nearest to s by edit distance, when it is near
// enough to be a typo (at most a third of its letters off), or "".
func closest(s string, names []string) string {
	best, bestDist := "", len(s)/3+1
	for _, n := range names {
		if d := editDistance(strings.ReplaceAll(s, "-", ""), strings.ReplaceAll(n, "-", "")); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance of a and b (optimal
// string alignment): insertions, deletions, substitutions and swaps of
// neighbours count one each.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// versionLine is what --version prints: the module version or source
// commit run-benchmark was built from (with "-dirty" when the tree had
// uncommitted changes) and the Go version.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "run-benchmark (unknown version) " + runtime.Version()
	}
	rev, dirty, when := "", false, ""
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		case "vcs.time":
			when = s.Value
		}
	}
	v := info.Main.Version
	switch {
	case rev != "":
		v = "commit " + rev
		if dirty {
			v += "-dirty"
		}
		if when != "" {
			v += " (" + when + ")"
		}
	case v == "" || v == "(devel)":
		v = "(source commit unknown: built without version control information)"
		// Built with -buildvcs=false (or outside git): the source tree
		// it runs from says which commit it is at now.
		if src, err := sourceDir(""); err == nil {
			if r, err := runner.ReadRevision(context.Background(), src); err == nil {
				v = fmt.Sprintf("(no version stamp; the source tree %s is at commit %s)", src, r.Commit)
				if r.Dirty {
					v = fmt.Sprintf("(no version stamp; the source tree %s is at commit %s, with uncommitted changes)", src, r.Commit)
				}
			}
		}
	}
	return fmt.Sprintf("run-benchmark %s %s", v, info.GoVersion)
}

func usage(fs *pflag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `run-benchmark: benchmark HTTP and DNS parsers on real packet traces.

Usage:
  run-benchmark [global flags] COMMAND [flags] [args]

The workflow, as with Spicy's run-benchmark script:
  run-benchmark preprocess -o my-data trace.pcap   # -> my-data/spicy-{http,dns}.{pcap,dat}
  run-benchmark build                              # -> ./benchmark/{http,dns}-{static,opt}, analyzers
  run-benchmark -t my-data run                     # runs per variant: user time, log counts, statistics
  run-benchmark -t my-data compare HEAD~1          # did the last commit make anything slower?

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nGlobal flags:\n%s\nRun \"run-benchmark COMMAND --help\" for the flags of a command.\n",
		strings.TrimRight(fs.FlagUsages(), "\n"))
}

// newFlagSet returns a flag set for a command. On --help it prints a usage
// text naming the command, its arguments and what it does to stdout, and
// Parse returns pflag.ErrHelp (exit status 0).
func newFlagSet(name, argsUsage, about string, stdout, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: run-benchmark %s [flags] %s\n\n%s\n\nFlags:\n%s", name, argsUsage,
			strings.TrimSpace(about), fs.FlagUsages())
	}
	return fs
}

// parseFlags parses a command's flags. Errors other than --help are usage
// errors (exit status 2).
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %v (see --help)", errUsage, err)
}

// isInterrupt reports whether err says a signal stopped the command.
func isInterrupt(err error) bool {
	_, ok := interrupt.ExitStatus(err)
	return ok
}

// interrupted says that a signal stopped a command which failed with err:
// the exit status is then the signal's.
func interrupted(ctx context.Context, err error) error {
	if err == nil || isInterrupt(err) {
		return err
	}
	if cause := context.Cause(ctx); isInterrupt(cause) {
		return fmt.Errorf("%w: %v", cause, err)
	}
	return err
}

// Command sigcheck checks that every command of wirebench survives SIGINT
// and SIGTERM at any moment: it generates a large trace (500 MB by
// default) into a temporary directory, preprocesses it once to time it and
// to get batch files, then runs preprocess, analyze, http-parser and
// dns-parser again and again, each signalled after a random delay within
// the time a whole run takes, and checks what every run left:
//
//   - the exit status is 128 plus the signal's number (130, 143), or 0 when
//     the run finished before the signal came;
//   - preprocess's pcap files read to their end with tcpdump and with
//     wirebench's capture reader, its batch files read to their end with
//     the batch reader, with as many @end-conn as @begin-conn;
//   - every log of analyze and of the replay binaries ends with #close.
//
// A signal that comes before a command has set up its handling (the first
// milliseconds of the process) ends it with the signal's default action;
// such a run must not have created any output. "make sigcheck" builds the
// tools and runs it; it prints a table of the trials and fails (exit
// status 1) when one of them broke a rule.
//
// Usage:
//
//	sigcheck -bin DIR [-size 500MB] [-trials 20] [-seed N]
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/capture"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	bin, tcpdump string
	size         string
	trials       int
	seed         uint64
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sigcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.StringVar(&o.bin, "bin", "bin", "`directory` holding run-benchmark, analyze, http-parser and dns-parser")
	fs.StringVar(&o.size, "size", "500MB", "size of the generated trace (gen-trace --size)")
	fs.IntVar(&o.trials, "trials", 20, "trials per command and signal")
	fs.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()), "seed of the random delays (printed, to repeat a run)")
	fs.StringVar(&o.tcpdump, "tcpdump", "tcpdump", "tcpdump `program` that must read the pcap files; \"none\" leaves it out")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: sigcheck -bin DIR [flags]\n\nSignals wirebench's commands at random moments and checks their outputs.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.trials < 1 {
		fmt.Fprintln(stderr, "sigcheck: -trials must be at least 1")
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := o.check(ctx, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "sigcheck: %v\n", err)
		return 1
	}
	if !ok {
		return 1
	}
	return 0
}

// command is one program under test: how to run it into a fresh output
// directory, and how to check what it left there.
type command struct {
	name  string
	args  func(out string) []string
	prog  string
	stdin string // file to read on standard input; "" for none
	check func(o *options, out string) error
	full  time.Duration // a whole run, measured first
}

func (o *options) check(ctx context.Context, stdout io.Writer) (bool, error) {
	if o.tcpdump != "none" {
		if _, err := exec.LookPath(o.tcpdump); err != nil {
			return false, fmt.Errorf("%s not found (install it, or give -tcpdump none)", o.tcpdump)
		}
	}
	tmp, err := os.MkdirTemp("", "wirebench-sigcheck-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	trace := filepath.Join(tmp, "trace.pcap")
	data := filepath.Join(tmp, "data")
	fmt.Fprintf(stdout, "sigcheck: generating a %s trace, then preprocessing it (seed of the delays: %d)\n", o.size, o.seed)
	// DNS weighs as in make bench, so that dns-parser has a batch file
	// long enough to be signalled in its middle too.
	if err := o.exec(ctx, "run-benchmark", "gen-trace", "-o", trace, "--truth", "none", "--size", o.size,
		"--mix", "http=45,dns=1500,tls=6,ssh=2,ntp=4,icmp=3"); err != nil {
		return false, err
	}
	if err := o.exec(ctx, "run-benchmark", "preprocess", "-o", data, trace); err != nil {
		return false, err
	}
	cmds := []*command{
		{name: "preprocess", prog: "run-benchmark", args: func(out string) []string { return []string{"preprocess", "-o", out, trace} }, check: checkPreprocess},
		{name: "analyze", prog: "analyze", args: func(out string) []string { return []string{"-r", trace, "-o", out} }, check: checkLogs("conn.log", "http.log", "dns.log")},
		{name: "http-parser", prog: "http-parser", stdin: filepath.Join(data, "spicy-http.dat"),
			args: func(out string) []string { return []string{"--log-dir", out} }, check: checkLogs("http.log")},
		{name: "dns-parser", prog: "dns-parser", args: func(out string) []string {
			return []string{"--log-dir", out, "-F", filepath.Join(data, "spicy-dns.dat")}
		}, check: checkLogs("dns.log")},
	}
	rng := rand.New(rand.NewPCG(o.seed, 1))
	fmt.Fprintf(stdout, "\n%-12s %-7s %8s %6s %11s %8s %6s %8s\n", "command", "signal", "full run", "trials", "interrupted", "finished", "early", "failures")
	allOK := true
	for _, c := range cmds {
		// A whole run: the shorter of two (the first warms the caches;
		// other work on the machine makes some runs longer).
		out := filepath.Join(tmp, "full-"+c.name)
		for i := range 2 {
			start := time.Now()
			if st, _, err := o.trial(ctx, c, out, 0, 0); err != nil || st != 0 {
				return false, fmt.Errorf("%s, run to its end: exit %d, %v", c.name, st, err)
			}
			if d := time.Since(start); i == 0 || d < c.full {
				c.full = d
			}
		}
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			var interrupted, finished, early int
			var failures []string
			for i := range o.trials {
				if ctx.Err() != nil {
					return false, ctx.Err()
				}
				delay := time.Duration(rng.Int64N(int64(c.full)))
				out := filepath.Join(tmp, fmt.Sprintf("%s-%d-%d", c.name, sig, i))
				st, killed, err := o.trial(ctx, c, out, sig, delay)
				switch {
				case err != nil:
					failures = append(failures, fmt.Sprintf("after %v: %v", delay.Round(time.Millisecond), err))
				case killed:
					early++
				case st == 0:
					finished++
				default:
					interrupted++
				}
				os.RemoveAll(out)
			}
			fmt.Fprintf(stdout, "%-12s %-7s %7.2fs %6d %11d %8d %6d %8d\n", c.name, signalName(sig), c.full.Seconds(),
				o.trials, interrupted, finished, early, len(failures))
			for _, f := range failures {
				fmt.Fprintf(stdout, "  %s %s: %s\n", c.name, signalName(sig), f)
				allOK = false
			}
		}
		os.RemoveAll(out)
	}
	fmt.Fprintln(stdout, "\nEach trial signals the command after a random delay below its full run. interrupted:")
	fmt.Fprintln(stdout, "exit status 130/143 with whole outputs; finished: done before the signal (exit 0);")
	fmt.Fprintln(stdout, "early: killed before its signal handling was set up, with nothing written.")
	if allOK {
		fmt.Fprintln(stdout, "sigcheck: every output was whole and closed, every exit status the signal's")
	}
	return allOK, nil
}

// trial runs c into out and, unless sig is 0, signals it after delay. It
// returns the exit status (0 when the run finished first) and an error
// when a rule was broken.
func (o *options) trial(ctx context.Context, c *command, out string, sig syscall.Signal, delay time.Duration) (status int, killed bool, err error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, false, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(o.bin, c.prog), c.args(out)...)
	if c.stdin != "" {
		f, err := os.Open(c.stdin)
		if err != nil {
			return 0, false, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		return 0, false, err
	}
	if sig != 0 {
		timer := time.AfterFunc(delay, func() { cmd.Process.Signal(sig) })
		defer timer.Stop()
	}
	werr := cmd.Wait()
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// Killed before it set up its signal handling: it must not
			// have written anything yet.
			if entries, _ := os.ReadDir(out); len(entries) > 0 {
				return -1, true, fmt.Errorf("killed by %v with %d files written", ws.Signal(), len(entries))
			}
			return int(128 + ws.Signal()), true, nil
		}
		status = ee.ExitCode()
		if status != 128+int(sig) {
			return status, false, fmt.Errorf("exit status %d, want %d: %s", status, 128+int(sig), strings.TrimSpace(stderr.String()))
		}
	default:
		return 0, false, werr
	}
	return status, false, c.check(o, out)
}

// exec runs one of the tools to its end.
func (o *options) exec(ctx context.Context, prog string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(o.bin, prog), args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", prog, strings.Join(args, " "), err, b)
	}
	return nil
}

// checkPreprocess checks preprocess's four files.
func checkPreprocess(o *options, out string) error {
	for _, name := range []string{"spicy-http.pcap", "spicy-dns.pcap"} {
		path := filepath.Join(out, name)
		if err := readPcap(path); err != nil {
			return err
		}
		if o.tcpdump == "none" {
			continue
		}
		var stderr bytes.Buffer
		cmd := exec.Command(o.tcpdump, "-n", "-r", path, "-w", os.DevNull)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || strings.Contains(stderr.String(), "truncated") {
			return fmt.Errorf("tcpdump -r %s: %v %s", name, err, strings.TrimSpace(stderr.String()))
		}
	}
	for _, name := range []string{"spicy-http.dat", "spicy-dns.dat"} {
		if err := readBatch(filepath.Join(out, name)); err != nil {
			return err
		}
	}
	return nil
}

func readPcap(path string) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	var p capture.Packet
	for {
		if err := r.Next(&p); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// readBatch reads a batch file to its end and checks that every
// connection begun is ended.
func readBatch(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := batch.Count(f, path)
	if err == nil && c.BeginConns != c.EndConns {
		err = fmt.Errorf("%s: %d @begin-conn, %d @end-conn", filepath.Base(path), c.BeginConns, c.EndConns)
	}
	return err
}

// checkLogs returns a check that each log ends with its #close line.
func checkLogs(names ...string) func(*options, string) error {
	return func(_ *options, out string) error {
		for _, name := range names {
			b, err := os.ReadFile(filepath.Join(out, name))
			if err != nil {
				return err
			}
			last := b[bytes.LastIndexByte(b[:max(len(b)-1, 0)], '\n')+1:]
			if !bytes.HasPrefix(last, []byte("#close\t")) || !bytes.HasSuffix(b, []byte("\n")) {
				return fmt.Errorf("%s does not end with #close: %q", name, last)
			}
		}
		return nil
	}
}

func signalName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

//go:build unix

// Package interrupttest runs a command's main function in a child process
// and signals it while it reads its input, for tests that check what a
// command leaves behind when SIGINT or SIGTERM stops it.
//
// The child is the test binary itself: TestMain calls [AsCommand] first,
// and [Command] starts the binary in that mode.
package interrupttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/traces"
)

const envVar = "WIREBENCH_INTERRUPTTEST_MAIN"

// minAfter is the least input Signal writes before the signal.
const minAfter = 512 << 10

// AsCommand runs main and exits with its status when the test binary was
// started by Command; otherwise it returns at once. Call it first in
// TestMain.
func AsCommand(main func(args []string) int) {
	if os.Getenv(envVar) == "1" {
		os.Exit(main(os.Args[1:]))
	}
}

// Command returns a command running the test binary's AsCommand main with
// args.
func Command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), envVar+"=1")
	return cmd
}

// Fifo makes a named pipe in a temporary directory of t, for a command
// that reads a file by name to read as the test writes, and returns its
// path and the pipe opened for writing. (It is opened for reading and
// writing, which does not wait for a reader as opening it for writing
// would.)
func Fifo(t testing.TB, name string) (string, *os.File) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// Result is what the signalled command did.
type Result struct {
	Status         int  // exit status; -1 when a signal killed it
	Killed         bool // a signal killed it (it did not handle sig)
	Stdout, Stderr string
}

// Signal starts cmd and writes input to it through w (cmd's stdin pipe,
// or a Fifo). Once the first after bytes are taken, it sends sig to cmd
// and goes on writing the rest, so that cmd is signalled in the middle of
// its input and keeps getting data until it stops reading; then it closes
// w and waits for cmd to exit (a minute at most).
func Signal(t testing.TB, cmd *exec.Cmd, w io.WriteCloser, input []byte, after int, sig syscall.Signal) Result {
	t.Helper()
	// The pipe and the command's read buffer hold up to some 200 kB: only
	// past them is the command known to be reading, with its signal
	// handling in place.
	if after < minAfter {
		t.Fatalf("signal after %d bytes: too early to be sure the command is reading; want %d at least", after, minAfter)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	fed := make(chan error, 1)
	go func() { fed <- feed(cmd, w, input, after, sig) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Errorf("%v did not stop within a minute of %v", cmd.Args, sig)
	}
	w.Close() // ends a write the command no longer reads
	if ferr := <-fed; ferr != nil {
		t.Errorf("feeding %v: %v", cmd.Args, ferr)
	}
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Status = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Killed = true
		}
	default:
		t.Fatal(err)
	}
	return res
}

// feed writes input to the command: after bytes, the signal, the rest,
// then closes w. Write errors after the signal are the command having
// stopped reading; before it, the command stopped too early.
func feed(cmd *exec.Cmd, w io.WriteCloser, input []byte, after int, sig syscall.Signal) error {
	defer w.Close()
	if _, err := w.Write(input[:after]); err != nil {
		return fmt.Errorf("the command stopped reading before the signal: %w", err)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	// The rest goes slowly, so that the command, which stops at its next
	// look at the signal, cannot reach the end of its input first on a
	// busy machine.
	const chunk = 16 << 10
	for rest := input[after:]; len(rest) > 0; rest = rest[min(chunk, len(rest)):] {
		if _, err := w.Write(rest[:min(chunk, len(rest))]); err != nil {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// Trace returns a pcap trace of HTTP and DNS of about size bytes from the
// generator of package traces (its default seed): input long enough to be
// signalled in its middle. DNS weighs as in make bench, so that its
// sub-trace and batch file make a good share of the bytes too.
func Trace(t testing.TB, size int64) []byte {
	t.Helper()
	cfg := traces.DefaultConfig()
	cfg.Size, cfg.MaxBody = size, 64<<10
	mix, err := traces.ParseMix("http=45,dns=1500,tls=6,ssh=2,ntp=4,icmp=3")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mix = mix
	var buf bytes.Buffer
	if _, err := traces.Generate(&buf, cfg); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

package runner

import (
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// Measurement is what one execution of a child process cost, taken from the
// rusage the kernel returns when the child is reaped (wait4), never from
// the child's own output. User and system time include the child's own
// children that it waited for.
type Measurement struct {
	User   time.Duration // CPU time in user mode
	Sys    time.Duration // CPU time in the kernel
	Wall   time.Duration // elapsed from start to exit, as seen by the runner
	MaxRSS int64         // peak resident set size in bytes; 0 when unknown
	// ExitCode is the child's exit status; -1 when it did not exit normally
	// (killed by a signal) or did not start.
	ExitCode int
	// Err is nil when the child ran and exited with status 0.
	Err error
	// TimeKnown is false when the platform gave no rusage for the child.
	TimeKnown bool
}

// OK reports whether the child ran and exited with status 0.
func (m Measurement) OK() bool { return m.Err == nil }

// Exec runs cmd to completion and measures it. When cpu >= 0 the child is
// started pinned to that CPU (see startPinned). Give cmd files, not
// buffers, as Stdout and Stderr, so no copying goroutine runs in the
// runner while the child is timed.
func Exec(cmd *exec.Cmd, cpu int) Measurement {
	var err error
	start := time.Now()
	if cpu >= 0 {
		err = startPinned(cmd, cpu)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return Measurement{ExitCode: -1, Err: fmt.Errorf("cannot start: %w", err)}
	}
	err = cmd.Wait()
	m := Measurement{Wall: time.Since(start), ExitCode: -1, Err: err}
	if ps := cmd.ProcessState; ps != nil {
		m.ExitCode = ps.ExitCode()
		m.User, m.Sys, m.TimeKnown = ps.UserTime(), ps.SystemTime(), true
		m.MaxRSS = maxRSS(ps)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		m.Err = fmt.Errorf("%s", exitErr.ProcessState.String()) // "exit status 1", "signal: killed"
	}
	return m
}

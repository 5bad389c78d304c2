// Package interrupt makes SIGINT and SIGTERM end a command alike: as a
// cancelled context whose cause names the signal. The command stops
// reading at the next point where it checks the context, flushes and
// closes every output, so that what it wrote is whole, and exits with the
// status a shell reports for a process killed by that signal, 128 plus
// its number (130 for SIGINT, 143 for SIGTERM), so that scripts tell an
// interrupted run from a finished or failed one.
//
// A second signal ends the process at once, with the signal's default
// action, for a user who will not wait for the outputs to be closed.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Error is the cause of a context that a signal cancelled.
type Error struct {
	Signal syscall.Signal
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v (%s)", e.Signal, signalName(e.Signal))
}

// ExitStatus is 128 plus the signal's number, as a shell reports a process
// the signal killed.
func (e *Error) ExitStatus() int { return 128 + int(e.Signal) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// Notify returns a copy of parent that is cancelled at the first SIGINT or
// SIGTERM the process receives, with an *Error naming the signal as its
// cause (context.Cause). The signal's default action is restored at once,
// so a second one ends the process. stop releases the signals and cancels
// the context; call it when the command is done.
func Notify(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			signal.Stop(ch)
			s, _ := sig.(syscall.Signal)
			cancel(&Error{Signal: s})
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(done)
			cancel(context.Canceled)
		})
	}
}

// ExitStatus returns the exit status a command stopped by err should end
// with: that of the signal when err wraps an *Error, with ok true;
// otherwise ok is false.
func ExitStatus(err error) (status int, ok bool) {
	var ie *Error
	if errors.As(err, &ie) {
		return ie.ExitStatus(), true
	}
	return 0, false
}

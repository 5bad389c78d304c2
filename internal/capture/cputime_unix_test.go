//go:build unix

package capture_test

import (
	"syscall"
	"time"
)

// cpuNow returns the CPU time of the process: user and system time of all
// its threads.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

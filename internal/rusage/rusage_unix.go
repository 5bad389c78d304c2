//go:build unix

package rusage

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// Self returns the calling process's CPU times and peak resident set
// size.
func Self() Usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	return Usage{User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano()), MaxRSS: maxRSS(&ru)}
}

// Child returns what the kernel counted of a reaped child.
func Child(ps *os.ProcessState) Usage {
	u := Usage{User: ps.UserTime(), Sys: ps.SystemTime()}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		u.MaxRSS = maxRSS(ru)
	}
	return u
}

// maxRSS returns ru's peak resident set size in bytes: the kernel counts
// it in bytes on Darwin, in kilobytes on Linux and the BSDs.
func maxRSS(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

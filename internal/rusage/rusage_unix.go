//go:build unix

package replay

import (
	"runtime"
	"syscall"
	"time"
)

// getUsage reads the process's CPU times and peak resident set size.
func getUsage() resources {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return resources{}
	}
	rss := int64(ru.Maxrss)
	if runtime.GOOS != "darwin" && runtime.GOOS != "ios" {
		rss *= 1024 // kilobytes elsewhere, bytes on Darwin
	}
	return resources{
		user:   time.Duration(ru.Utime.Nano()),
		sys:    time.Duration(ru.Stime.Nano()),
		maxRSS: rss,
	}
}

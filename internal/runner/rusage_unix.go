//go:build unix

package runner

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSS returns the peak resident set size of a reaped child in bytes.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
}

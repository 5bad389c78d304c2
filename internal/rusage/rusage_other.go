//go:build !unix

package rusage

import "os"

// Self is not implemented on this system: it reports zeros.
func Self() Usage { return Usage{} }

// Child returns the CPU times of a reaped child; its memory is unknown
// here.
func Child(ps *os.ProcessState) Usage { return Usage{User: ps.UserTime(), Sys: ps.SystemTime()} }

//go:build !linux

package threadcpu

// Now reports that the thread's CPU time is unknown here.
func Now() (ns int64, ok bool) { return 0, false }

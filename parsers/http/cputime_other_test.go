//go:build !linux

package http

// threadCPU reports that the thread's CPU time is unknown here.
func threadCPU() (ns int64, ok bool) { return 0, false }

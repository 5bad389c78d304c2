//go:build !linux

package dns

// threadCPU reports that the thread's CPU time is unknown here.
func threadCPU() (ns int64, ok bool) { return 0, false }

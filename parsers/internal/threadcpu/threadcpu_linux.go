package threadcpu

import "golang.org/x/sys/unix"

// Now returns the CPU time the calling thread has used, in nanoseconds; ok
// is false when the system cannot tell.
func Now() (ns int64, ok bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return ts.Nano(), true
}

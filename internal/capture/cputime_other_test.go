//go:build !unix

package capture_test

import "time"

// cpuNow returns 0: this system has no getrusage, and the benchmarks leave
// out their per-CPU-second figures.
func cpuNow() time.Duration { return 0 }

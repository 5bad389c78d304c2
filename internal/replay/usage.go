package replay

import (
	"fmt"
	"time"

	"github.com/wirebench/wirebench/parsers"
)

// resources is what the -U line reports of the process.
type resources struct {
	user, sys time.Duration
	maxRSS    int64 // bytes; 0 when unknown
}

// usageLine renders the -U line: Spicy's three fields, then wirebench's,
// then the caps' counters when they acted. throughput is the payload per
// CPU second in MB/s (10^6 bytes).
func usageLine(r resources, st parsers.Stats, transactions int64) string {
	cpu := (r.user + r.sys).Seconds()
	tput := 0.0
	if cpu > 0 {
		tput = float64(st.Bytes) / 1e6 / cpu
	}
	line := fmt.Sprintf("# user_time=%.6f sys_time=%.6f memory=%d bytes=%d flows=%d transactions=%d throughput=%.2fMB/s",
		r.user.Seconds(), r.sys.Seconds(), r.maxRSS, st.Bytes, st.Flows, transactions, tput)
	if st.EvictedConns > 0 || st.BufferEvictions > 0 {
		line += fmt.Sprintf(" evicted_conns=%d buffer_evictions=%d peak_buffered=%d", st.EvictedConns, st.BufferEvictions, st.PeakBuffered)
	}
	return line
}

// Usage returns the process's user and system CPU time and its peak
// resident set size in bytes (0 where unknown): what the -U line reports,
// for other binaries that print one (cmd/analyze).
func Usage() (user, sys time.Duration, maxRSS int64) {
	r := getUsage()
	return r.user, r.sys, r.maxRSS
}

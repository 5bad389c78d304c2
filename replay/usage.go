package replay

import (
	"fmt"
	"time"
)

// resources is what the -U line reports of the process.
type resources struct {
	user, sys time.Duration
	maxRSS    int64 // bytes; 0 when unknown
}

// usageLine renders the -U line: Spicy's three fields, then wirebench's.
// throughput is the payload per CPU second in MB/s (10^6 bytes).
func usageLine(r resources, bytes, flows, transactions int64) string {
	cpu := (r.user + r.sys).Seconds()
	tput := 0.0
	if cpu > 0 {
		tput = float64(bytes) / 1e6 / cpu
	}
	return fmt.Sprintf("# user_time=%.6f sys_time=%.6f memory=%d bytes=%d flows=%d transactions=%d throughput=%.2fMB/s",
		r.user.Seconds(), r.sys.Seconds(), r.maxRSS, bytes, flows, transactions, tput)
}

// Usage returns the process's user and system CPU time and its peak
// resident set size in bytes (0 where unknown): what the -U line reports,
// for other binaries that print one (cmd/analyze).
func Usage() (user, sys time.Duration, maxRSS int64) {
	r := getUsage()
	return r.user, r.sys, r.maxRSS
}

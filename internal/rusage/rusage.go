// Package rusage reads what the kernel counts of a process's resources
// (CPU times, peak resident set size) and renders the resource line of
// -U, in the layout of Spicy's spicy-driver -U, for every command that
// prints one.
package rusage

import (
	"fmt"
	"strings"
	"time"
)

// Usage is what the kernel counted of a process.
type Usage struct {
	User, Sys time.Duration
	// MaxRSS is the peak resident set size in bytes (getrusage's maxrss,
	// not the Go heap); 0 when unknown.
	MaxRSS int64
}

// Count is one name=value field of the resource line.
type Count struct {
	Name  string
	Value int64
}

// Line renders the resource line: Spicy's three fields (user_time,
// sys_time, memory), bytes, the counts in order, and throughput, the bytes
// per CPU second in MB/s (10^6 bytes):
//
//	# user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=... flows=... throughput=...MB/s
func Line(u Usage, bytes int64, counts ...Count) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# user_time=%.6f sys_time=%.6f memory=%d bytes=%d", u.User.Seconds(), u.Sys.Seconds(), u.MaxRSS, bytes)
	for _, c := range counts {
		fmt.Fprintf(&b, " %s=%d", c.Name, c.Value)
	}
	tput := 0.0
	if cpu := (u.User + u.Sys).Seconds(); cpu > 0 {
		tput = float64(bytes) / 1e6 / cpu
	}
	fmt.Fprintf(&b, " throughput=%.2fMB/s", tput)
	return b.String()
}

// ParseLine parses a resource line, as [Line] writes it or spicy-driver -U does, "# user_time=1.538000
// sys_time=0.021000 memory=12582912 ..." into its key=value pairs. It
// returns nil for any other line.
func ParseLine(line string) map[string]string {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "#")
	if !ok || !strings.Contains(rest, "user_time=") {
		return nil
	}
	kv := map[string]string{}
	for _, f := range strings.Fields(rest) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil
		}
		kv[k] = v
	}
	return kv
}

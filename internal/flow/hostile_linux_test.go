//go:build linux

package flow

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// feedTime returns the least CPU time of five that the calling thread
// takes to make the packets of eachHolePacket(1, n, true) and pass them to
// an engine (the thread's clock: time other processes take counts for
// none).
func feedTime(t *testing.T, cfg Config, n int) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := time.Duration(1 << 62)
	for range 5 {
		e := New(cfg, &countingHandler{})
		runtime.GC()
		start := threadCPU(t)
		eachHolePacket(1, n, true, e.Packet)
		e.Flush()
		best = min(best, threadCPU(t)-start)
	}
	return best
}

func threadCPU(t *testing.T) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		t.Skipf("no thread CPU clock: %v", err)
	}
	return time.Duration(ts.Nano())
}

// TestOutOfOrderLinear checks that buffering segments that arrive in
// descending order, each after a hole, costs about the same per segment
// however many there are: with 16 times the segments, the time may grow
// by n log n (about 20 times), not by the square (256 times). A sorted
// slice that shifts on every insert and removal grew by the square. The
// time includes making the packets, which is linear.
func TestOutOfOrderLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	cfg := Config{MaxFlowBuffer: 1 << 30, MaxBuffer: 1 << 30}
	const n = 2000
	small := feedTime(t, cfg, n)
	large := feedTime(t, cfg, 16*n)
	ratio := float64(large) / float64(small)
	t.Logf("%d segments: %v; %d segments: %v (%.0fx)", n, small, 16*n, large, ratio)
	if ratio > 64 {
		t.Fatalf("%d segments: %v; %d segments: %v (%.0fx; linear is 16x, quadratic 256x)", n, small, 16*n, large, ratio)
	}
}

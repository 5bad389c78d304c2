package replay

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// startHeap is how much memory a replay binary may take before its first
// garbage collection.
const startHeap = 32 << 20

// deferGC defers the first collection of the process, once: Main is the
// whole of a binary, but tests call it many times in one process.
var deferGC = sync.OnceFunc(func() { deferFirstGC(startHeap) })

// deferFirstGC makes the first garbage collection wait until the program
// holds size bytes, as the Go compiler does at its start
// (cmd/compile's AdjustStartingHeap), and then hands the collector back
// to its usual pacing. A replay's live heap is mostly the state of the
// open connections, which grows over the first part of the input; the
// collections the default pacing would run while it grows (at 4, 8, 16
// MB) mark it again and again and took a sixth of a DNS replay's
// instructions. A program that never holds size bytes is never
// collected; one that does is collected as before from then on. With
// GOGC or GOMEMLIMIT in the environment the user's setting is left
// alone.
func deferFirstGC(size int64) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(size)
	restore := sync.OnceFunc(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
	// The cleanup runs after the first collection has found the sentinel
	// unreachable.
	sentinel := new(gcSentinel)
	runtime.AddCleanup(sentinel, func(struct{}) { restore() }, struct{}{})
}

// gcSentinel is larger than the tiny allocations (16 bytes) that share a
// block, whose cleanups may never run.
type gcSentinel [32]byte

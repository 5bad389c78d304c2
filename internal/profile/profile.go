// Package profile writes the CPU and heap profiles that the --cpuprofile
// and --memprofile flags of the replay binaries and the analyzer ask for,
// in the format go tool pprof reads.
//
// A command starts the CPU profile before its work, stops it when the work
// is done and then writes the heap profile, so that the garbage collection
// WriteHeap runs does not show in the CPU profile. An empty path turns
// either profile off, as an unset flag does.
package profile

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// StartCPU creates the file path and starts writing a CPU profile into
// it. The returned stop ends profiling and closes the file: until it is
// called the profile is incomplete. With an empty path StartCPU starts
// nothing and stop does nothing.
func StartCPU(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the CPU profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// WriteHeap writes a heap profile to the file path. It collects garbage
// first, so that the profile's in-use figures are those of the moment of
// the call. With an empty path it does nothing.
func WriteHeap(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the heap profile %s: %w", path, err)
	}
	return f.Close()
}

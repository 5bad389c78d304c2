package runner

import (
	"fmt"
	"os/exec"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// startPinned starts cmd so that the child may run only on the given CPU.
//
// A child inherits the CPU affinity of the thread that forks it. So the
// start happens on a goroutine locked to its own OS thread whose affinity
// is first narrowed to that CPU. The goroutine never unlocks the thread:
// when it returns, the Go runtime ends the thread instead of reusing it with
// a narrowed affinity for other goroutines. The runner itself is not
// pinned, and no taskset process stands between the runner and the child,
// so the rusage measured is the child's alone.
func startPinned(cmd *exec.Cmd, cpu int) error {
	if err := CheckCPU(cpu); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			errc <- fmt.Errorf("pinning to CPU %d: %w", cpu, err)
			return
		}
		errc <- cmd.Start()
	}()
	return <-errc
}

// CheckCPU reports whether the runner may pin children to cpu: it must be
// one of the CPUs this process is allowed to run on.
func CheckCPU(cpu int) error {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fmt.Errorf("reading CPU affinity: %w", err)
	}
	if cpu < 0 || cpu >= setBits(&set) || !set.IsSet(cpu) {
		return fmt.Errorf("CPU %d is not available to this process (allowed: %s)", cpu, cpuList(&set))
	}
	return nil
}

func cpuList(set *unix.CPUSet) string {
	s := ""
	for i := 0; i < setBits(set); i++ {
		if set.IsSet(i) {
			if s != "" {
				s += ","
			}
			s += fmt.Sprint(i)
		}
	}
	return s
}

func setBits(set *unix.CPUSet) int { return int(unsafe.Sizeof(*set)) * 8 }

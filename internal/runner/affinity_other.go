//go:build !linux

package runner

import (
	"errors"
	"os/exec"
)

var errNoPinning = errors.New("pinning children to a CPU (--cpu) is only supported on Linux")

func startPinned(*exec.Cmd, int) error { return errNoPinning }

// CheckCPU reports whether the runner may pin children to cpu; it may only
// on Linux.
func CheckCPU(int) error { return errNoPinning }

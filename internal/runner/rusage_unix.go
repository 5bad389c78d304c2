//go:build unix

package runner

import (
	"os"

	"github.com/wirebench/wirebench/internal/rusage"
)

// maxRSS returns the peak resident set size of a reaped child in bytes.
func maxRSS(ps *os.ProcessState) int64 { return rusage.Child(ps).MaxRSS }

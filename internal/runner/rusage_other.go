//go:build !unix

package runner

import "os"

func maxRSS(*os.ProcessState) int64 { return 0 }

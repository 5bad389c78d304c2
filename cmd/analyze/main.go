// Command analyze reads packet traces and writes Zeek-style conn.log,
// http.log and dns.log: the pcap analyzer of wirebench, timed by the
// benchmark next to the replay binaries and tshark.
//
// Usage:
//
//	analyze -r TRACE [-r TRACE ...] [-o DIR] [--parsers native|std] [--json] [-U]
//
// Run "analyze --help" for every flag.
package main

import (
	"io"
	"os"

	"github.com/wirebench/wirebench/internal/analyzecmd"
)

// The exit statuses of analyze (those of analyzecmd.Main) that its tests check.
const (
	exitOK    = 0
	exitInput = 1 // a trace that cannot be read
	exitUsage = 2
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return analyzecmd.Main(args, stdin, stdout, stderr)
}

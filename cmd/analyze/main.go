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
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command dns-parser replays the DNS traffic of a Spicy batch file
// (!spicy-batch v2, as written by "run-benchmark preprocess" or Zeek's
// record-spicy-batch.zeek) into wirebench's DNS parser, native or
// miekg/dns-based, counting transactions or writing Zeek's dns.log. It is
// the replay binary the benchmark times, like Spicy's spicy-driver over
// its DNS grammar.
//
// Usage:
//
//	dns-parser [-U] [--parsers native|std] [--log-dir DIR] [-F FILE]
//
// Run "dns-parser --help" for every flag.
package main

import (
	"os"

	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("dns-parser", dns.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command http-parser replays the HTTP traffic of a Spicy batch file
// (!spicy-batch v2, as written by "run-benchmark preprocess" or Zeek's
// record-spicy-batch.zeek) into wirebench's HTTP parser, native or
// net/http-based, counting transactions or writing Zeek's http.log. It is
// the replay binary the benchmark times, like Spicy's spicy-driver over
// its HTTP grammar.
//
// Usage:
//
//	http-parser [-U] [--parsers native|std] [--log-dir DIR] [-F FILE]
//
// Run "http-parser --help" for every flag.
package main

import (
	"os"

	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("http-parser", http.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command http-fasthttp-parser replays the HTTP traffic of a Spicy batch
// file (!spicy-batch v2, as "run-benchmark preprocess" writes it) into
// HTTP parsers, counting transactions or writing Zeek's http.log: the
// flags and output of wirebench's http-parser, with the parser built on
// valyala/fasthttp's header parsers added to --parsers as "fasthttp".
//
// Usage:
//
//	http-fasthttp-parser [-U] [--parsers fasthttp|native|std] [--log-dir DIR] [-F FILE]
//
// Run "http-fasthttp-parser --help" for every flag.
package main

import (
	"os"

	_ "github.com/wirebench/wirebench/examples/fasthttp"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("http-fasthttp-parser", http.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

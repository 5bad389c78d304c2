// Command outside-http-parser is a replay binary built outside wirebench:
// the flags, batch-file reading, counting and logs of http-parser, with
// the implementations of this module added to --parsers.
package main

import (
	"os"

	_ "example.com/outside"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("outside-http-parser", http.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Command finger-parser is the replay binary of the test protocol Finger:
// what "run-benchmark build" builds for it from its descriptor
// (fingertest.Protocol.ReplayPackage), as it builds cmd/http-parser for
// HTTP.
package main

import (
	"os"

	"github.com/wirebench/wirebench/parsers/internal/fingertest"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("finger-parser", fingertest.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// Package relay registers, from a module of its own and through
// wirebench's public API only, an implementation of HTTP and of DNS named
// "relay": wirebench's native parsers behind a sink that passes every
// transaction on. The runner's tests build it from a variants file as any
// Go entry is built; its records are the native ones by construction.
package relay

import (
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

// Name is the implementation's name for --parsers.
const Name = "relay"

func init() {
	if err := http.Register(Name, func(s http.Sink) parsers.Analyzer { return http.New(s) }); err != nil {
		panic(err)
	}
	if err := dns.Register(Name, func(s dns.Sink) parsers.Analyzer { return dns.New(s) }); err != nil {
		panic(err)
	}
}

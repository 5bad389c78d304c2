// Package builtin is the one list of the protocols wirebench's commands
// know ([Protocols]) and of the implementations built in: each protocol's
// native parsers (registered by its own package) and the standard ones
// over net/http and miekg/dns (registered here). [NewFor] assembles, for
// one implementation, a [parsers.Registry] with Spicy's parser names and
// aliases and Zeek's ports, whose analyzers report to the sinks given per
// protocol.
//
// Adding a protocol means adding a folder under parsers/ that declares
// its [parsers.Protocol], and one entry to [Protocols] (see the recipe in
// package parsers). Adding an implementation of a protocol needs no edit
// here: the protocol package's Register (http.Register, dns.Register)
// makes it available to every driver under its name.
package builtin

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/parsers/std"
)

// Implementations of the parsers built in.
const (
	Native = parsers.Native
	Std    = "std"
)

func init() {
	http.Protocol.Log.NewWriter = logWriter(zeeklog.NewHTTPLog)
	dns.Protocol.Log.NewWriter = logWriter(zeeklog.NewDNSLog)
	for _, err := range []error{
		http.Register(Std, func(s http.Sink) parsers.Analyzer { return std.NewHTTP(s) }),
		dns.Register(Std, func(s dns.Sink) parsers.Analyzer { return std.NewDNS(s) }),
	} {
		if err != nil {
			panic(err)
		}
	}
}

// logWriter adapts the constructor of a log writer of package zeeklog to
// parsers.Log.NewWriter.
func logWriter[L parsers.LogWriter](newLog func(io.Writer, zeeklog.Options) (L, error)) func(io.Writer, parsers.LogOptions) (parsers.LogWriter, error) {
	return func(w io.Writer, o parsers.LogOptions) (parsers.LogWriter, error) {
		format := zeeklog.TSV
		if o.JSON {
			format = zeeklog.JSON
		}
		l, err := newLog(w, zeeklog.Options{Format: format, Now: o.Now})
		if err != nil {
			return nil, err
		}
		return l, nil
	}
}

// Protocols returns the protocols the commands know, in the order they
// report them.
func Protocols() []*parsers.Protocol {
	return []*parsers.Protocol{http.Protocol, dns.Protocol}
}

// Implementations returns the names of the implementations of the
// protocols of [Protocols]: the native ones first, then in the order they
// were registered.
func Implementations() []string { return implementations(Protocols()) }

func implementations(protos []*parsers.Protocol) []string {
	var out []string
	for _, p := range protos {
		for _, name := range p.Implementations() {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// Supports reports whether the implementation impl parses every protocol
// of protos.
func Supports(impl string, protos ...*parsers.Protocol) bool {
	for _, p := range protos {
		if _, ok := p.Implementation(impl); !ok {
			return false
		}
	}
	return true
}

// NewFor returns a registry of the protocols protos for which sink returns
// a sink, parsed by their implementation impl. It is an error when impl
// has no parser for one of them; the error lists the names registered.
func NewFor(impl string, protos []*parsers.Protocol, sink func(*parsers.Protocol) any) (*parsers.Registry, error) {
	if !slices.Contains(implementations(protos), impl) {
		return nil, fmt.Errorf("no %q parsers (registered: %s)", impl, strings.Join(implementations(protos), ", "))
	}
	r := parsers.NewRegistry()
	for _, p := range protos {
		s := sink(p)
		if s == nil {
			continue
		}
		mk, ok := p.Implementation(impl)
		if !ok {
			return nil, fmt.Errorf("the %s parsers have no %s parser yet (use --parsers %s)", impl, strings.ToUpper(p.Name), strings.Join(p.Implementations(), " or "))
		}
		if err := p.AddTo(r, mk.New(s)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

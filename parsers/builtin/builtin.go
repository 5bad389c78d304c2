// Package builtin assembles the registries of wirebench's protocols: for
// each implementation (the native parsers, or the standard ones over
// net/http and miekg/dns) a parsers.Registry with Spicy's parser names and
// aliases and Zeek's ports, whose analyzers report to the given sinks.
//
// It is the one place that lists the protocols: adding one means adding a
// folder under parsers/ and one entry to the protocols table here (see the
// recipe in package parsers).
package builtin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/parsers/std"
)

// Sinks receive the transactions of each protocol. A protocol whose sink is
// nil is left out of the registry (its flows are skipped).
type Sinks struct {
	HTTP http.Sink
	DNS  dns.Sink
}

// Implementations of the parsers.
const (
	Native = "native"
	Std    = "std"
)

// unit is one parser name of a protocol.
type unit struct {
	name    string
	role    parsers.Role
	aliases []string // Spicy's port aliases
}

// protocol is one entry of the table.
type protocol struct {
	name  string
	units []unit
	// ports are the responder ports Zeek's analyzer listens on; orig and
	// resp name the units reading each side.
	ports      []parsers.Port
	orig, resp string
	// impl makes the analyzer of an implementation; a missing key means
	// the implementation has no parser for the protocol.
	impl map[string]func(Sinks) parsers.Analyzer
	// enabled says whether the sinks ask for the protocol.
	enabled func(Sinks) bool
}

func tcp(ports ...uint16) []parsers.Port { return portList(flow.ProtoTCP, ports) }
func udp(ports ...uint16) []parsers.Port { return portList(flow.ProtoUDP, ports) }

func portList(proto uint8, nums []uint16) []parsers.Port {
	out := make([]parsers.Port, len(nums))
	for i, n := range nums {
		out[i] = parsers.Port{Num: n, Proto: proto}
	}
	return out
}

// protocols is the table of builtin protocols (read-only).
var protocols = []protocol{{
	name: "HTTP",
	units: []unit{
		{"HTTP::Requests", parsers.Orig, []string{"80/tcp%orig"}},
		{"HTTP::Replies", parsers.Resp, []string{"80/tcp%resp"}},
	},
	// Zeek's HTTP::ports.
	ports: tcp(80, 81, 631, 1080, 3128, 8000, 8080, 8888),
	orig:  "HTTP::Requests", resp: "HTTP::Replies",
	impl: map[string]func(Sinks) parsers.Analyzer{
		Native: func(s Sinks) parsers.Analyzer { return http.New(s.HTTP) },
		Std:    func(s Sinks) parsers.Analyzer { return std.NewHTTP(s.HTTP) },
	},
	enabled: func(s Sinks) bool { return s.HTTP != nil },
}, {
	name: "DNS",
	units: []unit{
		{"DNS::Message", parsers.Both, []string{"53/udp", "53/udp%orig", "53/udp%resp", "53/tcp", "53/tcp%orig", "53/tcp%resp"}},
	},
	// Zeek's DNS::ports.
	ports: append(udp(53, 137, 5353, 5355), tcp(53)...),
	orig:  "DNS::Message", resp: "DNS::Message",
	impl: map[string]func(Sinks) parsers.Analyzer{
		Native: func(s Sinks) parsers.Analyzer { return dns.New(s.DNS) },
		Std:    func(s Sinks) parsers.Analyzer { return std.NewDNS(s.DNS) },
	},
	enabled: func(s Sinks) bool { return s.DNS != nil },
}}

// Implementations returns the names of the implementations built in.
func Implementations() []string {
	seen := map[string]bool{}
	var out []string
	for _, name := range []string{Native, Std} {
		for _, p := range protocols {
			if p.impl[name] != nil && !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// Supports reports whether the implementation impl parses every protocol
// whose sink is set.
func Supports(impl string, s Sinks) bool {
	for _, p := range protocols {
		if p.enabled(s) && p.impl[impl] == nil {
			return false
		}
	}
	return true
}

// New returns a registry of the protocols whose sinks are set, parsed by
// the implementation impl ("native" or "std"). It is an error when impl
// has no parser for one of them.
func New(impl string, s Sinks) (*parsers.Registry, error) {
	if !slices.Contains(Implementations(), impl) {
		return nil, fmt.Errorf("no %q parsers (built in: %s)", impl, strings.Join(Implementations(), ", "))
	}
	r := parsers.NewRegistry()
	for _, p := range protocols {
		if !p.enabled(s) {
			continue
		}
		mk := p.impl[impl]
		if mk == nil {
			var alt []string
			for name := range p.impl {
				alt = append(alt, name)
			}
			return nil, fmt.Errorf("the %s parsers have no %s parser yet (use --parsers %s)", impl, p.name, strings.Join(alt, " or "))
		}
		a := mk(s)
		for _, u := range p.units {
			if err := r.Register(u.name, a, u.role); err != nil {
				return nil, err
			}
			for _, alias := range u.aliases {
				if err := r.Alias(alias, u.name); err != nil {
					return nil, err
				}
			}
		}
		for _, port := range p.ports {
			if err := r.SetPort(port, p.orig, p.resp); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

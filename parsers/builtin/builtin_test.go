package builtin

import (
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

// sinksOf returns the sink function of NewFor that gives each protocol of
// protos a sink that drops its transactions, and the others none.
func sinksOf(protos ...*parsers.Protocol) func(*parsers.Protocol) any {
	return func(p *parsers.Protocol) any {
		if slices.Contains(protos, p) {
			return p.SinkFunc(func(*parsers.Conn, any) {})
		}
		return nil
	}
}

func TestRegistries(t *testing.T) {
	httpNames := map[string]parsers.Role{
		"HTTP::Requests": parsers.Orig, "80/tcp%orig": parsers.Orig,
		"HTTP::Replies": parsers.Resp, "80/tcp%resp": parsers.Resp,
	}
	dnsNames := map[string]parsers.Role{
		"DNS::Message": parsers.Both, "53/udp": parsers.Both, "53/udp%orig": parsers.Both,
		"53/udp%resp": parsers.Both, "53/tcp": parsers.Both, "53/tcp%resp": parsers.Both,
	}
	httpPorts := tcpPorts(80, 81, 631, 1080, 3128, 8000, 8080, 8888)
	dnsPorts := append(udpPorts(53, 137, 5353, 5355), tcpPorts(53)...)
	if got := Implementations(); len(got) == 0 || got[len(got)-1] != Std {
		t.Errorf("Implementations() = %v", got)
	}
	for _, impl := range Implementations() {
		sinks := []*parsers.Protocol{http.Protocol, dns.Protocol}
		if !Supports(impl, sinks...) {
			sinks = []*parsers.Protocol{dns.Protocol}
			if _, err := NewFor(impl, Protocols(), sinksOf(http.Protocol)); err == nil {
				t.Errorf("%s: New succeeds without an HTTP parser", impl)
			}
		}
		r, err := NewFor(impl, Protocols(), sinksOf(sinks...))
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range Protocols() {
			names, ports := httpNames, httpPorts
			if i == 1 {
				names, ports = dnsNames, dnsPorts
			}
			if _, ok := p.Implementation(impl); !ok || !slices.Contains(sinks, p) {
				if impl == Std {
					t.Errorf("std lacks protocol %d", i)
				}
				continue
			}
			var analyzer parsers.Analyzer
			for name, role := range names {
				e, ok := r.LookupString(name)
				if !ok || e.Role != role {
					t.Errorf("%s: %q -> %+v, %v", impl, name, e, ok)
					continue
				}
				if analyzer != nil && e.Analyzer != analyzer {
					t.Errorf("%s: %q has another analyzer than its protocol's other names", impl, name)
				}
				analyzer = e.Analyzer
			}
			for _, port := range ports {
				if _, ok := r.ForPort(port); !ok[parsers.Orig] || !ok[parsers.Resp] {
					t.Errorf("%s: no parser for port %v", impl, port)
				}
			}
		}
		if _, ok := r.ForPort(parsers.Port{Num: 22, Proto: flow.ProtoTCP}); ok[0] || ok[1] {
			t.Errorf("%s: a parser for 22/tcp", impl)
		}
	}
}

func TestNilSinkLeavesProtocolOut(t *testing.T) {
	r, err := NewFor(Std, Protocols(), sinksOf(http.Protocol))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.LookupString("DNS::Message"); ok {
		t.Error("DNS registered without a DNS sink")
	}
	if _, ok := r.LookupString("HTTP::Requests"); !ok {
		t.Error("HTTP missing")
	}
}

func TestUnknownImplementation(t *testing.T) {
	_, err := NewFor("fast", Protocols(), sinksOf())
	if err == nil || !strings.Contains(err.Error(), "registered: native, std") {
		t.Errorf("New(fast) = %v, want an error listing the implementations", err)
	}
}

// TestRegisteredImplementation checks that an implementation registered
// from outside is found by name for its protocol, and refused for the
// others.
func TestRegisteredImplementation(t *testing.T) {
	var got []http.Sink
	if err := http.Register("test-outside", func(s http.Sink) parsers.Analyzer {
		got = append(got, s)
		return http.New(s)
	}); err != nil {
		t.Fatal(err)
	}
	if err := http.Register("test-outside", nil); err == nil {
		t.Error("a second registration under the same name succeeded")
	}
	if err := http.Register("test-nil", nil); err == nil {
		t.Error("an implementation without a constructor was registered")
	}
	if !slices.Contains(Implementations(), "test-outside") {
		t.Errorf("Implementations() = %v", Implementations())
	}
	r, err := NewFor("test-outside", Protocols(), sinksOf(http.Protocol))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.LookupString("HTTP::Requests"); !ok || len(got) != 1 {
		t.Errorf("HTTP::Requests registered: %v; constructor called %d times", ok, len(got))
	}
	_, err = NewFor("test-outside", Protocols(), sinksOf(http.Protocol, dns.Protocol))
	if err == nil || !strings.Contains(err.Error(), "no DNS parser") || !strings.Contains(err.Error(), "native or std") {
		t.Errorf("New for DNS = %v, want an error naming DNS's implementations", err)
	}
}

var (
	tcpPorts = parsers.TCPPorts
	udpPorts = parsers.UDPPorts
)

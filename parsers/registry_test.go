package parsers

import (
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
)

func testRegistry(t *testing.T) (*Registry, *recAnalyzer, *recAnalyzer) {
	t.Helper()
	httpA := &recAnalyzer{name: "http"}
	dnsA := &recAnalyzer{name: "dns"}
	r := NewRegistry()
	must(t, r.Register("HTTP::Requests", httpA, Orig))
	must(t, r.Register("HTTP::Replies", httpA, Resp))
	must(t, r.Register("DNS::Message", dnsA, Both))
	must(t, r.Alias("80/tcp%orig", "HTTP::Requests"))
	must(t, r.Alias("80/tcp%resp", "HTTP::Replies"))
	for _, a := range []string{"53/udp", "53/udp%orig", "53/udp%resp", "53/tcp", "53/tcp%orig", "53/tcp%resp"} {
		must(t, r.Alias(a, "DNS::Message"))
	}
	must(t, r.SetPort(Port{80, flow.ProtoTCP}, "HTTP::Requests", "HTTP::Replies"))
	must(t, r.SetPort(Port{53, flow.ProtoUDP}, "DNS::Message", "DNS::Message"))
	return r, httpA, dnsA
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRegistryLookup(t *testing.T) {
	r, httpA, dnsA := testRegistry(t)
	tests := []struct {
		name string
		ok   bool
		unit string
		a    Analyzer
		role Role
	}{
		{"HTTP::Requests", true, "HTTP::Requests", httpA, Orig},
		{"HTTP::Replies", true, "HTTP::Replies", httpA, Resp},
		{"80/tcp%orig", true, "HTTP::Requests", httpA, Orig},
		{"80/tcp%resp", true, "HTTP::Replies", httpA, Resp},
		{"DNS::Message", true, "DNS::Message", dnsA, Both},
		{"53/udp", true, "DNS::Message", dnsA, Both},
		{"53/udp%orig", true, "DNS::Message", dnsA, Both},
		{"53/udp%resp", true, "DNS::Message", dnsA, Both},
		{"53/tcp%resp", true, "DNS::Message", dnsA, Both},
		{"80/tcp", false, "", nil, 0}, // Spicy's HTTP units name a direction
		{"8080/tcp%orig", false, "", nil, 0},
		{"http::requests", false, "", nil, 0},
		{"", false, "", nil, 0},
	}
	for _, tt := range tests {
		e, ok := r.Lookup([]byte(tt.name))
		if ok != tt.ok {
			t.Errorf("Lookup(%q) ok = %v, want %v", tt.name, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if e.Name != tt.unit || e.Analyzer != tt.a || e.Role != tt.role {
			t.Errorf("Lookup(%q) = {%s %v %v}, want {%s %v %v}", tt.name, e.Name, e.Analyzer, e.Role, tt.unit, tt.a, tt.role)
		}
		if e2, ok2 := r.LookupString(tt.name); !ok2 || e2 != e {
			t.Errorf("LookupString(%q) disagrees with Lookup", tt.name)
		}
	}
}

func TestRegistryUserAlias(t *testing.T) {
	r, httpA, dnsA := testRegistry(t)
	must(t, r.AddAlias("8080/tcp%orig=HTTP::Requests"))
	must(t, r.AddAlias("8080/tcp%resp=HTTP::Replies"))
	must(t, r.AddAlias("5353/udp=DNS::Message"))
	must(t, r.AddAlias("application/dns=DNS::Message"))
	// A user may redirect a default alias.
	must(t, r.AddAlias("53/tcp=HTTP::Requests"))

	for name, want := range map[string]Analyzer{"8080/tcp%orig": httpA, "8080/tcp%resp": httpA, "5353/udp": dnsA, "application/dns": dnsA, "53/tcp": httpA} {
		if e, ok := r.LookupString(name); !ok || e.Analyzer != want {
			t.Errorf("after AddAlias, %q -> %v %v, want %v", name, e.Analyzer, ok, want)
		}
	}
	// Port aliases extend the port map.
	e, ok := r.ForPort(Port{8080, flow.ProtoTCP})
	if !ok[Orig] || !ok[Resp] || e[Orig].Name != "HTTP::Requests" || e[Resp].Name != "HTTP::Replies" {
		t.Errorf("ForPort(8080/tcp) = %v %v", e, ok)
	}
	e, ok = r.ForPort(Port{5353, flow.ProtoUDP})
	if !ok[Orig] || !ok[Resp] || e[Orig].Name != "DNS::Message" || e[Resp].Name != "DNS::Message" {
		t.Errorf("ForPort(5353/udp) = %v %v", e, ok)
	}
	if _, ok := r.ForPort(Port{8080, flow.ProtoUDP}); ok[Orig] || ok[Resp] {
		t.Error("ForPort(8080/udp) found a parser")
	}
	if got := r.Aliases("DNS::Message"); !slices.Contains(got, "5353/udp") || slices.Contains(got, "53/tcp") {
		t.Errorf("Aliases(DNS::Message) = %v", got)
	}
	if got := r.Ports(); len(got) != 5 || got[0] != (Port{53, flow.ProtoTCP}) || got[4] != (Port{5353, flow.ProtoUDP}) {
		t.Errorf("Ports() = %v", got)
	}
}

func TestRegistryErrors(t *testing.T) {
	r, httpA, _ := testRegistry(t)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"duplicate", r.Register("HTTP::Requests", httpA, Orig), "already registered"},
		{"nil analyzer", r.Register("X", nil, Orig), "nil analyzer"},
		{"bad role", r.Register("X", httpA, Role(7)), "invalid role"},
		{"space", r.Register("A B", httpA, Orig), "white space"},
		{"not comparable", r.Register("F", funcAnalyzer{}, Orig), "not comparable"},
		{"alias unknown", r.Alias("1/tcp", "Nope::X"), `no parser named "Nope::X"`},
		{"alias shadows", r.Alias("HTTP::Replies", "HTTP::Requests"), "own name"},
		{"spec no =", r.AddAlias("8080/tcp%orig"), "want ALIAS=NAME"},
		{"spec empty", r.AddAlias("=HTTP::Requests"), "want ALIAS=NAME"},
		{"spec unknown", r.AddAlias("8080/tcp=HTTP::Nope"), "no parser named"},
		{"port unknown", r.SetPort(Port{1, flow.ProtoTCP}, "Nope", ""), "no parser named"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, tt.err, tt.want)
		}
	}
}

func TestParsePort(t *testing.T) {
	tests := []struct {
		in   string
		port Port
		side Role
		err  bool
	}{
		{"80/tcp", Port{80, flow.ProtoTCP}, Both, false},
		{"80/tcp%orig", Port{80, flow.ProtoTCP}, Orig, false},
		{"53/udp%resp", Port{53, flow.ProtoUDP}, Resp, false},
		{"65535/udp", Port{65535, flow.ProtoUDP}, Both, false},
		{"65536/udp", Port{}, 0, true},
		{"80", Port{}, 0, true},
		{"80/sctp", Port{}, 0, true},
		{"x/tcp", Port{}, 0, true},
		{"80/tcp%both", Port{}, 0, true},
		{"HTTP::Requests", Port{}, 0, true},
	}
	for _, tt := range tests {
		p, side, err := ParsePort(tt.in)
		if (err != nil) != tt.err || p != tt.port || (err == nil && side != tt.side) {
			t.Errorf("ParsePort(%q) = %v, %v, %v", tt.in, p, side, err)
		}
		if err == nil && side == Both && p.String() != tt.in {
			t.Errorf("Port.String() = %q, want %q", p, tt.in)
		}
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	r, _, _ := testRegistry(t)
	names := [][]byte{[]byte("80/tcp%orig"), []byte("DNS::Message"), []byte("unknown/x")}
	allocs := testing.AllocsPerRun(1000, func() {
		for _, n := range names {
			r.Lookup(n)
		}
	})
	if allocs != 0 {
		t.Errorf("Lookup allocates %v times per run, want 0", allocs)
	}
}

// funcAnalyzer is an Analyzer whose type cannot be compared.
type funcAnalyzer struct{ _ func() } // a func field makes it incomparable

func (funcAnalyzer) Open(*Conn) ConnParser { return nil }

// TestPortIndex checks the port lookup against the port map as ports come
// and go, with enough of them that the table grows and searches collide.
func TestPortIndex(t *testing.T) {
	r, _, _ := testRegistry(t)
	in := map[Port]bool{{80, flow.ProtoTCP}: true, {53, flow.ProtoUDP}: true}
	for n := uint16(1); n <= 200; n++ {
		p := Port{n * 37, flow.ProtoUDP}
		must(t, r.SetPort(p, "DNS::Message", ""))
		in[p] = true
		if n%3 == 0 {
			r.RemovePort(Port{n * 37 / 2, flow.ProtoUDP})
			delete(in, Port{n * 37 / 2, flow.ProtoUDP})
		}
	}
	for n := range 1 << 14 {
		for _, proto := range []uint8{flow.ProtoTCP, flow.ProtoUDP} {
			p := Port{uint16(n), proto}
			e, ok := r.PortEntries(p)
			if (e != nil) != in[p] || ok[Orig] != in[p] {
				t.Fatalf("PortEntries(%v) = %v %v, want parsed %v", p, e, ok, in[p])
			}
			if _, fok := r.ForPort(p); fok != ok {
				t.Fatalf("ForPort(%v) = %v, PortEntries %v", p, fok, ok)
			}
		}
	}
}

package runner

import (
	"slices"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// TestVariantsFromDescriptors checks that the variants and the replay
// targets of a protocol follow its descriptor: no std variants without a
// std implementation, no tshark variant without a tshark command, and the
// replay binary from the package the descriptor names; analyzer variants
// only for the protocols the analyzer binary knows.
func TestVariantsFromDescriptors(t *testing.T) {
	plain := &parsers.Protocol{Name: "plain"}
	elsewhere := &parsers.Protocol{Name: "elsewhere", ReplayPackage: "tools/elsewhere", TShark: []string{"-Y", "x"}}
	for _, p := range []*parsers.Protocol{plain, elsewhere} {
		if err := parsers.RegisterFunc(p, parsers.Native, func(any) parsers.Analyzer { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if err := parsers.RegisterFunc(elsewhere, builtin.Std, func(any) parsers.Analyzer { return nil }); err != nil {
		t.Fatal(err)
	}
	cfg := VariantConfig{TraceDir: "d", WorkDir: "w", TShark: "tshark", Known: []*parsers.Protocol{plain, elsewhere}}
	want := []string{
		"plain-static", "plain-opt",
		"elsewhere-static", "elsewhere-opt", "elsewhere-static-std", "elsewhere-tshark",
	}
	if got := Names(Variants(cfg)); !slices.Equal(got, want) {
		t.Errorf("variants\n%q\nwant\n%q", got, want)
	}
	cfg.Protocols = []string{"elsewhere", "unknown"}
	if got := Names(Variants(cfg)); !slices.Equal(got, want[2:]) {
		t.Errorf("variants of elsewhere and an unknown protocol: %q", got)
	}
	// The protocols of the analyzer binary get analyzer variants.
	httpOnly := VariantConfig{TraceDir: "d", WorkDir: "w", Protocols: []string{"http"}}
	if got, want := Names(Variants(httpOnly)), []string{"http-static", "http-opt", "http-static-std",
		"http-analyze", "http-analyze-opt", "http-analyze-std"}; !slices.Equal(got, want) {
		t.Errorf("variants of http\n%q\nwant\n%q", got, want)
	}
	targets := ReplayTargets(cfg.Known)
	wantTargets := []Target{
		{"plain-static", "cmd/plain-parser", Static}, {"elsewhere-static", "tools/elsewhere", Static},
		{"plain-opt", "cmd/plain-parser", Opt}, {"elsewhere-opt", "tools/elsewhere", Opt},
	}
	if !slices.Equal(targets, wantTargets) {
		t.Errorf("replay targets %+v, want %+v", targets, wantTargets)
	}
}

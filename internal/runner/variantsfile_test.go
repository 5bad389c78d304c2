package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// TestDefaultVariantsUnchanged holds the variants of the embedded
// variants file to those the runner made before variants were data
// (legacyVariants, kept as it was): with no file of the user's, the table
// is the same, row for row and argument for argument.
func TestDefaultVariantsUnchanged(t *testing.T) {
	for _, cfg := range []VariantConfig{
		{TraceDir: "data", WorkDir: "benchmark"},
		{TraceDir: "data", WorkDir: "benchmark", TShark: "/usr/bin/tshark"},
		{TraceDir: "/abs/data", WorkDir: "w", TShark: "tshark", Protocols: []string{"dns"}},
		{TraceDir: "d", WorkDir: "w", TShark: "tshark", Protocols: []string{"dns", "http", "nope"}},
	} {
		got, want := Variants(cfg), legacyVariants(cfg)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%+v:\ngot  %+v\nwant %+v", cfg, got, want)
		}
	}
}

// legacyVariants is Variants as it was before the variants file.
func legacyVariants(cfg VariantConfig) []Variant {
	known := cfg.Known
	if known == nil {
		known = builtin.Protocols()
	}
	protos := cfg.Protocols
	if protos == nil {
		protos = parsers.ProtocolNames(known)
	}
	out := cfg.OutDir()
	var vs []Variant
	for _, p := range protos {
		desc, ok := parsers.FindProtocol(known, p)
		if !ok {
			continue
		}
		_, hasStd := desc.Implementation(builtin.Std)
		analyzed := slices.Contains(builtin.Protocols(), desc)
		dat := filepath.Join(cfg.TraceDir, "spicy-"+p+".dat")
		pcap := filepath.Join(cfg.TraceDir, "spicy-"+p+".pcap")
		replay := func(name, binary, parsers string) Variant {
			logDir := filepath.Join(out, name)
			args := []string{"-U", "-F", dat}
			if parsers != "native" {
				args = []string{"-U", "--parsers", parsers, "-F", dat}
			}
			return Variant{
				Name: name, Protocol: p, Kind: Replay, Parsers: parsers,
				Binary:  filepath.Join(cfg.WorkDir, binary),
				Args:    args,
				LogArgs: []string{"--log-dir", logDir},
				Input:   dat, LogDir: logDir, Logs: []string{p + ".log"},
				ProfileFlag: "--cpuprofile", Built: true,
			}
		}
		analyze := func(name, binary, parsers string) Variant {
			logDir := filepath.Join(out, name)
			return Variant{
				Name: name, Protocol: p, Kind: Analyze, Parsers: parsers,
				Binary: filepath.Join(cfg.WorkDir, binary),
				Args:   []string{"-r", pcap, "-o", logDir, "--parsers", parsers},
				Input:  pcap, LogDir: logDir, Logs: []string{"conn.log", p + ".log"},
				ProfileFlag: "--cpuprofile", Built: true,
			}
		}
		vs = append(vs, replay(p+"-static", p+"-static", "native"), replay(p+"-opt", p+"-opt", "native"))
		if hasStd {
			vs = append(vs, replay(p+"-static-std", p+"-static", "std"))
		}
		if analyzed {
			vs = append(vs, analyze(p+"-analyze", "analyze-static", "native"), analyze(p+"-analyze-opt", "analyze-opt", "native"))
		}
		if analyzed && hasStd {
			vs = append(vs, analyze(p+"-analyze-std", "analyze-static", "std"))
		}
		if args := desc.TShark; args != nil && cfg.TShark != "" {
			name := p + "-tshark"
			vs = append(vs, Variant{
				Name: name, Protocol: p, Kind: TShark, Binary: cfg.TShark,
				// -n: no name resolution (no DNS lookups while timed).
				Args:  append([]string{"-n", "-r", pcap}, args...),
				Input: pcap, LogDir: filepath.Join(out, name), Logs: []string{p + ".log"},
				StdoutLog: p + ".log",
			})
		}
	}
	return vs
}

// A malformed variants file is an error naming the file, the line and
// the key.
func TestParseVariantsErrors(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"syntax", "[[variant]]\nname = \"x\nkind = \"replay\"\n", `v.toml:2: `},
		{"type", "[[variant]]\nname = 3\n", `v.toml:2: .*name`},
		{"unknown key", "[[variant]]\nname = \"x\"\nkind = \"replay\"\nbinary = \"b\"\nbianry = \"c\"\n", `v.toml:5: variant "x": unknown key "bianry"`},
		{"unknown top key", "title = \"x\"\n[[variant]]\nname = \"x\"\n", `v.toml:1: unknown key "title"`},
		{"no name", "[[variant]]\nkind = \"replay\"\n", `v.toml:1: variant: name: missing`},
		{"bad name", "[[variant]]\nname = \"a b\"\nkind = \"replay\"\nbinary = \"b\"\n", `v.toml:2: variant "a b": name:`},
		{"bad kind", "[[variant]]\nname = \"x\"\nkind = \"zeek\"\n", `v.toml:3: variant "x": kind: "zeek": want replay`},
		{"no kind", "[[variant]]\nname = \"x\"\n", `v.toml:1: variant "x": kind: "": want`},
		{"key of another kind", "[[variant]]\nname = \"x\"\nkind = \"replay\"\nbinary = \"b\"\ncommand = [\"y\"]\n", `v.toml:5: variant "x": command: not a key of kind replay`},
		{"no command", "[[variant]]\nname = \"x\"\nkind = \"program\"\ninput = \"pcap\"\n", `v.toml:1: variant "x": command: missing`},
		{"bad input", "[[variant]]\nname = \"x\"\nkind = \"program\"\ncommand = [\"y\"]\ninput = \"pcapng\"\n", `v.toml:5: variant "x": input: "pcapng"`},
		{"bad count", "[[variant]]\nname = \"x\"\nkind = \"program\"\ncommand = [\"y\"]\ninput = \"pcap\"\ncount = \"lines\"\n", `v.toml:6: variant "x": count:`},
		{"stdout without log", "[[variant]]\nname = \"x\"\nkind = \"program\"\ncommand = [\"y\"]\ninput = \"dat\"\ncount = \"stdout\"\n", `v.toml:1: variant "x": logs: count = "stdout" takes one`},
		{"unknown protocol", "[[variant]]\nname = \"x\"\nkind = \"replay\"\nbinary = \"b\"\nprotocols = [\"smtp\"]\n", `v.toml:5: variant "x": protocols: unknown protocol "smtp"`},
		{"go without dir", "[[variant]]\nname = \"x\"\nkind = \"go\"\npackage = \"example.com/x\"\nprotocols = [\"http\"]\n", `v.toml:4: variant "x": package: give dir`},
		{"go without protocols", "[[variant]]\nname = \"x\"\nkind = \"go\"\npackage = \"example.com/x\"\nversion = \"v1.0.0\"\n", `v.toml:1: variant "x": protocols: missing`},
		{"drop with more", "[[variant]]\nname = \"x\"\ndrop = true\nkind = \"replay\"\n", `v.toml:4: variant "x": kind: an entry that drops`},
		{"twice", "[[variant]]\nname = \"x\"\nkind = \"replay\"\nbinary = \"b\"\n\n[[variant]]\nname = \"x\"\nkind = \"replay\"\nbinary = \"c\"\n", `v.toml:7: variant "x": name: a second entry named "x" \(the first is on line 1\)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseVariants("v.toml", []byte(tt.file))
			if err == nil || !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("error %v, want %s", err, tt.want)
			}
		})
	}
}

// A user's file replaces rows by name, drops rows by pattern and adds
// rows after the built-in ones of each protocol.
func TestVariantsFileMerge(t *testing.T) {
	f, err := ParseVariants("v.toml", []byte(`
[[variant]]
name = "{protocol}-opt"
kind = "replay"
binary = "{protocol}-opt-v4"

[[variant]]
name = "*-analyze-*"
drop = true

[[variant]]
name = "http-static-std"
drop = true

[[variant]]
name = "{protocol}-echo"
kind = "program"
command = ["echo", "{protocol}", "{dat}"]
input = "dat"
count = "stdout"
logs = ["{protocol}.log"]

[[variant]]
name = "fast"
kind = "go"
package = "example.com/fast"
version = "v1.0.0"
protocols = ["dns"]
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := VariantConfig{TraceDir: "d", WorkDir: "w", File: f}
	vs := Variants(cfg)
	want := []string{
		"http-static", "http-opt", "http-analyze", "http-echo",
		"dns-static", "dns-opt", "dns-static-std", "dns-analyze", "dns-echo",
		"dns-fast-static", "dns-fast-opt", "dns-analyze-fast",
	}
	if got := Names(vs); !slices.Equal(got, want) {
		t.Fatalf("variants\n%q\nwant\n%q", got, want)
	}
	opt, _ := Find(vs, "dns-opt")
	if opt.Binary != filepath.Join("w", "dns-opt-v4") {
		t.Errorf("replaced dns-opt runs %s", opt.Binary)
	}
	echo, _ := Find(vs, "dns-echo")
	if got := echo.Command(false); !slices.Equal(got[1:], []string{"dns", filepath.Join("d", "spicy-dns.dat")}) || echo.StdoutLog != "dns.log" {
		t.Errorf("dns-echo runs %q, stdout to %q", got, echo.StdoutLog)
	}
	fast, _ := Find(vs, "dns-analyze-fast")
	if got := strings.Join(fast.Command(false), " "); got != "w/analyze-fast-static -r d/spicy-dns.pcap -o w/output/dns-analyze-fast --parsers fast --protocols dns" {
		t.Errorf("dns-analyze-fast runs %s", got)
	}
	static, _ := Find(vs, "dns-fast-static")
	if got := strings.Join(static.Command(true), " "); got != "w/dns-fast-static -U --parsers fast -F d/spicy-dns.dat --log-dir w/output/dns-fast-static" || !static.Built {
		t.Errorf("dns-fast-static runs %s (built: %v)", got, static.Built)
	}
}

// The embedded file parses, and documents every key the reader takes.
func TestDefaultVariantsDocumented(t *testing.T) {
	DefaultVariants()
	doc, err := os.ReadFile("variantsfile.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range entryKeys {
		if !regexp.MustCompile(`(?m)^//\t` + k + ` `).Match(doc) {
			t.Errorf("the doc of VariantsFile does not describe key %s", k)
		}
	}
}

// FuzzParseVariants holds the variants-file reader to errors, never a
// panic, on any input, and to rows that can be listed for what it accepts.
func FuzzParseVariants(f *testing.F) {
	f.Add(defaultVariantsTOML)
	for _, name := range []string{"peers.toml", "tools.toml"} {
		if data, err := os.ReadFile(filepath.Join("..", "..", "examples", name)); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[[variant]]\nname = \"x\"\nkind = \"go\"\npackage = \"p\"\ndir = \"d\"\nprotocols = [\"http\"]\n"))
	f.Add([]byte("[[variant]]\nname = \"*\"\ndrop = true\n[variant.x]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vf, err := ParseVariants("f.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.toml") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, v := range Variants(VariantConfig{TraceDir: "d", WorkDir: "w", TShark: "tshark", File: vf}) {
			if v.Name == "" || v.Binary == "" {
				t.Fatalf("row %+v", v)
			}
			v.CommandLine(true)
		}
	})
}

// A Go entry's dir is relative to the variants file.
func TestGoEntryDirRelativeToFile(t *testing.T) {
	f, err := ParseVariants(filepath.Join("a", "b", "v.toml"), []byte("[[variant]]\nname = \"m\"\nkind = \"go\"\npackage = \"example.com/m\"\ndir = \"m\"\nprotocols = [\"dns\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.goEntries()[0].Dir; got != filepath.Join("a", "b", "m") {
		t.Errorf("dir %q, want a/b/m", got)
	}
}

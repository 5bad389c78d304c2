package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/preprocess"
)

// A Go entry naming a local module (testdata/peer, a module of its own
// that registers "relay" for HTTP and DNS) is built in both modes, with
// the flags, PGO profile and GOAMD64 of the built-in binaries, and its
// rows run: the replay binaries and the analyzer count the same records.
func TestBuildGoEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wirebench's binaries")
	}
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "variants.toml")
	peer, err := filepath.Abs(filepath.Join("testdata", "peer"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`
[[variant]]
name = "relay"
kind = "go"
package = "example.com/relay"
dir = "`+peer+`"
protocols = ["http", "dns"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadVariantsFile(file)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	amd64 := GOAMD64Choice{Level: "v3", Reason: "as asked"}
	built, err := Build(context.Background(), BuildConfig{Source: src, WorkDir: work, Targets: []Target{}, Variants: f}, amd64)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range built {
		names = append(names, b.Name)
	}
	want := []string{"http-relay-static", "dns-relay-static", "analyze-relay-static", "http-relay-opt", "dns-relay-opt"}
	if !slices.Equal(names, want) {
		t.Fatalf("built %q, want %q", names, want)
	}
	for _, b := range built {
		s := settingsOf(t, b.Path)
		if s["CGO_ENABLED"] != "0" || s["-trimpath"] != "true" {
			t.Errorf("%s: CGO_ENABLED=%q -trimpath=%q", b.Name, s["CGO_ENABLED"], s["-trimpath"])
		}
		switch b.Mode {
		case Static:
			if s["-pgo"] != "" || s["GOAMD64"] == "v3" {
				t.Errorf("%s: -pgo=%q GOAMD64=%q, want no profile and the default level", b.Name, s["-pgo"], s["GOAMD64"])
			}
		case Opt:
			if !strings.HasSuffix(s["-pgo"], "default.pgo") || s["GOAMD64"] != "v3" || b.PGO == "" {
				t.Errorf("%s: -pgo=%q GOAMD64=%q, want the replay binary's profile and v3", b.Name, s["-pgo"], s["GOAMD64"])
			}
		}
		if b.Entry != "relay" {
			t.Errorf("%s: entry %q", b.Name, b.Entry)
		}
	}

	// Its rows run on a batch file and a pcap made from a bundled trace.
	data := preprocessed(t, filepath.Join("..", "..", "traces", "http-dns-plain.pcap"))
	vs, err := Select(Variants(VariantConfig{TraceDir: data, WorkDir: work, File: f}), []string{"*relay*"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Names(vs), []string{"http-relay-static", "http-relay-opt", "http-analyze-relay",
		"dns-relay-static", "dns-relay-opt", "dns-analyze-relay"}; !slices.Equal(got, want) {
		t.Fatalf("rows %q, want %q", got, want)
	}
	counts := map[string]int{}
	for _, v := range vs {
		run := execVariant(context.Background(), v, RunConfig{OutDir: filepath.Join(work, "output"), CPU: -1}, true)
		if !run.OK() {
			t.Fatalf("%s: %v", v.CommandLine(true), run.Err)
		}
		log := v.Protocol + ".log"
		i := slices.IndexFunc(run.Counts, func(c Count) bool { return c.Log == log })
		if i < 0 || run.Counts[i].Records == 0 {
			t.Fatalf("%s counted %v, want records in %s", v.Name, run.Counts, log)
		}
		if n, ok := counts[v.Protocol]; ok && n != run.Counts[i].Records {
			t.Errorf("%s counted %d records in %s, the replay binary %d", v.Name, run.Counts[i].Records, log, n)
		}
		counts[v.Protocol] = run.Counts[i].Records
	}
}

// A Go entry that does not compile fails the build with an error naming
// the entry and showing the compiler's message.
func TestBuildGoEntryError(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"broken/go.mod":    "module example.com/broken\n\ngo 1.26.0\n",
		"broken/broken.go": "package broken\n\nfunc init() { undefinedName() }\n",
		"v.toml":           "[[variant]]\nname = \"broken\"\nkind = \"go\"\npackage = \"example.com/broken\"\ndir = \"broken\"\nprotocols = [\"http\"]\n",
	})
	f, err := ReadVariantsFile(filepath.Join(dir, "v.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Build(context.Background(), BuildConfig{Source: src, WorkDir: filepath.Join(dir, "work"), Targets: []Target{}, Variants: f}, GOAMD64Choice{})
	if err == nil || !strings.Contains(err.Error(), `variant "broken": static build`) || !strings.Contains(err.Error(), "undefined: undefinedName") {
		t.Fatalf("error %v, want one naming the entry with the compiler's message", err)
	}
}

// preprocessed returns a directory with the sub-traces and batch files of
// trace.
func preprocessed(t *testing.T, trace string) string {
	t.Helper()
	if _, err := os.Stat(trace); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), data, trace); err != nil {
		t.Fatal(err)
	}
	return data
}

// writeFiles writes files (by path relative to dir) into dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package runner

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindSource(t *testing.T) {
	src := writeSourceTree(t, map[string]string{"cmd/http-parser/main.go": tinyMain})
	deep := filepath.Join(src, "cmd", "http-parser")
	got, err := FindSource("", deep)
	if err != nil || got != src {
		t.Errorf("FindSource(%s) = %q, %v; want %s", deep, got, err, src)
	}
	// The first start that lies in a tree wins; others are tried in turn.
	outside := t.TempDir()
	if got, err := FindSource(outside, deep); err != nil || got != src {
		t.Errorf("FindSource(outside, deep) = %q, %v", got, err)
	}
	if _, err := FindSource(outside); !errors.Is(err, ErrNoSource) || !strings.Contains(err.Error(), "-b SRC") {
		t.Errorf("FindSource(outside) error %v, want ErrNoSource naming -b", err)
	}
	// Another module's go.mod on the way up is not a wirebench tree.
	other := filepath.Join(src, "third_party", "x")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(src, "third_party", "go.mod"), []byte("module example.com/x\n"), 0o644)
	if got, err := FindSource(other); err != nil || got != src {
		t.Errorf("FindSource through another module = %q, %v", got, err)
	}
	if err := CheckSource(filepath.Join(src, "third_party")); err == nil || !strings.Contains(err.Error(), `declares module "example.com/x"`) {
		t.Errorf("CheckSource of another module: %v", err)
	}
}

func TestGoModDirective(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ content, name, want string }{
		{"module github.com/wirebench/wirebench\n", "module", ModulePath},
		{"// comment\nmodule \"github.com/wirebench/wirebench\" // yes\n", "module", ModulePath},
		{"go 1.26\nmodule\tgithub.com/wirebench/wirebench\n", "module", ModulePath},
		{"modules x\n", "module", ""},
		{"module x\n\ngo 1.26\n", "go", "1.26"},
		{"module x\ngodebug default=go1.21\ngo 1.25.0 // minimum\n", "go", "1.25.0"},
		{"module x\n", "go", ""},
	} {
		p := filepath.Join(dir, "go.mod")
		os.WriteFile(p, []byte(tt.content), 0o644)
		got, err := goModDirective(p, tt.name)
		if got != tt.want || (tt.want == "") != (err != nil) {
			t.Errorf("goModDirective(%q, %q) = %q, %v; want %q", tt.content, tt.name, got, err, tt.want)
		}
	}
}

// NewestSource counts the files that go into the binaries: not tests,
// testdata, or the modules of their own nested in the tree (examples).
func TestNewestSource(t *testing.T) {
	src := writeSourceTree(t, map[string]string{
		"cmd/x/main.go":            "package main\n",
		"cmd/x/main_test.go":       "package main\n",
		"cmd/x/testdata/t.go":      "package t\n",
		"examples/peer/go.mod":     "module example.com/peer\n",
		"examples/peer/peer.go":    "package peer\n",
		"cmd/x/default.pgo":        "profile",
		"internal/y/y.go":          "package y\n",
		"internal/y/y_internal.go": "package y\n",
	})
	old := time.Now().Add(-time.Hour)
	newer := time.Now()
	filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(path, old, old)
		}
		return nil
	})
	for _, f := range []string{"cmd/x/main_test.go", "cmd/x/testdata/t.go", "examples/peer/peer.go"} {
		os.Chtimes(filepath.Join(src, f), newer, newer)
	}
	os.Chtimes(filepath.Join(src, "internal/y/y.go"), old.Add(time.Minute), old.Add(time.Minute))
	os.Chtimes(filepath.Join(src, "cmd/x/default.pgo"), old.Add(2*time.Minute), old.Add(2*time.Minute))
	newest, withPGO, err := NewestSource(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := filepath.ToSlash(strings.TrimPrefix(newest.Path, src)); got != "/internal/y/y.go" {
		t.Errorf("newest %s, want /internal/y/y.go", got)
	}
	if got := filepath.ToSlash(strings.TrimPrefix(withPGO.Path, src)); got != "/cmd/x/default.pgo" {
		t.Errorf("newest with PGO %s, want /cmd/x/default.pgo", got)
	}
}

package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func TestModulePath(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]string{
		"module github.com/wirebench/wirebench\n":                        ModulePath,
		"// comment\nmodule \"github.com/wirebench/wirebench\" // yes\n": ModulePath,
		"go 1.26\nmodule\tgithub.com/wirebench/wirebench\n":              ModulePath,
		"modules x\n": "",
	} {
		p := filepath.Join(dir, "go.mod")
		os.WriteFile(p, []byte(content), 0o644)
		got, err := modulePath(p)
		if got != want || (want == "") != (err != nil) {
			t.Errorf("modulePath(%q) = %q, %v; want %q", content, got, err, want)
		}
	}
}

package replay

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// TestOutsideModule builds testdata/outside, a module of its own that
// registers an HTTP implementation through the public API and makes a
// replay binary of it in a main of a few lines, with go build as its
// author would. On every bundled trace the binary's http.log, with that
// implementation, holds the same records as native's.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	root, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "outside-http-parser")
	build := exec.Command("go", "build", "-o", bin, "./cmd/outside-http-parser")
	build.Dir = filepath.Join("testdata", "outside")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in %s: %v\n%s", build.Dir, err, out)
	}
	traceFiles, err := filepath.Glob(filepath.Join(root, "traces", "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	stamps := regexp.MustCompile(`(?m)^#(open|close).*\n`)
	var traced int
	for _, trace := range traceFiles {
		if filepath.Ext(trace) == ".json" {
			continue
		}
		traced++
		dir := t.TempDir()
		if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace); err != nil {
			t.Fatal(err)
		}
		batch := filepath.Join(dir, preprocess.BatchFile("http"))
		outside, native := filepath.Join(dir, "outside"), filepath.Join(dir, "native")
		run := exec.Command(bin, "--parsers", "inspect", "-U", "--log-dir", outside, "-F", batch)
		var stderr bytes.Buffer
		run.Stderr = &stderr
		if err := run.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(trace), err, stderr.Bytes())
		}
		if m := usageRE.FindStringSubmatch(stderr.String()); m == nil || m[3] == "0" {
			t.Errorf("%s: -U line %q: want transactions", filepath.Base(trace), stderr.String())
		}
		if code, _, stderr := runMain(t, HTTP, "", "--log-dir", native, "-F", batch); code != ExitOK {
			t.Fatalf("%s: native replay: exit %d, %s", filepath.Base(trace), code, stderr)
		}
		got, err1 := os.ReadFile(filepath.Join(outside, "http.log"))
		want, err2 := os.ReadFile(filepath.Join(native, "http.log"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got, want := stamps.ReplaceAll(got, nil), stamps.ReplaceAll(want, nil); !bytes.Equal(got, want) {
			t.Errorf("%s: http.log of the outside implementation differs from native's:\n%s\nwant:\n%s", filepath.Base(trace), got, want)
		}
	}
	if traced == 0 {
		t.Fatal("no bundled trace")
	}
}

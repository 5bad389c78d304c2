package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeChild is the path of testdata/fakechild, built once by TestMain: the
// stand-in for every program the runner starts.
var fakeChild string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeChild = filepath.Join(dir, "fakechild")
	// Built without the test's -race or -cover flags: the fake stands in
	// for a release binary.
	cmd := exec.Command("go", "build", "-o", fakeChild, "./testdata/fakechild")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/fakechild: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// linkFake makes dir/name a copy of the fake child (a hard link when the
// file system allows), so that it plays the role name.
func linkFake(t testing.TB, dir, name string) string {
	t.Helper()
	dst := filepath.Join(dir, name)
	if err := os.Link(fakeChild, dst); err == nil {
		return dst
	}
	data, err := os.ReadFile(fakeChild)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

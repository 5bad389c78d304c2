package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isProfile reports whether the file at path holds a pprof profile, which
// is gzip-compressed protocol buffers.
func isProfile(t *testing.T, path string) bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.HasPrefix(data, []byte{0x1f, 0x8b})
}

func TestStartCPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := StartCPU(path)
	if err != nil {
		t.Fatal(err)
	}
	// A second profile cannot run beside the first; the error names it.
	second := filepath.Join(t.TempDir(), "second.pprof")
	if _, err := StartCPU(second); err == nil || !strings.Contains(err.Error(), second) {
		t.Errorf("second StartCPU error = %v; want one naming %s", err, second)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !isProfile(t, path) {
		t.Errorf("%s holds no profile", path)
	}
	// Once stopped, profiling can start again.
	stop, err = StartCPU(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestWriteHeap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "heap.pprof")
	if err := WriteHeap(path); err != nil {
		t.Fatal(err)
	}
	if !isProfile(t, path) {
		t.Errorf("%s holds no profile", path)
	}
}

func TestEmptyPath(t *testing.T) {
	t.Chdir(t.TempDir())
	stop, err := StartCPU("")
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := WriteHeap(""); err != nil {
		t.Fatal(err)
	}
	if files, _ := os.ReadDir("."); len(files) != 0 {
		t.Errorf("empty paths wrote %d files", len(files))
	}
}

func TestBadPath(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir", "p.pprof")
	if _, err := StartCPU(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("StartCPU error = %v; want one naming %s", err, missing)
	}
	if err := WriteHeap(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("WriteHeap error = %v; want one naming %s", err, missing)
	}
}

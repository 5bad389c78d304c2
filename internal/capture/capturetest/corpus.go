package capturetest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// Corpus is the shared corpus of real traces with ground truth, kept next
// to the project (../shared/corpus from the module root) and never copied
// into it.
type Corpus struct {
	Dir     string
	Entries []CorpusEntry
}

// CorpusEntry is one trace of the corpus manifest.
type CorpusEntry struct {
	Trace    string   `json:"trace"` // path relative to Dir/traces
	Path     string   `json:"path"`  // path relative to Dir
	Bytes    int64    `json:"bytes"`
	Features []string `json:"features"`
	Capinfos struct {
		FileType      string `json:"file_type"`
		Encapsulation string `json:"encapsulation"`
		Packets       int    `json:"packets"`
	} `json:"capinfos"`
	Tcpdump *struct {
		TCPPort80 int `json:"tcp_port_80"`
		UDPPort53 int `json:"udp_port_53"`
	} `json:"tcpdump"`
}

// File returns the trace's path.
func (e CorpusEntry) File(c *Corpus) string { return filepath.Join(c.Dir, e.Path) }

// Has reports whether the manifest lists feature f for the trace.
func (e CorpusEntry) Has(f string) bool { return slices.Contains(e.Features, f) }

// LoadCorpus finds the corpus from the working directory (a package
// directory of the module) and reads its manifest. It skips the test when
// the corpus is absent, as on a fresh clone.
func LoadCorpus(t testing.TB) *Corpus {
	t.Helper()
	c, err := FindCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Skip("../shared/corpus (real traces with ground truth, next to the module root) is absent")
	}
	return c
}

// FindCorpus is LoadCorpus for callers that do without the corpus: it
// returns nil when the corpus is absent.
func FindCorpus() (*Corpus, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "corpus")
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m struct {
		Entries []CorpusEntry `json:"entries"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("corpus manifest: %w", err)
	}
	return &Corpus{Dir: dir, Entries: m.Entries}, nil
}

// moduleRoot walks up from the working directory to the directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// NeedTool returns the path of an external tool (tcpdump, tshark,
// mergecap) or skips the test when it is not installed.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (CI installs it; see .ci/run)", name)
	}
	return path
}

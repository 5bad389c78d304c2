// Package corpustest locates, for tests and development tools, the data
// that lives next to the module root in ../shared and never inside the
// project:
//
//   - ../shared/corpus: real traces from Zeek's test suite, with a
//     manifest of their features and counts and Zeek's logs as ground
//     truth (CorpusDir, LoadCorpus, FindCorpus, ReadCorpus);
//   - ../shared/interop/spicy-batch: batch files from the Spicy
//     repository (InteropDir);
//   - ../shared/real: samples of real traffic (RealTrace).
//
// BundledTraces lists the sample traces inside the module, in traces/.
//
// ReadLog and Project read the Zeek logs of the corpus baselines for
// comparison with what the project writes.
//
// On a fresh clone these are absent: the helpers taking a testing.TB then
// skip the test with a message that says what is missing, where it was
// looked for and what it holds. NeedTool does the same for the external
// programs (tcpdump, tshark, mergecap) some tests run.
//
// Paths are found from the working directory, which for a test is its
// package directory: ModuleRoot walks up from it to go.mod.
package corpustest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Corpus is the corpus of real traces with ground truth.
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
	Class    string   `json:"protocol_class"` // http, dns, ...

	// The Zeek test whose baselines (Dir/baselines/Test) hold Zeek's logs
	// of the trace, if any, and the command it ran.
	Test string `json:"zeek_test_name"`
	Cmd  string `json:"zeek_cmd"`
	// Clean reports whether the test ran Zeek with its default scripts,
	// so that Expected (records per log: "http_log", "dns_log",
	// "conn_log") is what a default Zeek writes.
	Clean    bool             `json:"clean"`
	Expected map[string]int64 `json:"expected"`

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

// What the skip messages say the shared directories hold.
const (
	corpusHolds  = "real traces from Zeek's test suite with Zeek's logs as ground truth"
	interopHolds = "batch files from the Spicy repository: a Zeek-recorded TFTP session and spicy-driver test inputs"
	realHolds    = "samples of real traffic"
)

// CorpusDir returns the corpus directory (../shared/corpus next to the
// module root), or skips the test when it holds no manifest.json.
func CorpusDir(tb testing.TB) string {
	tb.Helper()
	return need(tb, "manifest.json", corpusHolds, "corpus")
}

// InteropDir returns the directory of Spicy's sample batch files
// (../shared/interop/spicy-batch next to the module root), or skips the
// test when it is absent.
func InteropDir(tb testing.TB) string {
	tb.Helper()
	return need(tb, "", interopHolds, "interop", "spicy-batch")
}

// RealTrace returns the path of the real-traffic sample name in
// ../shared/real next to the module root (e.g. "m57-day11-18-10k.pcap"),
// or skips the test when it is absent.
func RealTrace(tb testing.TB, name string) string {
	tb.Helper()
	return filepath.Join(need(tb, name, realHolds, "real"), name)
}

// BundledTraces returns the paths of the sample traces bundled in the
// module's traces directory (their truth files left out), or fails the
// test when there are none.
func BundledTraces(tb testing.TB) []string {
	tb.Helper()
	root, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(root, "traces", "*.pcap*"))
	paths = slices.DeleteFunc(paths, func(p string) bool { return strings.HasSuffix(p, ".json") })
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no bundled traces in %s (%v)", filepath.Join(root, "traces"), err)
	}
	return paths
}

// need returns ../shared/sub... next to the module root, skipping the test
// when it (or the file probe in it, when not empty) does not exist.
func need(tb testing.TB, probe, holds string, sub ...string) string {
	tb.Helper()
	dir, err := sharedDir(sub...)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, probe))
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("%s is absent (%s; looked for %s)", filepath.Join(append([]string{"..", "shared"}, sub...)...), holds, filepath.Join(dir, probe))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// LoadCorpus finds the corpus and reads its manifest. It skips the test
// when the corpus is absent, as on a fresh clone.
func LoadCorpus(tb testing.TB) *Corpus {
	tb.Helper()
	c, err := ReadCorpus(CorpusDir(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// FindCorpus is LoadCorpus for callers that do without the corpus: it
// returns nil, and no error, when the corpus is absent.
func FindCorpus() (*Corpus, error) {
	dir, err := sharedDir("corpus")
	if err != nil {
		return nil, err
	}
	c, err := ReadCorpus(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return c, err
}

// ReadCorpus reads the manifest of the corpus in dir.
func ReadCorpus(dir string) (*Corpus, error) {
	name := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	var m struct {
		Entries []CorpusEntry `json:"entries"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &Corpus{Dir: dir, Entries: m.Entries}, nil
}

// sharedDir returns ../shared/sub... next to the module root, whether it
// exists or not.
func sharedDir(sub ...string) (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{filepath.Dir(root), "shared"}, sub...)...), nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod in %s or above it", wd)
		}
		dir = parent
	}
}

// NeedTool returns the path of an external tool (tcpdump, tshark,
// mergecap) or skips the test when it is not installed.
func NeedTool(tb testing.TB, name string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		tb.Skipf("%s is not installed (CI installs it; see .ci/run)", name)
	}
	return path
}

// ReadLog reads a Zeek TSV log, or a zeek-cut projection of one (whose
// first line names the columns), into its column names and its records,
// each a map of column name to value as the log writes it ("-" unset,
// "(empty)" empty). Comment lines (#...) and blank lines are skipped; a
// record's values beyond the last column are dropped, and columns beyond
// its last value are left out of its map.
func ReadLog(data []byte) (fields []string, records []map[string]string) {
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "#fields\t"); ok {
			fields = strings.Split(rest, "\t")
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if fields == nil {
			fields = strings.Split(line, "\t")
			continue
		}
		rec := make(map[string]string, len(fields))
		for i, v := range strings.Split(line, "\t") {
			if i < len(fields) {
				rec[fields[i]] = v
			}
		}
		records = append(records, rec)
	}
	return fields, records
}

// Project returns, for every record, its values of fields joined by tabs
// (a missing column gives ""), sorted: two logs hold the same records on
// those fields, in any order, when their projections are equal.
func Project(records []map[string]string, fields []string) []string {
	out := make([]string, 0, len(records))
	row := make([]string, len(fields))
	for _, rec := range records {
		for i, f := range fields {
			row[i] = rec[f]
		}
		out = append(out, strings.Join(row, "\t"))
	}
	slices.Sort(out)
	return out
}

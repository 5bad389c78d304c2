package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeParser is a stand-in for the replay binaries and the analyzer, for
// fake source trees: it runs steps rounds of a loop, then writes records
// lines into its log (and conn.log for the analyzer).
const fakeParser = `package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

const steps, records = %d, %d

func main() {
	fs := flag.NewFlagSet("fake", flag.ExitOnError)
	fs.Bool("U", false, "")
	in := fs.String("F", "", "")
	r := fs.String("r", "", "")
	fs.String("parsers", "native", "")
	logDir := fs.String("log-dir", "", "")
	out := fs.String("o", "", "")
	fs.String("cpuprofile", "", "")
	fs.Parse(os.Args[1:])
	x := uint64(1)
	for i := 0; i < steps; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(*in+*r), "spicy-"), filepath.Ext(*in+*r))
	dir := *logDir + *out
	if dir == "" {
		return
	}
	os.MkdirAll(dir, 0o755)
	logs := []string{name + ".log"}
	if *out != "" {
		logs = append(logs, "conn.log")
	}
	for _, l := range logs {
		os.WriteFile(filepath.Join(dir, l), []byte(strings.Repeat(fmt.Sprintln(x), records)), 0o644)
	}
}
`

// fakeTree writes a wirebench source tree whose programs are fakeParser.
func fakeTree(t *testing.T, dir string, steps, records int) {
	t.Helper()
	files := map[string]string{"go.mod": "module github.com/wirebench/wirebench\n\ngo 1.26\n"}
	for _, pkg := range []string{"http-parser", "dns-parser", "analyze"} {
		files["cmd/"+pkg+"/main.go"] = fmt.Sprintf(fakeParser, steps, records)
	}
	for name, content := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two fake source trees")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	src := t.TempDir()
	fakeTree(t, src, 10_000_000, 3)
	gitIn(t, src, "init", "-q")
	gitIn(t, src, "add", ".")
	gitIn(t, src, "commit", "-q", "-m", "old")
	data := t.TempDir()
	for _, f := range []string{"spicy-http.dat", "spicy-http.pcap"} {
		os.WriteFile(filepath.Join(data, f), []byte("x"), 0o644)
	}
	work := t.TempDir()
	args := func(more ...string) []string {
		return append([]string{"-t", data, "-d", work, "-b", src, "compare", "-p", "http", "--variants", "http-static,http-analyze", "-n", "5", "--warmup", "0"}, more...)
	}

	// The same commit against itself: no alarm.
	code, stdout, stderr := runCLI(args("--fail-above", "50", "HEAD", "HEAD")...)
	if code != 0 || !strings.Contains(stdout, "http-static") || !strings.Contains(stdout, "old: HEAD (commit ") {
		t.Errorf("HEAD against HEAD: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// The working tree does four times the work and writes a record more.
	fakeTree(t, src, 40_000_000, 4)
	code, stdout, stderr = runCLI(args("HEAD")...)
	if code != 1 || !strings.Contains(stdout, "SLOWER by more than 5%") || !strings.Contains(stdout, "RECORDS DIFFER: old http.log=3, new http.log=4") ||
		!strings.Contains(stderr, "slower by more than 5%: http-static (+") || !strings.Contains(stderr, "different records: http-static, http-analyze") {
		t.Errorf("a slower working tree: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Two directories.
	old := t.TempDir()
	fakeTree(t, old, 40_000_000, 4)
	code, stdout, stderr = runCLI(args("--fail-above", "50", old, src)...)
	if code != 0 || !strings.Contains(stdout, "old: the source tree "+old) {
		t.Errorf("two directories: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	for _, bad := range [][]string{{"no-such-rev"}, {"a", "b", "c"}, {"--fail-above", "-1", "HEAD"}} {
		if code, _, stderr := runCLI(args(bad...)...); code != 2 {
			t.Errorf("%v: exit status %d, want 2; stderr:\n%s", bad, code, stderr)
		}
	}
}

package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/traces"
)

func TestGenTraceUsageErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.pcap")
	tests := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"gen-trace"}, 2, "-o FILE is required"},
		{[]string{"gen-trace", "-o", out, "--size", "12XB"}, 2, "size \"12XB\""},
		{[]string{"gen-trace", "-o", out, "--mix", "smtp=1"}, 2, "unknown kind \"smtp\""},
		{[]string{"gen-trace", "-o", out, "--impair", "loss=200%"}, 2, "rate of loss"},
		{[]string{"gen-trace", "-o", out, "--format", "erf"}, 2, "unknown format"},
		{[]string{"gen-trace", "-o", out, "--link", "token-ring"}, 2, "unknown link layer \"token-ring\""},
		{[]string{"gen-trace", "-o", out, "extra"}, 2, "unexpected argument"},
		{[]string{"gen-trace", "-o", filepath.Join(dir, "no", "such", "dir.pcap"), "--conns", "1"}, 1, "no such file"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		if got := run(tt.args, &stdout, &stderr); got != tt.status || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("run-benchmark %s: status %d, stderr %q; want %d and %q", strings.Join(tt.args, " "), got, stderr.String(), tt.status, tt.stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run left %s behind", out)
	}
}

// TestGenTraceLink writes a trace in another link layer: the file says
// its link type and the truth its link.
func TestGenTraceLink(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wifi.pcap")
	var stdout, stderr bytes.Buffer
	if got := run([]string{"gen-trace", "-o", out, "--conns", "5", "--link", "radiotap"}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	r, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	truth, err := traces.ReadTruth(out + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != capture.LinkTypeRadiotap || truth.Config.Link != traces.LinkRadiotap {
		t.Errorf("link type %d, truth's link %q; want %d and radiotap", r.LinkType(), truth.Config.Link, capture.LinkTypeRadiotap)
	}
}

func TestGenTraceHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if got := run([]string{"gen-trace", "--help"}, &stdout, &stderr); got != 0 {
		t.Fatalf("--help: status %d", got)
	}
	for _, want := range []string{"Usage: run-benchmark gen-trace", "--size", "--conns", "--impair", "truth"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help does not mention %q:\n%s", want, stdout.String())
		}
	}
}

func TestGenTraceWritesTraceAndTruth(t *testing.T) {
	out := filepath.Join(t.TempDir(), "small.pcapng")
	var stdout, stderr bytes.Buffer
	if got := run([]string{"gen-trace", "-o", out, "--conns", "30", "--seed", "5", "--max-body", "16KiB"}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	truth, err := traces.ReadTruth(out + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if truth.Config.Format != traces.PCAPNG || truth.Config.Sessions != 30 || truth.Config.Seed != 5 || truth.Config.Size != 0 {
		t.Errorf("flags did not reach the configuration: %+v", truth.Config)
	}
	if int64(len(data)) != truth.FileBytes || !bytes.HasPrefix(data, []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
		t.Errorf("want a pcapng file of %d bytes, got %d bytes starting % x", truth.FileBytes, len(data), data[:4])
	}
	if !strings.Contains(stdout.String(), out+".truth.json") {
		t.Errorf("the summary does not name the truth file: %s", stdout.String())
	}
}

// TestMakeTracesReproduces runs the gen-trace commands of the Makefile's
// traces target and compares what they write with the bundled traces.
func TestMakeTracesReproduces(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer mk.Close()
	var cmds [][]string
	in := false
	sc := bufio.NewScanner(mk)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "traces:"):
			in = true
		case in && !strings.HasPrefix(line, "\t"):
			in = false
		case in:
			f := strings.Fields(line)
			for i, w := range f {
				if w == "gen-trace" {
					cmds = append(cmds, f[i:])
				}
			}
		}
	}
	if len(cmds) == 0 {
		t.Fatal("the Makefile has no traces target with gen-trace commands")
	}
	dir := t.TempDir()
	for _, args := range cmds {
		var name string
		for i := range args {
			if args[i] == "-o" && i+1 < len(args) {
				name = args[i+1]
				args[i+1] = filepath.Join(dir, filepath.Base(name))
			}
		}
		var stdout, stderr bytes.Buffer
		if got := run(args, &stdout, &stderr); got != 0 {
			t.Fatalf("%s: status %d: %s", strings.Join(args, " "), got, stderr.String())
		}
		for _, suffix := range []string{"", ".truth.json"} {
			want, err := os.ReadFile(filepath.Join(root, name+suffix))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(dir, filepath.Base(name)+suffix))
			if !bytes.Equal(got, want) {
				t.Errorf("make traces would change %s%s: run it and commit the result if the change is intended", name, suffix)
			}
		}
	}
}

func TestGenTraceTruthFlag(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "a.pcap")
	other := filepath.Join(dir, "elsewhere.json")
	var stdout, stderr bytes.Buffer
	if got := run([]string{"gen-trace", "-o", out, "--conns", "5", "--truth", other}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if _, err := traces.ReadTruth(other); err != nil {
		t.Errorf("--truth %s: %v", other, err)
	}
	out2 := filepath.Join(dir, "b.pcap")
	if got := run([]string{"gen-trace", "-o", out2, "--conns", "5", "--truth", "none"}, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if _, err := os.Stat(out2 + ".truth.json"); err == nil {
		t.Errorf("--truth none wrote a truth file")
	}
}

func TestGenProgress(t *testing.T) {
	var trace, term bytes.Buffer
	p := &genProgress{w: &trace, line: &progressLine{w: &term}, goal: 4 << 20, start: time.Now()}
	chunk := bytes.Repeat([]byte{7}, 1<<20)
	for range 3 {
		if n, err := p.Write(chunk); n != len(chunk) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if trace.Len() != 3<<20 {
		t.Errorf("the trace got %d bytes, want %d", trace.Len(), 3<<20)
	}
	// The first write shows the line at once; the next ones come within
	// the quarter second and wait.
	got := term.String()
	if !strings.HasPrefix(got, "\r1.00 MiB written (25%), ") || !strings.HasSuffix(got, " MB/s\x1b[K") || strings.Count(got, "\r") != 1 {
		t.Errorf("terminal got %q, want one line for the first megabyte", got)
	}
	tests := []struct {
		n, goal int64
		want    string
	}{
		{3 << 20, 4 << 20, "3.00 MiB written (75%), 1.6 MB/s"},
		{5 << 20, 4 << 20, "5.00 MiB written (99%), 2.6 MB/s"}, // past the goal while sessions finish
		{5 << 20, 0, "5.00 MiB written, 2.6 MB/s"},             // --conns: no goal
	}
	for _, tt := range tests {
		p := &genProgress{n: tt.n, goal: tt.goal}
		if got := p.String(2 * time.Second); got != tt.want {
			t.Errorf("n %d goal %d: %q, want %q", tt.n, tt.goal, got, tt.want)
		}
	}
}

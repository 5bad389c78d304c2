package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, stdout, stderr := runCLI("--version")
	if code != 0 || !strings.HasPrefix(stdout, "run-benchmark ") || !strings.Contains(stdout, "go1.") || !strings.Contains(stdout, "commit ") {
		t.Errorf("--version: exit status %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func TestDidYouMean(t *testing.T) {
	for typo, want := range map[string]string{"rnu": "run", "preproces": "preprocess", "gentrace": "gen-trace", "buidl": "build", "profiel": "profile"} {
		code, _, stderr := runCLI(typo)
		if code != 2 || !strings.Contains(stderr, `unknown command "`+typo+`": did you mean "`+want+`"?`) {
			t.Errorf("%s: exit status %d, stderr:\n%s", typo, code, stderr)
		}
	}
	if code, _, stderr := runCLI("frobnicate"); code != 2 || strings.Contains(stderr, "did you mean") {
		t.Errorf("frobnicate: exit status %d, stderr:\n%s", code, stderr)
	}
}

func TestGenTraceToStdout(t *testing.T) {
	t.Chdir(t.TempDir())
	code, stdout, stderr := runCLI("gen-trace", "-o", "-", "--conns", "20", "--seed", "3")
	if code != 0 {
		t.Fatalf("exit status %d, stderr:\n%s", code, stderr)
	}
	if len(stdout) < 24 || binary.LittleEndian.Uint32([]byte(stdout[:4])) != 0xa1b2c3d4 {
		t.Errorf("standard output does not start with a pcap header: % x", []byte(stdout[:min(len(stdout), 24)]))
	}
	if strings.Contains(stdout, "wrote ") || !strings.Contains(stderr, "wrote standard output") {
		t.Errorf("the summary belongs on standard error; stderr:\n%s", stderr)
	}
	entries, _ := os.ReadDir(".")
	if len(entries) != 0 {
		t.Errorf("files left in the working directory: %v", entries)
	}
	// The same trace as written to a file.
	if code, _, stderr := runCLI("gen-trace", "-o", "t.pcap", "--conns", "20", "--seed", "3", "--truth", "none"); code != 0 {
		t.Fatal(stderr)
	}
	if data, _ := os.ReadFile("t.pcap"); !bytes.Equal(data, []byte(stdout)) {
		t.Errorf("-o - wrote %d bytes, -o t.pcap %d", len(stdout), len(data))
	}
}

// TestMakeHelp checks that "make help" lists the targets a person uses,
// each with what it does.
func TestMakeHelp(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-s", "help")
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make help: %v\n%s", err, out)
	}
	for _, target := range []string{"build", "test", "bench", "statcheck", "pgo", "fuzz", "memcheck", "microbench", "clean", "traces", "help"} {
		if !strings.Contains(string(out), "\n  "+target+" ") && !strings.HasPrefix(string(out), "  "+target+" ") {
			t.Errorf("make help does not list %s:\n%s", target, out)
		}
	}
}

// TestReadmeCommands checks that the README's examples run as written from
// the repository: wirebench's commands are not on anybody's PATH, so the
// examples name them as make build leaves them (bin/run-benchmark) or
// through scripts/run-benchmark.
func TestReadmeCommands(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	inBlock := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, bare := range []string{"run-benchmark", "analyze", "http-parser", "dns-parser"} {
			if fields[0] == bare {
				t.Errorf("README.md:%d: %q is on nobody's PATH: write bin/%s (after make build) or scripts/run-benchmark", i+1, line, bare)
			}
		}
	}
}

package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBinary builds dns-parser and checks its exit codes and -U line.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "dns-parser")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(stdin string, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stderr.String()
	}
	// A query for example.com, recorded as Zeek records UDP.
	query := "\x00\x07\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"
	in := "!spicy-batch v2\n@begin-conn c block c-o 53/udp%orig c-r 53/udp%resp\n@data c-o 29\n" + query + "\n@end-conn c\n"
	for _, impl := range [][]string{nil, {"--parsers", "native"}, {"--parsers", "std"}} { // nil: the default, native
		code, stderr := run(in, append(impl, "-U")...)
		if code != 0 || !regexp.MustCompile(`^# user_time=\S+ sys_time=\S+ memory=\d+ bytes=29 flows=2 transactions=1 throughput=\S+\n$`).MatchString(stderr) {
			t.Errorf("%v: exit %d, stderr %q", impl, code, stderr)
		}
	}
	if code, stderr := run("!spicy-batch v2\n@data c-o 99\nshort\n"); code != 1 || !strings.Contains(stderr, "<stdin>:2") {
		t.Errorf("truncated input: exit %d, stderr %q", code, stderr)
	}
	if code, _ := run("", "--parsers", "fast"); code != 2 {
		t.Errorf("bad --parsers: exit %d", code)
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestBinary builds http-parser and runs it as a user would: exit codes,
// the -U line and the log.
func TestBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "http-parser")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	req := "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	good := "!spicy-batch v2\n" +
		"@begin-conn 10.0.0.1-1-10.0.0.2-80-tcp stream o 80/tcp%orig r 80/tcp%resp\n" +
		"@data o " + strconv.Itoa(len(req)) + "\n" + req + "\n" +
		"@data r " + strconv.Itoa(len(resp)) + "\n" + resp + "\n" +
		"@end-conn 10.0.0.1-1-10.0.0.2-80-tcp\n"
	file := filepath.Join(dir, "spicy-http.dat")
	if err := os.WriteFile(file, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Stdin = strings.NewReader(stdin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), stdout.String(), stderr.String()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, stdout.String(), stderr.String()
	}

	// The default (native) and both implementations named.
	for _, impl := range [][]string{nil, {"--parsers", "native"}, {"--parsers", "std"}} {
		logs := filepath.Join(t.TempDir(), "logs")
		code, _, stderr := run("", append(impl, "-U", "-F", file, "--log-dir", logs)...)
		if code != 0 || !regexp.MustCompile(`^# user_time=\S+ sys_time=\S+ memory=[1-9]\d* bytes=\d+ flows=2 transactions=1 throughput=\S+\n$`).MatchString(stderr) {
			t.Errorf("%v: exit %d, stderr %q", impl, code, stderr)
		}
		log, err := os.ReadFile(filepath.Join(logs, "http.log"))
		if err != nil || !strings.Contains(string(log), "\t10.0.0.1\t1\t10.0.0.2\t80\t1\tGET\texample.com\t/\t") {
			t.Errorf("%v: http.log: %v\n%s", impl, err, log)
		}
		if code, _, _ := run(good, append(impl, "-U")...); code != 0 {
			t.Errorf("%v: stdin: exit %d", impl, code)
		}
		// The error names the line of the file, counting the lines of the data before.
		bad := strings.Replace(good, "@data r", "@dta r", 1)
		line := "<stdin>:" + strconv.Itoa(strings.Count(bad[:strings.Index(bad, "@dta")], "\n")+1) + ":"
		if code, _, stderr := run(bad, impl...); code != 1 || !strings.Contains(stderr, line) {
			t.Errorf("%v: malformed: exit %d, stderr %q, want %q", impl, code, stderr, line)
		}
	}
	if code, _, _ := run("", "--bogus"); code != 2 {
		t.Errorf("bad flag: exit %d", code)
	}
	if code, stdout, _ := run("", "--help"); code != 0 || !strings.Contains(stdout, "run-benchmark preprocess") {
		t.Errorf("--help: exit %d", code)
	}
}

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture/capturetest"
)

// dnsTrace is a pcap with one DNS query and its reply, and a third frame.
func dnsTrace() []byte {
	query := []byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01")
	reply := append([]byte("\x12\x34\x81\x80\x00\x01\x00\x01\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"),
		"\xc0\x0c\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04\x5d\xb8\xd8\x22"...)
	other := capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4),
		capturetest.IPv4("10.0.0.9", "10.0.0.8", layers.IPProtocolICMPv4),
		gopacket.Payload([]byte{8, 0, 0, 0, 0, 1, 0, 1}))
	return capturetest.Pcap(capturetest.PcapOptions{LinkType: 1},
		capturetest.Record{TS: 1e18, Data: capturetest.UDP4("10.0.0.1", "10.0.0.2", 5555, 53, query)},
		capturetest.Record{TS: 1e18 + 1e6, Data: capturetest.UDP4("10.0.0.2", "10.0.0.1", 53, 5555, reply)},
		capturetest.Record{TS: 1e18 + 2e6, Data: other})
}

func records(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	if !strings.Contains(string(data), "#close") && !strings.HasPrefix(string(data), "{") && n > 0 {
		t.Errorf("%s has no #close line", path)
	}
	return n
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "dns.pcap")
	if err := os.WriteFile(trace, dnsTrace(), 0o644); err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	full := dnsTrace()
	if err := os.WriteFile(cut, full[:len(full)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		status int
		stderr string // a regular expression
		conn   int    // conn.log records; -1: not checked
		dns    int    // dns.log records; -1: no dns.log
	}{
		{"dns", []string{"--parsers", "std", "-r", trace}, 0, `^$`, 2, 1},
		{"two traces", []string{"--parsers", "std", "-r", trace, trace}, 0, `^$`, 2, 2},
		{"standard input", []string{"--parsers", "std", "-r", "-"}, 0, `^$`, 2, 1},
		{"standard input and a file", []string{"--parsers", "std", "-r", trace, "-r", "-"}, 0, `^$`, 2, 2},
		{"usage line", []string{"--parsers", "std", "-U", "-r", trace}, 0,
			`^# user_time=\S+ sys_time=\S+ memory=\d+ bytes=\d+ packets=3 conns=2 http=0 dns=1 throughput=\S+MB/s\n$`, 2, 1},
		{"json", []string{"--parsers", "std", "--json", "-r", trace}, 0, `^$`, 2, 1},
		{"only conn.log", []string{"--parsers", "std", "--protocols", "", "-r", trace}, 0, `^$`, 2, -1},
		{"bad protocol", []string{"--protocols", "smtp", "-r", trace}, 2, `--protocols: "smtp"`, -1, 0},
		{"no dns port", []string{"--parsers", "std", "--dns-ports", "none", "-r", trace}, 0, `^$`, 2, 0},
		{"no dns port by --ports", []string{"--parsers", "std", "--ports", "dns=none", "-r", trace}, 0, `^$`, 2, 0},
		{"--ports wins", []string{"--parsers", "std", "--dns-ports", "none", "--ports", "dns=53", "-r", trace}, 0, `^$`, 2, 1},
		{"--ports of no protocol", []string{"--ports", "smtp=25", "-r", trace}, 2, `--ports "smtp=25": want NAME=LIST, NAME one of http, dns`, -1, 0},
		{"bad --ports", []string{"--ports", "dns=x", "-r", trace}, 2, `--ports dns: "x" is not a port`, -1, 0},
		{"truncated", []string{"--parsers", "std", "-r", cut}, 1, `cut\.pcap: offset \d+: truncated packet record`, 1, 1},
		{"missing trace", []string{"--parsers", "std", "-r", filepath.Join(dir, "nope.pcap")}, 1, `nope\.pcap`, -1, 0},
		{"missing second trace", []string{"--parsers", "std", "-r", trace, "-r", filepath.Join(dir, "nope.pcap")}, 1, `nope\.pcap`, -1, 0},
		{"no trace", []string{"--parsers", "std"}, 2, `no trace to read`, -1, 0},
		{"bad flag", []string{"--frobnicate", "-r", trace}, 2, `unknown flag`, -1, 0},
		{"bad parsers", []string{"--parsers", "fast", "-r", trace}, 2, `--parsers "fast"`, -1, 0},
		{"bad port", []string{"--http-ports", "http", "-r", trace}, 2, `--http-ports: "http" is not a port`, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "logs")
			var stdout, stderr bytes.Buffer
			status := run(append(tt.args, "-o", out), bytes.NewReader(dnsTrace()), &stdout, &stderr)
			if status != tt.status || !regexp.MustCompile(tt.stderr).MatchString(stderr.String()) {
				t.Fatalf("exit %d, stderr %q; want %d and %s", status, stderr.String(), tt.status, tt.stderr)
			}
			if tt.conn < 0 {
				if _, err := os.Stat(out); err == nil {
					t.Errorf("an error found before reading created %s", out)
				}
				return
			}
			if got := records(t, filepath.Join(out, "conn.log")); got != tt.conn {
				t.Errorf("conn.log has %d records, want %d", got, tt.conn)
			}
			if tt.dns < 0 {
				if _, err := os.Stat(filepath.Join(out, "dns.log")); err == nil {
					t.Error("dns.log written although DNS was not asked for")
				}
				return
			}
			if got := records(t, filepath.Join(out, "dns.log")); got != tt.dns {
				t.Errorf("dns.log has %d records, want %d", got, tt.dns)
			}
		})
	}
}

// TestInputCheckedFirst runs analyze on traces it cannot read into a
// directory holding the logs of an earlier run: they must stay as they
// were.
func TestInputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "dns.pcap")
	if err := os.WriteFile(trace, dnsTrace(), 0o644); err != nil {
		t.Fatal(err)
	}
	notPcap := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notPcap, []byte("not a capture at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logs := filepath.Join(dir, "logs")
	var stdout, stderr bytes.Buffer
	if st := run([]string{"--parsers", "std", "-r", trace, "-o", logs}, nil, &stdout, &stderr); st != 0 {
		t.Fatalf("first run: exit %d, %s", st, stderr.String())
	}
	before := map[string][]byte{}
	for _, name := range logNames {
		before[name], _ = os.ReadFile(filepath.Join(logs, name))
	}
	for _, bad := range [][]string{
		{"-r", filepath.Join(dir, "missing.pcap")},
		{"-r", trace, "-r", filepath.Join(dir, "missing.pcap")},
		{"-r", notPcap},
	} {
		stderr.Reset()
		args := append([]string{"--parsers", "std", "-o", logs}, bad...)
		if st := run(args, nil, &stdout, &stderr); st != exitInput || !strings.Contains(stderr.String(), filepath.Base(bad[len(bad)-1])) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming the trace", bad, st, stderr.String(), exitInput)
		}
		for _, name := range logNames {
			if got, _ := os.ReadFile(filepath.Join(logs, name)); !bytes.Equal(got, before[name]) {
				t.Errorf("%v: %s changed from %d to %d bytes", bad, name, len(before[name]), len(got))
			}
		}
	}
}

func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if status := run([]string{"--help"}, nil, &stdout, &stderr); status != 0 {
		t.Fatalf("--help: exit %d", status)
	}
	for _, want := range []string{"conn.log", "--parsers", "--dpd", "--tunnels", "-U prints", "Exit status", "zeek-cut"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

// TestBinary builds the command and checks that main passes the exit
// status on.
func TestBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "analyze")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	err := exec.Command(bin, "--no-such-flag").Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("wrong usage: %v, want exit status 2", err)
	}
}

// logNames are the logs of a run with every built-in protocol, in the
// order of the -U line's counts.
var logNames = [3]string{"conn.log", "http.log", "dns.log"}

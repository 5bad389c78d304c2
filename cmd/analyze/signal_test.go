//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wirebench/wirebench/internal/interrupt/interrupttest"
)

func TestMain(m *testing.M) {
	interrupttest.AsCommand(func(args []string) int { return run(args, os.Stdin, os.Stdout, os.Stderr) })
	os.Exit(m.Run())
}

// TestSignals stops analyze with SIGINT and with SIGTERM in the middle of
// its trace (a named pipe the test writes), with one worker and with two:
// it exits with the signal's status after closing every log, and the -U
// line counts what they hold.
func TestSignals(t *testing.T) {
	trace := interrupttest.Trace(t, 8<<20)
	counts := regexp.MustCompile(`bytes=(\d+) packets=\d+ conns=(\d+) http=(\d+) dns=(\d+)`)
	for _, tc := range []struct {
		sig     syscall.Signal
		workers string
	}{{syscall.SIGINT, "1"}, {syscall.SIGTERM, "1"}, {syscall.SIGINT, "2"}, {syscall.SIGTERM, "2"}} {
		sig := tc.sig
		t.Run(sig.String()+"/workers="+tc.workers, func(t *testing.T) {
			path, w := interrupttest.Fifo(t, "trace.pcap")
			logs := filepath.Join(t.TempDir(), "logs")
			cmd := interrupttest.Command("-U", "--workers", tc.workers, "-r", path, "-o", logs)
			res := interrupttest.Signal(t, cmd, w, trace, len(trace)/4, sig)
			if res.Killed || res.Status != 128+int(sig) || !strings.Contains(res.Stderr, "trace.pcap: interrupted at offset ") {
				t.Fatalf("killed %v, exit %d, stderr %q; want exit %d after an interruption", res.Killed, res.Status, res.Stderr, 128+int(sig))
			}
			m := counts.FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("no -U line in %q", res.Stderr)
			}
			if n, _ := strconv.Atoi(m[1]); n == 0 || n >= len(trace) {
				t.Errorf("analyzed %s bytes of %d: not stopped in the middle", m[1], len(trace))
			}
			for i, name := range logNames {
				data, err := os.ReadFile(filepath.Join(logs, name))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(data, []byte("\n#close\t")) {
					t.Errorf("%s has no #close line", name)
				}
				if n := records(t, filepath.Join(logs, name)); strconv.Itoa(n) != m[i+2] {
					t.Errorf("%s has %d records, the -U line says %s", name, n, m[i+2])
				}
			}
		})
	}
}

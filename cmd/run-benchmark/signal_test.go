//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/interrupt/interrupttest"
	"github.com/wirebench/wirebench/preprocess"
)

func TestMain(m *testing.M) {
	interrupttest.AsCommand(func(args []string) int { return run(args, os.Stdout, os.Stderr) })
	os.Exit(m.Run())
}

// TestPreprocessSignals stops preprocess with SIGINT and with SIGTERM in
// the middle of its input, with one worker and with two: it exits with the signal's status after
// writing pcap files that end on a whole record and batch files that end
// every connection, and a summary that counts what they hold.
func TestPreprocessSignals(t *testing.T) {
	trace := interrupttest.Trace(t, 8<<20)
	for _, tc := range []struct {
		sig     syscall.Signal
		workers string
	}{{syscall.SIGINT, "1"}, {syscall.SIGTERM, "1"}, {syscall.SIGTERM, "2"}} {
		sig := tc.sig
		t.Run(sig.String()+"/workers="+tc.workers, func(t *testing.T) {
			dir := t.TempDir()
			cmd := interrupttest.Command("preprocess", "--json", "--workers", tc.workers, "-o", dir, "-")
			w, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			res := interrupttest.Signal(t, cmd, w, trace, len(trace)/4, sig)
			if res.Killed || res.Status != 128+int(sig) || !strings.Contains(res.Stderr, "stdin: interrupted at offset ") {
				t.Fatalf("killed %v, exit %d, stderr %q; want exit %d after an interruption", res.Killed, res.Status, res.Stderr, 128+int(sig))
			}
			var sum preprocess.Summary
			if err := json.Unmarshal([]byte(res.Stdout), &sum); err != nil {
				t.Fatalf("summary: %v\n%s", err, res.Stdout)
			}
			if sum.Packets == 0 || sum.Inputs[0].Bytes >= int64(len(trace)) {
				t.Errorf("the summary says %d packets, %d bytes: not stopped in the middle", sum.Packets, sum.Inputs[0].Bytes)
			}
			for _, f := range []struct {
				pcap, dat string
				sub       preprocess.SubTraceSummary
			}{{"spicy-http.pcap", "spicy-http.dat", *sum.SubTrace("http")}, {"spicy-dns.pcap", "spicy-dns.dat", *sum.SubTrace("dns")}} {
				if n := pcapFrames(t, filepath.Join(dir, f.pcap)); n != f.sub.Packets {
					t.Errorf("%s holds %d packets, the summary says %d", f.pcap, n, f.sub.Packets)
				}
				if n := endedConns(t, filepath.Join(dir, f.dat)); n != f.sub.Connections {
					t.Errorf("%s holds %d connections, the summary says %d", f.dat, n, f.sub.Connections)
				}
			}
		})
	}
}

// pcapFrames reads a pcap file to its end and counts its frames.
func pcapFrames(t *testing.T, path string) int64 {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p capture.Packet
	var n int64
	for {
		if err := r.Next(&p); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatalf("after %d frames: %v", n, err)
		}
		n++
	}
}

// endedConns reads a batch file to its end, checks that every connection
// begun is ended, and counts them.
func endedConns(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := batch.Count(f, path)
	if err != nil {
		t.Fatal(err)
	}
	if c.BeginConns != c.EndConns {
		t.Errorf("%s: %d @begin-conn, %d @end-conn", path, c.BeginConns, c.EndConns)
	}
	return c.BeginConns
}

// TestGenTraceSignals stops gen-trace while it writes: the partial trace
// is removed, as after any error, and the exit status is the signal's.
func TestGenTraceSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "big.pcap")
			cmd := interrupttest.Command("gen-trace", "-o", out, "--size", "100GB")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				if fi, err := os.Stat(out); err == nil && fi.Size() > 1<<20 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatal("gen-trace wrote no MB in 30 s")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 128+int(sig) {
				t.Errorf("gen-trace: %v, stderr %q; want exit status %d", err, stderr.String(), 128+int(sig))
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the partial trace is still there (%v)", err)
			}
		})
	}
}

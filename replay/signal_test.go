//go:build unix

package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/interrupt/interrupttest"
	"github.com/wirebench/wirebench/preprocess"
)

// TestMain lets the signal and memory tests run Main in a child process:
// its first argument picks the protocol (http or dns). With
// WIREBENCH_TEST_HWM=1 the child then prints its peak resident set as
// "# vmhwm=BYTES": unlike the -U line's getrusage figure, which a child
// inherits from the process that started it, it counts the child alone.
func TestMain(m *testing.M) {
	interrupttest.AsCommand(func(args []string) int {
		proto := HTTP
		if args[0] == "dns" {
			proto = DNS
		}
		status := Main(args[0]+"-parser", proto, args[1:], os.Stdin, os.Stdout, os.Stderr)
		if os.Getenv("WIREBENCH_TEST_HWM") == "1" {
			fmt.Fprintf(os.Stderr, "# vmhwm=%d\n", vmHWM())
		}
		return status
	})
	os.Exit(m.Run())
}

// vmHWM returns the process's peak resident set in bytes (VmHWM in
// /proc/self/status), or 0 where that is unknown.
func vmHWM() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// TestSignals stops both replay binaries with SIGINT and with SIGTERM in
// the middle of a batch file on standard input: they exit with the
// signal's status, the log ends with #close and holds every transaction
// the -U line counts.
func TestSignals(t *testing.T) {
	var httpDat, dnsDat bytes.Buffer
	trace := interrupttest.Trace(t, 8<<20)
	if _, err := preprocess.Process(context.Background(), preprocess.DefaultConfig(),
		preprocess.Outputs{"http": {Batch: &httpDat}, "dns": {Batch: &dnsDat}},
		preprocess.Input{Name: "trace.pcap", R: bytes.NewReader(trace)}); err != nil {
		t.Fatal(err)
	}
	for _, proto := range []struct {
		name  string
		input []byte
	}{{"http", httpDat.Bytes()}, {"dns", dnsDat.Bytes()}} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(proto.name+"/"+sig.String(), func(t *testing.T) {
				dir := t.TempDir()
				cmd := interrupttest.Command(proto.name, "-U", "--log-dir", dir)
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				res := interrupttest.Signal(t, cmd, w, proto.input, len(proto.input)/4, sig)
				if res.Killed || res.Status != 128+int(sig) || !strings.Contains(res.Stderr, "<stdin>:") || !strings.Contains(res.Stderr, ": interrupted: ") {
					t.Fatalf("killed %v, exit %d, stderr %q; want exit %d after an interruption", res.Killed, res.Status, res.Stderr, 128+int(sig))
				}
				m := usageRE.FindStringSubmatch(res.Stderr[strings.LastIndex(res.Stderr[:len(res.Stderr)-1], "\n")+1:])
				if m == nil {
					t.Fatalf("no -U line in %q", res.Stderr)
				}
				log, err := os.ReadFile(filepath.Join(dir, proto.name+".log"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(log, []byte("\n#close\t")) {
					t.Errorf("%s.log has no #close line", proto.name)
				}
				_, recs := corpustest.ReadLog(log)
				records := len(recs)
				if want, _ := strconv.Atoi(m[3]); records != want || want == 0 {
					t.Errorf("%s.log has %d records, the -U line says %s", proto.name, records, m[3])
				}
			})
		}
	}
}

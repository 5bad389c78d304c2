package runner

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// execFake runs the fake child with args and returns the measurement and
// its standard output.
func execFake(t *testing.T, cpu int, args ...string) (Measurement, string) {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(fakeChild, args...)
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	m := Exec(cmd, cpu)
	if !m.OK() {
		t.Fatalf("fakechild %v: %v\n%s", args, m.Err, stderr.String())
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	return m, strings.TrimSpace(string(data))
}

// A child that burns 300ms of CPU, as the kernel counts it for the child
// itself, must be reported within 10% of that.
func TestExecReportsBusyChildUserTime(t *testing.T) {
	const want = 300 * time.Millisecond
	m, out := execFake(t, -1, "burn", want.String())
	self, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		t.Fatalf("fakechild output %q: %v", out, err)
	}
	if !m.TimeKnown {
		t.Fatal("no rusage for the child")
	}
	if m.User < want || m.User > want+want/10 {
		t.Errorf("user time %v, want %v to %v (the child measured %v itself)", m.User, want, want+want/10, time.Duration(self))
	}
	if m.Wall < m.User*9/10 {
		t.Errorf("wall time %v is below the user time %v", m.Wall, m.User)
	}
	if m.MaxRSS <= 0 {
		t.Errorf("max RSS %d, want > 0", m.MaxRSS)
	}
}

// A child that sleeps uses (almost) no CPU: wall time is not user time.
func TestExecReportsSleepingChildNearZeroUserTime(t *testing.T) {
	m, _ := execFake(t, -1, "sleep", "300ms")
	if m.User >= 20*time.Millisecond {
		t.Errorf("user time %v of a sleeping child, want < 20ms", m.User)
	}
	if m.Wall < 300*time.Millisecond {
		t.Errorf("wall time %v, want >= 300ms", m.Wall)
	}
}

func TestExecReportsPeakRSS(t *testing.T) {
	m, _ := execFake(t, -1, "rss", "64")
	if m.MaxRSS < 64<<20 || m.MaxRSS > 256<<20 {
		t.Errorf("max RSS %d bytes of a child touching 64 MiB, want 64 MiB to 256 MiB", m.MaxRSS)
	}
}

func TestExecFailures(t *testing.T) {
	m := Exec(exec.Command(filepath.Join(t.TempDir(), "missing")), -1)
	if m.OK() || m.ExitCode != -1 || !strings.Contains(m.Err.Error(), "cannot start") {
		t.Errorf("missing binary: %+v", m)
	}
	m = Exec(exec.Command(fakeChild, "no-such-helper", "x"), -1)
	if m.OK() || m.ExitCode != 1 || m.Err.Error() != "exit status 1" {
		t.Errorf("failing child: exit %d, err %v; want exit 1, \"exit status 1\"", m.ExitCode, m.Err)
	}
	if !m.TimeKnown {
		t.Error("a failing child's rusage should still be known")
	}
}

func TestExecPinsChildToCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("CPU pinning is Linux-only")
	}
	_, all := execFake(t, -1, "affinity", "-")
	cpus := strings.Split(all, ",")
	last, _ := strconv.Atoi(cpus[len(cpus)-1])
	_, pinned := execFake(t, last, "affinity", "-")
	if pinned != strconv.Itoa(last) {
		t.Errorf("child pinned to CPU %d runs on CPUs %q", last, pinned)
	}
	// The runner's own threads keep their affinity.
	_, after := execFake(t, -1, "affinity", "-")
	if after != all {
		t.Errorf("after pinning a child, unpinned children run on %q, want %q", after, all)
	}
	if err := CheckCPU(4096); err == nil {
		t.Error("CheckCPU(4096) accepted a CPU that does not exist")
	}
}

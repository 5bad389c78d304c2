package rusage

import (
	"os/exec"
	"runtime"
	"testing"
)

func TestLine(t *testing.T) {
	got := Line(Usage{User: 1538 * 1e6, Sys: 21 * 1e6, MaxRSS: 12582912}, 1559000, Count{"flows", 4}, Count{"transactions", 3})
	want := "# user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=1559000 flows=4 transactions=3 throughput=1.00MB/s"
	if got != want {
		t.Errorf("Line = %q\nwant   %q", got, want)
	}
	if got := Line(Usage{}, 5); got != "# user_time=0.000000 sys_time=0.000000 memory=0 bytes=5 throughput=0.00MB/s" {
		t.Errorf("Line without CPU time = %q", got)
	}
}

func TestSelfAndChild(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no getrusage")
	}
	if u := Self(); u.MaxRSS <= 0 || u.User < 0 {
		t.Errorf("Self() = %+v", u)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	if u := Child(cmd.ProcessState); u.MaxRSS <= 0 {
		t.Errorf("Child() = %+v, want a peak RSS", u)
	}
}

func TestParseLine(t *testing.T) {
	kv := ParseLine("# user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=42")
	if kv["user_time"] != "1.538000" || kv["memory"] != "12582912" || kv["bytes"] != "42" || len(kv) != 4 {
		t.Errorf("ParseLine = %v", kv)
	}
	for _, line := range []string{"user_time=1", "# hello", "# user_time=1 junk", ""} {
		if kv := ParseLine(line); kv != nil {
			t.Errorf("ParseLine(%q) = %v, want nil", line, kv)
		}
	}
}

package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCompareCalibrated is the statistics check of compare: with a burner
// whose work is set by a flag standing in for two builds, at 10 runs a
// side, a 10 % slowdown must be flagged as a regression (above 5 %, with
// significance) in at least 9 of 10 trials, and identical builds must
// raise no alarm in at least 9 of 10. It runs for a minute or two, so only
// under make statcheck (WIREBENCH_STATCHECK=1); WIREBENCH_STATCHECK_WORK
// sets the burner's millions of steps per run (default 60, about 0.1 s of CPU).
func TestCompareCalibrated(t *testing.T) {
	if os.Getenv("WIREBENCH_STATCHECK") == "" {
		t.Skip("the statistics check of compare runs under make statcheck (WIREBENCH_STATCHECK=1)")
	}
	work := 60.0
	if s := os.Getenv("WIREBENCH_STATCHECK_WORK"); s != "" {
		var err error
		if work, err = strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("WIREBENCH_STATCHECK_WORK=%q: %v", s, err)
		}
	}
	dir := t.TempDir()
	burner := filepath.Join(dir, "burner")
	cmd := exec.Command("go", "build", "-o", burner, "./testdata/burner")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the burner: %v\n%s", err, out)
	}
	input := filepath.Join(dir, "input")
	if err := os.WriteFile(input, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	variant := func(build string, steps float64) []Variant {
		return []Variant{{
			Name: "http-burn", Protocol: "http", Kind: Replay, Binary: burner,
			Args: []string{"-work", strconv.FormatFloat(steps, 'f', -1, 64)}, Input: input,
			LogDir: filepath.Join(dir, build, "logs"),
		}}
	}
	const trials, runs, failAbove = 10, 10, 5.0
	for _, c := range []struct {
		name      string
		factor    float64
		wantAlarm bool
	}{{"10 % slower", 1.10, true}, {"identical", 1.0, false}} {
		right := 0
		for trial := 1; trial <= trials; trial++ {
			old, new := RunComparison(context.Background(), variant("old", work), variant("new", work*c.factor),
				RunConfig{Runs: runs, CPU: -1, OutDir: filepath.Join(dir, "output")})
			ch := Changes(old, new)[0]
			if ch.Failed {
				t.Fatalf("%s, trial %d: a run failed: %v", c.name, trial, Failures(append(old, new...), filepath.Join(dir, "output")))
			}
			alarm := ch.Regressed(failAbove)
			if alarm == c.wantAlarm {
				right++
			}
			t.Logf("%s, trial %2d: old %s s, new %s s, delta %s, p=%.4f, alarm %v", c.name, trial,
				seconds(ch.Old.Median), seconds(ch.New.Median), deltaText(ch.Comparison), ch.Comparison.Test.P, alarm)
		}
		what := map[bool]string{true: "flagged", false: "raised no alarm"}[c.wantAlarm]
		msg := fmt.Sprintf("%s: %s in %d of %d trials of %d runs a side (want at least 9)", c.name, what, right, trials, runs)
		if right < 9 {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}

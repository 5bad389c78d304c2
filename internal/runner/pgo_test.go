package runner

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func pprofTop(t *testing.T, profile string) string {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", profile).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof -top %s: %v\n%s", profile, err, out)
	}
	return string(out)
}

func TestGeneratePGO(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "100ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2", "dns": "native=2 std=2 conn=2"})
	os.Remove(filepath.Join(cfg.TraceDir, "spicy-dns.dat"))
	src := buildTree(t)
	oldDNS := filepath.Join(src, "cmd", "dns-parser", "default.pgo")
	os.WriteFile(oldDNS, []byte("kept"), 0o644)

	var log bytes.Buffer
	profiles, err := GeneratePGO(context.Background(), PGOConfig{Source: src, WorkDir: cfg.WorkDir, DataDir: cfg.TraceDir, CPU: -1}, &log)
	if err != nil {
		t.Fatal(err)
	}
	byPkg := map[string]PGOProfile{}
	for _, p := range profiles {
		byPkg[p.Package] = p
	}
	hp := byPkg["cmd/http-parser"]
	if hp.File != filepath.Join(src, "cmd", "http-parser", "default.pgo") || len(hp.Runs) != 1 || !strings.Contains(hp.Runs[0], "http-static -U -F ") {
		t.Errorf("http-parser profile %+v", hp)
	}
	an := byPkg["cmd/analyze"]
	if len(an.Runs) != 2 || !strings.Contains(an.Runs[0], "spicy-http.pcap") || !strings.Contains(an.Runs[1], "spicy-dns.pcap") || strings.Contains(strings.Join(an.Runs, " "), " std") {
		t.Errorf("analyze profiled on %q, want the native analyzer on both pcaps", an.Runs)
	}
	if dp := byPkg["cmd/dns-parser"]; dp.File != "" || !strings.Contains(dp.Skipped, "no input") {
		t.Errorf("dns-parser without data: %+v", dp)
	}
	if data, _ := os.ReadFile(oldDNS); string(data) != "kept" {
		t.Error("a package without data lost its profile")
	}
	for _, p := range []PGOProfile{hp, an} {
		if top := pprofTop(t, p.File); !strings.Contains(top, "main.burn") {
			t.Errorf("%s does not hold the profiled work:\n%s", p.File, top)
		}
		if p.CPU <= 0 {
			t.Errorf("%s: no CPU time recorded", p.Package)
		}
	}
	// Profiled runs leave the output directory alone.
	if _, err := os.Stat(cfg.OutDir()); !os.IsNotExist(err) {
		t.Errorf("GeneratePGO wrote into %s", cfg.OutDir())
	}
	var report bytes.Buffer
	WritePGOReport(&report, profiles)
	for _, want := range []string{"PGO profile " + an.File + " from 2 run(s)", "no new PGO profile for cmd/dns-parser: no input", "little CPU time"} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, report.String())
		}
	}
}

func TestProfile(t *testing.T) {
	t.Setenv("FAKECHILD_BURN", "100ms")
	cfg := fakeBench(t, map[string]string{"http": "native=3 std=3 conn=2 tshark=1"})
	vs := Variants(cfg)
	v, err := Find(vs, "http-opt")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	prof, m, err := Profile(context.Background(), v, ProfileConfig{OutDir: cfg.OutDir(), NodeCount: 5, CPU: -1}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if prof != filepath.Join(cfg.OutDir(), "http-opt.pprof") || m.User < 100e6 {
		t.Errorf("profile %s, user %v", prof, m.User)
	}
	for _, want := range []string{"http-opt: user ", "profile: " + prof, "flat%", "main.burn"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	ts, _ := Find(vs, "http-tshark")
	if _, _, err := Profile(context.Background(), ts, ProfileConfig{OutDir: cfg.OutDir(), CPU: -1}, &out); err == nil || !strings.Contains(err.Error(), "perf record") {
		t.Errorf("profiling tshark: %v", err)
	}
	if _, err := Find(vs, "http-nope"); err == nil || !strings.Contains(err.Error(), "http-static") {
		t.Errorf("Find of an unknown variant: %v", err)
	}
}

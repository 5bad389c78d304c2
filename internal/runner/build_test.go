package runner

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const tinyMain = "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(len(os.Args) - 1) }\n"

// buildTree writes a wirebench source tree with tiny main packages for the
// default targets and the committed test profile as cmd/http-parser's
// default.pgo.
func buildTree(t *testing.T) string {
	t.Helper()
	src := writeSourceTree(t, map[string]string{
		"cmd/http-parser/main.go": tinyMain,
		"cmd/dns-parser/main.go":  tinyMain,
		"cmd/analyze/main.go":     tinyMain,
	})
	pgo, err := os.ReadFile(filepath.Join("testdata", "buildtree", "default.pgo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "cmd", "http-parser", "default.pgo"), pgo, 0o644); err != nil {
		t.Fatal(err)
	}
	return src
}

func settingsOf(t *testing.T, path string) map[string]string {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{"go": info.GoVersion}
	for _, s := range info.Settings {
		m[s.Key] = s.Value
	}
	return m
}

func TestBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := buildTree(t)
	// A work directory relative to a working directory other than the
	// source tree, as with "cd my-bench && ../scripts/run-benchmark build".
	t.Chdir(t.TempDir())
	work := "benchmark"
	amd64 := GOAMD64Choice{Level: "v3", Reason: "as asked"}
	built, err := Build(context.Background(), BuildConfig{Source: src, WorkDir: work}, amd64)
	if err != nil {
		t.Fatal(err)
	}
	if len(built) != 6 {
		t.Fatalf("built %d binaries, want 6", len(built))
	}
	for i, b := range built {
		if want := DefaultTargets()[i]; b.Target != want {
			t.Errorf("built[%d] is %v, want %v (the targets' order)", i, b.Target, want)
		}
		s := settingsOf(t, b.Path)
		if s["-trimpath"] != "true" || s["CGO_ENABLED"] != "0" || s["-race"] != "" || s["-gcflags"] != "" {
			t.Errorf("%s settings %v, want -trimpath and CGO_ENABLED=0 only", b.Name, s)
		}
		switch {
		case b.Mode == Static:
			if s["-pgo"] != "" || b.PGO != "" || b.NoPGO != "" {
				t.Errorf("%s: static build with PGO %q (setting %q)", b.Name, b.PGO, s["-pgo"])
			}
			if s["GOAMD64"] == "v3" {
				t.Errorf("%s: static build with GOAMD64=v3", b.Name)
			}
		case b.Name == "http-opt":
			if s["-pgo"] == "" || b.PGO != "cmd/http-parser/default.pgo" {
				t.Errorf("http-opt: PGO %q, setting -pgo=%q; want cmd/http-parser/default.pgo", b.PGO, s["-pgo"])
			}
		default:
			if s["-pgo"] != "" || b.PGO != "" || !strings.Contains(b.NoPGO, b.Package+"/default.pgo does not exist") {
				t.Errorf("%s: PGO %q, no-PGO reason %q", b.Name, b.PGO, b.NoPGO)
			}
		}
		if b.Mode == Opt && (s["GOAMD64"] != "v3" || b.GOAMD64 != "v3") {
			t.Errorf("%s: GOAMD64 %q (recorded %q), want v3", b.Name, b.GOAMD64, s["GOAMD64"])
		}
	}
	// Nothing else is left in the work directory.
	entries, _ := os.ReadDir(work)
	if len(entries) != 6 {
		t.Errorf("work directory holds %d entries, want the 6 binaries", len(entries))
	}

	var report bytes.Buffer
	WriteBuildReport(&report, built, amd64)
	for _, want := range []string{
		"static: CGO_ENABLED=0 go build -trimpath -pgo=off (",
		"opt: CGO_ENABLED=0 GOAMD64=v3 go build -trimpath -pgo=auto (",
		"PGO cmd/http-parser/default.pgo",
		"without PGO: cmd/dns-parser/default.pgo does not exist",
		"GOAMD64 of opt builds: v3 (as asked)",
		"run-benchmark build --pgo-from DIR",
	} {
		if !strings.Contains(report.String(), want) {
			t.Errorf("build report lacks %q:\n%s", want, report.String())
		}
	}
}

func TestBuildReportsMissingPackagesAndErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := buildTree(t)
	work := t.TempDir()
	targets := []Target{{"http-static", "cmd/http-parser", Static}, {"ftp-static", "cmd/ftp-parser", Static}}
	built, err := Build(context.Background(), BuildConfig{Source: src, WorkDir: work, Targets: targets}, GOAMD64Choice{})
	if err == nil || !strings.Contains(err.Error(), "skipping ftp-static: package cmd/ftp-parser is not in the source tree") {
		t.Errorf("error %v, want one about cmd/ftp-parser", err)
	}
	if len(built) != 1 || built[0].Name != "http-static" {
		t.Errorf("built %v, want http-static still built", built)
	}

	os.WriteFile(filepath.Join(src, "cmd", "dns-parser", "main.go"), []byte("package main\n\nfunc main() { undefined() }\n"), 0o644)
	_, err = Build(context.Background(), BuildConfig{Source: src, WorkDir: work, Targets: []Target{{"dns-static", "cmd/dns-parser", Static}}}, GOAMD64Choice{})
	if err == nil || !strings.Contains(err.Error(), "static build failed") || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("error %v, want the compiler's message", err)
	}

	if _, err := Build(context.Background(), BuildConfig{Source: t.TempDir(), WorkDir: work}, GOAMD64Choice{}); err == nil || !strings.Contains(err.Error(), "not a wirebench source tree") {
		t.Errorf("building from a non-source directory: %v", err)
	}
}

func TestChooseGOAMD64(t *testing.T) {
	all := x86Features{true, true, true, true, true, true, true, true, true}
	noLZCNT := all
	noLZCNT.LZCNT = false
	tests := []struct {
		want, env, goarch string
		f                 x86Features
		level, reason     string
	}{
		{"auto", "", "amd64", all, "v3", "this CPU has"},
		{"", "", "amd64", noLZCNT, "", "lacks LZCNT"},
		{"auto", "v2", "amd64", all, "v2", "environment"},
		{"v1", "v3", "amd64", all, "v1", "--goamd64"},
		{"auto", "", "arm64", all, "", "not an amd64"},
	}
	for _, tt := range tests {
		c := chooseGOAMD64(tt.want, tt.env, tt.goarch, tt.f)
		if c.Level != tt.level || !strings.Contains(c.Reason, tt.reason) {
			t.Errorf("chooseGOAMD64(%q, %q, %q) = %+v, want level %q, reason with %q", tt.want, tt.env, tt.goarch, c, tt.level, tt.reason)
		}
	}
}

// A binary built for the level ChooseGOAMD64 picks runs on this machine:
// the check covers everything the Go runtime checks at start-up.
func TestChosenGOAMD64Runs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	c := ChooseGOAMD64("auto", "")
	if c.Level == "" {
		t.Skipf("no GOAMD64 level chosen: %s", c.Reason)
	}
	src := writeSourceTree(t, map[string]string{"cmd/x/main.go": tinyMain})
	bin := filepath.Join(t.TempDir(), "x")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/x")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOAMD64="+c.Level)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin).CombinedOutput(); err != nil {
		t.Errorf("a GOAMD64=%s binary does not run here: %v\n%s", c.Level, err, out)
	}
}

// When every opt binary's default.pgo is the same profile, one -pgo=FILE
// builds them all; each binary records that profile as -pgo=auto would.
func TestBuildSharedProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	src := buildTree(t)
	pgo, err := os.ReadFile(filepath.Join(src, "cmd", "http-parser", "default.pgo"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"dns-parser", "analyze"} {
		if err := os.WriteFile(filepath.Join(src, "cmd", pkg, "default.pgo"), pgo, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := DefaultTargets()[3:]
	built, err := Build(context.Background(), BuildConfig{Source: src, WorkDir: t.TempDir(), Targets: opt}, GOAMD64Choice{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range built {
		if !slices.Contains(b.Command, "-pgo="+filepath.Join("cmd", "http-parser", "default.pgo")) {
			t.Errorf("%s built by %q, want -pgo=cmd/http-parser/default.pgo", b.Name, b.Command)
		}
		if s := settingsOf(t, b.Path); s["-pgo"] != "default.pgo" || b.PGO != b.Package+"/default.pgo" {
			t.Errorf("%s: setting -pgo=%q, PGO %q; want default.pgo, %s/default.pgo", b.Name, s["-pgo"], b.PGO, b.Package)
		}
	}
	var report bytes.Buffer
	WriteBuildReport(&report, built, GOAMD64Choice{})
	if !strings.Contains(report.String(), "same profile, so one -pgo=") {
		t.Errorf("build report does not say the profile is shared:\n%s", report.String())
	}

	// A profile that differs, or is missing, gives each binary its own.
	if err := os.WriteFile(filepath.Join(src, "cmd", "analyze", "default.pgo"), append(pgo, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, ok := sharedProfile(src, opt); ok {
		t.Errorf("sharedProfile = %q with one profile differing", p)
	}
	os.Remove(filepath.Join(src, "cmd", "analyze", "default.pgo"))
	if p, ok := sharedProfile(src, opt); ok {
		t.Errorf("sharedProfile = %q with one profile missing", p)
	}
	if p, ok := sharedProfile(src, opt[:1]); ok {
		t.Errorf("sharedProfile = %q for a single target", p)
	}
}

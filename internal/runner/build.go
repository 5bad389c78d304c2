package runner

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// Mode is how a binary is built.
type Mode string

// Build modes. Both keep symbols (perf and pprof need them) and frame
// pointers (Go keeps them on amd64 and arm64).
const (
	// Static is CGO_ENABLED=0 go build -trimpath -pgo=off: a static binary
	// without profile-guided optimisation, the baseline.
	Static Mode = "static"
	// Opt is Static plus profile-guided optimisation from the main
	// package's default.pgo (-pgo=auto) and GOAMD64=v3 when the CPU has it.
	Opt Mode = "opt"
)

// Target is one binary to build.
type Target struct {
	Name    string // file name in the work directory, e.g. "http-static"
	Package string // main package directory relative to the source root, e.g. "cmd/http-parser"
	Mode    Mode
}

// DefaultTargets returns the binaries "run-benchmark build" makes: the
// replay binary of each protocol of builtin.Protocols (P-static and P-opt
// from cmd/P-parser) and the analyzer, each in both modes, the static ones
// first.
func DefaultTargets() []Target { return targets(builtin.Protocols(), true) }

// ReplayTargets returns the replay binaries of protos, P-static and P-opt
// from the package their descriptors name (parsers.Protocol.Replay), the
// static ones first.
func ReplayTargets(protos []*parsers.Protocol) []Target { return targets(protos, false) }

func targets(protos []*parsers.Protocol, analyzer bool) []Target {
	var out []Target
	for _, mode := range []Mode{Static, Opt} {
		for _, p := range protos {
			out = append(out, Target{p.Name + "-" + string(mode), p.Replay(), mode})
		}
		if analyzer {
			out = append(out, Target{"analyze-" + string(mode), "cmd/analyze", mode})
		}
	}
	return out
}

// BuildConfig says what to build, from where, into where.
type BuildConfig struct {
	Source  string   // root of the wirebench source tree
	WorkDir string   // where the binaries go
	Targets []Target // DefaultTargets() when nil
	GoCmd   string   // the go command; "go" when empty
	// GOAMD64 is the level for Opt builds: "auto" or empty to detect, or
	// "v1".."v4".
	GOAMD64 string
	// Env is the environment the go command runs in; os.Environ() when nil.
	Env []string
	// Variants, when set, adds the binaries of its Go entries in the
	// modes of Targets (both when Targets is empty but not nil): for each
	// entry NAME and protocol P, P-NAME-static, P-NAME-opt and
	// analyze-NAME-static, from mains generated into a module of their
	// own (VariantsFile).
	Variants *VariantsFile
}

// Built describes one built binary.
type Built struct {
	Target
	Path     string        // the binary
	Command  []string      // the go build command line that made it
	Env      []string      // variables set for the build, e.g. CGO_ENABLED=0
	PGO      string        // the profile used, relative to the source root; "" when none
	NoPGO    string        // why no profile was used, for Opt builds without one
	GOAMD64  string        // the level recorded in the binary ("" when not amd64)
	Duration time.Duration // wall time of the go build command that made it (shared by its mode)
	// Entry is the Go entry of the variants file whose generated main
	// this is; empty for the built-in binaries.
	Entry string
}

// Build compiles the targets. Targets of one mode are built by one go
// build command, so shared packages are compiled once; the modes are built
// concurrently, which overlaps one mode's single-threaded link with the
// other's compilation. Targets whose package is missing from the source
// tree are skipped and reported in the error; the others are still built.
func Build(ctx context.Context, cfg BuildConfig, amd64 GOAMD64Choice) ([]Built, error) {
	if err := CheckSource(cfg.Source); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	targets := cfg.Targets
	if targets == nil {
		targets = DefaultTargets()
	}
	var errs []error
	byMode := map[Mode][]Target{}
	var modes []Mode
	var missingPkgs []string
	skipped := map[string][]string{} // missing package -> its targets
	for _, t := range targets {
		if fi, err := os.Stat(filepath.Join(cfg.Source, t.Package)); err != nil || !fi.IsDir() {
			if _, ok := skipped[t.Package]; !ok {
				missingPkgs = append(missingPkgs, t.Package)
			}
			skipped[t.Package] = append(skipped[t.Package], t.Name)
			continue
		}
		if _, ok := byMode[t.Mode]; !ok {
			modes = append(modes, t.Mode)
		}
		byMode[t.Mode] = append(byMode[t.Mode], t)
	}
	for _, pkg := range missingPkgs {
		errs = append(errs, fmt.Errorf("skipping %s: package %s is not in the source tree %s",
			strings.Join(skipped[pkg], ", "), pkg, cfg.Source))
	}

	var (
		mu    sync.Mutex
		built []Built
		wg    sync.WaitGroup
	)
	// The Go entries of the variants file, in every mode asked for, after
	// the built-in binaries of the mode.
	peers := cfg.Variants.goEntries()
	order := slices.Clone(targets)
	for _, mode := range peerModes(targets) {
		for _, e := range peers {
			order = append(order, e.peerTargets(mode)...)
		}
		if len(peers) > 0 && !slices.Contains(modes, mode) {
			modes = append(modes, mode)
		}
	}
	add := func(b []Built, err error) {
		mu.Lock()
		defer mu.Unlock()
		built = append(built, b...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, mode := range modes {
		wg.Go(func() {
			if len(byMode[mode]) > 0 {
				add(buildMode(ctx, cfg, mode, byMode[mode], amd64))
			}
			for _, e := range peers {
				if ctx.Err() == nil {
					add(buildPeer(ctx, cfg, e, mode, amd64))
				}
			}
		})
	}
	wg.Wait()
	// Report in the order the targets were asked for.
	slices.SortStableFunc(built, func(a, b Built) int {
		return slices.IndexFunc(order, func(t Target) bool { return t == a.Target }) -
			slices.IndexFunc(order, func(t Target) bool { return t == b.Target })
	})
	return built, errors.Join(errs...)
}

// buildMode builds the targets of one mode with one go build command into
// a scratch directory, then moves each binary to its name in the work
// directory.
func buildMode(ctx context.Context, cfg BuildConfig, mode Mode, targets []Target, amd64 GOAMD64Choice) ([]Built, error) {
	return buildIn(ctx, cfg, buildRoot{dir: cfg.Source}, mode, targets, amd64)
}

// buildRoot is the module a go build runs in: the source tree, or a
// module generated for a Go entry of a variants file.
type buildRoot struct {
	dir   string
	entry string   // the variants-file entry it was generated for; "" for the source tree
	args  []string // more go build flags
	env   []string // more variables
}

// buildIn builds the targets of one mode, packages of root, with one go
// build command into a scratch directory, then moves each binary to its
// name in the work directory.
func buildIn(ctx context.Context, cfg BuildConfig, root buildRoot, mode Mode, targets []Target, amd64 GOAMD64Choice) ([]Built, error) {
	for i, t := range targets {
		for _, u := range targets[:i] {
			if u.Package == t.Package {
				return nil, fmt.Errorf("targets %s and %s build the same package %s in the same mode", u.Name, t.Name, t.Package)
			}
		}
	}
	scratch, err := os.MkdirTemp(cfg.WorkDir, ".build-"+string(mode)+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	// go build runs in the source tree, and the work directory may be
	// relative to ours (run-benchmark build from a directory of its own).
	absScratch, err := filepath.Abs(scratch)
	if err != nil {
		return nil, err
	}

	setEnv := []string{"CGO_ENABLED=0"}
	args := []string{"build", "-trimpath"}
	switch mode {
	case Static:
		args = append(args, "-pgo=off")
	case Opt:
		if pgo, ok := sharedProfile(root.dir, targets); ok {
			args = append(args, "-pgo="+pgo)
		} else {
			args = append(args, "-pgo=auto")
		}
		if amd64.Level != "" {
			setEnv = append(setEnv, "GOAMD64="+amd64.Level)
		}
	default:
		return nil, fmt.Errorf("unknown build mode %q", mode)
	}
	args = append(args, root.args...)
	args = append(args, "-o", absScratch+string(filepath.Separator))
	for _, t := range targets {
		args = append(args, "./"+filepath.ToSlash(t.Package))
	}
	gocmd := cfg.GoCmd
	if gocmd == "" {
		gocmd = "go"
	}
	env := cfg.Env
	if env == nil {
		env = os.Environ()
	}
	cmd := exec.CommandContext(ctx, gocmd, args...)
	cmd.Dir = root.dir
	cmd.Env = append(append(slices.Clip(env), setEnv...), root.env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		what := fmt.Sprintf("%s build", mode)
		if root.entry != "" {
			what = fmt.Sprintf("variant %q: %s build of its generated main in %s", root.entry, mode, root.dir)
		}
		return nil, fmt.Errorf("%s failed: %s %s: %v\n%s", what, strings.Join(setEnv, " "), shellJoin(append([]string{gocmd}, args...)), err, strings.TrimSpace(out.String()))
	}
	took := time.Since(start)

	var built []Built
	var errs []error
	for _, t := range targets {
		dst := filepath.Join(cfg.WorkDir, t.Name)
		if err := os.Rename(filepath.Join(scratch, path.Base(filepath.ToSlash(t.Package))), dst); err != nil {
			errs = append(errs, fmt.Errorf("installing %s: %w", t.Name, err))
			continue
		}
		b := Built{Target: t, Path: dst, Command: append([]string{gocmd}, args...), Env: setEnv, Duration: took, Entry: root.entry}
		if info, err := buildinfo.ReadFile(dst); err == nil {
			b.PGO = settingOf(info.Settings, "-pgo")
			b.GOAMD64 = settingOf(info.Settings, "GOAMD64")
		}
		if b.PGO != "" {
			b.PGO = filepath.ToSlash(filepath.Join(t.Package, b.PGO))
		} else if mode == Opt {
			b.NoPGO = fmt.Sprintf("%s/default.pgo does not exist", filepath.ToSlash(t.Package))
		}
		built = append(built, b)
	}
	return built, errors.Join(errs...)
}

// sharedProfile returns the default.pgo of the first target, relative to
// the source root, when there are several targets and each one's
// default.pgo holds the same bytes (GeneratePGO writes them so). One
// "go build -pgo=FILE" then builds them all with that profile: the same
// binaries as -pgo=auto, but -pgo=auto compiles the packages the binaries
// share once per binary, each copy with the profile of its binary, even
// when the profiles are the same.
func sharedProfile(src string, targets []Target) (string, bool) {
	if len(targets) < 2 {
		return "", false
	}
	var first []byte
	for i, t := range targets {
		data, err := os.ReadFile(filepath.Join(src, t.Package, "default.pgo"))
		if err != nil || i > 0 && !bytes.Equal(data, first) {
			return "", false
		}
		first = data
	}
	return filepath.Join(targets[0].Package, "default.pgo"), true
}

// WriteBuildReport prints what was built and how, one block per mode.
func WriteBuildReport(w io.Writer, built []Built, amd64 GOAMD64Choice) {
	var modes []Mode
	for _, b := range built {
		if !slices.Contains(modes, b.Mode) {
			modes = append(modes, b.Mode)
		}
	}
	for _, mode := range modes {
		header := ""
		for _, b := range built {
			if b.Mode != mode {
				continue
			}
			// One line per go build command: the built-in binaries', and
			// each Go entry's.
			h := fmt.Sprintf("%s: %s %s", mode, strings.Join(b.Env, " "), shellJoin(withoutOutputArgs(b.Command)))
			if b.Entry != "" {
				h += fmt.Sprintf(" in a module generated for the variant %q", b.Entry)
			}
			if h != header {
				header = h
				fmt.Fprintf(w, "%s (%.1fs)\n", h, b.Duration.Seconds())
			}
			fmt.Fprintf(w, "  %-28s from %-18s", b.Path, b.Package)
			switch {
			case b.PGO != "":
				fmt.Fprintf(w, "  PGO %s", b.PGO)
			case b.NoPGO != "":
				fmt.Fprintf(w, "  without PGO: %s", b.NoPGO)
			}
			if b.GOAMD64 != "" {
				fmt.Fprintf(w, "  GOAMD64=%s", b.GOAMD64)
			}
			fmt.Fprintln(w)
		}
	}
	if slices.ContainsFunc(built, func(b Built) bool { return b.Mode == Opt }) {
		level := amd64.Level
		if level == "" {
			level = "default"
		}
		fmt.Fprintf(w, "GOAMD64 of opt builds: %s (%s)\n", level, amd64.Reason)
		for _, b := range built {
			if pgo := pgoFlag(b.Command); b.Mode == Opt && pgo != "auto" {
				fmt.Fprintf(w, "PGO of opt builds: their default.pgo files are the same profile, so one -pgo=%s\n", pgo)
				fmt.Fprintln(w, "builds them all and compiles the packages they share once")
				break
			}
		}
		if slices.ContainsFunc(built, func(b Built) bool { return b.Mode == Opt && b.PGO == "" }) {
			fmt.Fprintln(w, "Some opt binaries were built WITHOUT profile-guided optimisation: make their profiles from")
			fmt.Fprintln(w, "your own data with \"run-benchmark build --pgo-from DIR\" (DIR as made by preprocess).")
		}
	}
}

// withoutOutputArgs drops "-o DIR" and the package list from a go build
// command line, leaving what says how it was built.
func withoutOutputArgs(cmd []string) []string {
	var out []string
	for i := 0; i < len(cmd); i++ {
		switch {
		case cmd[i] == "-o":
			i++
		case strings.HasPrefix(cmd[i], "./"):
		default:
			out = append(out, cmd[i])
		}
	}
	return out
}

// pgoFlag returns the value of the -pgo flag of a go build command line.
func pgoFlag(cmd []string) string {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, "-pgo="); ok {
			return v
		}
	}
	return ""
}

func settingOf(settings []debugSetting, key string) string {
	for _, s := range settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

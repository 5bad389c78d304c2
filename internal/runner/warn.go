package runner

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
)

// WarningKind classifies a warning, for programs and tests.
type WarningKind string

// Warning kinds.
const (
	MissingBinary WarningKind = "missing-binary" // a variant's program does not exist
	MissingData   WarningKind = "missing-data"   // a variant's input file does not exist
	DebugBuild    WarningKind = "debug-build"    // built with -race, -N -l, -cover, -asan or -msan
	UnknownBuild  WarningKind = "unknown-build"  // the build settings cannot be read
	StaleBinary   WarningKind = "stale-binary"   // the binary is older than the source
	BusyMachine   WarningKind = "busy-machine"   // the load average exceeds the cores
	CountMismatch WarningKind = "count-mismatch" // variants of a protocol disagree on a log's records
	ShortRuns     WarningKind = "short-runs"     // runs too short for the clock's resolution (MinResolvedTime)
	OutlierRuns   WarningKind = "outlier-runs"   // runs far from the others (stats.Outliers)
)

// Warning is something the user should know before trusting the table,
// with what to do about it.
type Warning struct {
	Kind    WarningKind
	Message string
}

func (w Warning) String() string { return "warning: " + w.Message }

// CheckConfig is what Check needs besides the variants.
type CheckConfig struct {
	// Source is the source tree the binaries are built from; empty skips
	// the staleness check.
	Source string
	// BuildCommand is how the user rebuilds, for the messages: e.g.
	// "run-benchmark build" or "run-benchmark -d WORK build".
	BuildCommand string
	// PreprocessCommand is how the user makes the data files, with DIR
	// standing for their directory: e.g. "run-benchmark preprocess -o DIR TRACE".
	PreprocessCommand string
}

// Check returns the variants that can run (program and input exist) and
// warnings: about the missing programs and inputs of the others, and about
// built programs that are debug builds or older than the source. Each
// missing file or suspect binary is reported once, naming the variants it
// concerns; when every built binary, or every input, is missing, one
// warning says so.
func Check(vs []Variant, cfg CheckConfig) ([]Variant, []Warning) {
	var runnable []Variant
	var bins, others, inputs missingFiles // others: programs not built by run-benchmark (tshark)
	var failed missingFiles               // check commands that failed, and the variants they skip
	checks := map[string]error{}          // the check commands run, and how they failed
	for _, v := range vs {
		binOK, inputOK := isFile(v.Binary), isFile(v.Input)
		if binOK && v.CheckCommand != nil {
			key := shellJoin(v.CheckCommand)
			err, done := checks[key]
			if !done {
				err = runCheck(v.CheckCommand)
				checks[key] = err
			}
			failed.add(key, v.Name, err == nil)
			if err != nil {
				continue
			}
		}
		if v.Built {
			bins.add(v.Binary, v.Name, binOK)
		} else {
			others.add(v.Binary, v.Name, binOK)
		}
		inputs.add(v.Input, v.Name, inputOK)
		if binOK && inputOK {
			runnable = append(runnable, v)
		}
	}
	var warns []Warning
	switch {
	case bins.allMissing():
		warns = append(warns, Warning{MissingBinary, fmt.Sprintf(
			"%s holds none of the binaries (%s): did you run `%s`?",
			filepath.Dir(bins.order[0]), strings.Join(bins.baseNames(), ", "), cfg.BuildCommand)})
	default:
		for _, f := range bins.missing() {
			warns = append(warns, Warning{MissingBinary, fmt.Sprintf(
				"%s does not exist: did you run `%s`? (skipping %s)", f, cfg.BuildCommand, bins.skipped(f))})
		}
	}
	preprocess := func(file string) string {
		return strings.ReplaceAll(cfg.PreprocessCommand, "DIR", shellQuote(filepath.Dir(file)))
	}
	switch {
	case inputs.allMissing():
		warns = append(warns, Warning{MissingData, fmt.Sprintf(
			"%s holds none of the data files (%s): run `%s` first",
			filepath.Dir(inputs.order[0]), strings.Join(inputs.baseNames(), ", "), preprocess(inputs.order[0]))})
	default:
		for _, f := range inputs.missing() {
			warns = append(warns, Warning{MissingData, fmt.Sprintf(
				"%s does not exist: run `%s` first (skipping %s)", f, preprocess(f), inputs.skipped(f))})
		}
	}
	for _, f := range others.missing() {
		what := "does not exist"
		if !strings.ContainsRune(f, filepath.Separator) {
			what = "is not on PATH"
		}
		warns = append(warns, Warning{MissingBinary, fmt.Sprintf("%s %s (skipping %s)", f, what, others.skipped(f))})
	}
	for _, c := range failed.missing() {
		warns = append(warns, Warning{MissingBinary, fmt.Sprintf("`%s` failed: %v (skipping %s)", c, checks[c], failed.skipped(c))})
	}

	// The newest source file, and the newest counting the PGO profiles,
	// which only binaries built with PGO depend on.
	var newest, newestWithPGO SourceFile
	haveSource := false
	if cfg.Source != "" {
		var err error
		newest, newestWithPGO, err = NewestSource(cfg.Source)
		haveSource = err == nil
	}
	var seen []string
	for _, v := range runnable {
		if !v.Built || slices.Contains(seen, v.Binary) {
			continue
		}
		seen = append(seen, v.Binary)
		info, err := buildinfo.ReadFile(v.Binary)
		if err != nil {
			warns = append(warns, Warning{UnknownBuild, fmt.Sprintf(
				"cannot read the build settings of %s (%v): is it a Go binary made by `%s`?", v.Binary, err, cfg.BuildCommand)})
			continue
		}
		warns = append(warns, checkBinary(v.Binary, info, cfg.BuildCommand)...)
		if haveSource {
			src := newest
			if pgo := settingOf(info.Settings, "-pgo"); pgo != "" && pgo != "off" {
				src = newestWithPGO
			}
			if w := checkStale(v.Binary, src, cfg.Source, cfg.BuildCommand); w != nil {
				warns = append(warns, *w)
			}
		}
	}
	return runnable, warns
}

// missingFiles tracks the files variants need, in order of first mention,
// and which variants need the missing ones.
type missingFiles struct {
	order    []string
	absent   map[string]bool
	variants map[string][]string
}

func (m *missingFiles) add(file, variant string, exists bool) {
	if m.absent == nil {
		m.absent, m.variants = map[string]bool{}, map[string][]string{}
	}
	if _, seen := m.absent[file]; !seen {
		m.order = append(m.order, file)
	}
	m.absent[file] = !exists
	if !exists {
		m.variants[file] = append(m.variants[file], variant)
	}
}

func (m *missingFiles) missing() []string {
	var out []string
	for _, f := range m.order {
		if m.absent[f] {
			out = append(out, f)
		}
	}
	return out
}

// allMissing is true when several files are needed and none exists.
func (m *missingFiles) allMissing() bool {
	return len(m.order) > 1 && len(m.missing()) == len(m.order)
}

func (m *missingFiles) skipped(file string) string { return strings.Join(m.variants[file], ", ") }

func (m *missingFiles) baseNames() []string {
	out := make([]string, len(m.order))
	for i, f := range m.order {
		out[i] = filepath.Base(f)
	}
	return out
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// checkBinary warns about a binary whose build settings make its times
// meaningless.
func checkBinary(path string, info *debug.BuildInfo, rebuild string) []Warning {
	var warns []Warning
	for _, p := range DebugSettings(info) {
		warns = append(warns, Warning{DebugBuild, fmt.Sprintf(
			"%s was built with %s: its times do not show the parser's speed; rebuild with `%s`", path, p, rebuild)})
	}
	return warns
}

// DebugSettings lists the build settings of info that slow a binary down
// and make it unfit for benchmarking, each with what it does.
func DebugSettings(info *debug.BuildInfo) []string {
	var out []string
	for _, s := range info.Settings {
		switch s.Key {
		case "-race":
			if s.Value == "true" {
				out = append(out, "-race (the race detector makes code several times slower)")
			}
		case "-cover":
			if s.Value == "true" {
				out = append(out, "-cover (coverage counters on every block)")
			}
		case "-asan", "-msan":
			if s.Value == "true" {
				out = append(out, s.Key+" (memory sanitizer instrumentation)")
			}
		case "-gcflags":
			if what := gcflagsProblem(s.Value); what != "" {
				out = append(out, fmt.Sprintf("-gcflags=%q (%s)", s.Value, what))
			}
		}
	}
	return out
}

// gcflagsProblem says what a -gcflags value disables: -N turns off
// optimisation, -l inlining (as a debugger build does). The value may hold
// several pattern=flags groups.
func gcflagsProblem(v string) string {
	var noOpt, noInline bool
	for _, f := range strings.Fields(v) {
		if _, flags, ok := strings.Cut(f, "="); ok && !strings.HasPrefix(f, "-") {
			f = flags // "all=-N" -> "-N"
		}
		switch f {
		case "-N":
			noOpt = true
		case "-l", "-l=4":
			noInline = true
		}
	}
	switch {
	case noOpt && noInline:
		return "optimisations and inlining disabled"
	case noOpt:
		return "optimisations disabled"
	case noInline:
		return "inlining disabled"
	}
	return ""
}

// checkStale warns when a binary is older than the newest source file.
func checkStale(path string, newest SourceFile, src, rebuild string) *Warning {
	fi, err := os.Stat(path)
	if err != nil || !fi.ModTime().Before(newest.ModTime) {
		return nil
	}
	rel, err := filepath.Rel(src, newest.Path)
	if err != nil {
		rel = newest.Path
	}
	return &Warning{StaleBinary, fmt.Sprintf(
		"%s is older than the source: %s changed %s after it was built; rebuild with `%s`",
		path, rel, newest.ModTime.Sub(fi.ModTime()).Round(time.Second), rebuild)}
}

// CheckLoad warns when the machine is busy: when the load average over the
// last minute exceeds the number of cores, children wait for a CPU and
// their times get noisy. The load average trails by a minute, so it stays
// high for a while after a build on an idle machine: busyCores, how many
// CPUs other processes kept busy just now (see BusyCores), must confirm
// it by reaching half a core. A negative busyCores (unknown) leaves the
// load average to decide alone.
func CheckLoad(load [3]float64, cores int, busyCores float64) *Warning {
	if load[0] <= float64(cores) || (busyCores >= 0 && busyCores < 0.5) {
		return nil
	}
	now := ""
	if busyCores >= 0 {
		now = fmt.Sprintf("other processes keep %.1f of %d cores busy, ", busyCores, cores)
	}
	return &Warning{BusyMachine, fmt.Sprintf(
		"the machine is busy: %sload average %.2f over the last minute (%.2f over 5 minutes) on %d cores; "+
			"times will be noisy: wait until it is idle, stop other work, or pin the runs with --cpu N",
		now, load[0], load[1], cores)}
}

// CheckBusy is CheckLoad on this machine. It samples the CPUs (for window)
// only when the load average exceeds the cores.
func CheckBusy(m Machine, window time.Duration) *Warning {
	load, ok := m.Load()
	if !ok || load[0] <= float64(m.Cores) {
		return nil
	}
	return CheckLoad(load, m.Cores, BusyCores("/proc/stat", window))
}

// CountMismatches warns, per protocol and log file, when the variants
// that wrote the log disagree on its number of records, and when one
// variant's runs disagree with each other. Failed runs are left out.
func CountMismatches(results []Result, outDir string) []Warning {
	type entry struct {
		variant string
		records int
	}
	var warns []Warning
	var keys []string
	groups := map[string][]entry{} // "proto\x00log" -> entries
	for _, r := range results {
		for _, c := range r.Counts {
			if !c.Present {
				continue
			}
			k := r.Variant.Protocol + "\x00" + c.Log
			if _, ok := groups[k]; !ok {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], entry{r.Variant.Name, c.Records})
		}
		if w := runsDisagree(r); w != nil {
			warns = append(warns, *w)
		}
	}
	for _, k := range keys {
		es := groups[k]
		var values []int
		byValue := map[int][]string{}
		for _, e := range es {
			if _, ok := byValue[e.records]; !ok {
				values = append(values, e.records)
			}
			byValue[e.records] = append(byValue[e.records], e.variant)
		}
		if len(values) < 2 {
			continue
		}
		proto, log, _ := strings.Cut(k, "\x00")
		var parts []string
		for _, n := range values {
			parts = append(parts, fmt.Sprintf("%d (%s)", n, strings.Join(byValue[n], ", ")))
		}
		warns = append(warns, Warning{CountMismatch, fmt.Sprintf(
			"%s variants disagree on %s: %s records; compare the logs under %s",
			proto, log, strings.Join(parts, " vs "), filepath.Join(outDir, proto+"-*"))})
	}
	return warns
}

// runsDisagree warns when the runs of one variant wrote logs with
// different record counts: the program is not deterministic.
func runsDisagree(r Result) *Warning {
	var first []Count
	for i, run := range r.Runs {
		if !run.OK() || run.Counts == nil {
			continue
		}
		if first == nil {
			first = run.Counts
			continue
		}
		if !slices.Equal(first, run.Counts) {
			return &Warning{CountMismatch, fmt.Sprintf(
				"%s wrote different logs in different runs: %s, then %s in run %d; its output is not deterministic",
				r.Variant.Name, countsString(first), countsString(run.Counts), i+1)}
		}
	}
	return nil
}

func countsString(cs []Count) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

// parseLoadAvg parses the first three fields of /proc/loadavg.
func parseLoadAvg(data string) ([3]float64, error) {
	var load [3]float64
	f := strings.Fields(data)
	if len(f) < 3 {
		return load, fmt.Errorf("load average %q: want three numbers", strings.TrimSpace(data))
	}
	for i := range load {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return load, fmt.Errorf("load average %q: %w", strings.TrimSpace(data), err)
		}
		load[i] = v
	}
	return load, nil
}

// runCheck runs a variant's check command, with a bounded time and
// without input; its output is only shown when it fails.
func runCheck(args []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	out := &tailBuffer{max: 512}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(out.String()); msg != "" {
			return fmt.Errorf("%v: %s", err, strings.ReplaceAll(msg, "\n", " "))
		}
		return err
	}
	return nil
}

// checkTimeout bounds a variant's check command.
const checkTimeout = 30 * time.Second

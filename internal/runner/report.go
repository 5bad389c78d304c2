package runner

import (
	"debug/buildinfo"
	"encoding/json"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"time"
)

// ReportSchema names the layout of the JSON report written by "run
// --json". Its version changes when a field is renamed or removed or
// changes meaning; new fields may appear without a change, so readers
// should ignore fields they do not know.
const ReportSchema = "wirebench.run.v1"

// Report is the JSON report of a run: every run of every variant with its
// measurements, the binaries' build settings, the machine and the
// warnings. Times are in seconds, sizes in bytes, throughput in MB/s
// (10^6 bytes per second).
type Report struct {
	Schema   string          `json:"schema"`  // ReportSchema
	Started  time.Time       `json:"started"` // when the runs began, RFC 3339
	Machine  Machine         `json:"machine"`
	Settings ReportSettings  `json:"settings"`
	Binaries []ReportBinary  `json:"binaries"` // the programs the variants ran, each once
	Variants []ReportVariant `json:"variants"` // in table order
	// Statistics are the statistics section: each variant against its
	// protocol's reference, in table order.
	Statistics []ReportStat    `json:"statistics"`
	Warnings   []ReportWarning `json:"warnings"` // as printed on standard error
	// Agreement compares each variant's logs with the reference's, record
	// by record and field by field (see CompareLogs); omitted when
	// nothing was compared.
	Agreement []Agreement `json:"agreement,omitempty"`
}

// ReportSettings are the run's options.
type ReportSettings struct {
	TraceDir string `json:"trace_dir"`
	WorkDir  string `json:"work_dir"`
	Runs     int    `json:"runs"` // timed runs per variant
	// TSharkRuns is the timed runs of the tshark variants when they
	// differ from Runs; 0 otherwise.
	TSharkRuns int  `json:"tshark_runs"`
	Warmup     int  `json:"warmup"`     // discarded runs before them
	CPU        *int `json:"cpu"`        // the CPU children were pinned to; null when not pinned
	TimedLogs  bool `json:"timed_logs"` // replay binaries wrote their logs while timed
	// Interleave is true when the variants ran round-robin.
	Interleave bool `json:"interleave"`
	// MinTimeSeconds is the CPU time a run was made to last at least
	// (RunConfig.MinTime); 0 when every run was one execution.
	MinTimeSeconds float64 `json:"min_time_s"`
	Reference      string  `json:"reference"` // the statistics' reference, e.g. "P-static"
	// Source is the source tree the binaries were built from: its git
	// commit and whether it had uncommitted changes; null when unknown.
	Source *SourceRevision `json:"source"`
}

// ReportStat is one variant in the statistics section (Stat). Times are
// CPU seconds (user+system) per execution; a field that cannot be
// computed (no successful run, too few runs for an interval) is null.
type ReportStat struct {
	Variant   string `json:"variant"`
	Protocol  string `json:"protocol"`
	Reference string `json:"reference"` // empty when no reference variant ran
	Passes    int    `json:"passes"`    // executions per run
	N         int    `json:"n"`         // timed runs that succeeded
	// CPUSeconds are the CPU seconds per execution of those runs.
	CPUSeconds       []float64 `json:"cpu_seconds"`
	MedianCPUSeconds *float64  `json:"median_cpu_s"`
	MBPerCPUSecond   *float64  `json:"mb_per_cpu_s"`
	// Ratio is the variant's time over the reference's (the
	// Hodges-Lehmann estimate), RatioLo and RatioHi its 95 % interval, P
	// the two-sided Mann-Whitney U test's p-value, Significant P < 0.05;
	// all null for the reference itself.
	Ratio       *float64 `json:"ratio"`
	RatioLo     *float64 `json:"ratio_lo"`
	RatioHi     *float64 `json:"ratio_hi"`
	P           *float64 `json:"p"`
	Significant bool     `json:"significant"`
	TooFewRuns  bool     `json:"too_few_runs"` // no 95 % interval exists for so few runs
	Outliers    []int    `json:"outliers"`     // indices in cpu_seconds of outlying runs
}

// ReportBinary describes one program the variants ran.
type ReportBinary struct {
	Path     string    `json:"path"`
	Modified time.Time `json:"modified"`
	// GoVersion and Settings are read from the binary (as "go version -m"
	// shows them: "-pgo", "GOAMD64", "CGO_ENABLED", "-trimpath", ...);
	// empty for programs that are not Go binaries, such as tshark.
	GoVersion string            `json:"go_version"`
	Settings  map[string]string `json:"settings"`
}

// ReportVariant is one row of the table with all its runs.
type ReportVariant struct {
	Name     string   `json:"name"`
	Protocol string   `json:"protocol"`
	Kind     Kind     `json:"kind"`    // "replay", "analyze", "tshark" or "program" (a variants file's)
	Parsers  string   `json:"parsers"` // the implementation ("native", "std", a Go entry's); empty for programs and tshark
	Binary   string   `json:"binary"`
	Command  []string `json:"command"` // of the timed runs
	// CountCommand is the untimed run that wrote the counted logs, when
	// the timed runs wrote none; omitted otherwise.
	CountCommand []string `json:"count_command,omitempty"`
	Input        string   `json:"input"`
	InputBytes   int64    `json:"input_bytes"`
	OK           bool     `json:"ok"` // every run exited with status 0
	// UserSeconds summarises the user time of the timed runs that
	// succeeded: what the table shows.
	UserSeconds Summary `json:"user_seconds"`
	// Counts are the records per log file of the last run that wrote
	// logs; null for a log that was expected but absent.
	Counts map[string]*int `json:"counts"`
	Runs   []ReportRun     `json:"runs"` // warm-up, timed, then the counting run
}

// Summary is the minimum, median and maximum of N values.
type Summary struct {
	N      int     `json:"n"`
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	Max    float64 `json:"max"`
}

// ReportRun is one execution.
type ReportRun struct {
	Kind        string   `json:"kind"`   // "calibration", "warmup", "timed" or "count"
	Passes      int      `json:"passes"` // executions the run is made of; its times and bytes add up theirs
	Command     []string `json:"command"`
	OK          bool     `json:"ok"`
	Error       string   `json:"error,omitempty"`
	ExitCode    int      `json:"exit_code"` // -1 when killed by a signal or not started
	UserSeconds float64  `json:"user_seconds"`
	SysSeconds  float64  `json:"sys_seconds"`
	WallSeconds float64  `json:"wall_seconds"`
	MaxRSSBytes int64    `json:"max_rss_bytes"`
	// Bytes is the input processed: what the program reported (bytes= on
	// its -U line, BytesSource "reported") or the input file's size
	// ("input"); -1 with an empty source when unknown.
	Bytes       int64  `json:"bytes"`
	BytesSource string `json:"bytes_source"`
	// MBPerSecond is Bytes per second of wall time, MBPerUserSecond per
	// second of user time; 0 when unknown.
	MBPerSecond     float64 `json:"mb_per_s"`
	MBPerUserSecond float64 `json:"mb_per_user_s"`
	// Counts are the records per log this run wrote; omitted when it
	// wrote none.
	Counts map[string]*int `json:"counts,omitempty"`
	// Reported are the key=value pairs of the program's own resource line
	// ("# user_time=... sys_time=... memory=..."), if it printed one.
	Reported map[string]string `json:"reported,omitempty"`
}

// ReportWarning is a warning as printed.
type ReportWarning struct {
	Kind    WarningKind `json:"kind"`
	Message string      `json:"message"`
}

// NewReport assembles the report of finished results.
func NewReport(started time.Time, m Machine, s ReportSettings, bins []ReportBinary, results []Result, sts []Stat, warns []Warning) Report {
	r := Report{
		Schema: ReportSchema, Started: started.UTC(), Machine: m, Settings: s,
		Binaries: bins, Variants: []ReportVariant{}, Statistics: []ReportStat{}, Warnings: []ReportWarning{},
	}
	for _, st := range sts {
		r.Statistics = append(r.Statistics, reportStat(st))
	}
	if r.Binaries == nil {
		r.Binaries = []ReportBinary{}
	}
	for _, res := range results {
		r.Variants = append(r.Variants, reportVariant(res, s.TimedLogs))
	}
	for _, w := range warns {
		r.Warnings = append(r.Warnings, ReportWarning(w))
	}
	return r
}

func reportVariant(res Result, timedLogs bool) ReportVariant {
	v := res.Variant
	rv := ReportVariant{
		Name: v.Name, Protocol: v.Protocol, Kind: v.Kind, Parsers: v.Parsers, Binary: v.Binary,
		Command: v.Command(timedLogs || len(v.LogArgs) == 0), Input: v.Input, InputBytes: -1,
		OK: !res.Failed(), Counts: countsMap(res.Counts), Runs: []ReportRun{},
	}
	if res.CountRun != nil {
		rv.CountCommand = res.CountRun.Command
	}
	if fi, err := os.Stat(v.Input); err == nil {
		rv.InputBytes = fi.Size()
	}
	var user []float64
	for _, run := range res.Runs {
		kind := "timed"
		switch {
		case run.Calibration:
			kind = "calibration"
		case run.Warmup:
			kind = "warmup"
		case run.OK():
			user = append(user, run.User.Seconds())
		}
		rv.Runs = append(rv.Runs, reportRun(kind, run))
	}
	if res.CountRun != nil {
		rv.Runs = append(rv.Runs, reportRun("count", *res.CountRun))
	}
	rv.UserSeconds = summarize(user)
	return rv
}

func reportStat(s Stat) ReportStat {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	rs := ReportStat{
		Variant: s.Variant, Protocol: s.Protocol, Reference: s.Reference, Passes: s.Passes, N: len(s.Times),
		CPUSeconds: s.Times, MedianCPUSeconds: num(s.Median), Outliers: s.Outliers, TooFewRuns: s.TooFewRuns(),
	}
	if rs.CPUSeconds == nil {
		rs.CPUSeconds = []float64{}
	}
	if rs.Outliers == nil {
		rs.Outliers = []int{}
	}
	if s.MBPerSecond > 0 {
		rs.MBPerCPUSecond = num(s.MBPerSecond)
	}
	if c := s.Comparison; c != nil {
		rs.Ratio, rs.RatioLo, rs.RatioHi, rs.P = num(c.Ratio), num(c.Lo), num(c.Hi), num(c.Test.P)
		rs.Significant = c.Significant
	}
	return rs
}

func reportRun(kind string, run Run) ReportRun {
	rr := ReportRun{
		Kind: kind, Command: run.Command, OK: run.OK(), ExitCode: run.ExitCode, Passes: max(run.Passes, 1),
		UserSeconds: run.User.Seconds(), SysSeconds: run.Sys.Seconds(), WallSeconds: run.Wall.Seconds(),
		MaxRSSBytes: run.MaxRSS, Bytes: run.Bytes, BytesSource: run.BytesSrc,
		Counts: countsMap(run.Counts), Reported: run.Reported,
	}
	if run.Err != nil {
		rr.Error = run.Err.Error()
	}
	if run.Bytes > 0 && run.Wall > 0 {
		rr.MBPerSecond = float64(run.Bytes) / 1e6 / run.Wall.Seconds()
	}
	if run.Bytes > 0 && run.User > 0 {
		rr.MBPerUserSecond = float64(run.Bytes) / 1e6 / run.User.Seconds()
	}
	return rr
}

func countsMap(cs []Count) map[string]*int {
	if cs == nil {
		return nil
	}
	m := make(map[string]*int, len(cs))
	for _, c := range cs {
		if c.Present {
			n := c.Records
			m[c.Log] = &n
		} else {
			m[c.Log] = nil
		}
	}
	return m
}

func summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Summary{N: len(s), Min: s[0], Median: med, Max: s[len(s)-1]}
}

// Binaries describes the distinct programs of results, reading each Go
// binary's build settings.
func Binaries(results []Result) []ReportBinary {
	var out []ReportBinary
	for _, r := range results {
		path := r.Variant.Binary
		if slices.ContainsFunc(out, func(b ReportBinary) bool { return b.Path == path }) {
			continue
		}
		b := ReportBinary{Path: path, Settings: map[string]string{}}
		if fi, err := os.Stat(path); err == nil {
			b.Modified = fi.ModTime().UTC()
		}
		if info, err := buildinfo.ReadFile(path); err == nil {
			b.GoVersion = info.GoVersion
			for _, s := range info.Settings {
				b.Settings[s.Key] = s.Value
			}
		}
		out = append(out, b)
	}
	return out
}

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

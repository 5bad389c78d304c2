package runner

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/stats"
)

// DefaultReference is the variant every other variant of its protocol is
// compared against in the statistics, P standing for the protocol.
const DefaultReference = "P-static"

// MinResolvedTime is the median user time per run below which the run
// warns that the table's times are too coarse. The kernel accounts user
// and system time by sampling at each clock tick (every 4 ms at 250 Hz)
// which mode the CPU is in, and splits the exact total between the two in
// that proportion: a run of 0.05 s is a dozen ticks and its user time can
// be off by a tenth. 0.5 s is 125 ticks at 250 Hz, 1 % or better.
const MinResolvedTime = 500 * time.Millisecond

// Stat is one variant in the statistics section: its CPU time per
// execution over the timed runs that succeeded, compared against the
// reference variant of its protocol.
type Stat struct {
	Variant   string
	Protocol  string
	Reference string // the variant it is compared against; empty when none ran
	Passes    int    // executions per run
	// Times are the CPU times (user+system) per execution of the timed
	// runs that succeeded, in seconds. User plus system is exact where
	// user time alone is split off by clock ticks.
	Times  []float64
	Median float64 // of Times; NaN without any
	// MBPerSecond is the input bytes per execution over Median, in MB
	// (10^6 bytes) per CPU second; 0 when the bytes are unknown.
	MBPerSecond float64
	// Comparison holds the ratio to the reference, its interval and the
	// U test; nil for the reference itself and when no reference ran.
	Comparison *stats.Comparison
	// Outliers are the indices in Times of runs whose modified z-score
	// exceeds stats.OutlierThreshold.
	Outliers []int
}

// TooFewRuns reports whether the runs are too few for a 95 % interval of
// the ratio (and for the U test ever to find a difference).
func (s Stat) TooFewRuns() bool { return s.Comparison != nil && !s.Comparison.HasInterval }

// Statistics compares, per protocol, each variant's CPU time per execution
// against the reference variant: reference names it, "P-" standing for
// the protocol ("P-static" compares with http-static and dns-static); a
// name of one protocol's variant applies to that protocol, whose others
// take DefaultReference. This is the one place the run's figures are
// compared; the text section and the JSON report print what it returns.
func Statistics(results []Result, reference string) []Stat {
	if reference == "" {
		reference = DefaultReference
	}
	var out []Stat
	byName := map[string]Stat{}
	for _, r := range results {
		s := statOf(r)
		byName[s.Variant] = s
		out = append(out, s)
	}
	for i := range out {
		s := &out[i]
		ref, ok := byName[referenceFor(s.Protocol, reference)]
		if !ok || len(ref.Times) == 0 {
			continue
		}
		s.Reference = ref.Variant
		if s.Variant == ref.Variant || len(s.Times) == 0 {
			continue
		}
		c := stats.Compare(s.Times, ref.Times)
		s.Comparison = &c
	}
	return out
}

// referenceFor returns the reference variant of protocol p.
func referenceFor(p, reference string) string {
	if strings.Contains(reference, "P-") {
		return strings.ReplaceAll(reference, "P-", p+"-")
	}
	for _, q := range Protocols() {
		if strings.HasPrefix(reference, q+"-") {
			if q == p {
				return reference
			}
			return referenceFor(p, DefaultReference)
		}
	}
	return p + "-" + reference
}

func statOf(r Result) Stat {
	s := Stat{Variant: r.Variant.Name, Protocol: r.Variant.Protocol, Passes: max(r.Passes, 1), Median: math.NaN()}
	var bytes []float64
	for _, run := range r.Timed() {
		if !run.OK() || !run.TimeKnown {
			continue
		}
		passes := float64(max(run.Passes, 1))
		s.Times = append(s.Times, (run.User+run.Sys).Seconds()/passes)
		if run.Bytes > 0 {
			bytes = append(bytes, float64(run.Bytes)/passes)
		}
	}
	if len(s.Times) == 0 {
		return s
	}
	s.Median = stats.Median(s.Times)
	if len(bytes) > 0 && s.Median > 0 {
		s.MBPerSecond = stats.Median(bytes) / 1e6 / s.Median
	}
	s.Outliers = stats.Outliers(s.Times)
	return s
}

// WriteStatistics prints the statistics section that follows the table:
// per protocol, each variant's median CPU time per execution, MB/s, and
// its ratio to the reference with the 95 % interval and the U test's
// p-value, marked "faster" or "slower" when p < 0.05 and "~" when not (as
// benchstat marks them).
func WriteStatistics(w io.Writer, sts []Stat) error {
	width := 0
	for _, s := range sts {
		width = max(width, len(s.Variant))
	}
	var b strings.Builder
	b.WriteString("Statistics: CPU time (user+system) per execution over the timed runs; the ratio to the\n" +
		"reference variant is the median of all pairwise ratios with its 95 % interval (Moses),\n" +
		"p the Mann-Whitney U test's (as benchstat's).\n")
	proto := ""
	for _, s := range sts {
		if s.Protocol != proto {
			proto = s.Protocol
			fmt.Fprintf(&b, "\n%*s  %3s  %9s  %9s  %s\n", width, "variant", "n", "median", "MB/s", "ratio [95 % interval]  p")
		}
		fmt.Fprintf(&b, "%*s  %3d  %9s  %9s  %s\n", width, s.Variant, len(s.Times), statSeconds(s.Median), statMBps(s.MBPerSecond), statVerdict(s))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func statSeconds(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return seconds(v) + " s"
}

func statMBps(v float64) string {
	if v <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func statVerdict(s Stat) string {
	switch {
	case len(s.Times) == 0:
		return "no successful timed run"
	case s.Reference == "":
		return "no reference (its reference variant has no successful run)"
	case s.Comparison == nil:
		return "reference"
	}
	c := s.Comparison
	if !c.HasInterval {
		return fmt.Sprintf("%s  too few runs for an interval (%d a side needed)", ratio(c.Ratio), c.MinRunsASide)
	}
	return fmt.Sprintf("%s [%s, %s]  p=%.3f %s", ratio(c.Ratio), ratio(c.Lo), ratio(c.Hi), c.Test.P, speedVerdict(c))
}

// speedVerdict is "faster" or "slower" when a comparison is significant,
// "~" otherwise, as benchstat says it.
func speedVerdict(c *stats.Comparison) string {
	switch {
	case !c.Significant:
		return "~"
	case c.Ratio < 1:
		return "faster"
	}
	return "slower"
}

// ratio formats a ratio with three significant digits.
func ratio(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0fx", v)
	case v >= 10:
		return fmt.Sprintf("%.1fx", v)
	}
	return fmt.Sprintf("%.3fx", v)
}

// StatWarnings warns about variants whose runs are too short for the
// table's resolution (MinResolvedTime) and about outlying runs.
func StatWarnings(results []Result, sts []Stat) []Warning {
	var warns []Warning
	var short []string
	for _, r := range results {
		var user []float64
		for _, run := range r.Timed() {
			if run.OK() && run.TimeKnown {
				user = append(user, run.User.Seconds())
			}
		}
		if len(user) > 0 && r.Variant.Kind != TShark && stats.Median(user) < MinResolvedTime.Seconds() {
			short = append(short, fmt.Sprintf("%s (%s s)", r.Variant.Name, seconds(stats.Median(user))))
		}
	}
	if short != nil {
		warns = append(warns, Warning{ShortRuns, fmt.Sprintf(
			"the median user time of %s is below %v, a few dozen clock ticks: user time is resolved to worse than 1 %%; "+
				"give every run more work with --min-time %v (each run then executes the variant several times in a row) or use a larger trace",
			strings.Join(short, ", "), MinResolvedTime, MinResolvedTime)})
	}
	for _, s := range sts {
		if len(s.Outliers) == 0 {
			continue
		}
		var runs []string
		for _, i := range s.Outliers {
			runs = append(runs, fmt.Sprintf("%s s", seconds(s.Times[i])))
		}
		warns = append(warns, Warning{OutlierRuns, fmt.Sprintf(
			"%s: %d of %d runs are outliers (%s against a median of %s s, modified z-score above %g): "+
				"something else used the machine; rerun with --interleave, more runs (-n) or --cpu N",
			s.Variant, len(s.Outliers), len(s.Times), strings.Join(runs, ", "), seconds(s.Median), stats.OutlierThreshold)})
	}
	return warns
}

package runner

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/internal/stats"
)

// Change is one variant of two builds compared: the new build's CPU time
// per execution against the old one's.
type Change struct {
	Variant    string
	Old, New   Stat
	Comparison stats.Comparison // New against Old
	// OldCounts and NewCounts are the records of each build's logs;
	// CountsDiffer is set when they are not the same.
	OldCounts, NewCounts []Count
	CountsDiffer         bool
	Failed               bool // a run of either build failed
}

// Delta is the change in percent: +10 for a new build 10 % slower.
func (c Change) Delta() float64 { return (c.Comparison.Ratio - 1) * 100 }

// Regressed reports whether the new build is slower by more than pct
// percent, and significantly so (the U test's p < 0.05).
func (c Change) Regressed(pct float64) bool {
	return c.Comparison.Significant && c.Delta() > pct
}

// RunComparison runs the variants of two builds, old and new (the same
// variants, each list from Variants with its own work directory),
// round-robin: in every round, each variant of the old build and then of
// the new one. cfg.Interleave and cfg.Table are ignored. It returns the
// results of each build, in the order of old.
func RunComparison(ctx context.Context, old, new []Variant, cfg RunConfig) (oldRes, newRes []Result) {
	var both []Variant
	for _, o := range old {
		i := slices.IndexFunc(new, func(n Variant) bool { return n.Name == o.Name })
		if i < 0 {
			continue
		}
		oo, nn := o, new[i]
		oo.Name, nn.Name = o.Name+".old", o.Name+".new"
		both = append(both, oo, nn)
	}
	cfg.Interleave, cfg.Table = true, nil
	results := RunAll(ctx, both, cfg)
	for i, r := range results {
		r.Variant.Name = strings.TrimSuffix(strings.TrimSuffix(r.Variant.Name, ".old"), ".new")
		if i%2 == 0 {
			oldRes = append(oldRes, r)
		} else {
			newRes = append(newRes, r)
		}
	}
	return oldRes, newRes
}

// Changes compares the results of two builds variant by variant.
func Changes(oldRes, newRes []Result) []Change {
	var out []Change
	for i := range min(len(oldRes), len(newRes)) {
		o, n := oldRes[i], newRes[i]
		c := Change{
			Variant: o.Variant.Name, Old: statOf(o), New: statOf(n),
			OldCounts: o.Counts, NewCounts: n.Counts, Failed: o.Failed() || n.Failed(),
		}
		c.Comparison = stats.Compare(c.New.Times, c.Old.Times)
		c.CountsDiffer = countsString(o.Counts) != countsString(n.Counts)
		out = append(out, c)
	}
	return out
}

// WriteChanges prints the comparison of two builds: per variant the
// median CPU time per execution of each, the change with its 95 %
// interval and the U test's p-value, and which changes exceed pct percent
// with significance (regressions) or whose log records differ.
func WriteChanges(w io.Writer, changes []Change, pct float64) error {
	width := len("variant")
	for _, c := range changes {
		width = max(width, len(c.Variant))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%*s  %3s  %9s  %9s  %-26s  %6s\n", width, "variant", "n", "old", "new", "delta [95 % interval]", "p")
	for _, c := range changes {
		fmt.Fprintf(&b, "%*s  %3d  %9s  %9s  %-26s  %6s  %s\n", width, c.Variant, min(len(c.Old.Times), len(c.New.Times)),
			statSeconds(c.Old.Median), statSeconds(c.New.Median), deltaText(c.Comparison), pText(c), verdictText(c, pct))
	}
	b.WriteString("\nCPU time (user+system) per execution; delta: the new build's time over the old one's, minus 1\n" +
		"(median of all pairwise ratios, Moses' 95 % interval); p: Mann-Whitney U test.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func deltaText(c stats.Comparison) string {
	pct := func(r float64) string { return fmt.Sprintf("%+.1f%%", (r-1)*100) }
	switch {
	case math.IsNaN(c.Ratio):
		return "-"
	case !c.HasInterval:
		return pct(c.Ratio) + " (too few runs)"
	}
	return fmt.Sprintf("%s [%s, %s]", pct(c.Ratio), pct(c.Lo), pct(c.Hi))
}

func pText(c Change) string {
	if math.IsNaN(c.Comparison.Ratio) {
		return "-"
	}
	return fmt.Sprintf("%.3f", c.Comparison.Test.P)
}

func verdictText(c Change, pct float64) string {
	var notes []string
	switch {
	case c.Failed:
		notes = append(notes, "FAILED")
	case c.Regressed(pct):
		notes = append(notes, fmt.Sprintf("SLOWER by more than %g%%", pct))
	case c.Comparison.Significant && c.Comparison.Ratio > 1:
		notes = append(notes, "slower")
	case c.Comparison.Significant:
		notes = append(notes, "faster")
	case !math.IsNaN(c.Comparison.Ratio):
		notes = append(notes, "~")
	}
	if c.CountsDiffer {
		notes = append(notes, fmt.Sprintf("RECORDS DIFFER: old %s, new %s", countsString(c.OldCounts), countsString(c.NewCounts)))
	}
	return strings.Join(notes, "; ")
}

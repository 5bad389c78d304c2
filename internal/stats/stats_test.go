package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The p-values benchstat's statistics (golang.org/x/perf/benchmath,
// AssumeNothing.Compare) give for these samples, computed once with it.
var benchmathCases = []struct {
	name string
	x, y []float64
	p    float64
	tol  float64 // exact distribution: to rounding; ties: normal approximation
}{
	{"separated 4", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0.028571428571428577, 1e-12},
	{"separated 3", []float64{1.1, 1.3, 1.2}, []float64{1.4, 1.5, 1.6}, 0.10000000000000002, 1e-12},
	{"overlapping 6", []float64{48.1, 39.2, 55.0, 61.3, 44.4, 42.0}, []float64{40.8, 33.1, 45.2, 38.9, 51.7, 36.0}, 0.13203463203463206, 1e-12},
	{"shifted 10", []float64{10.2, 10.5, 9.9, 10.1, 10.4, 10.0, 10.3, 9.8, 10.6, 10.7},
		[]float64{11.1, 10.9, 11.4, 11.2, 10.8, 11.5, 11.0, 11.3, 11.6, 10.65}, 2.1650176448938059e-05, 1e-12},
	{"interleaved 5", []float64{1, 2, 3, 4, 5}, []float64{1.5, 2.5, 3.5, 4.5, 5.5}, 0.69047619047619058, 1e-12},
	{"ties 8", []float64{3, 1, 4, 1, 5, 9, 2, 6}, []float64{5, 3, 5, 8, 9, 7, 9, 3}, 0.12540792540792542, 0.01},
}

func TestMannWhitneyAgainstBenchmath(t *testing.T) {
	for _, c := range benchmathCases {
		got := MannWhitney(c.x, c.y)
		if math.Abs(got.P-c.p) > c.tol {
			t.Errorf("%s: p = %.17g, benchmath %.17g", c.name, got.P, c.p)
		}
		if back := MannWhitney(c.y, c.x); math.Abs(back.P-got.P) > 1e-12 {
			t.Errorf("%s: p depends on the order of the samples: %g and %g", c.name, got.P, back.P)
		}
	}
}

func TestMannWhitneyDegenerate(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
	}{
		{"empty", nil, []float64{1, 2}},
		{"all equal", []float64{2, 2, 2}, []float64{2, 2}},
		{"identical", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}},
	} {
		if p := MannWhitney(c.x, c.y).P; p != 1 {
			t.Errorf("%s: p = %g, want 1", c.name, p)
		}
	}
}

// The exact distribution of U for 2 and 2: U takes 0..4 with counts
// 1, 1, 2, 1, 1 out of 6 (a textbook table).
func TestUCDF(t *testing.T) {
	want := []float64{1. / 6, 2. / 6, 4. / 6, 5. / 6, 1}
	got := uCDF(2, 2)
	if len(got) != len(want) {
		t.Fatalf("uCDF(2, 2) = %v", got)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("P(U <= %d) = %g, want %g", i, got[i], want[i])
		}
	}
	// P(U = 0) for 4 and 4 is 1/C(8,4) = 1/70.
	if got := uCDF(4, 4)[0]; math.Abs(got-1./70) > 1e-15 {
		t.Errorf("P(U = 0) for 4 and 4 = %g, want 1/70", got)
	}
}

func TestCompare(t *testing.T) {
	ref := []float64{1.00, 1.02, 0.98, 1.01, 0.99, 1.03, 0.97, 1.00, 1.01, 0.99}
	slow := make([]float64, len(ref))
	for i, v := range ref {
		slow[i] = v * 1.25
	}
	c := Compare(slow, ref)
	if math.Abs(c.Ratio-1.25) > 1e-9 {
		t.Errorf("ratio %g, want 1.25 (every value scaled by it)", c.Ratio)
	}
	if !c.HasInterval || c.Lo > 1.25 || c.Hi < 1.25 || c.Lo <= 1.1 || c.Hi >= 1.4 {
		t.Errorf("interval [%g, %g] (has %v), want around 1.25", c.Lo, c.Hi, c.HasInterval)
	}
	if !c.Significant || c.Test.P > 1e-3 {
		t.Errorf("p = %g, want significant", c.Test.P)
	}
	if c.Median != Median(slow) || c.RefMedian != Median(ref) {
		t.Errorf("medians %g %g", c.Median, c.RefMedian)
	}

	// Three a side: no 95 % interval exists, and no p-value below 0.05.
	few := Compare([]float64{2, 2.1, 2.2}, []float64{1, 1.1, 1.2})
	if few.HasInterval || !math.IsNaN(few.Lo) || few.Significant || few.MinRunsASide != 4 {
		t.Errorf("three a side: %+v", few)
	}
	// Four a side: the interval is the smallest to the largest ratio.
	four := Compare([]float64{2, 3, 4, 5}, []float64{1, 1, 1, 1})
	if !four.HasInterval || four.Lo != 2 || four.Hi != 5 {
		t.Errorf("four a side: [%g, %g]", four.Lo, four.Hi)
	}
	// Zero times (below the clock's resolution) are left out of the ratio.
	zero := Compare([]float64{0, 0, 0}, []float64{1, 1, 1})
	if !math.IsNaN(zero.Ratio) {
		t.Errorf("ratio of zeros = %g, want NaN", zero.Ratio)
	}
}

// TestCompareCoverage checks the interval's promise by simulation: of
// intervals for samples of ten drawn from skewed distributions whose
// ratio is known, at least 95 % cover it (up to the simulation's own
// noise).
func TestCompareCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const trials, trueRatio = 2000, 1.1
	covered := 0
	sample := func(scale float64) []float64 {
		xs := make([]float64, 10)
		for i := range xs {
			xs[i] = scale * (1 + rng.ExpFloat64()*0.05) // a floor and a right tail, as timings have
		}
		return xs
	}
	for range trials {
		c := Compare(sample(trueRatio), sample(1))
		if c.Lo <= trueRatio && trueRatio <= c.Hi {
			covered++
		}
	}
	if frac := float64(covered) / trials; frac < 0.94 {
		t.Errorf("coverage %.3f, want at least 0.95", frac)
	}
}

func TestMedianMAD(t *testing.T) {
	for _, c := range []struct {
		xs          []float64
		median, mad float64
	}{
		{[]float64{3, 1, 2}, 2, 1},
		{[]float64{4, 1, 3, 2}, 2.5, 1},
		{[]float64{1, 1, 2, 2, 4, 6, 9}, 2, 1}, // a textbook example of the MAD
	} {
		if m := Median(c.xs); m != c.median {
			t.Errorf("Median(%v) = %g, want %g", c.xs, m, c.median)
		}
		if m := MAD(c.xs); m != c.mad {
			t.Errorf("MAD(%v) = %g, want %g", c.xs, m, c.mad)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestOutliers(t *testing.T) {
	// One run lost its CPU for a while.
	xs := []float64{1.00, 1.01, 0.99, 1.02, 0.98, 1.00, 1.01, 2.50, 0.99, 1.00}
	if got := Outliers(xs); len(got) != 1 || got[0] != 7 {
		t.Errorf("Outliers = %v, want [7]", got)
	}
	// Ordinary noise is no outlier.
	if got := Outliers([]float64{1.00, 1.05, 0.95, 1.10, 0.90, 1.02}); got != nil {
		t.Errorf("Outliers of noise = %v", got)
	}
	// The modified z-score of a value 1 MAD away is 1/1.4826.
	z := ModifiedZScores([]float64{1, 2, 3})
	if math.Abs(z[2]-1/1.4826) > 1e-12 || z[1] != 0 {
		t.Errorf("ModifiedZScores = %v", z)
	}
}

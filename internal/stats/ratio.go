package stats

import (
	"math"
	"slices"
)

// Confidence is the level of the intervals [Compare] returns.
const Confidence = 0.95

// Comparison is a sample compared against a reference sample.
type Comparison struct {
	N, RefN      int     // the sizes of the sample and the reference
	Median       float64 // of the sample
	RefMedian    float64 // of the reference
	Ratio        float64 // sample over reference: the Hodges-Lehmann estimate, the median of every ratio x/ref
	Lo, Hi       float64 // the 95 % confidence interval of Ratio; NaN when the samples are too small for one
	HasInterval  bool    // Lo and Hi are set
	Test         UTest   // the U test of the sample against the reference
	Significant  bool    // Test.P < 1 - Confidence: the two differ
	MinRunsASide int     // the runs a side an interval needs at least (when HasInterval is false)
}

// Compare compares x against ref, both samples of positive values such as
// times. The ratio is the Hodges-Lehmann estimate of x over ref: the
// median of the ratios of every value of x to every value of ref, which
// for a change that scales every time by r is r. Its interval is Moses'
// distribution-free interval for that estimate: the order statistics of
// the ratios that the quantiles of the U distribution give, so that it
// covers the true ratio with at least 95 % probability whatever the
// shape of the distribution. With fewer than 4 values a side no interval
// reaches 95 % and HasInterval is false; the same sizes can never make
// the U test significant.
//
// Non-positive values (a time of 0, unresolved by the clock) are left out
// of the ratio and its interval.
func Compare(x, ref []float64) Comparison {
	c := Comparison{
		N: len(x), RefN: len(ref), Median: Median(x), RefMedian: Median(ref),
		Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), MinRunsASide: minRunsASide(),
	}
	c.Test = MannWhitney(x, ref)
	c.Significant = c.Test.P < 1-Confidence
	lx, lr := logs(x), logs(ref)
	if len(lx) == 0 || len(lr) == 0 {
		return c
	}
	d := make([]float64, 0, len(lx)*len(lr))
	for _, a := range lx {
		for _, b := range lr {
			d = append(d, a-b)
		}
	}
	slices.Sort(d)
	c.Ratio = math.Exp(sortedMedian(d))
	if k := trimCount(len(lx), len(lr), 1-Confidence); k > 0 {
		c.Lo, c.Hi, c.HasInterval = math.Exp(d[k-1]), math.Exp(d[len(d)-k]), true
	}
	return c
}

func logs(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// trimCount returns the k of Moses' interval [D(k), D(n1*n2+1-k)] (order
// statistics of the n1*n2 differences, from 1): the largest k with
// P(U <= k-1) <= alpha/2. It is 0 when no k reaches the level.
func trimCount(n1, n2 int, alpha float64) int {
	if n1 <= exactLimit && n2 <= exactLimit {
		cdf := uCDF(n1, n2)
		k := 0
		for k < len(cdf) && cdf[k] <= alpha/2 {
			k++
		}
		return k
	}
	// Normal approximation of the U quantile.
	mean := float64(n1*n2) / 2
	sd := math.Sqrt(float64(n1*n2*(n1+n2+1)) / 12)
	z := math.Sqrt2 * math.Erfinv(1-alpha)
	return max(int(math.Floor(mean-z*sd+0.5)), 0)
}

// minRunsASide returns the smallest n for which n runs a side give a
// 95 % interval.
func minRunsASide() int {
	for n := 1; ; n++ {
		if trimCount(n, n, 1-Confidence) > 0 {
			return n
		}
	}
}

package stats

import (
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the middle two for an even
// count), or NaN when xs is empty.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedMedian(s)
}

func sortedMedian(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MAD returns the median absolute deviation of xs from their median.
func MAD(xs []float64) float64 {
	m := Median(xs)
	dev := make([]float64, len(xs))
	for i, x := range xs {
		dev[i] = math.Abs(x - m)
	}
	return Median(dev)
}

// OutlierThreshold is the modified z-score above which a value is an
// outlier: hyperfine's threshold. It is far above Iglewicz and Hoaglin's
// 3.5, which on a busy machine flags most samples of ten runs: only a run
// that took much longer (or shorter) than the others stands out.
const OutlierThreshold = 14.826

// ModifiedZScores returns, for each value, its distance from the median in
// units of the median absolute deviation scaled to the standard deviation
// of a normal distribution (MAD × 1.4826), as Iglewicz and Hoaglin define
// it. When the MAD is 0 (more than half the values are equal) every score
// is 0 for those values and +-Inf for the others.
func ModifiedZScores(xs []float64) []float64 {
	m, mad := Median(xs), MAD(xs)
	z := make([]float64, len(xs))
	for i, x := range xs {
		switch d := x - m; {
		case d == 0:
			z[i] = 0
		case mad == 0:
			z[i] = math.Inf(int(math.Copysign(1, d)))
		default:
			z[i] = d / (1.4826 * mad)
		}
	}
	return z
}

// Outliers returns the indices of the values of xs whose modified z-score
// exceeds [OutlierThreshold] in absolute value, in order.
func Outliers(xs []float64) []int {
	var out []int
	for i, z := range ModifiedZScores(xs) {
		if math.Abs(z) > OutlierThreshold {
			out = append(out, i)
		}
	}
	return out
}

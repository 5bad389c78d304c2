package stats

import (
	"math"
	"slices"
)

// exactLimit is the largest sample size on either side for which the U
// test uses the exact distribution of U; above it, the normal
// approximation is within a fraction of a percent of it.
const exactLimit = 50

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	U float64 // the U statistic of the first sample (ties count 1/2)
	P float64 // the p-value: the chance of a U this far from its mean if both samples came from one distribution
	// Exact is true when P comes from the exact distribution of U, false
	// when from the normal approximation (large samples or ties).
	Exact bool
}

// MannWhitney runs the two-sided Mann-Whitney U test (the Wilcoxon rank-sum
// test) on x and y: the test benchstat runs. It makes no assumption about
// the shape of the distributions. P is 1 when either sample is empty or
// every value is equal.
//
// Without ties and with at most 50 values a side, P is exact; otherwise it
// uses the normal approximation with the correction for ties and a
// continuity correction (benchstat uses an exact distribution with ties
// too, so on tied samples the two differ a little).
func MannWhitney(x, y []float64) UTest {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return UTest{P: 1}
	}
	u1, ties := rankSum(x, y)
	if ties == nil {
		// Every value is equal.
		return UTest{U: u1, P: 1}
	}
	u2 := float64(n1*n2) - u1
	small := math.Min(u1, u2)
	if len(ties) == n1+n2 && n1 <= exactLimit && n2 <= exactLimit {
		cdf := uCDF(n1, n2)
		p := 2 * cdf[int(small)]
		if u1 == u2 {
			p = 1
		}
		return UTest{U: u1, P: math.Min(p, 1), Exact: true}
	}
	mean := float64(n1*n2) / 2
	n := float64(n1 + n2)
	tieSum := 0.0
	for _, t := range ties {
		tieSum += float64(t*t*t - t)
	}
	variance := float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1)))
	if variance <= 0 {
		return UTest{U: u1, P: 1}
	}
	z := (math.Abs(small-mean) - 0.5) / math.Sqrt(variance)
	if z < 0 {
		z = 0
	}
	return UTest{U: u1, P: math.Min(math.Erfc(z/math.Sqrt2), 1)}
}

// rankSum returns the U statistic of x against y and the sizes of the
// groups of equal values in the merged sample (all 1 without ties; nil
// when all values are equal).
func rankSum(x, y []float64) (u float64, groups []int) {
	type obs struct {
		v     float64
		first bool
	}
	all := make([]obs, 0, len(x)+len(y))
	for _, v := range x {
		all = append(all, obs{v, true})
	}
	for _, v := range y {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(a, b obs) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	r1 := 0.0
	for i := 0; i < len(all); {
		j, inX := i, 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].first {
				inX++
			}
		}
		// Ranks i+1..j share their mean.
		r1 += float64(inX) * float64(i+1+j) / 2
		groups = append(groups, j-i)
		i = j
	}
	if len(groups) == 1 {
		groups = nil
	}
	n1 := float64(len(x))
	return r1 - n1*(n1+1)/2, groups
}

// uCDF returns P(U <= u) for u = 0..n1*n2 under the null hypothesis,
// without ties. The number of arrangements with U = u obeys
// f(i, j, u) = f(i-1, j, u-j) + f(i, j-1, u): the largest value belongs to
// the first sample (beating all j of the second) or to the second.
func uCDF(n1, n2 int) []float64 {
	// prev[j] and cur[j] hold f(i-1, j, .) and f(i, j, .).
	prev := make([][]float64, n2+1)
	for j := range prev {
		prev[j] = []float64{1} // f(0, j, 0) = 1
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1}
		for j := 1; j <= n2; j++ {
			f := make([]float64, i*j+1)
			for u, c := range prev[j] {
				f[u+j] += c
			}
			for u, c := range cur[j-1] {
				f[u] += c
			}
			cur[j] = f
		}
		prev = cur
	}
	f := prev[n2]
	total := 0.0
	for _, c := range f {
		total += c
	}
	cdf := make([]float64, len(f))
	acc := 0.0
	for u, c := range f {
		acc += c
		cdf[u] = acc / total
	}
	return cdf
}

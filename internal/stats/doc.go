// Package stats holds the statistics wirebench reports about repeated timings
// of a program: the median, the ratio of two samples with a distribution-free
// 95 % confidence interval, the Mann-Whitney U test that benchstat uses, and
// outlier detection by modified z-score as hyperfine does it.
//
// None of them assumes the timings are normally distributed: timings on a
// shared machine have long right tails (a run that lost its CPU for a while),
// and a few such runs would dominate a mean and a standard deviation.
//
// [Compare] is the entry point: it compares a sample against a reference
// sample and returns the ratio of the two, its interval and the p-value of
// the U test.
package stats

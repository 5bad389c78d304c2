package stats_test

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/stats"
)

func ExampleCompare() {
	ref := []float64{0.61, 0.60, 0.63, 0.59, 0.62, 0.60} // seconds, reference variant
	opt := []float64{0.52, 0.55, 0.53, 0.51, 0.54, 0.52} // seconds, the variant compared
	c := stats.Compare(opt, ref)
	fmt.Printf("ratio %.2f [%.2f, %.2f], p=%.3f, significant: %v\n", c.Ratio, c.Lo, c.Hi, c.Test.P, c.Significant)
	// Output: ratio 0.87 [0.84, 0.90], p=0.005, significant: true
}

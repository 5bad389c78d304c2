//go:build race

package replay

// raceEnabled lets the memory tests, whose figures the race detector
// changes, skip under it.
const raceEnabled = true

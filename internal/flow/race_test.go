//go:build race

package flow

// raceEnabled lets slow tests that add nothing under the race detector
// (they call external tools) skip there.
const raceEnabled = true

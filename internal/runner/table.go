package runner

import (
	"fmt"
	"io"
	"strconv"
)

// The table keeps the layout of Spicy's run-benchmark script, so that its
// users feel at home: per variant printf "%15s  " name, per timed run
// "%-10.2f  " user seconds (or "%-10s  " <fail> / <no time>), per log
// "%10s=%s" file and record count (<n/a> when absent); a blank line after
// each protocol, and a footer. Only when a name is longer than 15
// characters (http-analyze-std) does the name column widen, to the
// longest name, so that the columns of every row stay aligned.

// seedNameWidth is the width of the name column in Spicy's script.
const seedNameWidth = 15

// NameWidth returns the width of the table's name column for variants
// with these names: 15, as in Spicy's script, or the longest name when
// one is longer.
func NameWidth(names []string) int {
	w := seedNameWidth
	for _, n := range names {
		w = max(w, len(n))
	}
	return w
}

// tableWriter prints the table row by row as runs finish. A nil writer
// prints nothing.
type tableWriter struct {
	w     io.Writer
	runs  int
	width int // of the name column (NameWidth)
	// tsharkRuns, when set, is the runs of the tshark rows, which differ.
	tsharkRuns int
	proto      string // protocol of the rows printed so far in the current block
}

func (t *tableWriter) startRow(v Variant) {
	if t.w == nil {
		return
	}
	if t.proto != "" && t.proto != v.Protocol {
		fmt.Fprintln(t.w)
	}
	t.proto = v.Protocol
	fmt.Fprintf(t.w, "%*s  ", t.width, v.Name)
}

func (t *tableWriter) cell(r Run) {
	if t.w == nil {
		return
	}
	switch {
	case !r.OK():
		fmt.Fprintf(t.w, "%-10s  ", "<fail>")
	case !r.TimeKnown:
		fmt.Fprintf(t.w, "%-10s  ", "<no time>")
	default:
		fmt.Fprintf(t.w, "%-10.2f  ", r.User.Seconds())
	}
}

func (t *tableWriter) endRow(counts []Count) {
	if t.w == nil {
		return
	}
	for _, c := range counts {
		v := "<n/a>"
		if c.Present {
			v = strconv.Itoa(c.Records)
		}
		fmt.Fprintf(t.w, "%10s=%s", c.Log, v)
	}
	fmt.Fprintln(t.w)
}

func (t *tableWriter) finish() {
	if t.w == nil {
		return
	}
	if t.proto != "" {
		fmt.Fprintln(t.w)
	}
	fmt.Fprintln(t.w, Footer(t.runs))
	if t.tsharkRuns > 0 {
		fmt.Fprintf(t.w, "The tshark lines are %s.\n", executions(t.tsharkRuns))
	}
}

// Footer is the table's last line for n timed runs per variant.
func Footer(n int) string {
	return fmt.Sprintf("Each line is %s of the same command. Values are user time in seconds.", executions(n))
}

func executions(n int) string {
	words := []string{"no executions", "one execution", "two executions", "three executions", "four executions",
		"five executions", "six executions", "seven executions", "eight executions", "nine executions", "ten executions"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n) + " executions"
}

// WriteTable prints the table of finished results, exactly as RunAll
// prints it while running. runs is the number of timed runs per variant.
func WriteTable(w io.Writer, results []Result, runs int) {
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Variant.Name
	}
	tw := &tableWriter{w: w, runs: runs, width: NameWidth(names)}
	for _, r := range results {
		tw.startRow(r.Variant)
		for _, run := range r.Timed() {
			tw.cell(run)
		}
		tw.endRow(r.Counts)
	}
	tw.finish()
}

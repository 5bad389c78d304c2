package logdiff

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText writes the result for people: the summary, the counts, the
// fields compared and not, and the examples side by side, A's values
// beside B's, with the differing fields marked "*".
func (r *Result) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "== %s.log\nA: %s\nB: %s\n%s\n", r.Log, r.A, r.B, r.Summary())
	fmt.Fprintf(bw, "records: A %d, B %d; matched %d (%d equal, %d differ); missing (A only) %d; extra (B only) %d\n",
		r.ARecords, r.BRecords, r.Matched, r.Equal, r.Differ, r.Missing, r.Extra)
	fmt.Fprintf(bw, "matched on: %s\n", orNone(r.Key))
	var fields []string
	for _, f := range r.Fields {
		s := fmt.Sprintf("%s (%d equal", f.Field, f.Equal)
		if f.Differ > 0 {
			s += fmt.Sprintf(", %d differ", f.Differ)
		}
		if f.Skipped > 0 {
			s += fmt.Sprintf(", %d not numbers", f.Skipped)
		}
		fields = append(fields, s+")")
	}
	fmt.Fprintf(bw, "compared: %s\n", orNone(fields))
	if len(r.NotCompared) > 0 {
		var nc []string
		for _, n := range r.NotCompared {
			nc = append(nc, n.Field+" ("+n.Reason+")")
		}
		fmt.Fprintf(bw, "not compared: %s\n", strings.Join(nc, ", "))
	}
	for _, ex := range r.Examples {
		bw.WriteString("\n")
		writeExample(bw, ex)
	}
	return bw.Flush()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// exampleWidth is the width of a value column of an example; longer
// values are cut, with "..." at the end.
const exampleWidth = 48

func writeExample(w io.Writer, ex Example) {
	switch ex.Kind {
	case "differ":
		fmt.Fprintf(w, "differ: A line %d, B line %d\n", ex.ALine, ex.BLine)
	case "missing":
		fmt.Fprintf(w, "missing: A line %d, not in B\n", ex.ALine)
	case "extra":
		fmt.Fprintf(w, "extra: B line %d, not in A\n", ex.BLine)
	}
	width := len("field")
	for _, f := range ex.Fields {
		width = max(width, len(f))
	}
	fmt.Fprintf(w, "  %-*s  %-*s  %s\n", width, "field", exampleWidth, "A", "B")
	for i, f := range ex.Fields {
		mark := " "
		if slices.Contains(ex.Differ, f) {
			mark = "*"
		}
		fmt.Fprintf(w, "%s %-*s  %-*s  %s\n", mark, width, f, exampleWidth, cell(ex.A, i), cell(ex.B, i))
	}
}

// cell is value i of vals as an example shows it, quoted when it holds
// bytes a terminal would not show as they are.
func cell(vals []string, i int) string {
	if vals == nil {
		return ""
	}
	v := vals[i]
	if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\uFFFD' }) {
		v = fmt.Sprintf("%q", v)
	}
	if len(v) > exampleWidth {
		v = v[:exampleWidth-3] + "..."
	}
	return v
}

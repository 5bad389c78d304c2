package runner

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteMarkdown writes the table and the statistics section as Markdown
// tables, for a pull request or an issue: per protocol the user time of
// each timed run and the log records, then the statistics of each
// variant against its reference.
func WriteMarkdown(w io.Writer, results []Result, sts []Stat, runs int) error {
	var b strings.Builder
	b.WriteString("| variant |")
	for i := 1; i <= runs; i++ {
		fmt.Fprintf(&b, " run %d |", i)
	}
	b.WriteString(" logs |\n|---|")
	b.WriteString(strings.Repeat("---:|", runs))
	b.WriteString("---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s |", r.Variant.Name)
		timed := r.Timed()
		for i := range runs {
			cell := ""
			if i < len(timed) {
				switch run := timed[i]; {
				case !run.OK():
					cell = "fail"
				case !run.TimeKnown:
					cell = "no time"
				default:
					cell = fmt.Sprintf("%.3f", run.User.Seconds())
				}
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		var logs []string
		for _, c := range r.Counts {
			n := "n/a"
			if c.Present {
				n = strconv.Itoa(c.Records)
			}
			logs = append(logs, c.Log+"="+n)
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(logs, " "))
	}
	b.WriteString("\nUser time in seconds per run")
	if passes := passesNote(results); passes != "" {
		b.WriteString("; " + passes)
	}
	b.WriteString(".\n\n| variant | n | median CPU s per execution | MB/s | ratio | 95 % interval | p | |\n|---|---:|---:|---:|---:|---|---:|---|\n")
	for _, s := range sts {
		iv, p, verdict := "", "", ""
		r := "reference"
		switch c := s.Comparison; {
		case len(s.Times) == 0:
			r = "no successful timed run"
		case s.Reference == "":
			r = "no reference"
		case c != nil:
			r = ratio(c.Ratio)
			p = fmt.Sprintf("%.3f", c.Test.P)
			verdict = speedVerdict(c)
			if c.HasInterval {
				iv = fmt.Sprintf("[%s, %s]", ratio(c.Lo), ratio(c.Hi))
			} else {
				iv = fmt.Sprintf("too few runs (%d a side)", c.MinRunsASide)
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s |\n", s.Variant, len(s.Times),
			strings.TrimSuffix(statSeconds(s.Median), " s"), statMBps(s.MBPerSecond), r, iv, p, verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// passesNote says which variants' runs are several executions, or "".
func passesNote(results []Result) string {
	var parts []string
	for _, r := range results {
		if r.Passes > 1 {
			parts = append(parts, fmt.Sprintf("%s %d", r.Variant.Name, r.Passes))
		}
	}
	if parts == nil {
		return ""
	}
	return "executions per run: " + strings.Join(parts, ", ")
}

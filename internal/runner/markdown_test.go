package runner

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteMarkdown(t *testing.T) {
	results := statResults()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, results, Statistics(results, ""), 10); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| variant | run 1 | run 2 |", "| http-static | 0.500 | 0.505 |", "| dns-opt | fail |",
		"executions per run: http-static 10, http-opt 12",
		"| http-opt | 10 | 0.040 | 1250.0 | 0.800x | [0.788x, 0.812x] | 0.000 | faster |",
		"| http-static | 10 | 0.050 | 1000.0 | reference |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	// Every row of a table has its header's number of cells.
	for _, block := range strings.Split(md, "\n\n") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		if !strings.HasPrefix(lines[0], "|") {
			continue
		}
		want := strings.Count(lines[0], "|")
		for _, l := range lines {
			if strings.Count(l, "|") != want {
				t.Errorf("row %q has %d bars, the header %d", l, strings.Count(l, "|"), want)
			}
		}
	}
}

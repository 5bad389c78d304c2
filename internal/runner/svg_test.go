package runner

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type svgElem struct {
	name  string
	attrs map[string]string
	text  string
}

// parseSVG checks that data is well-formed XML and returns its elements.
func parseSVG(t *testing.T, data []byte) []svgElem {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	var elems []svgElem
	var stack []int
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			elems = append(elems, e)
			stack = append(stack, len(elems)-1)
		case xml.CharData:
			if len(stack) > 0 {
				elems[stack[len(stack)-1]].text += string(tok)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	return elems
}

func attrFloat(t *testing.T, e svgElem, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attrs[name], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", e.name, name, e.attrs[name], err)
	}
	return v
}

func TestWriteSVG(t *testing.T) {
	results := statResults()
	sts := Statistics(results, "")
	for _, unit := range []ChartUnit{ChartSeconds, ChartMBps, ChartRatio} {
		var buf bytes.Buffer
		if err := WriteSVG(&buf, results, sts, ChartOptions{Unit: unit, Title: "wirebench <test> & more"}); err != nil {
			t.Fatal(err)
		}
		elems := parseSVG(t, buf.Bytes())
		if elems[0].name != "svg" || elems[0].attrs["viewBox"] == "" {
			t.Fatalf("root element %+v", elems[0])
		}
		var texts []string
		var bars []svgElem
		for _, e := range elems {
			switch {
			case e.name == "text":
				texts = append(texts, e.text)
			case e.name == "rect" && e.attrs["class"] == "bar":
				bars = append(bars, e)
			}
		}
		all := strings.Join(texts, "|")
		for _, want := range []string{"wirebench <test> & more", "(log scale)", "http-static", "dns-opt", "no successful timed run"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: SVG text lacks %q; texts: %q", unit, want, texts)
			}
		}
		if len(bars) != 5 {
			t.Fatalf("%s: %d bars, want 5 (dns-opt has no successful run)", unit, len(bars))
		}
		// On a log scale tshark, 58 times slower, leaves the others' bars
		// long enough to read: at least a tenth of tshark's.
		widths := make([]float64, len(bars))
		for i, b := range bars {
			widths[i] = attrFloat(t, b, "width")
		}
		longest := slices.Max(widths)
		for i, w := range widths {
			if w < longest/10 && unit != ChartRatio {
				t.Errorf("%s: bar %d is %.1f units, tshark's %.1f", unit, i, w, longest)
			}
		}
		if unit == ChartSeconds {
			// http-static (0.05 s) and tshark (2.9 s): the ratio of the
			// bars' ends from the axis origin follows the log scale.
			plotW := float64(svgWidth - svgLabelW - svgValueW)
			_, lo, hi := logTicks(0.0495, 2.958)
			want := (math.Log10(0.05) - math.Log10(lo)) / (math.Log10(hi) - math.Log10(lo)) * plotW
			if math.Abs(widths[0]-want) > 0.2 {
				t.Errorf("http-static's bar is %.1f units, want %.1f", widths[0], want)
			}
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		lo, hi         float64
		ticks          string
		axisLo, axisHi float64
	}{
		{0.05, 2.9, "0.01 0.02 0.05 0.1 0.2 0.5 1 2 5 10", 0.01, 10},
		{0.3, 0.6, "0.1 0.2 0.5 1", 0.1, 1},
		{0.004, 123, "0.001 0.01 0.1 1 10 100 1000", 0.001, 1000},
		{1, 1, "1 2 5 10", 1, 10},
	}
	for _, tt := range tests {
		ticks, lo, hi := logTicks(tt.lo, tt.hi)
		var s []string
		for _, v := range ticks {
			s = append(s, tickValue(v))
		}
		if got := strings.Join(s, " "); got != tt.ticks || lo != tt.axisLo || hi != tt.axisHi {
			t.Errorf("logTicks(%g, %g) = %s on [%g, %g], want %s on [%g, %g]", tt.lo, tt.hi, got, lo, hi, tt.ticks, tt.axisLo, tt.axisHi)
		}
	}
}

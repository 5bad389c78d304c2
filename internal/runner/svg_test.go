package runner

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
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
	var buf bytes.Buffer
	if err := WriteSVG(&buf, tableResults(), "wirebench <test> & more"); err != nil {
		t.Fatal(err)
	}
	elems := parseSVG(t, buf.Bytes())
	if elems[0].name != "svg" || elems[0].attrs["viewBox"] == "" {
		t.Fatalf("root element %+v", elems[0])
	}
	var texts []string
	var bars, whiskers []svgElem
	for _, e := range elems {
		switch {
		case e.name == "text":
			texts = append(texts, e.text)
		case e.name == "rect" && e.attrs["class"] == "bar":
			bars = append(bars, e)
		case e.name == "path" && e.attrs["class"] == "whisker":
			whiskers = append(whiskers, e)
		}
	}
	all := strings.Join(texts, "|")
	for _, want := range []string{"wirebench <test> & more", "user time (seconds)", "variant", "http-static", "dns-analyze",
		"no successful timed run", "1.56 s", "replay", "analyze", "tshark"} {
		if !strings.Contains(all, want) {
			t.Errorf("SVG text lacks %q; texts: %q", want, texts)
		}
	}
	// Bars for every variant with a timed run that succeeded: not the
	// one whose runs have no time, not the one whose runs all failed.
	if len(bars) != 5 || len(whiskers) != 5 {
		t.Fatalf("%d bars and %d whiskers, want 5 each", len(bars), len(whiskers))
	}
	// Bar lengths are the medians on the axis (0 to 150 s): the failed
	// run of http-opt is left out of its median.
	medians := []float64{1.56, (1.44 + 1.434) / 2, 4.97, 3.69, 12.345}
	plotW := float64(svgWidth - svgLabelW - svgValueW)
	for i, b := range bars {
		if got, want := attrFloat(t, b, "width"), medians[i]/150*plotW; math.Abs(got-want) > 0.06 {
			t.Errorf("bar %d is %.2f units long, want %.2f (%.3f s)", i, got, want, medians[i])
		}
	}
	// The axis must reach the slowest run (123.456 s).
	if !strings.Contains(all, "|150|") {
		t.Errorf("no 150 s tick for a 123.456 s run; texts %q", texts)
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct{ max, step, top float64 }{
		{0, 0.2, 1},
		{1.58, 0.5, 2},
		{5.02, 2, 6},
		{123.456, 50, 150},
		{0.302, 0.1, 0.4},
		{10, 2, 10},
	}
	for _, tt := range tests {
		step, top := niceScale(tt.max)
		if math.Abs(step-tt.step) > 1e-9 || math.Abs(top-tt.top) > 1e-9 {
			t.Errorf("niceScale(%v) = %v, %v; want %v, %v", tt.max, step, top, tt.step, tt.top)
		}
	}
}

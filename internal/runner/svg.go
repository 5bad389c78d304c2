package runner

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Layout of the chart, in SVG user units (pixels).
const (
	svgWidth    = 860
	svgLabelW   = 160 // left column with the variant names
	svgValueW   = 110 // right margin for the value labels
	svgTop      = 56  // title and subtitle
	svgRowH     = 24
	svgGroupGap = 14 // between protocols
	svgBottom   = 58 // tick labels and axis title
	svgBarH     = 14
)

// ChartUnit is what the SVG chart shows per variant.
type ChartUnit string

// Chart units.
const (
	ChartSeconds ChartUnit = "seconds" // CPU seconds per execution
	ChartMBps    ChartUnit = "mbps"    // MB per CPU second
	ChartRatio   ChartUnit = "ratio"   // time over the reference variant's
)

// ParseChartUnit checks the name of a chart unit.
func ParseChartUnit(s string) (ChartUnit, error) {
	switch u := ChartUnit(s); u {
	case ChartSeconds, ChartMBps, ChartRatio:
		return u, nil
	}
	return "", fmt.Errorf("unknown unit %q: want seconds, mbps or ratio", s)
}

// ChartOptions say what WriteSVG draws.
type ChartOptions struct {
	Unit  ChartUnit // ChartSeconds when empty
	Title string
}

// kindColor fills the bars by kind of variant.
func kindColor(k Kind) string {
	switch k {
	case Analyze:
		return "#e08a2c"
	case TShark:
		return "#7a7a7a"
	case Program:
		return "#5a9e5a"
	}
	return "#4878a8"
}

// chartRow is one bar: its value and whisker ends, or why it has none.
type chartRow struct {
	name   string
	kind   Kind
	val    float64
	lo, hi float64
	n      int
	note   string // instead of a bar
	y      float64
}

// WriteSVG draws a horizontal bar chart of the statistics of the results,
// per variant: the median CPU time per execution with a whisker from the
// fastest to the slowest run, its MB per CPU second, or its ratio to the
// reference with the 95 % interval as whisker. The axis is logarithmic,
// so that a variant 100 times slower than the others leaves theirs
// readable. Variants without a successful timed run are named and marked
// so. The SVG is self-contained (no scripts, fonts or links).
func WriteSVG(w io.Writer, results []Result, sts []Stat, opt ChartOptions) error {
	unit := opt.Unit
	if unit == "" {
		unit = ChartSeconds
	}
	var rows []chartRow
	y := float64(svgTop)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range sts {
		if i > 0 && s.Protocol != sts[i-1].Protocol {
			y += svgGroupGap
		}
		r := chartValue(s, unit)
		r.name, r.y = s.Variant, y
		if i < len(results) {
			r.kind = results[i].Variant.Kind
		}
		if r.note == "" {
			lo, hi = math.Min(lo, r.lo), math.Max(hi, r.hi)
		}
		rows = append(rows, r)
		y += svgRowH
	}
	plotH := y - svgTop
	height := y + svgBottom
	if unit == ChartRatio {
		lo, hi = math.Min(lo, 1), math.Max(hi, 1)
	}
	ticks, axisLo, axisHi := logTicks(lo, hi)
	plotW := float64(svgWidth - svgLabelW - svgValueW)
	x := func(v float64) float64 {
		return svgLabelW + (math.Log10(v)-math.Log10(axisLo))/(math.Log10(axisHi)-math.Log10(axisLo))*plotW
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", 14, esc(opt.Title))
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#555">%s</text>`+"\n", svgLabelW, esc(chartSubtitle(unit)))

	for _, v := range ticks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(v), svgTop-4, x(v), svgTop+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), svgTop+plotH+16, esc(tickValue(v)))
	}
	if unit == ChartRatio {
		fmt.Fprintf(&b, `<line class="reference" x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="black" stroke-dasharray="4 3"/>`+"\n", x(1), svgTop-4, x(1), svgTop+plotH)
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", svgLabelW, svgTop+plotH, x(axisHi), svgTop+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`+"\n", svgLabelW, svgTop-4, svgLabelW, svgTop+plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s (log scale)</text>`+"\n", svgLabelW+plotW/2, svgTop+plotH+40, esc(chartAxis(unit)))

	for _, r := range rows {
		mid := r.y + svgRowH/2
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", svgLabelW-8, mid, esc(r.name))
		if r.note != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" dominant-baseline="middle" fill="#b00">%s</text>`+"\n", svgLabelW+6, mid, esc(r.note))
			continue
		}
		fmt.Fprintf(&b, `<rect class="bar" x="%d" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s: %s (%s to %s, %d runs)</title></rect>`+"\n",
			svgLabelW, mid-svgBarH/2, x(r.val)-svgLabelW, svgBarH, kindColor(r.kind), esc(r.name),
			chartLabel(r.val, unit), chartLabel(r.lo, unit), chartLabel(r.hi, unit), r.n)
		fmt.Fprintf(&b, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fV%.1f" stroke="black" fill="none"/>`+"\n",
			x(r.lo), mid-5, mid+5, x(r.lo), mid, x(r.hi), x(r.hi), mid-5, mid+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s</text>`+"\n", x(r.hi)+6, mid, esc(chartLabel(r.val, unit)))
	}

	legend := []Kind{Replay, Analyze, TShark}
	if slices.ContainsFunc(rows, func(r chartRow) bool { return r.kind == Program }) {
		legend = append(legend, Program)
	}
	lx := float64(svgWidth - 250 - 80*(len(legend)-3))
	for i, k := range legend {
		fmt.Fprintf(&b, `<rect x="%.1f" y="31" width="10" height="10" fill="%s"/><text x="%.1f" y="40">%s</text>`+"\n",
			lx+float64(i)*80, kindColor(k), lx+float64(i)*80+14, k)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// chartValue returns a row's value and whisker in unit.
func chartValue(s Stat, unit ChartUnit) chartRow {
	positive := 0
	for _, t := range s.Times {
		if t > 0 {
			positive++
		}
	}
	if positive == 0 {
		return chartRow{note: "no successful timed run"}
	}
	tMin, tMax := math.Inf(1), 0.0
	for _, t := range s.Times {
		if t > 0 {
			tMin, tMax = math.Min(tMin, t), math.Max(tMax, t)
		}
	}
	r := chartRow{n: len(s.Times)}
	switch unit {
	case ChartMBps:
		if s.MBPerSecond <= 0 {
			return chartRow{note: "input size unknown"}
		}
		perExec := s.MBPerSecond * s.Median // MB per execution
		r.val, r.lo, r.hi = s.MBPerSecond, perExec/tMax, perExec/tMin
	case ChartRatio:
		switch {
		case s.Reference == "":
			return chartRow{note: "no reference variant ran"}
		case s.Comparison == nil:
			r.val, r.lo, r.hi = 1, 1, 1
		case !s.Comparison.HasInterval:
			r.val, r.lo, r.hi = s.Comparison.Ratio, s.Comparison.Ratio, s.Comparison.Ratio
		default:
			r.val, r.lo, r.hi = s.Comparison.Ratio, s.Comparison.Lo, s.Comparison.Hi
		}
	default:
		r.val, r.lo, r.hi = s.Median, tMin, tMax
	}
	if !(r.val > 0) {
		return chartRow{note: "no value"}
	}
	return r
}

func chartSubtitle(u ChartUnit) string {
	switch u {
	case ChartMBps:
		return "bar: MB per CPU second at the median; whisker: slowest to fastest run"
	case ChartRatio:
		return "bar: CPU time over the reference variant's; whisker: its 95 % interval"
	}
	return "bar: median CPU time (user+system) per execution; whisker: fastest to slowest run"
}

func chartAxis(u ChartUnit) string {
	switch u {
	case ChartMBps:
		return "MB per CPU second"
	case ChartRatio:
		return "ratio to the reference"
	}
	return "CPU seconds per execution"
}

func chartLabel(v float64, u ChartUnit) string {
	switch u {
	case ChartMBps:
		return fmt.Sprintf("%.1f MB/s", v)
	case ChartRatio:
		return ratio(v)
	}
	return seconds(v) + " s"
}

// logTicks returns the ticks of a logarithmic axis from lo to hi: the
// decades around them, with 2 and 5 times each when the axis spans three
// decades or fewer; and the axis ends.
func logTicks(lo, hi float64) (ticks []float64, axisLo, axisHi float64) {
	if math.IsInf(lo, 0) || !(lo > 0) || !(hi >= lo) {
		lo, hi = 0.1, 1
	}
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 <= d0 {
		d1 = d0 + 1
	}
	steps := []float64{1, 2, 5}
	if d1-d0 > 3 {
		steps = []float64{1}
	}
	for d := d0; d <= d1; d++ {
		for _, s := range steps {
			v := s * math.Pow(10, d)
			if d == d1 && s > 1 {
				break
			}
			ticks = append(ticks, v)
		}
	}
	return ticks, math.Pow(10, d0), math.Pow(10, d1)
}

// tickValue formats a tick: 0.001, 0.5, 20, 1000.
func tickValue(v float64) string {
	return fmt.Sprintf("%g", math.Round(v*1e6)/1e6)
}

// seconds formats a time in seconds with three significant digits or more.
func seconds(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// ChartTitle is a title for WriteSVG naming the data (the trace
// directory and the size of its sub-traces), the source revision when
// known, the CPU and the date.
func ChartTitle(started time.Time, m Machine, traceDir string, src *SourceRevision) string {
	var size int64
	for _, p := range Protocols() {
		if fi, err := os.Stat(filepath.Join(traceDir, "spicy-"+p+".pcap")); err == nil {
			size += fi.Size()
		}
	}
	title := fmt.Sprintf("wirebench on %s (%.1f MB of sub-traces)", filepath.Clean(traceDir), float64(size)/1e6)
	if src != nil {
		title += ", source " + src.String()
	}
	return fmt.Sprintf("%s; %s, %s", title, m.CPUModel, started.Format("2006-01-02 15:04"))
}

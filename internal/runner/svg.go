package runner

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
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

// kindColor fills the bars by kind of variant.
func kindColor(k Kind) string {
	switch k {
	case Analyze:
		return "#e08a2c"
	case TShark:
		return "#7a7a7a"
	}
	return "#4878a8"
}

// WriteSVG draws a horizontal bar chart of the results: per variant the
// median user time of its successful timed runs, with a whisker from the
// fastest to the slowest run. Variants without a successful timed run are
// named and marked so. The SVG is self-contained (no scripts, fonts or
// links).
func WriteSVG(w io.Writer, results []Result, title string) error {
	type row struct {
		name, proto string
		kind        Kind
		s           Summary
		y           float64
	}
	var rows []row
	y := float64(svgTop)
	maxVal := 0.0
	for i, r := range results {
		if i > 0 && r.Variant.Protocol != results[i-1].Variant.Protocol {
			y += svgGroupGap
		}
		var user []float64
		for _, run := range r.Timed() {
			if run.OK() && run.TimeKnown {
				user = append(user, run.User.Seconds())
			}
		}
		s := summarize(user)
		maxVal = math.Max(maxVal, s.Max)
		rows = append(rows, row{r.Variant.Name, r.Variant.Protocol, r.Variant.Kind, s, y})
		y += svgRowH
	}
	plotH := y - svgTop
	height := y + svgBottom
	step, top := niceScale(maxVal)
	plotW := float64(svgWidth - svgLabelW - svgValueW)
	x := func(v float64) float64 { return svgLabelW + v/top*plotW }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%.0f" viewBox="0 0 %d %.0f" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", svgLabelW, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="40" fill="#555">bar: median user time of the runs; whisker: fastest to slowest</text>`+"\n", svgLabelW)

	// Grid and tick labels.
	for v := 0.0; v <= top+step/1e6; v += step {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x(v), svgTop-4, x(v), svgTop+plotH)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(v), svgTop+plotH+16, esc(tickLabel(v, step)))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", svgLabelW, svgTop+plotH, x(top), svgTop+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="black"/>`+"\n", svgLabelW, svgTop-4, svgLabelW, svgTop+plotH)
	fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">user time (seconds)</text>`+"\n", svgLabelW+plotW/2, svgTop+plotH+40)
	fmt.Fprintf(&b, `<text transform="translate(14 %.1f) rotate(-90)" text-anchor="middle">variant</text>`+"\n", svgTop+plotH/2)

	for _, r := range rows {
		mid := r.y + svgRowH/2
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", svgLabelW-8, mid, esc(r.name))
		if r.s.N == 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" dominant-baseline="middle" fill="#b00">no successful timed run</text>`+"\n", svgLabelW+6, mid)
			continue
		}
		color := kindColor(r.kind)
		fmt.Fprintf(&b, `<rect class="bar" x="%d" y="%.1f" width="%.1f" height="%d" fill="%s"><title>%s: median %.3f s (min %.3f, max %.3f, %d runs)</title></rect>`+"\n",
			svgLabelW, mid-svgBarH/2, x(r.s.Median)-svgLabelW, svgBarH, color, esc(r.name), r.s.Median, r.s.Min, r.s.Max, r.s.N)
		fmt.Fprintf(&b, `<path class="whisker" d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fV%.1f" stroke="black" fill="none"/>`+"\n",
			x(r.s.Min), mid-5, mid+5, x(r.s.Min), mid, x(r.s.Max), x(r.s.Max), mid-5, mid+5)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" dominant-baseline="middle">%s s</text>`+"\n", x(r.s.Max)+6, mid, seconds(r.s.Median))
	}

	// Legend.
	lx := float64(svgWidth - 250)
	for i, k := range []Kind{Replay, Analyze, TShark} {
		fmt.Fprintf(&b, `<rect x="%.1f" y="31" width="10" height="10" fill="%s"/><text x="%.1f" y="40">%s</text>`+"\n",
			lx+float64(i)*80, kindColor(k), lx+float64(i)*80+14, k)
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// niceScale returns a tick step of 1, 2 or 5 times a power of ten giving
// four to ten ticks, and the axis end: the first tick at or above max.
func niceScale(max float64) (step, top float64) {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return 0.2, 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / mag; {
	case f <= 1:
		step = mag
	case f <= 2:
		step = 2 * mag
	case f <= 5:
		step = 5 * mag
	default:
		step = 10 * mag
	}
	top = math.Ceil(max/step-1e-9) * step
	return step, top
}

func tickLabel(v, step float64) string {
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return fmt.Sprintf("%.*f", decimals, v)
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

// ChartTitle is a title for WriteSVG naming the CPU and the date.
func ChartTitle(started time.Time, m Machine) string {
	return fmt.Sprintf("wirebench: user time per variant (%s, %s)", m.CPUModel, started.Format("2006-01-02 15:04"))
}

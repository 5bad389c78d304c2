package logdiff

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options tune [Compare].
type Options struct {
	// Tolerance, when positive, replaces the schema's tolerance of times.
	Tolerance time.Duration
	// MaxBytes bounds the memory the two logs' records may hold (see
	// [Compare]); 0 means [DefaultMaxBytes].
	MaxBytes int64
	// Examples is how many records of each kind (differing, missing,
	// extra) the result keeps to show; 0 means [DefaultExamples], a
	// negative number none.
	Examples int
	// Unset compares fields that one of the logs never sets. By default
	// such a field is not compared (a tool that does not know a field
	// leaves it unset) and [Result.NotCompared] says so.
	Unset bool
}

// DefaultMaxBytes is the memory budget of a comparison: the bytes of the
// compared fields of both logs' records, with the Go overhead of holding
// them.
const DefaultMaxBytes = 1 << 30

// DefaultExamples is how many records of each kind a result keeps.
const DefaultExamples = 10

// ErrBudget is wrapped by the error of a comparison whose logs exceed
// [Options.MaxBytes].
var ErrBudget = errors.New("memory budget exceeded")

// Result is the comparison of log B with the reference log A.
type Result struct {
	Log string `json:"log"` // the schema's log name: "http"
	A   string `json:"a"`   // the logs' names
	B   string `json:"b"`
	// Key are the fields records were matched on: the schema's key fields
	// both logs set, or, when they share none, the compared fields (the
	// records are then matched as multisets of those values).
	Key      []string `json:"key"`
	ARecords int      `json:"a_records"`
	BRecords int      `json:"b_records"`
	// Matched records are in both logs; Equal of them agree on every
	// compared field, Differ differ in one at least.
	Matched int `json:"matched"`
	Equal   int `json:"equal"`
	Differ  int `json:"differ"`
	// Missing records are in A only, Extra records in B only.
	Missing int `json:"missing"`
	Extra   int `json:"extra"`
	// Agree is Agreement(), for readers of the JSON.
	Agree float64 `json:"agree"`
	// Fields are the compared fields in the schema's order, with how the
	// matched records fared on each.
	Fields []FieldResult `json:"fields"`
	// NotCompared are the schema's fields that were not compared, with
	// the reason.
	NotCompared []NotCompared `json:"not_compared"`
	// Examples are the first differing, missing and extra records.
	Examples []Example `json:"examples"`
	// Tolerance is how far times could differ and agree, in seconds.
	Tolerance float64 `json:"tolerance_s"`
}

// FieldResult counts how the matched records fared on one field.
type FieldResult struct {
	Field  string `json:"field"`
	Equal  int    `json:"equal"`
	Differ int    `json:"differ"`
	// Skipped counts the records whose times could not be compared: one
	// of them is not a number (Zeek's test baselines mask times as
	// XXXXXXXXXX.XXXXXX).
	Skipped int `json:"skipped"`
}

// NotCompared is a field of the schema left out of the comparison.
type NotCompared struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

// Example is a record to show side by side: differing in both logs, or
// present in one only (the other's values are then nil).
type Example struct {
	Kind   string   `json:"kind"` // "differ", "missing" (in A only) or "extra" (in B only)
	ALine  int      `json:"a_line,omitempty"`
	BLine  int      `json:"b_line,omitempty"`
	Fields []string `json:"fields"` // the key fields, then the compared fields
	A      []string `json:"a"`
	B      []string `json:"b"`
	Differ []string `json:"differ,omitempty"` // the fields that differ
}

// Same reports whether the logs hold the same records with the same
// compared fields.
func (r *Result) Same() bool { return r.Differ == 0 && r.Missing == 0 && r.Extra == 0 }

// Agreement is the share, from 0 to 1, of the records of either log that
// are in both and agree on every compared field; 1 when both are empty.
func (r *Result) Agreement() float64 {
	all := r.Matched + r.Missing + r.Extra
	if all == 0 {
		return 1
	}
	return float64(r.Equal) / float64(all)
}

// Field returns the result of one compared field.
func (r *Result) Field(name string) (FieldResult, bool) {
	i := slices.IndexFunc(r.Fields, func(f FieldResult) bool { return f.Field == name })
	if i < 0 {
		return FieldResult{}, false
	}
	return r.Fields[i], true
}

// Summary says in one line how B agrees with A, e.g.
// "agree 99.4 % (12 differ: response_body_len 9, uri 3; 2 missing)".
func (r *Result) Summary() string {
	s := fmt.Sprintf("agree %5.1f %%", 100*r.Agreement())
	if r.Same() {
		return fmt.Sprintf("%s  (%d records)", s, r.Matched)
	}
	var parts []string
	if r.Differ > 0 {
		byField := slices.Clone(r.Fields)
		slices.SortStableFunc(byField, func(a, b FieldResult) int { return b.Differ - a.Differ })
		var fs []string
		for _, f := range byField {
			if f.Differ > 0 {
				fs = append(fs, fmt.Sprintf("%s %d", f.Field, f.Differ))
			}
		}
		parts = append(parts, fmt.Sprintf("%d differ: %s", r.Differ, strings.Join(fs, ", ")))
	}
	if r.Missing > 0 {
		parts = append(parts, fmt.Sprintf("%d missing", r.Missing))
	}
	if r.Extra > 0 {
		parts = append(parts, fmt.Sprintf("%d extra", r.Extra))
	}
	return fmt.Sprintf("%s  (%s)", s, strings.Join(parts, "; "))
}

// table is one log's records, projected on the schema's fields.
type table struct {
	name   string
	fields []string // the schema's fields the log has
	rows   []row
	set    []int // per field, the records that set it
}

type row struct {
	line int
	vals []string // one per table field, slices of one string
}

func (t *table) col(f string) int { return slices.Index(t.fields, f) }

// budget counts the bytes the tables hold.
type budget struct{ left int64 }

// load reads a log into a table, keeping the values of the schema's
// fields.
func load(r *Reader, s Schema, b *budget) (*table, error) {
	t := &table{name: r.Name()}
	want := append(slices.Clone(s.Key), s.Fields...)
	var idx []int // per table field, its index in the record
	var buf []string
	cols := -1 // the log's columns when the table's were chosen
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(r.Fields()) != cols {
			// The columns are known from the first record on (and may
			// grow in JSON, where records leave unset fields out).
			t.project(r.Fields(), want, &idx)
			cols = len(r.Fields())
		}
		buf = buf[:0]
		size := 0
		for _, i := range idx {
			v := Unset
			if i < len(rec.Values) {
				v = rec.Values[i]
			}
			buf = append(buf, v)
			size += len(v) + 1
		}
		b.left -= int64(size + 16*len(buf) + 48)
		if b.left < 0 {
			return nil, fmt.Errorf("%s: line %d: %w: the compared fields of the logs hold more than the budget (Options.MaxBytes)",
				r.Name(), rec.Line, ErrBudget)
		}
		t.rows = append(t.rows, row{line: rec.Line, vals: pack(buf, size)})
	}
	if len(r.Fields()) != cols {
		t.project(r.Fields(), want, &idx)
	}
	t.set = make([]int, len(t.fields))
	for _, rw := range t.rows {
		for i := range t.fields {
			if i < len(rw.vals) && rw.vals[i] != Unset {
				t.set[i]++
			}
		}
	}
	return t, nil
}

// project sets the table's fields to those of want the log has, keeping
// the order of the fields already known (JSON logs gain columns as they go).
func (t *table) project(cols, want []string, idx *[]int) {
	for _, f := range want {
		i := slices.Index(cols, f)
		if i < 0 || slices.Contains(t.fields, f) {
			continue
		}
		t.fields = append(t.fields, f)
		*idx = append(*idx, i)
	}
}

// pack copies vals into one string and returns them as slices of it.
func pack(vals []string, size int) []string {
	var b strings.Builder
	b.Grow(size)
	for _, v := range vals {
		b.WriteString(v)
		b.WriteByte(0)
	}
	s := b.String()
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], s = s[:len(v)], s[len(v)+1:]
	}
	return out
}

// value returns a row's value of field column c, Unset when the row is
// older than the column (JSON).
func (rw row) value(c int) string {
	if c < 0 || c >= len(rw.vals) {
		return Unset
	}
	return rw.vals[c]
}

// Compare reads the logs a, the reference, and b, matches their records
// by the schema's key and compares the matched records field by field.
//
// Records are matched in time linear in the logs' sizes: the records of
// both are held in memory, each as one string of its compared fields,
// within opt.MaxBytes; a larger comparison fails with [ErrBudget]. Which
// fields are compared: see [Options.Unset]. Two values agree when their
// text is equal, when both are numbers (or lists of numbers) of equal
// value (1 and 1.0, as TSV and JSON logs write them), or, for the
// schema's times, when they differ by at most the tolerance.
func Compare(s Schema, a, b *Reader, opt Options) (*Result, error) {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = DefaultMaxBytes
	}
	switch {
	case opt.Examples == 0:
		opt.Examples = DefaultExamples
	case opt.Examples < 0:
		opt.Examples = 0
	}
	tol := s.Tolerance
	if opt.Tolerance > 0 {
		tol = opt.Tolerance
	}
	bud := &budget{left: opt.MaxBytes}
	ta, err := load(a, s, bud)
	if err != nil {
		return nil, err
	}
	tb, err := load(b, s, bud)
	if err != nil {
		return nil, err
	}
	c := &comparison{s: s, a: ta, b: tb, opt: opt, tol: tol.Seconds()}
	return c.run(), nil
}

type comparison struct {
	s    Schema
	a, b *table
	opt  Options
	tol  float64
	res  *Result
	key  []string
	cmp  []string    // compared fields
	cols [2][]int    // per key and compared field, its column in a and b
	seen map[int]int // per example kind, how many kept
}

func (c *comparison) run() *Result {
	c.res = &Result{Log: c.s.Log, A: c.a.name, B: c.b.name, ARecords: len(c.a.rows), BRecords: len(c.b.rows),
		Tolerance: c.tol, NotCompared: []NotCompared{}, Examples: []Example{}, Fields: []FieldResult{}}
	c.chooseFields()
	for _, f := range c.cmp {
		c.res.Fields = append(c.res.Fields, FieldResult{Field: f})
	}
	all := append(slices.Clone(c.key), c.cmp...)
	for _, f := range all {
		c.cols[0] = append(c.cols[0], c.a.col(f))
		c.cols[1] = append(c.cols[1], c.b.col(f))
	}
	c.seen = map[int]int{}

	// Index A by key; records of one key are matched in log order.
	type queue struct{ rows []int } // the key's rows not matched yet, in order
	queues := make(map[string]*queue, len(c.a.rows))
	var kb []byte
	for i, rw := range c.a.rows {
		kb = c.keyOf(kb[:0], rw, 0)
		q := queues[string(kb)] // no allocation: only a new key is stored
		if q == nil {
			q = &queue{}
			queues[string(kb)] = q
		}
		q.rows = append(q.rows, i)
	}
	matched := make([]bool, len(c.a.rows))
	for _, rb := range c.b.rows {
		kb = c.keyOf(kb[:0], rb, 1)
		q := queues[string(kb)]
		if q == nil || len(q.rows) == 0 {
			c.res.Extra++
			c.example("extra", nil, &rb)
			continue
		}
		ia := q.rows[0]
		q.rows = q.rows[1:]
		matched[ia] = true
		c.pair(&c.a.rows[ia], &rb)
	}
	for i := range c.a.rows {
		if !matched[i] {
			c.res.Missing++
			c.example("missing", &c.a.rows[i], nil)
		}
	}
	c.res.Agree = c.res.Agreement()
	return c.res
}

// chooseFields picks the key and compared fields: those of the schema
// both logs have (and set, unless Options.Unset).
func (c *comparison) chooseFields() {
	usable := func(f string) (bool, string) {
		ia, ib := c.a.col(f), c.b.col(f)
		switch {
		case ia < 0 && ib < 0:
			return false, "in neither log"
		case ia < 0:
			return false, "not in " + c.a.name
		case ib < 0:
			return false, "not in " + c.b.name
		case c.opt.Unset:
			return true, ""
		case c.a.set[ia] == 0 && c.b.set[ib] == 0:
			return false, "never set in either log"
		case c.a.set[ia] == 0:
			return false, "never set in " + c.a.name
		case c.b.set[ib] == 0:
			return false, "never set in " + c.b.name
		}
		return true, ""
	}
	var dropped []NotCompared
	for _, f := range c.s.Key {
		if ok, why := usable(f); ok {
			c.key = append(c.key, f)
		} else {
			dropped = append(dropped, NotCompared{f, why + " (key field)"})
		}
	}
	for _, f := range c.s.Fields {
		if ok, why := usable(f); ok {
			c.cmp = append(c.cmp, f)
		} else {
			dropped = append(dropped, NotCompared{f, why})
		}
	}
	if len(c.key) == 0 {
		// No key: the records are matched as multisets of the exact
		// fields; only the times are left to compare.
		var times []string
		for _, f := range c.cmp {
			if c.s.IsTime(f) {
				times = append(times, f)
			} else {
				c.key = append(c.key, f)
			}
		}
		c.cmp = times
	}
	c.res.Key = slices.Clone(c.key)
	if c.res.Key == nil {
		c.res.Key = []string{}
	}
	c.res.NotCompared = append(c.res.NotCompared, dropped...)
}

// keyOf appends the key of a row of log side (0 a, 1 b) to kb.
func (c *comparison) keyOf(kb []byte, rw row, side int) []byte {
	for i := range c.key {
		kb = append(kb, rw.value(c.cols[side][i])...)
		kb = append(kb, 0)
	}
	return kb
}

// pair compares two matched records.
func (c *comparison) pair(ra, rb *row) {
	c.res.Matched++
	nk := len(c.key)
	var differ []string
	for i, f := range c.cmp {
		va, vb := ra.value(c.cols[0][nk+i]), rb.value(c.cols[1][nk+i])
		fr := &c.res.Fields[i]
		switch c.agree(f, va, vb) {
		case same:
			fr.Equal++
		case skipped:
			fr.Skipped++
		default:
			fr.Differ++
			differ = append(differ, f)
		}
	}
	if differ == nil {
		c.res.Equal++
		return
	}
	c.res.Differ++
	if c.seen[0] < c.opt.Examples {
		c.seen[0]++
		ex := c.newExample("differ", ra, rb)
		ex.Differ = differ
		c.res.Examples = append(c.res.Examples, ex)
	}
}

func (c *comparison) example(kind string, ra, rb *row) {
	k := 1
	if kind == "extra" {
		k = 2
	}
	if c.seen[k] >= c.opt.Examples {
		return
	}
	c.seen[k]++
	c.res.Examples = append(c.res.Examples, c.newExample(kind, ra, rb))
}

func (c *comparison) newExample(kind string, ra, rb *row) Example {
	ex := Example{Kind: kind, Fields: append(slices.Clone(c.key), c.cmp...)}
	vals := func(rw *row, side int) []string {
		out := make([]string, len(ex.Fields))
		for i := range ex.Fields {
			out[i] = rw.value(c.cols[side][i])
		}
		return out
	}
	if ra != nil {
		ex.ALine, ex.A = ra.line, vals(ra, 0)
	}
	if rb != nil {
		ex.BLine, ex.B = rb.line, vals(rb, 1)
	}
	return ex
}

type verdict int

const (
	same verdict = iota
	different
	skipped
)

// agree compares two values of field f.
func (c *comparison) agree(f, a, b string) verdict {
	if a == b {
		return same
	}
	if c.s.IsTime(f) && a != Unset && b != Unset {
		x, errA := strconv.ParseFloat(a, 64)
		y, errB := strconv.ParseFloat(b, 64)
		if errA != nil || errB != nil {
			return skipped
		}
		// A microsecond more for the rounding of the logs' 6 decimals.
		if math.Abs(x-y) <= c.tol+1e-6 {
			return same
		}
		return different
	}
	if numbersEqual(a, b) {
		return same
	}
	return different
}

// numbersEqual reports whether a and b are numbers, or comma-separated
// lists of numbers, of equal values.
func numbersEqual(a, b string) bool {
	for {
		x, restA, moreA := strings.Cut(a, ",")
		y, restB, moreB := strings.Cut(b, ",")
		if moreA != moreB {
			return false
		}
		fx, errX := strconv.ParseFloat(x, 64)
		fy, errY := strconv.ParseFloat(y, 64)
		if errX != nil || errY != nil || fx != fy {
			return false
		}
		if !moreA {
			return true
		}
		a, b = restA, restB
	}
}

package zeeklog

import (
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Format is the layout of a log file.
type Format uint8

// Log formats.
const (
	// TSV is Zeek's default ASCII layout: header lines starting with '#',
	// one tab-separated record per line.
	TSV Format = iota
	// JSON is Zeek's LogAscii::use_json layout: one JSON object per line,
	// unset fields left out, no header.
	JSON
)

// ParseFormat parses "tsv" or "json".
func ParseFormat(s string) (Format, error) {
	switch s {
	case "tsv", "TSV", "zeek", "ascii":
		return TSV, nil
	case "json", "JSON":
		return JSON, nil
	}
	return 0, fmt.Errorf("log format %q: want tsv or json", s)
}

func (f Format) String() string {
	if f == JSON {
		return "json"
	}
	return "tsv"
}

// Field is one column of a log: its name and its Zeek type as the #types
// header line spells it (time, string, addr, port, count, vector[string],
// ...).
type Field struct {
	Name, Type string
}

// Options configure a Writer.
type Options struct {
	Format Format
	// Now gives the times of the #open and #close header lines; nil means
	// time.Now. Tests set it to get reproducible files.
	Now func() time.Time
}

// Zeek's ASCII writer defaults.
const (
	separator    = '\t'
	setSeparator = ','
	emptyField   = "(empty)"
	unsetField   = "-"
	openTimeFmt  = "2006-01-02-15-04-05"
)

// Writer writes one Zeek log file record by record. A record is built with
// Begin, one value method per field in the order of the fields (Time,
// String, Count, Unset, ...; vectors and sets with BeginVector, the element
// methods and EndVector) and End. Values are appended straight to an
// output block of blockSize bytes, which is written out in one Write once
// a record fills it (on the TSV fast path, as the next record begins):
// writing a record neither allocates nor copies.
//
// Write errors are sticky: the first one is returned by End, Err and Close.
type Writer struct {
	out    io.Writer
	format Format
	path   string
	fields []Field
	now    func() time.Time

	// buf holds the records not yet written out; the record being built
	// starts at rec.
	buf     []byte
	rec     int
	col     int  // index of the next field of the record
	wrote   bool // JSON: a field of this record was written (a comma is due)
	inVec   bool
	vecN    int
	records int64
	err     error
	closed  bool
}

// NewWriter returns a writer of the log named path (http, dns, conn) with
// the given fields, writing to w. For TSV it writes the header at once.
func NewWriter(w io.Writer, path string, fields []Field, o Options) (*Writer, error) {
	lw := &Writer{
		out:    w,
		format: o.Format,
		path:   path,
		fields: fields,
		now:    o.Now,
		buf:    make([]byte, 0, blockSize+maxRecordHint),
	}
	if lw.now == nil {
		lw.now = time.Now
	}
	if lw.format == TSV {
		lw.writeHeader()
	}
	return lw, lw.err
}

// blockSize is how many bytes of records the Writer gathers before it
// writes them out; maxRecordHint is room for the record that crosses it,
// so that a typical record does not make the block grow.
const (
	blockSize     = 64 << 10
	maxRecordHint = 4 << 10
)

func (w *Writer) writeHeader() {
	b := w.buf
	b = append(b, "#separator \\x09\n"...)
	b = append(b, "#set_separator\t,\n"...)
	b = append(b, "#empty_field\t"+emptyField+"\n"...)
	b = append(b, "#unset_field\t"+unsetField+"\n"...)
	b = append(b, "#path\t"...)
	b = append(b, w.path...)
	b = append(b, "\n#open\t"...)
	b = w.now().UTC().AppendFormat(b, openTimeFmt)
	b = append(b, "\n#fields"...)
	for _, f := range w.fields {
		b = append(b, '\t')
		b = append(b, f.Name...)
	}
	b = append(b, "\n#types"...)
	for _, f := range w.fields {
		b = append(b, '\t')
		b = append(b, f.Type...)
	}
	b = append(b, '\n')
	w.buf = b
	w.rec = len(b)
	w.writeOut()
}

// writeOut writes the complete records in the buffer (all of it but a
// record being built) and keeps only that record. After an error nothing
// more is written.
func (w *Writer) writeOut() {
	if w.err == nil && w.rec > 0 {
		if _, err := w.out.Write(w.buf[:w.rec]); err != nil {
			w.err = fmt.Errorf("writing %s.log: %w", w.path, err)
		}
	}
	partial := w.buf[w.rec:]
	if cap(w.buf) > 4*(blockSize+maxRecordHint) && len(partial) <= blockSize {
		// A huge record grew the buffer: give the memory back.
		w.buf = make([]byte, 0, blockSize+maxRecordHint)
	}
	w.buf = append(w.buf[:0], partial...)
	w.rec = 0
}

// Records returns the number of records written.
func (w *Writer) Records() int64 { return w.records }

// Err returns the first write error.
func (w *Writer) Err() error { return w.err }

// Begin starts a record.
func (w *Writer) Begin() {
	w.buf = w.buf[:w.rec]
	w.col = 0
	w.wrote = false
	if w.format == JSON {
		w.buf = append(w.buf, '{')
	}
}

// End finishes the record and writes it. It returns the first write error,
// or an error when the record has not as many values as the log has
// fields (a programming error).
func (w *Writer) End() error {
	if w.col != len(w.fields) || w.inVec {
		err := fmt.Errorf("%s.log record has %d values, want %d", w.path, w.col, len(w.fields))
		if w.err == nil {
			w.err = err
		}
		w.buf = w.buf[:w.rec]
		return err
	}
	switch {
	case w.format == JSON:
		w.buf = append(w.buf, '}', '\n')
	case w.col > 0:
		// Every TSV value is followed by a separator: the last one
		// ends the line.
		w.buf[len(w.buf)-1] = '\n'
	default:
		w.buf = append(w.buf, '\n')
	}
	w.records++
	w.rec = len(w.buf)
	if w.rec >= blockSize {
		w.writeOut()
	}
	return w.err
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	w.writeOut()
	return w.err
}

// Close writes the #close line (TSV) and flushes. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return w.err
	}
	w.closed = true
	if w.format == TSV {
		b := append(w.buf[:w.rec], "#close\t"...)
		b = w.now().UTC().AppendFormat(b, openTimeFmt)
		w.buf = append(b, '\n')
		w.rec = len(w.buf)
	}
	return w.Flush()
}

// In TSV every value is appended with the separator after it (End turns
// the last one into the newline), so that a field costs one append and
// no test of whether it is the first. In JSON, jsonKey writes the comma
// and the key before a value.

// jsonKey starts the next field's value in JSON: the comma and the key.
func (w *Writer) jsonKey() {
	if w.wrote {
		w.buf = append(w.buf, ',')
	}
	w.wrote = true
	w.buf = append(w.buf, '"')
	w.buf = append(w.buf, w.fieldName()...)
	w.buf = append(w.buf, '"', ':')
	w.col++
}

func (w *Writer) fieldName() string {
	if w.col < len(w.fields) {
		return w.fields[w.col].Name
	}
	return "_extra"
}

// Unset writes an unset field: "-" in TSV, nothing in JSON.
func (w *Writer) Unset() {
	w.col++
	if w.format == TSV {
		w.buf = append(w.buf, '-', separator)
	}
}

// String writes a string field; nil is unset, an empty non-nil slice is
// "(empty)".
func (w *Writer) String(s []byte) {
	if s == nil {
		w.Unset()
		return
	}
	writeStr(w, s)
}

// Str writes a string field given as a string; "" is "(empty)".
func (w *Writer) Str(s string) { writeStr(w, s) }

// writeStr is String and Str but for String's nil.
func writeStr[S ~string | ~[]byte](w *Writer, s S) {
	if w.format == JSON {
		w.jsonKey()
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.col++
	w.buf = append(appendTSVString(w.buf, s, w.inVec), separator)
}

// Text writes a string field that is already rendered the way Zeek logs
// it, with non-printable bytes and backslashes escaped (the convention of
// dns.Transaction's text fields): only the separators, control bytes and
// the reserved values "-" and "(empty)" are escaped here. nil is unset.
func (w *Writer) Text(s []byte) {
	if s == nil {
		w.Unset()
		return
	}
	if w.format == JSON {
		w.jsonKey()
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.col++
	w.buf = append(appendTSVText(w.buf, s, w.inVec), separator)
}

// VecText adds an already rendered string element (see Text) to the
// current vector.
func (w *Writer) VecText(s []byte) {
	w.vecSep()
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.buf = appendTSVText(w.buf, s, true)
}

// StrOrUnset writes s, or unset when s is "".
func (w *Writer) StrOrUnset(s string) {
	if s == "" {
		w.Unset()
		return
	}
	w.Str(s)
}

// Enum writes an enum field (such as proto).
func (w *Writer) Enum(s string) { w.Str(s) }

// Bool writes T or F (true or false in JSON).
func (w *Writer) Bool(v bool) {
	if w.format == JSON {
		w.jsonKey()
		if v {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
		return
	}
	w.col++
	if v {
		w.buf = append(w.buf, 'T', separator)
	} else {
		w.buf = append(w.buf, 'F', separator)
	}
}

// Count writes an unsigned integer.
func (w *Writer) Count(n uint64) {
	if w.format == JSON {
		w.jsonKey()
		w.buf = appendUint(w.buf, n)
		return
	}
	w.col++
	w.buf = append(appendUint(w.buf, n), separator)
}

// Int writes a signed integer.
func (w *Writer) Int(n int64) {
	if w.format == JSON {
		w.jsonKey()
		w.buf = appendInt(w.buf, n)
		return
	}
	w.col++
	w.buf = append(appendInt(w.buf, n), separator)
}

// Time writes a time given in nanoseconds since the Unix epoch, as seconds
// with 6 decimals; 0 (unknown) is unset.
func (w *Writer) Time(ns int64) {
	if ns == 0 {
		w.Unset()
		return
	}
	w.Interval(ns)
}

// Interval writes a duration given in nanoseconds as seconds with 6
// decimals.
func (w *Writer) Interval(ns int64) {
	if w.format == JSON {
		w.jsonKey()
		w.appendSeconds(ns)
		return
	}
	w.col++
	w.appendSeconds(ns)
	w.buf = append(w.buf, separator)
}

// Addr writes an address; the zero Addr is unset.
func (w *Writer) Addr(a netip.Addr) {
	if !a.IsValid() {
		w.Unset()
		return
	}
	if w.format == JSON {
		w.jsonKey()
		w.buf = append(w.buf, '"')
		w.buf = appendAddr(w.buf, a)
		w.buf = append(w.buf, '"')
		return
	}
	w.col++
	w.buf = append(appendAddr(w.buf, a), separator)
}

// Port writes a port number.
func (w *Writer) Port(p uint16) { w.Count(uint64(p)) }

// EmptySet writes an empty set or vector: "(empty)" in TSV, [] in JSON.
func (w *Writer) EmptySet() {
	w.BeginVector()
	w.EndVector()
}

// BeginVector starts a set or vector field; add elements with VecString
// or VecInterval and end it with EndVector. A vector without elements is
// "(empty)".
func (w *Writer) BeginVector() {
	w.inVec = true
	w.vecN = 0
	if w.format == JSON {
		w.jsonKey()
		w.buf = append(w.buf, '[')
		return
	}
	w.col++
}

func (w *Writer) vecSep() {
	if w.vecN > 0 {
		w.buf = append(w.buf, setSeparator)
	}
	w.vecN++
}

// VecString adds a string element to the current vector.
func (w *Writer) VecString(s []byte) { vecStr(w, s) }

// VecStr adds a string element given as a string to the current vector.
func (w *Writer) VecStr(s string) { vecStr(w, s) }

func vecStr[S ~string | ~[]byte](w *Writer, s S) {
	w.vecSep()
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.buf = appendTSVString(w.buf, s, true)
}

// writeSet writes a set or vector of strings (the Writer's way of
// tsvSet); an empty one is unset.
func writeSet[S ~string | ~[]byte](w *Writer, set []S) {
	if len(set) == 0 {
		w.Unset()
		return
	}
	w.BeginVector()
	for _, s := range set {
		vecStr(w, s)
	}
	w.EndVector()
}

// VecInterval adds an interval element (nanoseconds) to the current vector.
func (w *Writer) VecInterval(ns int64) {
	w.vecSep()
	w.appendSeconds(ns)
}

// EndVector ends the current set or vector.
func (w *Writer) EndVector() {
	w.inVec = false
	if w.format == JSON {
		w.buf = append(w.buf, ']')
		return
	}
	if w.vecN == 0 {
		w.buf = append(w.buf, emptyField...)
	}
	w.buf = append(w.buf, separator)
}

// appendSeconds renders ns as seconds with 6 decimals (rounded to the
// microsecond), as Zeek renders time and interval values. JSON drops
// trailing zeros as Zeek's JSON writer does.
func (w *Writer) appendSeconds(ns int64) {
	w.buf = appendTSVSeconds(w.buf, ns)
	if w.format == JSON {
		dot := len(w.buf) - 7
		n := len(w.buf)
		for n > dot+2 && w.buf[n-1] == '0' {
			n--
		}
		w.buf = w.buf[:n]
	}
}

const hexDigits = "0123456789abcdef"

package zeeklog

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"time"
	"unicode/utf8"
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
// methods and EndVector) and End. Values are appended to a reused buffer,
// so writing a record does not allocate.
//
// Write errors are sticky: the first one is returned by End, Err and Close.
type Writer struct {
	out    *bufio.Writer
	format Format
	path   string
	fields []Field
	now    func() time.Time

	buf     []byte
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
		out:    bufio.NewWriterSize(w, 64<<10),
		format: o.Format,
		path:   path,
		fields: fields,
		now:    o.Now,
		buf:    make([]byte, 0, 1024),
	}
	if lw.now == nil {
		lw.now = time.Now
	}
	if lw.format == TSV {
		lw.writeHeader()
	}
	return lw, lw.err
}

func (w *Writer) writeHeader() {
	b := w.buf[:0]
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
	w.flushBuf()
}

func (w *Writer) flushBuf() {
	if w.err != nil {
		return
	}
	if _, err := w.out.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing %s.log: %w", w.path, err)
	}
}

// Records returns the number of records written.
func (w *Writer) Records() int64 { return w.records }

// Err returns the first write error.
func (w *Writer) Err() error { return w.err }

// Begin starts a record.
func (w *Writer) Begin() {
	w.buf = w.buf[:0]
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
		return err
	}
	if w.format == JSON {
		w.buf = append(w.buf, '}')
	}
	w.buf = append(w.buf, '\n')
	w.flushBuf()
	w.records++
	return w.err
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	if w.err == nil {
		if err := w.out.Flush(); err != nil {
			w.err = fmt.Errorf("writing %s.log: %w", w.path, err)
		}
	}
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
		b := append(w.buf[:0], "#close\t"...)
		b = w.now().UTC().AppendFormat(b, openTimeFmt)
		w.buf = append(b, '\n')
		w.flushBuf()
	}
	return w.Flush()
}

// next starts the next field's value: the separator in TSV, the comma and
// the key in JSON.
func (w *Writer) next() {
	if w.format == TSV {
		if w.col > 0 {
			w.buf = append(w.buf, separator)
		}
	} else {
		if w.wrote {
			w.buf = append(w.buf, ',')
		}
		w.wrote = true
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, w.fieldName()...)
		w.buf = append(w.buf, '"', ':')
	}
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
	if w.format == TSV {
		if w.col > 0 {
			w.buf = append(w.buf, separator)
		}
		w.buf = append(w.buf, unsetField...)
	}
	w.col++
}

// String writes a string field; nil is unset, an empty non-nil slice is
// "(empty)".
func (w *Writer) String(s []byte) {
	if s == nil {
		w.Unset()
		return
	}
	w.next()
	w.appendString(s)
}

// Str writes a string field given as a string; "" is "(empty)".
func (w *Writer) Str(s string) {
	w.next()
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.buf = appendTSVString(w.buf, s, w.inVec)
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
	w.next()
	w.appendText(s)
}

// VecText adds an already rendered string element (see Text) to the
// current vector.
func (w *Writer) VecText(s []byte) {
	w.vecSep()
	w.appendText(s)
}

func (w *Writer) appendText(s []byte) {
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	if len(s) == 0 {
		w.buf = append(w.buf, emptyField...)
		return
	}
	start := 0
	if string(s) == unsetField || string(s) == emptyField {
		w.buf = appendHexEscape(w.buf, s[0])
		start = 1
	}
	for _, c := range s[start:] {
		if c < 0x20 || c == 0x7f || (w.inVec && c == setSeparator) {
			w.buf = appendHexEscape(w.buf, c)
		} else {
			w.buf = append(w.buf, c)
		}
	}
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
	w.next()
	w.appendBool(v)
}

// Count writes an unsigned integer.
func (w *Writer) Count(n uint64) {
	w.next()
	w.buf = strconv.AppendUint(w.buf, n, 10)
}

// Int writes a signed integer.
func (w *Writer) Int(n int64) {
	w.next()
	w.buf = strconv.AppendInt(w.buf, n, 10)
}

// Time writes a time given in nanoseconds since the Unix epoch, as seconds
// with 6 decimals; 0 (unknown) is unset.
func (w *Writer) Time(ns int64) {
	if ns == 0 {
		w.Unset()
		return
	}
	w.next()
	w.appendSeconds(ns)
}

// Interval writes a duration given in nanoseconds as seconds with 6
// decimals.
func (w *Writer) Interval(ns int64) {
	w.next()
	w.appendSeconds(ns)
}

// Addr writes an address; the zero Addr is unset.
func (w *Writer) Addr(a netip.Addr) {
	if !a.IsValid() {
		w.Unset()
		return
	}
	w.next()
	if w.format == JSON {
		w.buf = append(w.buf, '"')
		w.buf = a.AppendTo(w.buf)
		w.buf = append(w.buf, '"')
		return
	}
	w.buf = a.AppendTo(w.buf)
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
	w.next()
	w.inVec = true
	w.vecN = 0
	if w.format == JSON {
		w.buf = append(w.buf, '[')
	}
}

func (w *Writer) vecSep() {
	if w.vecN > 0 {
		w.buf = append(w.buf, setSeparator)
	}
	w.vecN++
}

// VecString adds a string element to the current vector.
func (w *Writer) VecString(s []byte) {
	w.vecSep()
	w.appendString(s)
}

// VecStr adds a string element given as a string to the current vector.
func (w *Writer) VecStr(s string) {
	w.vecSep()
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.buf = appendTSVString(w.buf, s, true)
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
}

func (w *Writer) appendBool(v bool) {
	switch {
	case w.format == JSON && v:
		w.buf = append(w.buf, "true"...)
	case w.format == JSON:
		w.buf = append(w.buf, "false"...)
	case v:
		w.buf = append(w.buf, 'T')
	default:
		w.buf = append(w.buf, 'F')
	}
}

// appendSeconds renders ns as seconds with 6 decimals (rounded to the
// microsecond), as Zeek renders time and interval values. JSON drops
// trailing zeros as Zeek's JSON writer does.
func (w *Writer) appendSeconds(ns int64) {
	neg := ns < 0
	u := uint64(ns)
	if neg {
		u = uint64(-ns)
	}
	us := (u + 500) / 1000
	if neg && us != 0 {
		w.buf = append(w.buf, '-')
	}
	w.buf = strconv.AppendUint(w.buf, us/1e6, 10)
	frac := us % 1e6
	var d [7]byte
	d[0] = '.'
	for i := 6; i >= 1; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 7
	if w.format == JSON {
		for n > 2 && d[n-1] == '0' {
			n--
		}
	}
	w.buf = append(w.buf, d[:n]...)
}

const hexDigits = "0123456789abcdef"

// appendString appends a string value escaped as Zeek escapes it.
func (w *Writer) appendString(s []byte) {
	if w.format == JSON {
		w.buf = appendJSONString(w.buf, s)
		return
	}
	w.buf = appendTSVString(w.buf, s, w.inVec)
}

// appendTSVString escapes as Zeek's ASCII writer does with UTF-8 output
// enabled: printable ASCII and valid UTF-8 sequences as they are; control
// bytes, DEL, invalid UTF-8 bytes, the backslash, the separator and (inside
// a set or vector) the set separator as \xNN. An empty string is
// "(empty)", and a value equal to "-" or "(empty)" gets its first byte
// escaped so that it cannot be mistaken for unset or empty.
func appendTSVString[S ~string | ~[]byte](b []byte, s S, inVec bool) []byte {
	if len(s) == 0 {
		return append(b, emptyField...)
	}
	start := 0
	if string(s) == unsetField || string(s) == emptyField {
		b = appendHexEscape(b, s[0])
		start = 1
	}
	for i := start; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r == utf8.RuneError && size <= 1 {
				b = appendHexEscape(b, c)
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		if c < 0x20 || c == 0x7f || c == '\\' || (inVec && c == setSeparator) {
			b = appendHexEscape(b, c)
		} else {
			b = append(b, c)
		}
		i++
	}
	return b
}

func appendHexEscape(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendJSONString appends s as a JSON string the way Zeek's JSON writer
// does: quotes, backslashes and control characters escaped JSON-style,
// valid UTF-8 as is, invalid bytes as the text \xNN.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r == utf8.RuneError && size <= 1 {
				b = append(b, '\\', '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}

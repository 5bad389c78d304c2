package logdiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Unset and Empty are how a [Record] holds a field without a value and an
// empty string, set or vector, whichever layout the log was written in:
// as Zeek's TSV writes them by default.
const (
	Unset = "-"
	Empty = "(empty)"
)

// MaxLineBytes is the longest line a [Reader] accepts.
const MaxLineBytes = 16 << 20

// Format is the layout a [Reader] found.
type Format int

// The layouts of a log.
const (
	// TSV is Zeek's ASCII writer's layout: # header lines, then one
	// record per line, values separated by tabs.
	TSV Format = iota
	// Cut is a zeek-cut projection: a first line naming the columns
	// (zeek-cut -c), or no header when the reader was given the columns.
	Cut
	// JSON is Zeek's LogAscii::use_json layout: one JSON object per line.
	JSON
)

func (f Format) String() string {
	switch f {
	case TSV:
		return "tsv"
	case Cut:
		return "cut"
	case JSON:
		return "json"
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// Record is one record of a log: its values in the order of
// [Reader.Fields], rendered as Zeek's TSV writer renders them, with the
// TSV escapes (\xNN) decoded: [Unset] for a field without a value,
// [Empty] for an empty string or container, set and vector elements
// joined by ",", booleans as T and F, numbers as the log wrote them.
type Record struct {
	Line   int      // the record's line in the log, from 1
	Values []string // one per field of the log
}

// Reader reads the records of one log, in any of the layouts of [Format],
// one line at a time.
type Reader struct {
	name   string
	sc     *bufio.Scanner
	line   int
	fields []string
	format Format
	known  bool // the layout and fields are known

	sep, setSep   string
	empty, unset  string
	pendingRecord []byte // the first record line, read while looking for the layout
	pendingLine   int
	rec           Record
}

// NewReader returns a reader of the log r; name is the log's name in
// error messages (its file name, usually).
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	return &Reader{name: name, sc: sc, sep: "\t", setSep: ",", empty: Empty, unset: Unset}
}

// NewReaderFields returns a reader of a log without a header whose lines
// hold the values of fields, separated by tabs: what zeek-cut prints
// without -c, or tshark -T fields.
func NewReaderFields(r io.Reader, name string, fields []string) *Reader {
	lr := NewReader(r, name)
	lr.fields, lr.format, lr.known = slices.Clone(fields), Cut, true
	return lr
}

// Fields returns the log's columns, once the first record was read (or
// the end of the log reached).
func (r *Reader) Fields() []string { return r.fields }

// Format returns the layout of the log, once the first record was read.
func (r *Reader) Format() Format { return r.format }

// Name returns the log's name as given to NewReader.
func (r *Reader) Name() string { return r.name }

// Next returns the next record, or io.EOF after the last. The record and
// its values are valid until the next call. Errors name the log and the
// line.
func (r *Reader) Next() (*Record, error) {
	for {
		text, line, err := r.nextLine()
		if err != nil {
			return nil, err
		}
		if !r.known {
			if err := r.header(text, line); err != nil {
				return nil, err
			}
			continue
		}
		if len(text) == 0 || r.format != JSON && text[0] == '#' {
			if r.format == TSV && bytes.HasPrefix(text, []byte("#fields")) {
				return nil, r.errorf(line, "a second #fields line (logs concatenated?): want one log per file")
			}
			continue
		}
		r.rec.Line = line
		if r.format == JSON {
			err = r.parseJSON(text)
		} else {
			err = r.parseTSV(text)
		}
		if err != nil {
			return nil, r.errorf(line, "%v", err)
		}
		return &r.rec, nil
	}
}

func (r *Reader) nextLine() ([]byte, int, error) {
	if r.pendingRecord != nil {
		text, line := r.pendingRecord, r.pendingLine
		r.pendingRecord = nil
		return text, line, nil
	}
	if !r.sc.Scan() {
		err := r.sc.Err()
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, r.line + 1, r.errorf(r.line+1, "line longer than %d MiB", MaxLineBytes>>20)
		}
		if err != nil {
			return nil, r.line, fmt.Errorf("%s: %w", r.name, err)
		}
		return nil, r.line, io.EOF
	}
	r.line++
	return bytes.TrimSuffix(r.sc.Bytes(), []byte("\r")), r.line, nil
}

// header reads a line before the first record: a TSV header line, or the
// first line that tells the layout.
func (r *Reader) header(text []byte, line int) error {
	s := string(text)
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "#"):
		return r.directive(s, line)
	case s[0] == '{':
		r.format, r.known = JSON, true
		r.pendingRecord, r.pendingLine = text, line
		return nil
	}
	// A zeek-cut -c projection: the first line names the columns.
	r.fields, r.format, r.known = strings.Split(s, "\t"), Cut, true
	return r.checkFields(line)
}

// directive reads one of the TSV header lines; those that do not bear on
// the values (#path, #open, #close, #types, btest's ### lines) are
// skipped.
func (r *Reader) directive(s string, line int) error {
	if strings.HasPrefix(s, "#separator ") || strings.HasPrefix(s, "#separator\t") {
		// Zeek writes "#separator \x09": a space, as the separator is
		// not known yet, and the separator escaped.
		v := strings.TrimPrefix(s, "#separator")
		sep, err := unescape(strings.TrimSpace(v))
		if err != nil || sep == "" {
			return r.errorf(line, "#separator %q: want one escaped character such as \\x09", strings.TrimSpace(v))
		}
		r.sep = sep
		return nil
	}
	name, value, _ := strings.Cut(s[1:], r.sep)
	switch name {
	case "set_separator":
		r.setSep = value
	case "empty_field":
		r.empty = value
	case "unset_field":
		r.unset = value
	case "fields":
		r.fields, r.format, r.known = strings.Split(value, r.sep), TSV, true
		return r.checkFields(line)
	}
	return nil
}

func (r *Reader) checkFields(line int) error {
	for i, f := range r.fields {
		if f == "" {
			return r.errorf(line, "column %d has no name", i+1)
		}
		if slices.Contains(r.fields[:i], f) {
			return r.errorf(line, "column %q named twice", f)
		}
	}
	return nil
}

func (r *Reader) parseTSV(text []byte) error {
	vals := r.rec.Values[:0]
	rest := string(text)
	for {
		v, tail, more := strings.Cut(rest, r.sep)
		vals = append(vals, v)
		if !more {
			break
		}
		rest = tail
	}
	r.rec.Values = vals
	if len(vals) != len(r.fields) {
		return fmt.Errorf("%d values, want %d (the columns %s)", len(vals), len(r.fields), columnsText(r.fields))
	}
	for i, v := range vals {
		switch v {
		case r.unset:
			vals[i] = Unset
			continue
		case r.empty:
			vals[i] = Empty
			continue
		}
		if r.setSep != "," {
			v = strings.ReplaceAll(v, r.setSep, ",")
		}
		if strings.Contains(v, `\x`) {
			u, err := unescape(v)
			if err != nil {
				return fmt.Errorf("column %s: %v", r.fields[i], err)
			}
			v = u
		}
		vals[i] = v
	}
	return nil
}

func (r *Reader) parseJSON(text []byte) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	vals := r.rec.Values[:0]
	for range r.fields {
		vals = append(vals, Unset) // Zeek leaves unset fields out of a record
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("not a JSON object: %v", err)
		}
		key := tok.(string) // the decoder has checked that a key is a string
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("field %q: %v", key, err)
		}
		s, err := jsonValue(v)
		if err != nil {
			return fmt.Errorf("field %q: %v", key, err)
		}
		// The columns are the keys in order of appearance.
		i := slices.Index(r.fields, key)
		if i < 0 {
			if len(r.fields) >= maxJSONFields {
				return fmt.Errorf("more than %d distinct fields", maxJSONFields)
			}
			r.fields = append(r.fields, key)
			vals = append(vals, Unset)
			i = len(r.fields) - 1
		}
		if vals[i] != Unset {
			return fmt.Errorf("field %q given twice", key)
		}
		vals[i] = s
	}
	r.rec.Values = vals
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// maxJSONFields bounds the columns of a JSON log (Zeek's logs have some
// tens), so that a log made of distinct keys costs linear time.
const maxJSONFields = 1024

// jsonValue renders a JSON value as a TSV log holds it.
func jsonValue(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return Unset, nil
	case string:
		if v == "" {
			return Empty, nil
		}
		return v, nil
	case json.Number:
		return string(v), nil
	case bool:
		if v {
			return "T", nil
		}
		return "F", nil
	case []any:
		if len(v) == 0 {
			return Empty, nil
		}
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := jsonValue(e)
			if err != nil {
				return "", err
			}
			if _, nested := e.([]any); nested {
				return "", errors.New("a container inside a container")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("a JSON object, which no Zeek log field holds")
}

// unescape decodes the \xNN escapes of Zeek's TSV writer.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) || s[i+1] != 'x' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 >= len(s) {
			return "", fmt.Errorf("escape %q cut short: want \\xNN", s[i:])
		}
		n, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
		if err != nil {
			return "", fmt.Errorf("escape %q: want \\x and two hex digits", s[i:i+4])
		}
		b.WriteByte(byte(n))
		i += 3
	}
	return b.String(), nil
}

func (r *Reader) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s: line %d: %s", r.name, line, fmt.Sprintf(format, args...))
}

func columnsText(fields []string) string {
	const max = 6
	if len(fields) <= max {
		return strings.Join(fields, " ")
	}
	return strings.Join(fields[:max], " ") + " ..."
}

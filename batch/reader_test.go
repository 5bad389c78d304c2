package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// rec is a Record with copied, comparable fields.
type rec struct {
	Op                                     Op
	Line                                   int
	ID                                     string
	Kind                                   Kind
	Parser                                 string
	OrigID, OrigParser, RespID, RespParser string
	Data                                   string
	Size                                   int64
}

func (r rec) String() string {
	return fmt.Sprintf("%s line %d id=%q kind=%v parser=%q orig=%q/%q resp=%q/%q data=%q size=%d",
		r.Op, r.Line, r.ID, r.Kind, r.Parser, r.OrigID, r.OrigParser, r.RespID, r.RespParser, r.Data, r.Size)
}

func toRec(r *Record) rec {
	return rec{
		Op: r.Op, Line: r.Line, ID: string(r.ID), Kind: r.Kind, Parser: string(r.Parser),
		OrigID: string(r.OrigID), OrigParser: string(r.OrigParser),
		RespID: string(r.RespID), RespParser: string(r.RespParser),
		Data: string(r.Data), Size: r.Size,
	}
}

// readAll reads records until the end or an error; io.EOF is not an error.
func readAll(r *Reader) ([]rec, error) {
	return readEach(r, func(x *Record) rec { return toRec(x) })
}

// readEach reads all records of r, each as f makes it; at the first error
// it returns the records before it.
func readEach(r *Reader, f func(*Record) rec) ([]rec, error) {
	var out []rec
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f(rec))
	}
}

func diffRecs(t *testing.T, got, want []rec) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			t.Errorf("record %d missing, want %v", i, want[i])
		case i >= len(want):
			t.Errorf("extra record %d: %v", i, got[i])
		case got[i] != want[i]:
			t.Errorf("record %d:\n got %v\nwant %v", i, got[i], want[i])
		}
	}
}

func TestReaderCommands(t *testing.T) {
	tests := []struct {
		name string
		in   string // after the header line
		want []rec
	}{
		{"header only", "", nil},
		{"begin-flow stream", "@begin-flow f1 stream 80/tcp\n",
			[]rec{{Op: BeginFlow, Line: 2, ID: "f1", Kind: Stream, Parser: "80/tcp"}}},
		{"begin-flow block mime", "@begin-flow f2 block application/foo\n",
			[]rec{{Op: BeginFlow, Line: 2, ID: "f2", Kind: Block, Parser: "application/foo"}}},
		{"begin-conn", "@begin-conn c stream c-orig 80/tcp%orig c-resp 80/tcp%resp\n",
			[]rec{{Op: BeginConn, Line: 2, ID: "c", Kind: Stream, OrigID: "c-orig", OrigParser: "80/tcp%orig", RespID: "c-resp", RespParser: "80/tcp%resp"}}},
		{"data", "@data f 3\nabc\n", []rec{{Op: Data, Line: 2, ID: "f", Data: "abc", Size: 3}}},
		{"data empty", "@data f 0\n\n", []rec{{Op: Data, Line: 2, ID: "f", Data: "", Size: 0}}},
		{"data with newlines and commands inside", "@data f 17\n\n@end-conn x\n\n@a\n\n@gap f 1\n",
			[]rec{{Op: Data, Line: 2, ID: "f", Data: "\n@end-conn x\n\n@a\n", Size: 17}, {Op: Gap, Line: 8, ID: "f", Size: 1}}},
		{"data binary", "@data f 4\n\x00\xff\r\n\n", []rec{{Op: Data, Line: 2, ID: "f", Data: "\x00\xff\r\n", Size: 4}}},
		{"gap", "@gap f 1024\n", []rec{{Op: Gap, Line: 2, ID: "f", Size: 1024}}},
		{"gap zero", "@gap f 0\n", []rec{{Op: Gap, Line: 2, ID: "f", Size: 0}}},
		{"gap leading zeros", "@gap f 007\n", []rec{{Op: Gap, Line: 2, ID: "f", Size: 7}}},
		{"gap max int64", "@gap f 9223372036854775807\n", []rec{{Op: Gap, Line: 2, ID: "f", Size: 1<<63 - 1}}},
		{"end-flow", "@end-flow f\n", []rec{{Op: EndFlow, Line: 2, ID: "f"}}},
		{"end-conn", "@end-conn c\n", []rec{{Op: EndConn, Line: 2, ID: "c"}}},
		// Spicy's reader skips empty lines, trims command lines and
		// splits them at any run of white space.
		{"empty lines skipped", "\n\n  \t\n@end-flow f\n\n", []rec{{Op: EndFlow, Line: 5, ID: "f"}}},
		{"zeek extra newline after data", "@data f 1\nx\n\n@end-conn c\n",
			[]rec{{Op: Data, Line: 2, ID: "f", Data: "x", Size: 1}, {Op: EndConn, Line: 5, ID: "c"}}},
		{"surrounding white space", " \t@gap f 5 \r\n", []rec{{Op: Gap, Line: 2, ID: "f", Size: 5}}},
		{"runs of white space", "@begin-flow\t f  \v stream\f\f80/tcp\n",
			[]rec{{Op: BeginFlow, Line: 2, ID: "f", Kind: Stream, Parser: "80/tcp"}}},
		{"crlf data line", "@data f 2\r\nab\n", []rec{{Op: Data, Line: 2, ID: "f", Data: "ab", Size: 2}}},
		{"last line without newline", "@end-conn c", []rec{{Op: EndConn, Line: 2, ID: "c"}}},
		{"ids are free-form", "@end-flow @data\n@gap \xff\x00é 1\n",
			[]rec{{Op: EndFlow, Line: 2, ID: "@data"}, {Op: Gap, Line: 3, ID: "\xff\x00é", Size: 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(NewReader(strings.NewReader(Header + "\n" + tt.in)))
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			diffRecs(t, got, tt.want)
		})
	}
}

// TestReaderFieldsCleared checks that a record carries no field of the one
// before it, whatever the two commands and whether the quick paths take
// them.
func TestReaderFieldsCleared(t *testing.T) {
	lines := []string{
		"@begin-flow f stream 80/tcp\n",
		"@begin-conn c stream c-orig 80/tcp%orig c-resp 80/tcp%resp\n",
		"@begin-conn c block o p r q\n",
		" @begin-conn c block c-orig p c-resp q\n",
		"@data c-orig 3\nabc\n",
		"@data\tx 2\nab\n",
		"@gap f 7\n",
		"@end-flow f\n",
		"@end-conn c\n",
		"@end-conn  c\n",
	}
	// read returns the last record of in.
	read := func(in string) (rec, bool) {
		r := NewReader(strings.NewReader(Header + "\n" + in))
		var last rec
		var derived bool
		for {
			got, err := r.Next()
			if err == io.EOF {
				return last, derived
			}
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			last, derived = toRec(got), got.DerivedFlowIDs
		}
	}
	for _, first := range lines {
		for _, second := range lines {
			want, wantDerived := read(second)
			want.Line += strings.Count(first, "\n")
			if got, derived := read(first + second); got != want || derived != wantDerived {
				t.Errorf("%q after %q:\n got %v derived %v\nwant %v derived %v", second, first, got, derived, want, wantDerived)
			}
		}
	}
}

func TestReaderHeader(t *testing.T) {
	tests := []struct {
		name, in string
		err      string // "" means success
	}{
		{"header with newline", "!spicy-batch v2\n", ""},
		{"header without newline", "!spicy-batch v2", ""},
		{"empty file", "", `t.dat:1: not a Spicy batch file: the file is empty, want first line "!spicy-batch v2"`},
		{"old version", "!spicy-batch v1\n", `t.dat:1: not a Spicy batch file: first line is "!spicy-batch v1", want "!spicy-batch v2"`},
		{"carriage return", "!spicy-batch v2\r\n", `first line is "!spicy-batch v2\r"`},
		{"trailing space", "!spicy-batch v2 \n", `first line is "!spicy-batch v2 "`},
		{"leading empty line", "\n!spicy-batch v2\n", `first line is ""`},
		{"a pcap", "\xd4\xc3\xb2\xa1\x02\x00\x04\x00", `first line is "\xd4\xc3\xb2\xa1\x02\x00\x04\x00"`},
		{"long binary", strings.Repeat("\x00", 100), `first line is "` + strings.Repeat(`\x00`, 40) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in))
			r.Name = "t.dat"
			recs, err := readAll(r)
			if tt.err == "" {
				if err != nil || len(recs) != 0 {
					t.Fatalf("got %v, %v; want no records and no error", recs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want it to contain %q", err, tt.err)
			}
			if !errors.Is(err, ErrNotBatch) {
				t.Errorf("error %v does not wrap ErrNotBatch", err)
			}
		})
	}
}

func TestReaderMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   string // after the header line
		err  string // the whole message, file "t.dat"
		is   error  // a sentinel the error wraps, or nil
		good int    // records returned before the error
	}{
		{"unknown command", "@end-flow f\n@foo x\n",
			`t.dat:3: unknown command "@foo" (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)`, nil, 1},
		{"no at sign", "data f 1\n", `t.dat:2: unknown command "data" (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)`, nil, 0},
		{"wrong case", "@DATA f 1\nx\n", `t.dat:2: unknown command "@DATA" (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)`, nil, 0},
		{"header twice", "!spicy-batch v2\n", `t.dat:2: unknown command "!spicy-batch" (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)`, nil, 0},
		{"begin-flow too few", "@begin-flow f stream\n", `t.dat:2: @begin-flow: got 2 arguments, want 3 (@begin-flow FID TYPE PARSER)`, nil, 0},
		{"begin-flow too many", "@begin-flow f stream p x\n", `t.dat:2: @begin-flow: got 4 arguments, want 3 (@begin-flow FID TYPE PARSER)`, nil, 0},
		{"begin-flow bad type", "@begin-flow f tcp 80/tcp\n", `t.dat:2: @begin-flow: type "tcp" is neither "stream" nor "block"`, nil, 0},
		{"begin-flow type case", "@begin-flow f Stream 80/tcp\n", `t.dat:2: @begin-flow: type "Stream" is neither "stream" nor "block"`, nil, 0},
		{"begin-conn too few", "@begin-conn c stream o p r\n",
			`t.dat:2: @begin-conn: got 5 arguments, want 6 (@begin-conn CID TYPE ORIG_FID ORIG_PARSER RESP_FID RESP_PARSER)`, nil, 0},
		{"begin-conn too many", "@begin-conn c stream o p r q x\n",
			`t.dat:2: @begin-conn: got 7 arguments, want 6 (@begin-conn CID TYPE ORIG_FID ORIG_PARSER RESP_FID RESP_PARSER)`, nil, 0},
		{"begin-conn bad type", "@begin-conn c udp o p r q\n", `t.dat:2: @begin-conn: type "udp" is neither "stream" nor "block"`, nil, 0},
		{"data no args", "@data\n", `t.dat:2: @data: got 0 arguments, want 2 (@data FID SIZE)`, nil, 0},
		{"data too few", "@data f\n", `t.dat:2: @data: got 1 arguments, want 2 (@data FID SIZE)`, nil, 0},
		{"data too many", "@data f 1 x\nx\n", `t.dat:2: @data: got 3 arguments, want 2 (@data FID SIZE)`, nil, 0},
		{"data size not a number", "@data f x1\n", `t.dat:2: @data: size "x1" is not a number`, nil, 0},
		{"data size negative", "@data f -1\n", `t.dat:2: @data: size "-1" is not a number`, nil, 0},
		{"data size plus", "@data f +1\nx\n", `t.dat:2: @data: size "+1" is not a number`, nil, 0},
		{"data size hex", "@data f 0x10\n", `t.dat:2: @data: size "0x10" is not a number`, nil, 0},
		{"data size trailing junk", "@data f 12abc\n", `t.dat:2: @data: size "12abc" is not a number`, nil, 0},
		{"data size overflow", "@data f 99999999999999999999\n", `t.dat:2: @data: size "99999999999999999999" is out of range`, nil, 0},
		{"data size over the limit", "@data f 1025\n", `t.dat:2: @data: data record too large: size 1025 exceeds the limit of 1024 bytes`, ErrDataTooLarge, 0},
		{"data size wrong, too small", "@data f 2\nabc\n", `t.dat:2: @data: the 2 data bytes are followed by "c", not a newline (is SIZE right?)`, nil, 0},
		{"data size wrong, too large", "@data f 4\nab\n@end-conn c\n", `t.dat:2: @data: the 4 data bytes are followed by "e", not a newline (is SIZE right?)`, nil, 0},
		{"data truncated", "@gap f 1\n@data f 10\nabc", `t.dat:3: @data: file is truncated: the file ends after 3 of 10 data bytes`, ErrTruncated, 1},
		{"data truncated at once", "@data f 10\n", `t.dat:2: @data: file is truncated: the file ends after 0 of 10 data bytes`, ErrTruncated, 0},
		{"data line without newline", "@data f 1", `t.dat:2: @data: file is truncated: the file ends after 0 of 1 data bytes`, ErrTruncated, 0},
		{"data without closing newline", "@data f 3\nabc", `t.dat:2: @data: file is truncated: the file ends after the 3 data bytes, without their closing newline`, ErrTruncated, 0},
		{"empty data without closing newline", "@data f 0\n", `t.dat:2: @data: file is truncated: the file ends after the 0 data bytes, without their closing newline`, ErrTruncated, 0},
		{"gap too few", "@gap f\n", `t.dat:2: @gap: got 1 arguments, want 2 (@gap FID SIZE)`, nil, 0},
		{"gap size not a number", "@gap f 1k\n", `t.dat:2: @gap: size "1k" is not a number`, nil, 0},
		{"end-flow too many", "@end-flow a b\n", `t.dat:2: @end-flow: got 2 arguments, want 1 (@end-flow FID)`, nil, 0},
		{"end-conn no id", "@end-conn\n", `t.dat:2: @end-conn: got 0 arguments, want 1 (@end-conn CID)`, nil, 0},
		{"line numbers count data lines", "@data f 4\na\nb\n\n@bad\n", `t.dat:6: unknown command "@bad" (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)`, nil, 1},
		{"line too long", "@gap f 1\n@end-flow " + strings.Repeat("x", 200) + "\n", `t.dat:3: line too long: longer than 100 bytes`, ErrLineTooLong, 1},
		{"line too long without newline", "@end-flow " + strings.Repeat("x", 200), `t.dat:2: line too long: longer than 100 bytes`, ErrLineTooLong, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testMalformed(t, tt.in, tt.err, tt.is, tt.good, false)
			testMalformed(t, tt.in, tt.err, tt.is, tt.good, true)
		})
	}
}

// testMalformed reads a file of the header and in, and checks the error
// and the records before it; lazy sets LazyLines.
func testMalformed(t *testing.T, in, wantErr string, is error, good int, lazy bool) {
	t.Helper()
	testMalformedSource(t, in, wantErr, is, good, lazy, false)
	if lazy {
		testMalformedSource(t, in, wantErr, is, good, lazy, true)
	}
}

// testMalformedSource is testMalformed, with the file as the Reader's
// Source when source is set.
func testMalformedSource(t *testing.T, in, wantErr string, is error, good int, lazy, source bool) {
	t.Helper()
	r := NewReader(strings.NewReader(Header + "\n" + in))
	r.Name = "t.dat"
	r.MaxLineLen = 100
	r.MaxDataSize = 1024
	r.LazyLines = lazy
	if source {
		r.Source = strings.NewReader(Header + "\n" + in)
	}
	recs, err := readAll(r)
	if err == nil {
		t.Fatalf("no error, records %v", recs)
	}
	if err.Error() != wantErr {
		t.Errorf("lazy lines %v: error\n got %s\nwant %s", lazy, err, wantErr)
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Errorf("error %v is not a *ParseError", err)
	}
	if is != nil && !errors.Is(err, is) {
		t.Errorf("error %v does not wrap %v", err, is)
	}
	if len(recs) != good {
		t.Errorf("got %d records before the error, want %d", len(recs), good)
	}
	if _, again := r.Next(); again != err {
		t.Errorf("second Next returned %v, want the same error", again)
	}
}

func TestReaderErrorWithoutName(t *testing.T) {
	_, err := readAll(NewReader(strings.NewReader(Header + "\n@data f x1\n")))
	if want := `line 2: @data: size "x1" is not a number`; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
}

// errReader returns its data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReaderReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	big := strings.Repeat("x", readBufSize+10)
	tests := []struct {
		name, in string
		err      string
		good     int
	}{
		{"between lines", "@end-flow a\n", "t.dat:3: reading: disk on fire", 1},
		{"inside a line", "@end-flow a\n@end-fl", "t.dat:3: reading: disk on fire", 1},
		{"inside data", "@data f 10\nabc", "t.dat:2: reading: disk on fire", 0},
		{"inside large data", "@data f 300000\n" + big, "t.dat:2: reading: disk on fire", 0},
	}
	for _, tt := range tests {
		for _, lazy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/lazy=%v", tt.name, lazy), func(t *testing.T) {
				r := NewReader(&errReader{data: []byte(Header + "\n" + tt.in), err: boom})
				r.Name = "t.dat"
				r.LazyLines = lazy
				recs, err := readAll(r)
				if err == nil || err.Error() != tt.err || !errors.Is(err, boom) {
					t.Fatalf("error %v, want %s wrapping the read error", err, tt.err)
				}
				if len(recs) != tt.good {
					t.Errorf("got %d records, want %d", len(recs), tt.good)
				}
			})
		}
	}
}

// encode writes the records with a Writer and returns the file and the
// offset at which each record starts.
func encode(t testing.TB, recs []rec) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	offsets := make([]int, len(recs))
	for i, r := range recs {
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		offsets[i] = buf.Len()
		if err := writeRec(w, r); err != nil {
			t.Fatalf("writing %v: %v", r, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), offsets
}

func writeRec(w *Writer, r rec) error {
	switch r.Op {
	case BeginFlow:
		return w.BeginFlow(r.ID, r.Kind, r.Parser)
	case BeginConn:
		return w.BeginConn(r.ID, r.Kind, r.OrigID, r.OrigParser, r.RespID, r.RespParser)
	case Data:
		return w.Data(r.ID, []byte(r.Data))
	case Gap:
		return w.Gap(r.ID, r.Size)
	case EndFlow:
		return w.EndFlow(r.ID)
	case EndConn:
		return w.EndConn(r.ID)
	}
	return fmt.Errorf("bad op %d", r.Op)
}

// withLines sets the line numbers a Reader reports for recs written by a
// Writer.
func withLines(recs []rec) []rec {
	out := make([]rec, len(recs))
	line := 2
	for i, r := range recs {
		r.Line = line
		line++
		if r.Op == Data {
			r.Size = int64(len(r.Data))
			line += strings.Count(r.Data, "\n") + 1
		}
		out[i] = r
	}
	return out
}

// TestReaderTruncated cuts a file at every byte: the records before the
// cut come out whole, and a cut inside a record's data is reported at the
// line of that record.
func TestReaderTruncated(t *testing.T) {
	recs := withLines([]rec{
		{Op: BeginConn, ID: "c", Kind: Stream, OrigID: "c-orig", OrigParser: "80/tcp%orig", RespID: "c-resp", RespParser: "80/tcp%resp"},
		{Op: Data, ID: "c-orig", Data: "GET / HTTP/1.1\r\n\r\n"},
		{Op: Gap, ID: "c-resp", Size: 10},
		{Op: Data, ID: "c-resp", Data: ""},
		{Op: Data, ID: "c-resp", Data: "\n@data c-resp 5\n"},
		{Op: EndConn, ID: "c"},
	})
	file, offsets := encode(t, recs)
	for cut := len(Header) + 1; cut < len(file); cut++ {
		for _, lazy := range []bool{false, true} {
			r := NewReader(bytes.NewReader(file[:cut]))
			r.LazyLines = lazy
			checkTruncated(t, r, recs, file, offsets, cut)
		}
		r := NewReader(bytes.NewReader(file[:cut]))
		r.LazyLines, r.Source = true, bytes.NewReader(file[:cut])
		checkTruncated(t, r, recs, file, offsets, cut)
	}
}

// checkTruncated reads the records of file, cut at cut, with r.
func checkTruncated(t *testing.T, r *Reader, recs []rec, file []byte, offsets []int, cut int) {
	t.Helper()
	read := readAll
	if r.LazyLines {
		read = func(r *Reader) ([]rec, error) { return readLazy(t, r) }
	}
	got, err := read(r)
	// Records that end before the cut are read whole.
	complete := 0
	for i := range recs {
		end := len(file)
		if i+1 < len(recs) {
			end = offsets[i+1]
		}
		if end <= cut {
			complete = i + 1
		}
	}
	if len(got) < complete {
		t.Fatalf("cut at %d: got %d records, want at least %d (error %v)", cut, len(got), complete, err)
	}
	diffRecs(t, got[:complete], recs[:complete])
	if complete == len(recs) || len(got) > complete+1 {
		t.Fatalf("cut at %d: got %d records of %d", cut, len(got), complete)
	}
	// A cut behind the command line of a @data record is reported at
	// its line.
	next := recs[complete]
	lineEnd := bytes.IndexByte(file[offsets[complete]:], '\n') + offsets[complete]
	if next.Op == Data && cut > lineEnd {
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("cut at %d inside the data of %v: error %v, want ErrTruncated", cut, next, err)
		}
		if pe := (*ParseError)(nil); !errors.As(err, &pe) || pe.Line != next.Line {
			t.Fatalf("cut at %d: error %v, want it at line %d", cut, err, next.Line)
		}
		if len(got) != complete {
			t.Fatalf("cut at %d: a record of the incomplete data came out", cut)
		}
	}
}

// TestReaderLargeRecords crosses the buffer boundary: records at, just
// below and above the buffer size, through readers that return little at a
// time.
func TestReaderLargeRecords(t *testing.T) {
	var recs []rec
	for i, n := range []int{readBufSize - 100, readBufSize - 11, readBufSize - 10, readBufSize - 9, readBufSize, readBufSize + 1, 3 * readBufSize, 5, 0, readBufSize / 2, readBufSize/2 + 1} {
		data := bytes.Repeat([]byte{'a' + byte(i), '\n', '@'}, n/3+1)[:n]
		recs = append(recs, rec{Op: Data, ID: "flow", Data: string(data)}, rec{Op: Gap, ID: "flow", Size: int64(i)})
	}
	recs = withLines(recs)
	file, _ := encode(t, recs)
	readers := map[string]func([]byte) io.Reader{
		"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
		"half":     func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"4k":       func(b []byte) io.Reader { return &chunkReader{b: b, n: 4096} },
		"odd":      func(b []byte) io.Reader { return &chunkReader{b: b, n: 4093} },
		"data err": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
	}
	for name, mk := range readers {
		t.Run(name, func(t *testing.T) {
			got, err := readAll(NewReader(mk(file)))
			if err != nil {
				t.Fatal(err)
			}
			diffRecs(t, got, recs)
			r := NewReader(mk(file))
			r.LazyLines = true
			if got, err = readLazy(t, r); err != nil {
				t.Fatal(err)
			}
			diffRecs(t, got, recs)
			r = NewReader(mk(file))
			r.LazyLines, r.Source = true, bytes.NewReader(file)
			if got, err = readLazy(t, r); err != nil {
				t.Fatal(err)
			}
			diffRecs(t, got, recs)
		})
	}
	t.Run("too large", func(t *testing.T) {
		r := NewReader(bytes.NewReader(file))
		r.MaxDataSize = readBufSize
		got, err := readAll(r)
		if !errors.Is(err, ErrDataTooLarge) {
			t.Fatalf("error %v, want ErrDataTooLarge", err)
		}
		if want := recs[:10]; len(got) != len(want) {
			t.Fatalf("got %d records before the error, want %d", len(got), len(want))
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b []byte
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestReaderOneByteAtATime(t *testing.T) {
	in := Header + "\n@begin-flow f stream 80/tcp\n\n @data f 5 \nab\ncd\n@gap f 2\n@end-flow f"
	want := []rec{
		{Op: BeginFlow, Line: 2, ID: "f", Kind: Stream, Parser: "80/tcp"},
		{Op: Data, Line: 4, ID: "f", Data: "ab\ncd", Size: 5},
		{Op: Gap, Line: 7, ID: "f", Size: 2},
		{Op: EndFlow, Line: 8, ID: "f"},
	}
	got, err := readAll(NewReader(iotest.OneByteReader(strings.NewReader(in))))
	if err != nil {
		t.Fatal(err)
	}
	diffRecs(t, got, want)
}

func TestReaderLongLineLimit(t *testing.T) {
	// A limit above the buffer size grows the buffer.
	id := strings.Repeat("i", readBufSize+5)
	in := Header + "\n@end-flow " + id + "\n"
	r := NewReader(strings.NewReader(in))
	r.MaxLineLen = readBufSize + 100
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	diffRecs(t, got, []rec{{Op: EndFlow, Line: 2, ID: id}})
}

// TestReaderLineLimitBoundary checks the limit on lines that are in the
// buffer with their newline, as Next finds most lines, and on those that
// are not.
func TestReaderLineLimitBoundary(t *testing.T) {
	const limit = 20
	for _, tt := range []struct {
		name    string
		idLen   int // "@end-flow " and the id make a line of 10+idLen bytes
		bufSize int
		tooLong bool
	}{
		{"at the limit", limit - 10, 0, false},
		{"one over", limit - 9, 0, true},
		{"far over", 1000, 0, true},
		{"at the limit, small buffer", limit - 10, limit + 1, false},
		{"one over, small buffer", limit - 9, limit + 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := strings.Repeat("i", tt.idLen)
			r := NewReader(strings.NewReader(Header + "\n@end-flow " + id + "\n@end-conn c\n"))
			r.MaxLineLen, r.bufSize = limit, tt.bufSize
			got, err := readAll(r)
			if tt.tooLong {
				if !errors.Is(err, ErrLineTooLong) || !strings.HasPrefix(err.Error(), "line 2: ") {
					t.Errorf("got %v, %v; want line 2: %v", got, err, ErrLineTooLong)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			diffRecs(t, got, []rec{{Op: EndFlow, Line: 2, ID: id}, {Op: EndConn, Line: 3, ID: "c"}})
		})
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader(Header + "\n@data f 1\n"))
	if _, err := readAll(r); !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
	r.Reset(strings.NewReader(Header + "\n@data g 1\nx\n"))
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	diffRecs(t, got, []rec{{Op: Data, Line: 2, ID: "g", Data: "x", Size: 1}})
}

// TestReaderNoAllocs reads records of every kind, small and too large for
// the buffer, and checks that steady-state reading allocates nothing.
func TestReaderNoAllocs(t *testing.T) {
	recs := []rec{
		{Op: BeginConn, ID: "10.0.0.1-1234-10.0.0.2-80-tcp", Kind: Stream, OrigID: "10.0.0.1-1234-10.0.0.2-80-tcp-orig", OrigParser: "80/tcp%orig", RespID: "10.0.0.1-1234-10.0.0.2-80-tcp-resp", RespParser: "80/tcp%resp"},
		{Op: BeginFlow, ID: "f", Kind: Block, Parser: "53/udp"},
		{Op: Data, ID: "10.0.0.1-1234-10.0.0.2-80-tcp-orig", Data: "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
		{Op: Data, ID: "10.0.0.1-1234-10.0.0.2-80-tcp-resp", Data: strings.Repeat("0123456789abcde\n", 1000)},
		{Op: Data, ID: "10.0.0.1-1234-10.0.0.2-80-tcp-resp", Data: strings.Repeat("z", 2*readBufSize)},
		{Op: Gap, ID: "10.0.0.1-1234-10.0.0.2-80-tcp-resp", Size: 1460},
		{Op: EndFlow, ID: "f"},
		{Op: EndConn, ID: "10.0.0.1-1234-10.0.0.2-80-tcp"},
	}
	var all []rec
	for range 20 {
		all = append(all, recs...)
	}
	file, _ := encode(t, all)
	src := bytes.NewReader(file)
	r := NewReader(src)
	read := func() {
		if _, err := r.Next(); err == io.EOF {
			src.Reset(file)
			r.Reset(src)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	for range len(all) + 2 { // one pass sizes the buffers
		read()
	}
	if n := testing.AllocsPerRun(2000, read); n != 0 {
		t.Errorf("Next allocates %.2f times per record, want 0", n)
	}
}

// quickPad follows what is given to the quick path in tests: the buffer
// holds more input after a record, and the quick path looks at whole words.
const quickPad = "\n@data c-orig 1\n"

// quickReader returns a Reader as the quick path finds it after the header.
func quickReader() *Reader {
	r := new(Reader)
	r.maxLine, r.maxData = r.maxLineLen(), r.maxDataSize()
	return r
}

// TestQuickBeginConnTakes checks that the quick path takes the lines of
// @begin-conn records as recorders write them (TestFields checks that
// what it takes, it reads right).
func TestQuickBeginConnTakes(t *testing.T) {
	for _, line := range []string{
		"@begin-conn 10.0.0.1-1234-10.0.0.2-80-tcp stream 10.0.0.1-1234-10.0.0.2-80-tcp-orig 80/tcp%orig 10.0.0.1-1234-10.0.0.2-80-tcp-resp 80/tcp%resp",
		"@begin-conn 2001:db8::1-5353-ff02::fb-5353-udp block 2001:db8::1-5353-ff02::fb-5353-udp-orig DNS::Message 2001:db8::1-5353-ff02::fb-5353-udp-resp DNS::Message",
		"@begin-conn c block c-orig p c-resp q",
	} {
		r := quickReader()
		if !r.quickBeginConn([]byte(line+quickPad)) || r.r != len(line)+1 {
			t.Errorf("quickBeginConn(%q) does not take the line; read %d bytes", line, r.r)
			continue
		}
		// Every field is capped at its length, so that appending to one
		// cannot write over the input that follows the line.
		for _, f := range [][]byte{r.rec.ID, r.rec.OrigID, r.rec.OrigParser, r.rec.RespID, r.rec.RespParser} {
			if cap(f) != len(f) {
				t.Errorf("quickBeginConn(%q): field %q has capacity %d", line, f, cap(f))
			}
		}
	}
}

// TestQuickDataTakes checks that the quick path takes @data records as
// recorders write them, with sizes of every number of digits it reads,
// and reads them right; and that it leaves larger sizes, and a byte other
// than a digit at any place of a size, to the general path or reads them
// as it does (TestFields checks the rest of the line).
func TestQuickDataTakes(t *testing.T) {
	for _, size := range []string{"0", "7", "10", "0042", "99", "100", "1460", "65535", "99999", "100000", "1234567", "9999999", "0000000", "0012345", "12345678", "123456789"} {
		n, err := strconv.Atoi(size)
		if err != nil {
			t.Fatal(err)
		}
		data := strings.Repeat("x", min(n, 1e7)) + "\n"
		for _, id := range []string{"c", "10.0.0.1-1-10.0.0.2-53-udp-orig"} {
			line := "@data " + id + " " + size
			r := quickReader()
			took := r.quickData([]byte(line + "\n" + data + quickPad))
			if want := len(size) <= 7; took != want || took && (string(r.rec.ID) != id || r.rec.Size != int64(n) || len(r.rec.Data) != n || r.r != len(line)+1+len(data)) {
				t.Errorf("quickData(%q): took %v, want %v; record %q, size %d, read %d bytes", line, took, want, r.rec.ID, r.rec.Size, r.r)
			}
		}
		for i := range len(size) + 1 {
			for c := range 256 {
				b := []byte(size + "\n")
				b[i] = byte(c)
				checkQuick(t, "@data c "+string(b))
			}
		}
	}
}

// TestDigitWords checks the word-at-a-time reading of sizes against a
// byte loop: every byte at every place of a word of digits, with the bytes
// after it that a borrow or a carry could turn.
func TestDigitWords(t *testing.T) {
	for c := range 256 {
		for pos := range 8 {
			for _, next := range []byte{0, '/', '0', '9', ':', 0x7f, 0x80, 0xff} {
				b := []byte("31415926")
				b[pos] = byte(c)
				if pos < 7 {
					b[pos+1] = next
				}
				want := 0
				for want < 8 && b[want] >= '0' && b[want] <= '9' {
					want++
				}
				w := binary.LittleEndian.Uint64(b)
				if got := bits.TrailingZeros64(nonDigit(w)) / 8; got != want {
					t.Fatalf("nonDigit(%q) finds %d digits, want %d", b, got, want)
				}
				if want == 0 {
					continue
				}
				n, _ := strconv.ParseInt(string(b[:want]), 10, 64)
				if got := decimal(w, want); got != n {
					t.Fatalf("decimal(%q, %d) = %d, want %d", b, want, got, n)
				}
			}
		}
	}
}

func TestCount(t *testing.T) {
	in := Header + "\n@begin-conn c stream o HTTP::Requests r HTTP::Replies\n@data o 2\nab\n" +
		"@begin-flow f block DNS::Message\n@end-flow f\n@end-conn c\n@begin-conn d stream o2 a r2 b\n"
	got, err := Count(strings.NewReader(in), "x.dat")
	want := Counts{BeginConns: 2, EndConns: 1, BeginFlows: 1, EndFlows: 1, Records: 6}
	if err != nil || got != want {
		t.Errorf("Count = %+v, %v; want %+v", got, err, want)
	}
	got, err = Count(strings.NewReader(in+"@data o 5\nab"), "x.dat")
	if !errors.Is(err, ErrTruncated) || !strings.HasPrefix(err.Error(), "x.dat:9:") || got.BeginConns != 2 {
		t.Errorf("truncated: %+v, %v", got, err)
	}
}

// TestFields checks the word-at-a-time split against a byte loop, with
// every white space byte, control bytes, bytes above 0x7f and '!' (which a
// borrow may flag) at every position of lines that span words.
func TestFields(t *testing.T) {
	lines := []string{
		"@data 10.0.0.1-1-10.0.0.2-53-udp-orig 42",
		"@begin-conn  c   block c-o 53/udp%orig c-r 53/udp%resp",
		" @end-conn c ",
		"@data\tc\v7",
		"@data c\x01x 7",
		"@data c 7 extra fields up to the limit and beyond it",
		"\x80\xff \xa0 z",
		"x",
		"",
		"@end-conn 10.0.0.1-1-10.0.0.2-53-udp",
		"@end-conn c d",
		"@data  c 7",
		"@data c  7",
		"@data c 0x7",
		"@data c 7\v",
		"@data c\v7",
		"@data x!y 5",
		"@data x!y!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! 5",
		"@data c",
		"@data  ",
		"@data 7",
		"@end-conn ",
		"@end-conn\tc",
		"@data c 00000000000000000012",
		"@data c 123456789012345678",
		"@data c 1234567890123456789",
		"@data c 07",
		"@data c 7x",
		"@data c -7",
		"@begin-conn c block c-orig 53/udp%orig c-resp 53/udp%resp",
		"@begin-conn c stream c-orig p c-resp q",
		"@begin-conn c stream c-orig p c-resp q r",
		"@begin-conn c stream c-orig p c-resp",
		"@begin-conn c stream c-orig p c-resp ",
		"@begin-conn c stream c-orig  p c-resp q",
		"@begin-conn c stream c-orig p\tx c-resp q",
		"@begin-conn c\tx stream c\tx-orig p c\tx-resp q",
		"@begin-conn c blocks c-orig p c-resp q",
		"@begin-conn c block c-resp p c-orig q",
		"@begin-conn c block d-orig p d-resp q",
		"@begin-conn c block c-origx p c-resp q",
		"@begin-conn c block c-orig p c-respx",
		"@begin-conn c block c-o p c-r q",
		"@begin-conn  c block c-orig p c-resp q",
		"@begin-conn c block c-orig p c-resp q\x01",
		"@begin-conn c block",
		"@begin-conn  ",
		" @begin-conn c block c-orig p c-resp q",
		"@begin-conn c block c-orig p c-resp q\r",
		"@data c 7\r",
		"\t@data c 7",
		"@end-conn c\r",
	}
	// Flow ids that differ from the connection id in one bit of a byte.
	for n := 1; n <= 40; n++ {
		cid := strings.Repeat("a", n)
		for pos := range n {
			for bit := range 7 {
				other := []byte(cid)
				other[pos] ^= 1 << bit
				lines = append(lines,
					"@begin-conn "+cid+" block "+string(other)+"-orig p "+cid+"-resp q",
					"@begin-conn "+cid+" block "+cid+"-orig p "+string(other)+"-resp q")
			}
		}
	}
	for _, c := range []byte{' ', '\t', '\n', '\v', '\f', '\r', 0, 1, 8, 0x0e, 0x1f, '!', 0x7f, 0x80, 0xa0, 0xa1, 0xff} {
		for _, next := range []byte{'!', ' ', 0, 0xff} {
			for n := 1; n <= 40; n++ {
				for pos := 0; pos < n; pos++ {
					b := []byte(strings.Repeat("a", n))
					b[pos] = c
					if pos+1 < n {
						b[pos+1] = next
					}
					lines = append(lines, string(b), "@data "+string(b)+" 5", "@end-conn "+string(b),
						"@begin-conn "+string(b)+" block "+string(b)+"-orig p "+string(b)+"-resp q",
						"@begin-conn c stream c-orig "+string(b)+" c-resp "+string(b))
				}
			}
		}
	}
	for _, line := range lines {
		var want, got [7][2]int
		b := []byte(line)
		nWant := splitBytes(b, &want)
		if n := fields(b, 0, len(b), &got); n != nWant || got != want {
			t.Errorf("fields(%q) = %d %v, want %d %v", line, n, got, nWant, want)
		}
		checkQuick(t, line)
	}
}

// splitBytes is the general loop of fields, a byte at a time.
func splitBytes(b []byte, f *[7][2]int) int {
	n := 0
	for i := 0; i < len(b); {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			break
		}
		start := i
		for i < len(b) && !isSpace(b[i]) {
			i++
		}
		if n < len(f) {
			f[n] = [2]int{start, i}
		}
		n++
	}
	return n
}

// checkQuick checks that a quick path that takes line, as it finds it
// in a buffer, reads it as parseCommand does.
func checkQuick(t *testing.T, line string) {
	t.Helper()
	// The line ends at its first newline.
	b, _, _ := strings.Cut(line, "\n")
	var want [7][2]int
	nWant := splitBytes([]byte(b), &want)
	field := func(i int) string { return b[want[i][0]:want[i][1]] }
	// A @data line is followed by its data.
	data := ""
	if nWant == 3 {
		if n, err := strconv.ParseUint(field(2), 10, 64); err == nil && n < 1<<16 {
			data = strings.Repeat("x", int(n)) + "\n"
		}
	}
	in := []byte(b + "\n" + data + quickPad)
	rd, re, rb := quickReader(), quickReader(), quickReader()
	tookData, tookEnd, tookBegin := rd.quickData(in), re.quickEndConn(in), rb.quickBeginConn(in)
	if lo, hi := trimSpace([]byte(b), 0, len(b)); lo > 0 || hi < len(b) {
		// Next trims only the lines the quick paths do not take.
		if tookData || tookEnd || tookBegin {
			t.Errorf("a quick path takes %q, which has white space around it", b)
		}
		return
	}
	if tookEnd && (nWant != 2 || commandOp([]byte(field(0))) != EndConn || string(re.rec.ID) != field(1) || re.r != len(b)+1) {
		t.Errorf("quickEndConn(%q) takes id %q, reads %d bytes; want %d fields %v", b, re.rec.ID, re.r, nWant, want)
	}
	if tookBegin {
		kind, err := rb.parseKind(BeginConn, []byte(field(2)))
		got := rb.rec
		if nWant != 7 || commandOp([]byte(field(0))) != BeginConn || err != nil || got.Op != BeginConn || got.Kind != kind || !got.DerivedFlowIDs ||
			string(got.ID) != field(1) || string(got.OrigID) != field(3) || string(got.OrigParser) != field(4) ||
			string(got.RespID) != field(5) || string(got.RespParser) != field(6) || rb.r != len(b)+1 ||
			string(got.OrigID) != field(1)+"-orig" || string(got.RespID) != field(1)+"-resp" {
			t.Errorf("quickBeginConn(%q) takes record %+v, reads %d bytes; want %d fields %v, kind %v, %v", b, got, rb.r, nWant, want, kind, err)
		}
	}
	if tookData {
		n, err := rd.parseSize(Data, []byte(field(2)))
		got := rd.rec
		if nWant != 3 || commandOp([]byte(field(0))) != Data || err != nil || string(got.ID) != field(1) || got.Size != n || rd.r != len(b)+1+len(data) {
			t.Errorf("quickData(%q) takes record %+v, reads %d bytes; want %d fields %v, size %d, %v", b, got, rd.r, nWant, want, n, err)
		}
	}
}

package batch

import (
	"bytes"
	"errors"
	"testing"
	"testing/iotest"
)

// FuzzReader reads arbitrary input twice, once through a tiny buffer (so
// that most data records take the large-record path) and once one byte at a
// time through the default buffer; both must agree record for record and on
// the error. Every record must be well-formed, and writing the records
// with a Writer and reading them back must give them again.
//
// The seed corpus in testdata/fuzz/FuzzReader holds the shapes of real
// files (Zeek-recorded TCP and UDP connections, spicy-driver flows with
// gaps) and their malformed variants.
func FuzzReader(f *testing.F) {
	f.Add([]byte(Header + "\n@begin-flow f stream 80/tcp\n@data f 3\nabc\n@gap f 2\n@end-flow f\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		small := NewReader(bytes.NewReader(in))
		small.MaxLineLen, small.MaxDataSize, small.bufSize = 200, 4096, 201
		oneByte := NewReader(iotest.OneByteReader(bytes.NewReader(in)))
		oneByte.MaxLineLen, oneByte.MaxDataSize = 200, 4096

		got, err := readChecked(t, small)
		got2, err2 := readChecked(t, oneByte)
		if errString(err) != errString(err2) {
			t.Fatalf("tiny buffer: error %v\none byte at a time: error %v", err, err2)
		}
		diffRecs(t, got, got2)
		// With LazyLines, the lines Line returns and those of errors
		// are the same.
		// So are they with a Source that the lines are counted in.
		recounted := NewReader(bytes.NewReader(in))
		recounted.Source = bytes.NewReader(in)
		recountedOne := NewReader(iotest.OneByteReader(bytes.NewReader(in)))
		recountedOne.Source = bytes.NewReader(append([]byte("offset"), in...))
		recountedOne.SourceOffset = int64(len("offset"))
		for _, lazy := range []*Reader{NewReader(bytes.NewReader(in)), NewReader(iotest.OneByteReader(bytes.NewReader(in))), recounted, recountedOne} {
			lazy.MaxLineLen, lazy.MaxDataSize, lazy.bufSize, lazy.LazyLines = 200, 4096, 201, true
			got3, err3 := readLazy(t, lazy)
			if errString(err) != errString(err3) {
				t.Fatalf("tiny buffer: error %v\nwith LazyLines: error %v", err, err3)
			}
			diffRecs(t, got3, got)
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 1 || (len(got) > 0 && pe.Line < got[len(got)-1].Line) {
				t.Fatalf("error at line %d, after a record at line %d", pe.Line, got[len(got)-1].Line)
			}
		}

		// What was read can be written, and reads back the same.
		var buf bytes.Buffer
		w, werr := NewWriter(&buf)
		if werr != nil {
			t.Fatal(werr)
		}
		for _, r := range got {
			if werr := writeRec(w, r); werr != nil {
				t.Fatalf("writing %v: %v", r, werr)
			}
		}
		if werr := w.Flush(); werr != nil {
			t.Fatal(werr)
		}
		again, rerr := readAll(NewReader(&buf))
		if rerr != nil {
			t.Fatalf("reading the rewritten records: %v", rerr)
		}
		for i := range again {
			again[i].Line = got[i].Line
		}
		diffRecs(t, again, got)
	})
}

// readChecked reads all records, checking each one's invariants.
func readChecked(t *testing.T, r *Reader) ([]rec, error) {
	var last int
	return readEach(r, func(x *Record) rec {
		checkRecord(t, r, x, last)
		last = x.Line
		return toRec(x)
	})
}

// checkRecord checks the invariants of rec, read by r after a record at
// line last.
func checkRecord(t *testing.T, r *Reader, rec *Record, last int) {
	if rec.Op < BeginFlow || rec.Op > EndConn {
		t.Fatalf("record with op %d", rec.Op)
	}
	if last > 0 && rec.Line <= last {
		t.Fatalf("line %d after line %d", rec.Line, last)
	}
	names := [][]byte{rec.ID}
	switch rec.Op {
	case BeginFlow:
		names = append(names, rec.Parser)
	case BeginConn:
		names = append(names, rec.OrigID, rec.OrigParser, rec.RespID, rec.RespParser)
		derived := string(rec.OrigID) == string(rec.ID)+"-orig" && string(rec.RespID) == string(rec.ID)+"-resp"
		if rec.DerivedFlowIDs != derived {
			t.Fatalf("DerivedFlowIDs %v for %q, %q, %q", rec.DerivedFlowIDs, rec.ID, rec.OrigID, rec.RespID)
		}
	case Data:
		if rec.Size != int64(len(rec.Data)) || len(rec.Data) > r.MaxDataSize {
			t.Fatalf("data of %d bytes, size %d", len(rec.Data), rec.Size)
		}
	case Gap:
		if rec.Size < 0 {
			t.Fatalf("negative gap %d", rec.Size)
		}
	}
	if (rec.Op == BeginFlow || rec.Op == BeginConn) && rec.Kind != Stream && rec.Kind != Block {
		t.Fatalf("kind %d", rec.Kind)
	}
	for _, n := range names {
		if len(n) == 0 || bytes.ContainsAny(n, " \t\n\v\f\r") {
			t.Fatalf("%s: bad name %q", rec.Op, n)
		}
	}
}

// readLazy reads all records of a Reader with LazyLines, each with the
// line Line returns.
func readLazy(t *testing.T, r *Reader) ([]rec, error) {
	return readEach(r, func(x *Record) rec {
		if x.Line != 0 {
			t.Fatalf("LazyLines: record at line %d", x.Line)
		}
		got := toRec(x)
		got.Line = r.Line()
		return got
	})
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

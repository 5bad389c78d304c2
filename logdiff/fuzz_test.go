package logdiff

import (
	"bytes"
	"io"
	"testing"
)

// FuzzReader reads any bytes as a log: Next returns records or an error
// naming the log, never panics, and every record holds one value per
// column.
func FuzzReader(f *testing.F) {
	f.Add([]byte(zeekHTTP))
	f.Add([]byte("uid\tquery\nCa\texample.com\n"))
	f.Add([]byte(`{"ts":1.5,"answers":["a"],"AA":true}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), "fuzz.log")
		for range 10000 {
			rec, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				if !bytes.HasPrefix([]byte(err.Error()), []byte("fuzz.log: ")) {
					t.Fatalf("error without the log's name: %v", err)
				}
				return
			}
			if len(rec.Values) != len(r.Fields()) {
				t.Fatalf("line %d: %d values, %d fields", rec.Line, len(rec.Values), len(r.Fields()))
			}
		}
	})
}

// FuzzCompare compares two logs of any bytes: the counts add up.
func FuzzCompare(f *testing.F) {
	f.Add([]byte(zeekHTTP), []byte(zeekHTTP))
	f.Add([]byte(zeekHTTP), []byte("uri\ttrans_depth\n/a\t1\n"))
	f.Add([]byte(`{"trans_depth":1,"uri":"/a"}`+"\n"), []byte(zeekHTTP))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		s, _ := SchemaFor("http")
		r, err := Compare(s, NewReader(bytes.NewReader(a), "a"), NewReader(bytes.NewReader(b), "b"), Options{MaxBytes: 1 << 20})
		if err != nil {
			return
		}
		if r.Matched+r.Missing != r.ARecords || r.Matched+r.Extra != r.BRecords || r.Equal+r.Differ != r.Matched {
			t.Fatalf("counts do not add up: %+v", r)
		}
		for _, fr := range r.Fields {
			if fr.Equal+fr.Differ+fr.Skipped != r.Matched {
				t.Fatalf("field %s: %+v of %d matched", fr.Field, fr, r.Matched)
			}
		}
	})
}

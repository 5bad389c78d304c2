package logdiff

import (
	"io"
	"slices"
	"strings"
	"testing"
)

// zeekHTTP is the start of an http.log as Zeek writes it (shortened to a
// few columns), with btest's masked #open.
const zeekHTTP = "#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\thttp\n" +
	"#open\tXXXX-XX-XX-XX-XX-XX\n#fields\tts\tuid\tid.orig_h\ttrans_depth\turi\ttags\n" +
	"#types\ttime\tstring\taddr\tcount\tstring\tset[enum]\n" +
	"1.000000\tCa\t10.0.0.1\t1\t/a\\x09b\t(empty)\n" +
	"2.000000\tCb\t10.0.0.1\t2\t-\tx,y\n" +
	"#close\tXXXX-XX-XX-XX-XX-XX\n"

func TestReader(t *testing.T) {
	for _, tt := range []struct {
		name   string
		in     string
		fields []string // NewReaderFields when set
		format Format
		cols   []string
		recs   [][]string
		lines  []int
	}{
		{
			name: "zeek tsv", in: zeekHTTP, format: TSV,
			cols:  []string{"ts", "uid", "id.orig_h", "trans_depth", "uri", "tags"},
			recs:  [][]string{{"1.000000", "Ca", "10.0.0.1", "1", "/a\tb", Empty}, {"2.000000", "Cb", "10.0.0.1", "2", Unset, "x,y"}},
			lines: []int{9, 10},
		},
		{
			name: "other separators and markers",
			in: "#separator \\x7c\n#set_separator|;\n#empty_field|EMPTY\n#unset_field|NONE\n#fields|a|b|c\n" +
				"x;y|EMPTY|NONE\n",
			format: TSV, cols: []string{"a", "b", "c"},
			recs: [][]string{{"x,y", Empty, Unset}}, lines: []int{6},
		},
		{
			name: "zeek-cut -c", in: "### btest header\nuid\tquery\tanswers\nCa\texample.com\t1.2.3.4,5.6.7.8\n\nCb\t-\t(empty)\r\n",
			format: Cut, cols: []string{"uid", "query", "answers"},
			recs:  [][]string{{"Ca", "example.com", "1.2.3.4,5.6.7.8"}, {"Cb", Unset, Empty}},
			lines: []int{3, 5},
		},
		{
			name: "no header, columns given", in: "GET\nPOST\n", fields: []string{"method"},
			format: Cut, cols: []string{"method"}, recs: [][]string{{"GET"}, {"POST"}}, lines: []int{1, 2},
		},
		{
			name: "json lines",
			in: `{"ts":1.5,"uid":"Ca","AA":true,"answers":["a","b"],"tags":[]}` + "\n" +
				`{"ts":2,"uid":"","RA":false,"answers":null}` + "\n",
			format: JSON, cols: []string{"ts", "uid", "AA", "answers", "tags", "RA"},
			recs:  [][]string{{"1.5", "Ca", "T", "a,b", Empty}, {"2", Empty, Unset, Unset, Unset, "F"}},
			lines: []int{1, 2},
		},
		{name: "empty", in: "", format: TSV},
		{name: "header only", in: "#fields\ta\tb\n#close\tx\n", format: TSV, cols: []string{"a", "b"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tt.in), "test.log")
			if tt.fields != nil {
				r = NewReaderFields(strings.NewReader(tt.in), "test.log", tt.fields)
			}
			var recs [][]string
			var lines []int
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, slices.Clone(rec.Values))
				lines = append(lines, rec.Line)
			}
			if r.Format() != tt.format {
				t.Errorf("format %v, want %v", r.Format(), tt.format)
			}
			if !slices.Equal(r.Fields(), tt.cols) {
				t.Errorf("fields %q, want %q", r.Fields(), tt.cols)
			}
			if !slices.EqualFunc(recs, tt.recs, slices.Equal) {
				t.Errorf("records %q, want %q", recs, tt.recs)
			}
			if !slices.Equal(lines, tt.lines) {
				t.Errorf("lines %v, want %v", lines, tt.lines)
			}
		})
	}
}

func TestReaderErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"#fields\ta\tb\nx\n", "x.log: line 2: 1 values, want 2 (the columns a b)"},
		{"#fields\ta\tb\nx\ty\tz\n", "x.log: line 2: 3 values, want 2"},
		{"#fields\ta\ta\n", "x.log: line 1: column \"a\" named twice"},
		{"#fields\ta\t\n", "x.log: line 1: column 2 has no name"},
		{"#separator \n", "x.log: line 1: #separator \"\": want one escaped character"},
		{"#fields\ta\n\\xZZ\n", "x.log: line 2: column a: escape \"\\\\xZZ\": want \\x and two hex digits"},
		{"#fields\ta\nx\\x4\n", "x.log: line 2: column a: escape \"\\\\x4\" cut short"},
		{"#fields\ta\nx\n#fields\ta\n", "x.log: line 3: a second #fields line"},
		{"{\"a\":1}\n{\"a\":\n", "x.log: line 2: field \"a\": "},
		{"{\"a\":1}\n[1]\n", "x.log: line 2: not a JSON object"},
		{"{\"a\":1} {\"a\":2}\n", "x.log: line 1: more than one JSON value on the line"},
		{"{\"a\":{\"b\":1}}\n", "x.log: line 1: field \"a\": a JSON object, which no Zeek log field holds"},
		{"{\"a\":[[1]]}\n", "x.log: line 1: field \"a\": a container inside a container"},
		{"{\"a\":1,\"a\":2}\n", "x.log: line 1: field \"a\" given twice"},
	} {
		r := NewReader(strings.NewReader(tt.in), "x.log")
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if err == io.EOF || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestReaderLongLine(t *testing.T) {
	in := "#fields\ta\n" + strings.Repeat("x", MaxLineBytes+1) + "\n"
	r := NewReader(strings.NewReader(in), "x.log")
	_, err := r.Next()
	if err == nil || !strings.Contains(err.Error(), "x.log: line 2: line longer than 16 MiB") {
		t.Errorf("error %v", err)
	}
}

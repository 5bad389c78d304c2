package batch

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

// recHandler is a Handler that keeps what it is passed as recs.
type recHandler struct {
	recs []rec
}

func (h *recHandler) Data(fid, data []byte) {
	h.recs = append(h.recs, rec{Op: Data, ID: string(fid), Data: string(data), Size: int64(len(data))})
}

func (h *recHandler) EndConn(cid []byte) { h.recs = append(h.recs, rec{Op: EndConn, ID: string(cid)}) }

func (h *recHandler) BeginConn(x *Record) {
	if x.Op != BeginConn {
		panic("BeginConn called for " + x.Op.String())
	}
	h.recs = append(h.recs, toRec(x))
}

func (h *recHandler) Record(x *Record) {
	if x.Op == Data || x.Op == EndConn || x.Op == BeginConn {
		panic("Record called for " + x.Op.String())
	}
	h.recs = append(h.recs, toRec(x))
}

// handleAll reads r with Handle, n records a call, to the end or an
// error; io.EOF is not an error. With LazyLines it takes each record's
// line from Line after the call that passed it, so n must then be 1.
func handleAll(t *testing.T, r *Reader, n int) ([]rec, error) {
	t.Helper()
	h := &recHandler{}
	for {
		before := len(h.recs)
		k, err := r.Handle(h, n)
		if k != len(h.recs)-before {
			t.Fatalf("Handle returned %d, passed %d records", k, len(h.recs)-before)
		}
		if err == nil && k != n {
			t.Fatalf("Handle passed %d of %d records without an error", k, n)
		}
		if r.LazyLines && k == 1 {
			h.recs[before].Line = r.Line()
		}
		if err == io.EOF {
			return h.recs, nil
		}
		if err != nil {
			return h.recs, err
		}
	}
}

// checkHandle checks that Handle passes the records Next returns, and
// stops at the same error, for the batch file in.
func checkHandle(t *testing.T, in []byte) {
	t.Helper()
	// Next's records, as Handle's handler sees them: the fields a
	// command does not set are those of an earlier record.
	want, wantErr := readEach(NewReader(bytes.NewReader(in)), func(x *Record) rec {
		switch x.Op {
		case Data:
			return rec{Op: Data, ID: string(x.ID), Data: string(x.Data), Size: x.Size}
		case EndConn:
			return rec{Op: EndConn, ID: string(x.ID)}
		}
		return toRec(x)
	})
	for _, n := range []int{1, 2, 3, 1000} {
		got, err := handleAll(t, NewReader(iotest.HalfReader(bytes.NewReader(in))), n)
		if errString(err) != errString(wantErr) {
			t.Fatalf("n=%d: Handle: error %v, Next: error %v", n, err, wantErr)
		}
		diffRecs(t, clearLines(got), clearLines(want))
	}
	// With LazyLines, Line between calls gives each record's line.
	lines, linesErr := readAll(NewReader(bytes.NewReader(in)))
	lazy := NewReader(bytes.NewReader(in))
	lazy.LazyLines = true
	got, err := handleAll(t, lazy, 1)
	if errString(err) != errString(linesErr) {
		t.Fatalf("LazyLines: Handle: error %v, Next: error %v", err, linesErr)
	}
	for i := range min(len(got), len(lines)) {
		if got[i].Line != lines[i].Line {
			t.Errorf("LazyLines: record %d (%v) at line %d, want %d", i, got[i].Op, got[i].Line, lines[i].Line)
		}
	}
}

// clearLines returns recs without their lines, which a Handler is not
// passed for the records of Data and EndConn.
func clearLines(recs []rec) []rec {
	for i := range recs {
		recs[i].Line = 0
	}
	return recs
}

func TestHandle(t *testing.T) {
	cid := "10.0.0.1-1234-10.0.0.2-53-udp"
	valid := Header + "\n" +
		"@begin-conn " + cid + " block " + cid + "-orig 53/udp%orig " + cid + "-resp 53/udp%resp\n" +
		"@data " + cid + "-orig 3\nq\nq\n" +
		"\n  @data\t" + cid + "-resp 2 \nrr\n" + // the general path
		"@begin-flow f stream 80/tcp\n@data f 3\nabc\n@gap f 2\n@end-flow f\n" +
		"@end-conn  " + cid + "\n" +
		"@end-conn " + cid + "\n" +
		"@data " + cid + "-orig " + strconv.Itoa(2*readBufSize) + "\n" + strings.Repeat("x", 2*readBufSize) + "\n" +
		"@end-conn last"
	for name, in := range map[string]string{
		"valid":     valid,
		"truncated": valid[:strings.Index(valid, "q\nq\n")+2],
		"malformed": strings.Replace(valid, "@gap f 2", "@gap f two", 1),
		"empty":     "",
		"header":    Header + "\n",
	} {
		t.Run(name, func(t *testing.T) { checkHandle(t, []byte(in)) })
	}
	// And the seeds of the fuzzer, the shapes of real files.
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzReader/*")
	for _, seed := range seeds {
		b, err := os.ReadFile(seed)
		if err != nil {
			t.Fatal(err)
		}
		in, ok := fuzzInput(b)
		if !ok {
			continue
		}
		t.Run(filepath.Base(seed), func(t *testing.T) { checkHandle(t, in) })
	}
}

// fuzzInput returns the input a seed of the fuzzer's corpus holds.
func fuzzInput(b []byte) ([]byte, bool) {
	_, rest, ok := bytes.Cut(b, []byte("\n[]byte("))
	if !ok {
		return nil, false
	}
	q := strings.TrimSuffix(strings.TrimSpace(string(rest)), ")")
	s, err := strconv.Unquote(q)
	return []byte(s), err == nil
}

func TestHandleNoAllocs(t *testing.T) {
	file, _ := encode(t, []rec{
		{Op: BeginConn, ID: "c", Kind: Block, OrigID: "c-orig", OrigParser: "53/udp%orig", RespID: "c-resp", RespParser: "53/udp%resp"},
		{Op: Data, ID: "c-orig", Data: "query"},
		{Op: Data, ID: "c-resp", Data: "reply"},
		{Op: EndConn, ID: "c"},
	})
	src := bytes.NewReader(file)
	r := NewReader(src)
	h := nopHandler{}
	handle := func() {
		if _, err := r.Handle(h, 1000); err != io.EOF {
			t.Fatal(err)
		}
		src.Reset(file)
		r.Reset(src)
	}
	handle() // sizes the buffer
	if n := testing.AllocsPerRun(100, handle); n != 0 {
		t.Errorf("Handle allocates %.2f times per file, want 0", n)
	}
}

type nopHandler struct{}

func (nopHandler) Data(fid, data []byte) {}
func (nopHandler) EndConn(cid []byte)    {}
func (nopHandler) BeginConn(*Record)     {}
func (nopHandler) Record(*Record)        {}

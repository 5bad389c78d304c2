package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestWriterOutput(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	const cid = "::1-56150-::1-8080-tcp"
	steps := []error{
		w.BeginConn(cid, Stream, cid+"-orig", "8080/tcp%orig", cid+"-resp", "8080/tcp%resp"),
		w.Data(cid+"-orig", []byte("GET / HTTP/1.1\r\n\r\n")),
		w.Gap(cid+"-resp", 1460),
		w.Data(cid+"-resp", nil),
		w.EndConn(cid),
		w.BeginFlow("f", Block, "DNS::Message"),
		w.Data("f", []byte("\n@data f 1\n")),
		w.EndFlow("f"),
		w.Flush(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	want := "!spicy-batch v2\n" +
		"@begin-conn ::1-56150-::1-8080-tcp stream ::1-56150-::1-8080-tcp-orig 8080/tcp%orig ::1-56150-::1-8080-tcp-resp 8080/tcp%resp\n" +
		"@data ::1-56150-::1-8080-tcp-orig 18\nGET / HTTP/1.1\r\n\r\n\n" +
		"@gap ::1-56150-::1-8080-tcp-resp 1460\n" +
		"@data ::1-56150-::1-8080-tcp-resp 0\n\n" +
		"@end-conn ::1-56150-::1-8080-tcp\n" +
		"@begin-flow f block DNS::Message\n" +
		"@data f 11\n\n@data f 1\n\n" +
		"@end-flow f\n"
	if got := buf.String(); got != want {
		t.Errorf("output\n%q\nwant\n%q", got, want)
	}
}

func TestWriterRejects(t *testing.T) {
	tests := []struct {
		name  string
		write func(w *Writer) error
		err   string
	}{
		{"empty flow id", func(w *Writer) error { return w.Data("", []byte("x")) }, "batch: @data: flow id is empty"},
		{"space in flow id", func(w *Writer) error { return w.Data("a b", []byte("x")) },
			`batch: @data: flow id "a b" contains white space (' ' at byte 1)`},
		{"newline in gap id", func(w *Writer) error { return w.Gap("a\n", 1) },
			`batch: @gap: flow id "a\n" contains white space ('\n' at byte 1)`},
		{"negative gap", func(w *Writer) error { return w.Gap("a", -1) }, "batch: @gap: negative size -1"},
		{"tab in parser", func(w *Writer) error { return w.BeginFlow("f", Stream, "HTTP::\tRequests") },
			`batch: @begin-flow: parser "HTTP::\tRequests" contains white space ('\t' at byte 6)`},
		{"empty parser", func(w *Writer) error { return w.BeginFlow("f", Stream, "") }, "batch: @begin-flow: parser is empty"},
		{"invalid kind", func(w *Writer) error { return w.BeginFlow("f", 0, "p") },
			"batch: @begin-flow: invalid flow type 0 (want batch.Stream or batch.Block)"},
		{"begin-conn cid", func(w *Writer) error { return w.BeginConn("c\r", Stream, "o", "p", "r", "q") },
			`batch: @begin-conn: connection id "c\r" contains white space ('\r' at byte 1)`},
		{"begin-conn orig id", func(w *Writer) error { return w.BeginConn("c", Stream, "", "p", "r", "q") },
			"batch: @begin-conn: originator flow id is empty"},
		{"begin-conn orig parser", func(w *Writer) error { return w.BeginConn("c", Stream, "o", "p\v", "r", "q") },
			`batch: @begin-conn: originator parser "p\v" contains white space ('\v' at byte 1)`},
		{"begin-conn resp id", func(w *Writer) error { return w.BeginConn("c", Stream, "o", "p", "\fr", "q") },
			`batch: @begin-conn: responder flow id "\fr" contains white space ('\f' at byte 0)`},
		{"begin-conn resp parser", func(w *Writer) error { return w.BeginConn("c", Stream, "o", "p", "r", "") },
			"batch: @begin-conn: responder parser is empty"},
		{"begin-conn kind", func(w *Writer) error { return w.BeginConn("c", 7, "o", "p", "r", "q") },
			"batch: @begin-conn: invalid flow type 7 (want batch.Stream or batch.Block)"},
		{"end-flow", func(w *Writer) error { return w.EndFlow("") }, "batch: @end-flow: flow id is empty"},
		{"end-conn", func(w *Writer) error { return w.EndConn(" c") },
			`batch: @end-conn: connection id " c" contains white space (' ' at byte 0)`},
		{"record without op", func(w *Writer) error { return w.WriteRecord(&Record{ID: []byte("x")}) },
			"batch: cannot write a record with op 0"},
		{"record with bad id", func(w *Writer) error { return w.WriteRecord(&Record{Op: EndConn, ID: []byte("x y")}) },
			`batch: @end-conn: connection id "x y" contains white space (' ' at byte 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.write(w); err == nil || err.Error() != tt.err {
				t.Fatalf("error\n got %v\nwant %s", err, tt.err)
			}
			// Nothing was written and the Writer stays usable.
			if err := w.EndFlow("ok"); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if want := Header + "\n@end-flow ok\n"; buf.String() != want {
				t.Errorf("output %q, want %q", buf.String(), want)
			}
		})
	}
}

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	limit int
	err   error
}

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.limit {
		n := w.limit
		w.limit = 0
		return n, w.err
	}
	w.limit -= len(p)
	return len(p), nil
}

func TestWriterErrors(t *testing.T) {
	full := errors.New("disk full")
	if _, err := NewWriter(&failWriter{limit: 3, err: full}); !errors.Is(err, full) {
		t.Fatalf("NewWriter on a failing writer: %v, want the write error", err)
	}
	w, err := NewWriter(&failWriter{limit: 100, err: full})
	if err != nil {
		t.Fatal(err)
	}
	// A large chunk goes through to the failing writer at once.
	if err := w.Data("f", make([]byte, 2*writeBufSize)); !errors.Is(err, full) {
		t.Fatalf("Data: %v, want the write error", err)
	}
	if err := w.EndFlow("f"); !errors.Is(err, full) {
		t.Errorf("EndFlow after a write error: %v, want the write error again", err)
	}
	if err := w.Flush(); !errors.Is(err, full) {
		t.Errorf("Flush after a write error: %v, want the write error again", err)
	}
}

func TestWriterNoAllocs(t *testing.T) {
	w, err := NewWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	const cid = "2001:db8::1-50000-2001:db8::2-80-tcp"
	small := []byte("GET / HTTP/1.1\r\n\r\n")
	large := make([]byte, 3*writeBufSize)
	rec := &Record{Op: Data, ID: []byte(cid + "-resp"), Data: small}
	n := testing.AllocsPerRun(1000, func() {
		must(t, w.BeginConn(cid, Stream, cid+"-orig", "80/tcp%orig", cid+"-resp", "80/tcp%resp"))
		must(t, w.Data(cid+"-orig", small))
		must(t, w.Data(cid+"-resp", large))
		must(t, w.Gap(cid+"-resp", 100))
		must(t, w.WriteRecord(rec))
		must(t, w.EndConn(cid))
	})
	if n != 0 {
		t.Errorf("writing a connection allocates %.1f times, want 0", n)
	}
}

func must(t *testing.T, err error) {
	if err != nil {
		t.Fatal(err)
	}
}

// randomRecords makes a random sequence of records of every kind: ids of
// any non-white-space bytes, data of 0 bytes to several times the reader's
// buffer, full of newlines and '@'.
func randomRecords(rng *rand.Rand, n int) []rec {
	id := func() string {
		b := make([]byte, 1+rng.IntN(60))
		for i := range b {
			for {
				b[i] = byte(rng.IntN(256))
				if !isSpace(b[i]) {
					break
				}
			}
		}
		if rng.IntN(4) == 0 {
			b[0] = '@'
		}
		return string(b)
	}
	data := func() string {
		var n int
		switch rng.IntN(10) {
		case 0:
			n = 0
		case 1:
			n = readBufSize - 50 + rng.IntN(100)
		case 2:
			n = rng.IntN(3 * readBufSize)
		default:
			n = rng.IntN(2000)
		}
		// Random bytes, a third of them from an alphabet of troublemakers.
		alphabet := []byte("\n@\r \x00abc\xff")
		b := make([]byte, n+8)
		for i := 0; i < n; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
		}
		for i := range n {
			if b[i]%3 == 0 {
				b[i] = alphabet[int(b[i]/3)%len(alphabet)]
			}
		}
		return string(b[:n])
	}
	kind := func() Kind { return Kind(1 + rng.IntN(2)) }
	recs := make([]rec, n)
	for i := range recs {
		var r rec
		switch op := Op(1 + rng.IntN(6)); op {
		case BeginFlow:
			r = rec{Op: op, ID: id(), Kind: kind(), Parser: id()}
		case BeginConn:
			r = rec{Op: op, ID: id(), Kind: kind(), OrigID: id(), OrigParser: id(), RespID: id(), RespParser: id()}
		case Data:
			r = rec{Op: op, ID: id(), Data: data()}
		case Gap:
			r = rec{Op: op, ID: id(), Size: rng.Int64N(1 << 40)}
		case EndFlow, EndConn:
			r = rec{Op: op, ID: id()}
		}
		recs[i] = r
	}
	return withLines(recs)
}

// TestRoundTrip writes random record sequences and reads them back through
// readers that return random amounts; then copies the file record by
// record and checks the copy is identical.
func TestRoundTrip(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 1))
		want := randomRecords(rng, 1+rng.IntN(60))
		file, _ := encode(t, want)
		got, err := readAll(NewReader(&randomReader{b: file, rng: rng}))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		diffRecs(t, got, want)

		var copied bytes.Buffer
		w, err := NewWriter(&copied)
		if err != nil {
			t.Fatal(err)
		}
		r := NewReader(bytes.NewReader(file))
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if err := w.WriteRecord(rec); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		must(t, w.Flush())
		if !bytes.Equal(copied.Bytes(), file) {
			t.Fatalf("seed %d: the copy differs from the original", seed)
		}
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

// randomReader returns 1 byte to 100 KiB per Read.
type randomReader struct {
	b   []byte
	rng *rand.Rand
}

func (r *randomReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+r.rng.IntN(100<<10))], r.b)
	r.b = r.b[n:]
	return n, nil
}

func TestOpString(t *testing.T) {
	var tags []string
	for op := BeginFlow; op <= EndConn; op++ {
		tags = append(tags, op.String())
	}
	if got, want := strings.Join(tags, " "), "@begin-flow @begin-conn @data @gap @end-flow @end-conn"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if Op(0).String() != "@invalid" || Kind(0).String() != "invalid" {
		t.Errorf("zero values: %s %s", Op(0), Kind(0))
	}
}

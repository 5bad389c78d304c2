package batch

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// writeBufSize is the size of a Writer's buffer; larger data chunks are
// written through to the underlying writer.
const writeBufSize = 64 << 10

// Writer writes a batch file, buffered. Call Flush when done.
//
// Ids and parser names must be non-empty and free of white space (spaces,
// tabs, newlines, \v, \f, \r): a reader splits command lines at white space.
// A method given such a name returns an error and writes nothing; the Writer
// stays usable. Errors of the underlying writer are sticky: once one
// happened, every later method returns it.
//
// A Writer does not check that flows are begun before they are used or
// ended only once; it writes what it is told.
type Writer struct {
	bw   *bufio.Writer
	line []byte // the command line being built
}

// NewWriter writes the header line to w and returns a Writer of the records
// that follow. The header is written at once, so an unwritable destination
// shows up before any traffic is processed.
func NewWriter(w io.Writer) (*Writer, error) {
	if _, err := io.WriteString(w, Header+"\n"); err != nil {
		return nil, fmt.Errorf("batch: writing header: %w", err)
	}
	return &Writer{bw: bufio.NewWriterSize(w, writeBufSize), line: make([]byte, 0, 256)}, nil
}

// BeginFlow writes "@begin-flow FID TYPE PARSER".
func (w *Writer) BeginFlow(fid string, kind Kind, parser string) error {
	return writeBeginFlow(w, fid, kind, parser)
}

// BeginConn writes "@begin-conn CID TYPE ORIG_FID ORIG_PARSER RESP_FID
// RESP_PARSER".
func (w *Writer) BeginConn(cid string, kind Kind, origID, origParser, respID, respParser string) error {
	return writeBeginConn(w, cid, kind, origID, origParser, respID, respParser)
}

// Data writes "@data FID SIZE", the data and a newline.
func (w *Writer) Data(fid string, data []byte) error {
	return writeData(w, fid, data)
}

// Gap writes "@gap FID SIZE": size bytes of the flow are missing.
func (w *Writer) Gap(fid string, size int64) error {
	return writeGap(w, fid, size)
}

// EndFlow writes "@end-flow FID".
func (w *Writer) EndFlow(fid string) error {
	return writeEnd(w, EndFlow, fid)
}

// EndConn writes "@end-conn CID".
func (w *Writer) EndConn(cid string) error {
	return writeEnd(w, EndConn, cid)
}

// WriteRecord writes a record as a Reader returns it: copying a batch file
// record by record through a Reader and a Writer allocates nothing.
func (w *Writer) WriteRecord(rec *Record) error {
	switch rec.Op {
	case BeginFlow:
		return writeBeginFlow(w, rec.ID, rec.Kind, rec.Parser)
	case BeginConn:
		return writeBeginConn(w, rec.ID, rec.Kind, rec.OrigID, rec.OrigParser, rec.RespID, rec.RespParser)
	case Data:
		return writeData(w, rec.ID, rec.Data)
	case Gap:
		return writeGap(w, rec.ID, rec.Size)
	case EndFlow, EndConn:
		return writeEnd(w, rec.Op, rec.ID)
	}
	return fmt.Errorf("batch: cannot write a record with op %d", rec.Op)
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error {
	return w.bw.Flush()
}

// name is what ids and parser names may be given as.
type name interface{ ~string | ~[]byte }

func writeBeginFlow[N name](w *Writer, fid N, kind Kind, parser N) error {
	if err := checkName(BeginFlow, "flow id", fid); err != nil {
		return err
	}
	if err := checkName(BeginFlow, "parser", parser); err != nil {
		return err
	}
	if err := checkKind(BeginFlow, kind); err != nil {
		return err
	}
	b := append(w.line[:0], "@begin-flow "...)
	b = append(b, fid...)
	b = append(b, ' ')
	b = append(b, kind.String()...)
	b = append(b, ' ')
	b = append(b, parser...)
	return w.writeLine(b)
}

func writeBeginConn[N name](w *Writer, cid N, kind Kind, origID, origParser, respID, respParser N) error {
	names := [...]N{cid, origID, origParser, respID, respParser}
	for i, s := range names {
		if err := checkName(BeginConn, beginConnArgs[i], s); err != nil {
			return err
		}
	}
	if err := checkKind(BeginConn, kind); err != nil {
		return err
	}
	b := append(w.line[:0], "@begin-conn "...)
	b = append(b, cid...)
	b = append(b, ' ')
	b = append(b, kind.String()...)
	for _, s := range names[1:] {
		b = append(b, ' ')
		b = append(b, s...)
	}
	return w.writeLine(b)
}

func writeData[N name](w *Writer, fid N, data []byte) error {
	if err := checkName(Data, "flow id", fid); err != nil {
		return err
	}
	b := append(w.line[:0], "@data "...)
	b = append(b, fid...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(data)), 10)
	if err := w.writeLine(b); err != nil {
		return err
	}
	if _, err := w.bw.Write(data); err != nil {
		return err
	}
	return w.bw.WriteByte('\n')
}

func writeGap[N name](w *Writer, fid N, size int64) error {
	if err := checkName(Gap, "flow id", fid); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("batch: %s: negative size %d", Gap, size)
	}
	b := append(w.line[:0], "@gap "...)
	b = append(b, fid...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, size, 10)
	return w.writeLine(b)
}

func writeEnd[N name](w *Writer, op Op, id N) error {
	what := "flow id"
	if op == EndConn {
		what = "connection id"
	}
	if err := checkName(op, what, id); err != nil {
		return err
	}
	b := append(w.line[:0], op.String()...)
	b = append(b, ' ')
	b = append(b, id...)
	return w.writeLine(b)
}

// writeLine writes b and a newline, keeping b's storage for the next line.
func (w *Writer) writeLine(b []byte) error {
	b = append(b, '\n')
	w.line = b[:0]
	_, err := w.bw.Write(b)
	return err
}

// beginConnArgs names the id and parser arguments of @begin-conn.
var beginConnArgs = [...]string{"connection id", "originator flow id", "originator parser", "responder flow id", "responder parser"}

func checkName[N name](op Op, what string, s N) error {
	if len(s) == 0 {
		return fmt.Errorf("batch: %s: %s is empty", op, what)
	}
	for i := 0; i < len(s); i++ {
		if isSpace(s[i]) {
			return fmt.Errorf("batch: %s: %s %q contains white space (%q at byte %d)", op, what, string(s), s[i], i)
		}
	}
	return nil
}

func checkKind(op Op, kind Kind) error {
	if kind != Stream && kind != Block {
		return fmt.Errorf("batch: %s: invalid flow type %d (want batch.Stream or batch.Block)", op, kind)
	}
	return nil
}

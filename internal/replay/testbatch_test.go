package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/batch"
)

// testBatch is a small reader of well-formed batch files for these tests,
// with errors in batch.Reader's style ("NAME:LINE: @cmd: what"). The
// binaries use batch.Reader.
type testBatch struct {
	r    *bufio.Reader
	name string
	line int
	rec  batch.Record
}

func openTestBatch(r io.Reader, name string) RecordReader {
	return &testBatch{r: bufio.NewReader(r), name: name}
}

func (b *testBatch) errorf(cmd, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", b.name, b.line, cmd, fmt.Sprintf(format, args...))
}

func (b *testBatch) Next() (*batch.Record, error) {
	for {
		line, err := b.r.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil, io.EOF
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		b.line++
		line = strings.TrimSpace(line)
		if b.line == 1 {
			if line != batchHeader {
				return nil, errors.New("not a batch file")
			}
			continue
		}
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		want := map[string]int{"@begin-conn": 7, "@begin-flow": 4, "@data": 3, "@gap": 3, "@end-flow": 2, "@end-conn": 2}[f[0]]
		if want == 0 || len(f) != want {
			return nil, b.errorf(f[0], "want %d fields", want)
		}
		b.rec = batch.Record{Line: b.line, ID: []byte(f[1])}
		kind := batch.Stream
		if f[len(f)-1] == "block" || len(f) > 2 && f[2] == "block" {
			kind = batch.Block
		}
		switch f[0] {
		case "@begin-conn":
			b.rec.Op, b.rec.Kind = batch.BeginConn, kind
			b.rec.OrigID, b.rec.OrigParser, b.rec.RespID, b.rec.RespParser = []byte(f[3]), []byte(f[4]), []byte(f[5]), []byte(f[6])
		case "@begin-flow":
			b.rec.Op, b.rec.Kind, b.rec.Parser = batch.BeginFlow, kind, []byte(f[3])
		case "@data", "@gap":
			n, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, b.errorf(f[0], "bad size %q", f[2])
			}
			if f[0] == "@gap" {
				b.rec.Op, b.rec.Size = batch.Gap, int64(n)
				break
			}
			b.rec.Op, b.rec.Data = batch.Data, make([]byte, n+1)
			if _, err := io.ReadFull(b.r, b.rec.Data); err != nil {
				return nil, b.errorf(f[0], "truncated")
			}
			b.line += strings.Count(string(b.rec.Data), "\n")
			b.rec.Data = b.rec.Data[:n]
		case "@end-flow":
			b.rec.Op = batch.EndFlow
		case "@end-conn":
			b.rec.Op = batch.EndConn
		}
		return &b.rec, nil
	}
}

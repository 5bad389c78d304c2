package shard

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/capture"
)

// Input is one shard's file to merge: its name, for errors, and its
// content.
type Input struct {
	Name string
	R    io.Reader
}

// MergeLogs writes the Zeek logs of the shards of a trace (the same log
// of each) as one log to w: in Zeek's TSV layout the header of the first
// (every shard's must have the same #fields and #types), the records of
// all in the order given, and the latest #close line; JSON lines are
// concatenated. The records are those one process writes, in another
// order: sort them to compare.
func MergeLogs(w io.Writer, inputs ...Input) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var columns string // #fields and #types of the first input
	var closeLine, long []byte
	for i, in := range inputs {
		r := bufio.NewReaderSize(in.R, 64<<10)
		var cols string
		records := false
		for n := 1; ; n++ {
			line, err := readLine(r, &long)
			if len(line) > 0 && line[len(line)-1] != '\n' {
				line = append(line, '\n') // a last line cut short
			}
			switch {
			case len(line) == 0:
			case bytes.HasPrefix(line, closePrefix):
				if bytes.Compare(line, closeLine) > 0 {
					closeLine = append(closeLine[:0], line...)
				}
			case line[0] == '#' && records:
				return fmt.Errorf("%s: line %d: a header line after the records: want the log of one run", in.Name, n)
			case line[0] == '#':
				if bytes.HasPrefix(line, []byte("#fields\t")) || bytes.HasPrefix(line, []byte("#types\t")) {
					cols += string(line)
				}
				if i == 0 {
					bw.Write(line)
				}
			default:
				if !records {
					records = true
					if err := checkColumns(in, inputs[0], i, cols, &columns); err != nil {
						return err
					}
				}
				bw.Write(line)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		if !records {
			if err := checkColumns(in, inputs[0], i, cols, &columns); err != nil {
				return err
			}
		}
	}
	bw.Write(closeLine)
	return bw.Flush() // returns the first write error
}

var closePrefix = []byte("#close\t")

// checkColumns keeps the first input's columns (#fields and #types lines)
// and checks the others' against them.
func checkColumns(in, first Input, i int, cols string, columns *string) error {
	if i == 0 {
		*columns = cols
		return nil
	}
	if cols != *columns {
		return fmt.Errorf("%s: its #fields and #types differ from %s's: not shards of the same log", in.Name, first.Name)
	}
	return nil
}

// readLine reads a line, however long, with its newline; a line longer
// than r's buffer is gathered in *long.
func readLine(r *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = r.ReadSlice('\n')
		*long = append(*long, line...)
	}
	return *long, err
}

// MergeBatches writes the batch files of the shards of a trace as one
// batch file to w: one header, then the records of each in turn. The
// connections of the shards are disjoint, so the result holds the
// connections one process records, each with the same records.
func MergeBatches(w io.Writer, inputs ...Input) error {
	bw, err := batch.NewWriter(w)
	if err != nil {
		return err
	}
	r := batch.NewReader(nil)
	for _, in := range inputs {
		r.Reset(in.R)
		r.Name = in.Name
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err // names the file and the line
			}
			if err := bw.WriteRecord(rec); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// MergePcaps writes the packets of the pcap files of the shards of a
// trace to w as one pcap file, in timestamp order (packets of equal time
// in the order of the inputs), as mergecap does. The inputs must share a
// link type; the output has the largest snap length and nanosecond
// timestamps when any input has them.
func MergePcaps(w io.Writer, inputs ...Input) error {
	type head struct {
		r   *capture.Reader
		p   capture.Packet
		ok  bool
		buf []byte
	}
	heads := make([]*head, len(inputs))
	var hdr capture.Header
	for i, in := range inputs {
		r, err := capture.NewReader(in.R, in.Name)
		if err != nil {
			return err
		}
		defer r.Close()
		h := r.Header()
		if i == 0 {
			hdr = h
		} else if h.LinkType != hdr.LinkType {
			return fmt.Errorf("%s: link type %d, but %s has %d: not shards of one trace", in.Name, h.LinkType, inputs[0].Name, hdr.LinkType)
		}
		hdr.Snaplen = max(hdr.Snaplen, h.Snaplen)
		hdr.Nanos = hdr.Nanos || h.Nanos
		heads[i] = &head{r: r}
	}
	cw, err := capture.NewWriter(w, hdr)
	if err != nil {
		return err
	}
	next := func(h *head) error {
		err := h.r.Next(&h.p)
		if errors.Is(err, io.EOF) {
			h.ok = false
			return nil
		}
		if err != nil {
			return err
		}
		// The frame is valid until the next read of its reader only, and
		// the other readers are read meanwhile: keep a copy.
		h.buf = append(h.buf[:0], h.p.Data...)
		h.p.Data, h.ok = h.buf, true
		return nil
	}
	for _, h := range heads {
		if err := next(h); err != nil {
			return err
		}
	}
	for {
		var first *head
		for _, h := range heads {
			if h.ok && (first == nil || h.p.TS < first.p.TS) {
				first = h
			}
		}
		if first == nil {
			break
		}
		if err := cw.WritePacket(&first.p); err != nil {
			return err
		}
		if err := next(first); err != nil {
			return err
		}
	}
	return cw.Flush()
}

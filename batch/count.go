package batch

import (
	"io"
)

// Counts are the connections and flows a batch file begins and ends.
type Counts struct {
	BeginConns, EndConns int64
	BeginFlows, EndFlows int64
	Records              int64
}

// Count reads the batch file in r to its end, as a Reader does (name names
// it in errors), and counts its records: a file whose every connection was
// closed has as many EndConns as BeginConns. It returns the counts up to
// the first error, if any.
func Count(r io.Reader, name string) (Counts, error) {
	br := NewReader(r)
	br.Name = name
	var c Counts
	for {
		rec, err := br.Next()
		if err == io.EOF {
			return c, nil
		}
		if err != nil {
			return c, err
		}
		c.Records++
		switch rec.Op {
		case BeginConn:
			c.BeginConns++
		case EndConn:
			c.EndConns++
		case BeginFlow:
			c.BeginFlows++
		case EndFlow:
			c.EndFlows++
		}
	}
}

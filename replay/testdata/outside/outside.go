// Package outside registers an HTTP implementation from a module of its
// own, through wirebench's public API only, as a parser author outside
// the repository does: "inspect" wraps wirebench's native HTTP parser and
// checks the contract every parser is held to (no Feed after Finish, a
// Close after both sides finished, no data kept after Feed returns),
// counting what each connection carried. Its logs are the native ones:
// it proves the seam, not a parser.
package outside

import (
	"fmt"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// Name is the implementation's name for --parsers.
const Name = "inspect"

func init() {
	if err := http.Register(Name, func(s http.Sink) parsers.Analyzer { return &analyzer{inner: http.New(s)} }); err != nil {
		panic(err)
	}
}

// analyzer wraps another HTTP analyzer.
type analyzer struct {
	inner parsers.Analyzer
}

func (a *analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	cp := &conn{inner: a.inner.Open(c), c: c}
	cp.sides[connid.Orig] = side{cp: cp, inner: cp.inner.Orig()}
	cp.sides[connid.Resp] = side{cp: cp, inner: cp.inner.Resp()}
	return cp
}

type conn struct {
	inner parsers.ConnParser
	c     *parsers.Conn
	sides [2]side
}

type side struct {
	cp       *conn
	inner    parsers.Parser
	bytes    int64
	finished bool
}

func (c *conn) Orig() parsers.Parser { return &c.sides[connid.Orig] }
func (c *conn) Resp() parsers.Parser { return &c.sides[connid.Resp] }

func (c *conn) Close() {
	for d, s := range c.sides {
		if !s.finished {
			panic(fmt.Sprintf("connection %s closed before its %v side finished", c.c.ID, connid.Dir(d)))
		}
	}
	c.inner.Close()
}

func (s *side) Feed(data []byte) {
	if s.finished {
		panic(fmt.Sprintf("connection %s: Feed after Finish", s.cp.c.ID))
	}
	s.bytes += int64(len(data))
	s.inner.Feed(data)
}

func (s *side) Gap(n int) { s.inner.Gap(n) }

func (s *side) Finish() {
	s.finished = true
	s.inner.Finish()
}

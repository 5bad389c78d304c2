// Package fingertest is a third protocol for tests: the Finger user
// information protocol (RFC 1288, 79/tcp), line-based and small, declared
// and registered the way a protocol's own package does it, so that tests
// can check that the drivers know nothing of HTTP and DNS. A connection
// carries one query line from the originator and a reply that runs until
// the connection closes; finger.log has one record per query.
package fingertest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
)

// MaxQuery caps the bytes of a query line held; longer queries are cut
// there and flagged.
const MaxQuery = 512

// Transaction is one query and its reply.
type Transaction struct {
	Query     []byte // the query line without its CRLF; valid during the Sink call
	Truncated bool   // the query line was longer than MaxQuery
	ReplyLen  int64  // bytes of the reply
	Lost      int64  // bytes missing from either side
}

// Sink receives the transactions.
type Sink interface {
	Finger(c *parsers.Conn, tx *Transaction)
}

type sinkFunc func(c *parsers.Conn, tx any)

func (f sinkFunc) Finger(c *parsers.Conn, tx *Transaction) { f(c, tx) }

// Protocol describes Finger to the drivers.
var Protocol = &parsers.Protocol{
	Name: "finger",
	Units: []parsers.Unit{
		{Name: "Finger::Query", Role: parsers.Orig, Aliases: []string{"79/tcp%orig"}},
		{Name: "Finger::Reply", Role: parsers.Resp, Aliases: []string{"79/tcp%resp"}},
	},
	Ports:         parsers.TCPPorts(79),
	OrigUnit:      "Finger::Query",
	RespUnit:      "Finger::Reply",
	AliasExample:  "7979/tcp%orig=Finger::Query",
	SubTrace:      parsers.SubTraceRule{Transport: connid.ProtoTCP, Ports: []uint16{79}},
	ReplayPackage: "parsers/internal/fingertest/cmd/finger-parser",
	SinkFunc:      func(f func(*parsers.Conn, any)) any { return sinkFunc(f) },
	Log: parsers.Log{
		Name:      "finger",
		Key:       []string{"id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p"},
		Compared:  []string{"query", "truncated", "reply_len", "lost"},
		Summary:   []string{"query", "reply_len"},
		NewWriter: newLog,
	},
}

func init() {
	if err := parsers.RegisterFunc(Protocol, parsers.Native, func(s Sink) parsers.Analyzer { return &analyzer{sink: s} }); err != nil {
		panic(err)
	}
}

type analyzer struct{ sink Sink }

func (a *analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	cp := &conn{a: a, c: c}
	cp.query.cp, cp.reply.cp = cp, cp
	return cp
}

type conn struct {
	a     *analyzer
	c     *parsers.Conn
	tx    Transaction
	buf   [MaxQuery]byte
	line  []byte
	done  bool // the query line ended
	query queryParser
	reply replyParser
}

type queryParser struct{ cp *conn }
type replyParser struct{ cp *conn }

func (c *conn) Orig() parsers.Parser { return &c.query }
func (c *conn) Resp() parsers.Parser { return &c.reply }

func (c *conn) Close() {
	if len(c.line) > 0 || c.done {
		c.tx.Query = bytes.TrimSuffix(c.line, []byte("\r"))
		c.a.sink.Finger(c.c, &c.tx)
	}
}

func (p *queryParser) Feed(data []byte) {
	c := p.cp
	if c.done {
		return
	}
	if c.line == nil {
		c.line = c.buf[:0]
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data, c.done = data[:i], true
	}
	room := MaxQuery - len(c.line)
	if len(data) > room {
		data, c.tx.Truncated = data[:room], true
	}
	c.line = append(c.line, data...)
}

func (p *queryParser) Gap(n int) { p.cp.tx.Lost += int64(n) }
func (p *queryParser) Finish()   {}

func (p *replyParser) Feed(data []byte) { p.cp.tx.ReplyLen += int64(len(data)) }
func (p *replyParser) Gap(n int)        { p.cp.tx.Lost += int64(n) }
func (p *replyParser) Finish()          {}

// logWriter writes finger.log in Zeek's TSV layout, or as JSON lines.
type logWriter struct {
	w       *bufio.Writer
	json    bool
	records int64
}

func newLog(w io.Writer, o parsers.LogOptions) (parsers.LogWriter, error) {
	l := &logWriter{w: bufio.NewWriter(w), json: o.JSON}
	if !o.JSON {
		l.w.WriteString("#separator \\x09\n#path\tfinger\n#fields\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tquery\ttruncated\treply_len\tlost\n")
	}
	return l, nil
}

func (l *logWriter) Write(c *parsers.Conn, tx any) {
	t := tx.(*Transaction)
	k := c.Key
	if l.json {
		fmt.Fprintf(l.w, `{"uid":%q,"id.orig_h":%q,"id.orig_p":%d,"id.resp_h":%q,"id.resp_p":%d,"query":%q,"truncated":%t,"reply_len":%d,"lost":%d}`+"\n",
			c.UID, k.Orig.Addr(), k.Orig.Port(), k.Resp.Addr(), k.Resp.Port(), t.Query, t.Truncated, t.ReplyLen, t.Lost)
	} else {
		fmt.Fprintf(l.w, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%d\t%d\n",
			c.UID, k.Orig.Addr(), k.Orig.Port(), k.Resp.Addr(), k.Resp.Port(), strconv.Quote(string(t.Query)), boolField(t.Truncated), t.ReplyLen, t.Lost)
	}
	l.records++
}

func boolField(b bool) string {
	if b {
		return "T"
	}
	return "F"
}

func (l *logWriter) Records() int64 { return l.records }

func (l *logWriter) Close() error {
	if !l.json {
		l.w.WriteString("#close\n")
	}
	return l.w.Flush()
}

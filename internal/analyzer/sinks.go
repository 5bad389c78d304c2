package analyzer

import (
	"io"
	"slices"
	"unsafe"

	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
)

// protoLog is a protocol the analyzer parses, and its log.
type protoLog struct {
	p       *parsers.Protocol
	w       io.Writer
	log     parsers.LogWriter
	cols    zeeklog.ColumnsWriter // log, when it takes a connection's columns
	records int64
}

// sink returns the sink of protocol p, nil when p is not parsed: it writes
// each transaction to the protocol's log and confirms the protocol on the
// current connection (its conn.log service) where the protocol's Zeek
// analyzer confirms it (parsers.Protocol.Confirms).
func (a *Analyzer) sink(p *parsers.Protocol) any {
	i := slices.IndexFunc(a.logs, func(l *protoLog) bool { return l.p == p })
	if i < 0 {
		return nil
	}
	l := a.logs[i]
	return p.SinkFunc(func(c *parsers.Conn, tx any) {
		if a.cur != nil && (p.Confirms == nil || p.Confirms(tx)) {
			a.cur.confirm(p.Name)
		}
		// The current connection's columns are those of c, unless a parser
		// reported on another connection than the one it was fed.
		if ci := a.cur; ci != nil && l.cols != nil && sameUID(ci.uid, c.UID) {
			l.cols.WriteColumns(a.columns(ci), c, tx)
		} else {
			l.log.Write(c, tx)
		}
		l.records++
	})
}

// sameUID reports whether the uids u and v are equal. The connection's
// uid and the one a parser reports are nearly always the very same
// string, whose bytes need no comparing: the call to compare them costs
// more than the rest of a transaction's dispatch to its log.
func sameUID(u, v string) bool {
	return len(u) == len(v) && (unsafe.StringData(u) == unsafe.StringData(v) || u == v)
}

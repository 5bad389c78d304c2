package zeeklog

import (
	"slices"

	"github.com/wirebench/wirebench/parsers"
)

// ConnColumns holds the columns every TSV record of one connection starts
// with, ts, uid and the id.* fields, as its first protocol record
// rendered them: a connection's conn.log record and the records of its
// transactions (a DNS connection's one query, mostly) then render the
// uid, the addresses and the ports once between them, and the ts too
// when it is the same. A program keeps one per connection, zero at the
// start (Reset), and passes it with each of the connection's records
// (ConnRecord.Columns, ColumnsWriter). IPv6 connections, whose columns
// may not fit, render theirs every time.
type ConnColumns struct {
	ts int64 // the time the text starts with
	// n is the length of the text; 0 until a record rendered it. tsLen is
	// that of its ts column.
	n, tsLen uint8
	// localOrig and localResp are IsLocal of the addresses of the text,
	// found as they were rendered: conn.log's record needs them again.
	localOrig, localResp bool
	text                 [86]byte
}

// Reset forgets the columns, for the next connection.
func (cc *ConnColumns) Reset() { cc.n = 0 }

// appendTSV appends the ts column of ts and the uid and id.* columns of
// c, from the text when it holds them, and keeps them in it when it does
// not; then they are rendered with what s, the log's, kept (see
// connTSV.appendLead).
func (cc *ConnColumns) appendTSV(b []byte, ts int64, c *parsers.Conn, s *connTSV) []byte {
	if cc.n > 0 {
		return cc.appendKept(b, ts)
	}
	start := len(b)
	b, tsLen := s.appendLead(b, ts, c)
	// Without a 5-tuple the id.* columns are unset, which conn.log writes
	// otherwise.
	if n := len(b) - start; n <= len(cc.text) && c.Key.Orig.IsValid() {
		cc.ts, cc.n, cc.tsLen = ts, uint8(n), uint8(tsLen)
		cc.localOrig, cc.localResp = s.orig.local, s.resp.local // of the addresses appended
		if cap(b)-start >= len(cc.text) {
			// The whole array, of a size known when compiling, is
			// copied without a call; the bytes past n are spare
			// capacity.
			cc.text = [len(cc.text)]byte(b[start : start+len(cc.text)])
		} else {
			copy(cc.text[:], b[start:])
		}
	}
	return b
}

// appendKept appends the kept text, with the ts column of ts in place of
// its own when the times differ. The text must be set.
func (cc *ConnColumns) appendKept(b []byte, ts int64) []byte {
	if ts == cc.ts {
		// The whole array, of a size known when compiling, is copied
		// without a call; the bytes past n are spare capacity.
		l := len(b)
		b = slices.Grow(b, len(cc.text))
		*(*[len(cc.text)]byte)(b[l : l+len(cc.text)]) = cc.text
		return b[:l+int(cc.n)]
	}
	return append(tsvTime(b, ts), cc.text[cc.tsLen:cc.n]...)
}

// ColumnsWriter is a protocol log (a parsers.LogWriter) whose TSV records
// can take their leading columns from the connection's ConnColumns.
type ColumnsWriter interface {
	// WriteColumns is Write of a record of the connection whose columns
	// cc keeps (cc's text, if set, must be of c: the same uid and
	// 5-tuple).
	WriteColumns(cc *ConnColumns, c *parsers.Conn, tx any)
}

// appendLead appends the ts column of ts and the uid and id.* columns of
// c, as tsvTime and tsvConnID do, with the leading digits of the ts and
// the addresses copied from the log's records before when they are the
// same (see connTSV), and returns the length of the ts column too.
func (s *connTSV) appendLead(b []byte, ts int64, c *parsers.Conn) ([]byte, int) {
	start := len(b)
	b = tsvTimePrefixed(b, ts, &s.secs)
	tsLen := len(b) - start
	b = tsvUID(b, c.UID)
	orig, resp := c.Key.Orig, c.Key.Resp
	if !orig.IsValid() {
		return append(b, "-\t-\t-\t-\t"...), tsLen
	}
	b = s.orig.appendTSV(b, orig.Addr())
	b = tsvUint(b, uint64(orig.Port()))
	b = s.resp.appendTSV(b, resp.Addr())
	// A server's port is mostly below 1000 (tsvSmallUint): rendered in line.
	if b, ok := tsvSmallUint(b, uint64(resp.Port())); ok {
		return b, tsLen
	}
	return appendUintTab(b, uint64(resp.Port())), tsLen
}

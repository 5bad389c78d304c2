package zeeklog

import (
	"encoding/binary"

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
	// madeUIDs says the uids of its records need no check (see
	// MarkMadeUIDs); Reset keeps it.
	madeUIDs bool
}

// Reset forgets the columns, for the next connection.
func (cc *ConnColumns) Reset() { cc.n = 0 }

// MarkMadeUIDs tells cc that the uids of the records passed with it, of
// its connection and of those it is Reset for, are made by
// parsers.UIDFromKey or a parsers.UIDArena: base62 digits after a letter,
// with nothing to escape, which their records then need not check.
// Reset keeps the mark.
func (cc *ConnColumns) MarkMadeUIDs() { cc.madeUIDs = true }

// appendKept appends the kept text, with the ts column of ts in place of
// its own when the times differ, rendered with the log's prefix p (see
// tsvTimePrefixed). The text must be set.
func (cc *ConnColumns) appendKept(b []byte, ts int64, p *secondsPrefix) []byte {
	if ts == cc.ts {
		// The whole array, of a size known when compiling, is copied
		// without a call; the bytes past n are spare capacity.
		l := len(b)
		b = room(b, len(cc.text))
		*(*[len(cc.text)]byte)(b[l : l+len(cc.text)]) = cc.text
		return b[:l+int(cc.n)]
	}
	return append(tsvTimePrefixed(b, ts, p), cc.text[cc.tsLen:cc.n]...)
}

// ColumnsWriter is a protocol log (a parsers.LogWriter) whose TSV records
// can take their leading columns from the connection's ConnColumns.
type ColumnsWriter interface {
	// WriteColumns is Write of a record of the connection whose columns
	// cc keeps (cc's text, if set, must be of c: the same uid and
	// 5-tuple).
	WriteColumns(cc *ConnColumns, c *parsers.Conn, tx any)
}

// tsTextLen is the length of the ts column of a time whose seconds have
// ten digits, with its separator; leadRoom is room for the columns
// appendLead stores in line (86 bytes at most).
const (
	tsTextLen = 18
	leadRoom  = 128
)

// appendLead appends the ts column of ts and the uid and id.* columns of
// c, as tsvTime, tsvUID, tsvAddr and tsvUint do, with the leading digits
// of the ts and the addresses copied from the log's records before when
// they are the same (see connTSV). When cc is not nil, they are copied
// from its text when it holds them, and kept in it when it does not.
//
// The records nearly all are, with a ts whose seconds have ten digits, a
// uid of three words that need no escaping (tsvUID) and IPv4 addresses,
// have their columns stored here in room made once, at offsets that
// follow from the lengths of the uid and the addresses, in line but for
// an address that is not the one kept; appendLeadSlow takes the others.
// The fields are read as each column is stored, which keeps few values
// live across the calls.
func (s *connTSV) appendLead(b []byte, ts int64, c *parsers.Conn, cc *ConnColumns) []byte {
	if cc != nil && cc.n > 0 {
		return cc.appendKept(b, ts, &s.secs)
	}
	// ts >= 1e18-500: seconds of ten digits (an int64 has at most 19).
	uid := c.UID
	n := len(uid)
	if ts < 1e18-500 || n <= 16 || n > 24 || !c.Key.Orig.Addr().Is4() || !c.Key.Resp.Addr().Is4() {
		return s.appendLeadSlow(b, ts, c, cc)
	}
	if cap(b)-len(b) < leadRoom {
		b = room(b, leadRoom)
	}
	l := len(b)
	d := (*[leadRoom]byte)(b[l : l+leadRoom])
	// The uid is checked as it is stored, unless cc knows it was made
	// plain (MarkMadeUIDs): the room is b's spare capacity, free to hold
	// anything when the uid is not plain. Its words are sliced to their
	// length, so that their loads need no more bounds checks (nor the
	// masking of an empty slice's pointer).
	w0, w1, w2 := stringWord(uid[:8]), stringWord(uid[8:16]), stringWord(uid[n-8:n])
	binary.LittleEndian.PutUint64(d[18:], w0)
	binary.LittleEndian.PutUint64(d[26:], w1)
	binary.LittleEndian.PutUint64(d[10+n:], w2)
	if (cc == nil || !cc.madeUIDs) &&
		(unplainBytes(w0, '\\')|unplainBytes(w1, '\\')|unplainBytes(w2, '\\'))&topBits != 0 {
		return s.appendLeadSlow(b[:l], ts, c, cc)
	}
	d[18+n] = separator
	// The ts column, as tsvTimePrefixed stores it.
	us := (uint64(ts) + 500) / 1000
	secs := us / 1e6
	if secs/1000 != s.secs.hi {
		s.secs.set(secs)
	}
	s.secs.put(d[:], secs)
	putMicrosTab(d[11:18], us%1e6)
	// The kept addresses and the ports, copied and stored in line: a
	// client's port of five digits, a server's of three at most, nearly
	// always.
	o := 19 + n
	if a := c.Key.Orig.Addr(); a == s.orig.a && s.orig.n != 0 {
		*(*[len(s.orig.text)]byte)(d[o : o+len(s.orig.text)]) = s.orig.text
		o += int(s.orig.n)
	} else {
		o = s.orig.keep4(d, o, a)
	}
	if p := c.Key.Orig.Port(); p >= 1000 {
		o += put5(d[o:o+8], uint64(p)) + 1
	} else {
		o += putPort((*[8]byte)(d[o:o+8]), p)
	}
	if a := c.Key.Resp.Addr(); a == s.resp.a && s.resp.n != 0 {
		*(*[len(s.resp.text)]byte)(d[o : o+len(s.resp.text)]) = s.resp.text
		o += int(s.resp.n)
	} else {
		o = s.resp.keep4(d, o, a)
	}
	if p := c.Key.Resp.Port(); p < uint16(len(smallDecimals)) {
		e := smallDecimals[p]
		binary.LittleEndian.PutUint32(d[o:o+4], uint32(e))
		o += int(e>>32)&3 + 1
	} else {
		o += putPort((*[8]byte)(d[o:o+8]), p)
	}
	if cc != nil && o <= len(cc.text) {
		cc.ts, cc.n, cc.tsLen = ts, uint8(o), tsTextLen
		cc.localOrig, cc.localResp = s.orig.local, s.resp.local // of the addresses stored
		// The whole array, of a size known when compiling, is copied
		// without a call; the bytes past o are spare capacity.
		cc.text = [len(cc.text)]byte(d[:len(cc.text)])
	}
	return b[:l+o]
}

// putPort stores p in decimal followed by a tab at the start of d, and
// returns the length stored: ports below 1000 (servers') from
// smallDecimals, others by put5.
func putPort(d *[8]byte, p uint16) int {
	if p < uint16(len(smallDecimals)) {
		e := smallDecimals[p]
		binary.LittleEndian.PutUint32(d[:], uint32(e))
		return int(e>>32)&3 + 1
	}
	return put5(d[:], uint64(p)) + 1
}

// appendLeadSlow is appendLead of the records whose columns it does not
// store itself, and of cc (if not nil) that does not hold them yet.
func (s *connTSV) appendLeadSlow(b []byte, ts int64, c *parsers.Conn, cc *ConnColumns) []byte {
	start := len(b)
	b, tsLen := s.renderLead(b, ts, c)
	// Without a 5-tuple the id.* columns are unset, which conn.log writes
	// otherwise.
	if n := len(b) - start; cc != nil && n <= len(cc.text) && c.Key.Orig.IsValid() {
		cc.ts, cc.n, cc.tsLen = ts, uint8(n), uint8(tsLen)
		cc.localOrig, cc.localResp = s.orig.local, s.resp.local // of the addresses appended
		copy(cc.text[:], b[start:])
	}
	return b
}

// renderLead renders the columns appendLeadSlow appends, and returns
// the length of the ts column too.
func (s *connTSV) renderLead(b []byte, ts int64, c *parsers.Conn) ([]byte, int) {
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

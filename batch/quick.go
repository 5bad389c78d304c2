package batch

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The quick path reads the records whose command lines have the forms
// recorders write, which are nearly all of them:
//
//	@begin-conn CID KIND CID-orig ORIG_PARSER CID-resp RESP_PARSER
//	@data FID SIZE
//	@end-conn CID
//
// with single spaces, no white space around the line, ids and parser names
// of graphic ASCII and a SIZE of at most seven digits. It reads such a line
// in one pass that finds the line's end as it checks the fields, a word at
// a time, where the general path searches for the newline, then splits the
// line and parses the fields. Any other line, and any record not buffered
// whole, is left to the general path, which reads every record the quick
// path takes the same way.

// Tags of the command lines the quick path takes.
const (
	dataTag      = "@data "
	endConnTag   = "@end-conn "
	beginConnTag = "@begin-conn "
)

// quickData decodes into r.rec the @data record whose command line
// "@data FID SIZE\n" starts line, which runs to the end of the buffered
// input, if its data and closing newline are buffered, and reports whether
// it did; when it returns false, it has changed nothing. SIZE must have at
// most seven digits, read from one word (the data of a larger record does
// not fit in the buffer but for a huge MaxLineLen: the general path reads
// it). On every line it takes, fields and parseSize would agree.
func (r *Reader) quickData(line []byte) bool {
	if len(line) <= len(dataTag) || string(line[:len(dataTag)]) != dataTag {
		return false
	}
	idEnd := graphicEnd(line, len(dataTag))
	if !endsField(line, len(dataTag), idEnd, ' ') || idEnd+1 > len(line)-8 {
		return false
	}
	// The size and its newline are in the word after the space.
	w := binary.LittleEndian.Uint64(line[idEnd+1:])
	digits := bits.TrailingZeros64(nonDigit(w)) / 8
	nl := idEnd + 1 + digits
	if digits == 0 || digits == 8 || line[nl] != '\n' || nl > r.maxLine {
		return false
	}
	n := decimal(w, digits)
	data := line[nl+1:]
	if n > int64(r.maxData) || int64(len(data)) <= n || data[n] != '\n' {
		return false
	}
	r.line++
	r.startRecord(Data)
	r.rec.ID = line[len(dataTag):idEnd:idEnd]
	// setData's work, saving a call.
	r.rec.Data, r.rec.Size = data[:n:n], n
	if !r.LazyLines {
		r.line += bytes.Count(r.rec.Data, newline) + 1
	}
	r.r += nl + int(n) + 2
	return true
}

// nonDigit flags the bytes of w that are not decimal digits: those below
// '0' and those above '9' get their top bit in one sum or the other (a
// byte at or above 0x80 in either). A borrow or a carry can flag a wrong
// byte only above one flagged itself: the lowest flag is always right.
func nonDigit(w uint64) uint64 {
	return ((w - '0'*ones) | (w + (0x80-':')*ones)) & highs
}

// decimal returns the number written by the first n digits of w (1 to 8,
// the first in the lowest byte). It shifts them to the top of the word,
// behind leading zeros, and adds up pairs of digits, then pairs of those,
// and so on, with a multiplication each time.
func decimal(w uint64, n int) int64 {
	d := (w - '0'*ones) << (64 - 8*n)
	d = (d * (10<<8 + 1)) >> 8 & 0x00ff00ff00ff00ff
	d = (d * (100<<16 + 1)) >> 16 & 0x0000ffff0000ffff
	return int64((d * (10000<<32 + 1)) >> 32)
}

// quickEndConn decodes into r.rec the @end-conn record whose line
// "@end-conn CID\n" starts line, and reports whether it did; when it
// returns false, it has changed nothing. On every line it takes, fields
// would find the tag and the id.
func (r *Reader) quickEndConn(line []byte) bool {
	if len(line) <= len(endConnTag) || string(line[:len(endConnTag)]) != endConnTag {
		return false
	}
	nl := graphicEnd(line, len(endConnTag))
	if !endsField(line, len(endConnTag), nl, '\n') || nl > r.maxLine {
		return false
	}
	r.line++
	r.startRecord(EndConn)
	r.rec.ID = line[len(endConnTag):nl:nl]
	r.r += nl + 1
	return true
}

// quickBeginConn decodes into r.rec the @begin-conn record whose line
// "@begin-conn CID KIND CID-orig ORIG_PARSER CID-resp RESP_PARSER\n"
// starts line, and reports whether it did; when it returns false, it has
// changed nothing. On every line it takes, fields and parseKind would
// agree. Such a line is the longest and a third of a file's command lines:
// its flow ids are compared with the connection's id, which has been
// checked once for all three.
func (r *Reader) quickBeginConn(line []byte) bool {
	if len(line) <= len(beginConnTag) || string(line[:len(beginConnTag)]) != beginConnTag {
		return false
	}
	cidEnd := graphicEnd(line, len(beginConnTag))
	if !endsField(line, len(beginConnTag), cidEnd, ' ') {
		return false
	}
	var kind Kind
	origLo := cidEnd + 1
	switch rest := line[origLo:]; {
	case hasPrefix(rest, "block "):
		kind, origLo = Block, origLo+len("block ")
	case hasPrefix(rest, "stream "):
		kind, origLo = Stream, origLo+len("stream ")
	default:
		return false
	}
	// The flow ids are taken to be derived from the connection's id, to
	// find the fields after them; they are compared with it below.
	n := cidEnd - len(beginConnTag)
	origEnd := origLo + n + len(origSuffix)
	if !hasSuffixSpace(line, origEnd, origSuffix) {
		return false
	}
	opEnd := graphicEnd(line, origEnd+1)
	if !endsField(line, origEnd+1, opEnd, ' ') {
		return false
	}
	respLo := opEnd + 1
	respEnd := respLo + n + len(respSuffix)
	if !hasSuffixSpace(line, respEnd, respSuffix) {
		return false
	}
	nl := graphicEnd(line, respEnd+1)
	cid := line[len(beginConnTag):cidEnd]
	if !endsField(line, respEnd+1, nl, '\n') || nl > r.maxLine || !bothHold(cid, line[origLo:], line[respLo:]) {
		return false
	}
	r.line++
	r.startRecord(BeginConn)
	r.rec.ID, r.rec.Kind = cid[:n:n], kind
	r.rec.OrigID, r.rec.OrigParser = line[origLo:origEnd:origEnd], line[origEnd+1:opEnd:opEnd]
	r.rec.RespID, r.rec.RespParser = line[respLo:respEnd:respEnd], line[respEnd+1:nl:nl]
	r.rec.DerivedFlowIDs = true
	r.r += nl + 1
	return true
}

// hasSuffixSpace reports whether b[:end] ends with suffix and a space
// follows.
func hasSuffixSpace(b []byte, end int, suffix string) bool {
	return end < len(b) && end >= len(suffix) && string(b[end-len(suffix):end]) == suffix && b[end] == ' '
}

// bothHold reports whether a and b both start with id: a word of each at
// a time, where comparing each with id would take a call apiece.
func bothHold(id, a, b []byte) bool {
	n := len(id)
	if n < 8 || len(a) < n || len(b) < n {
		return len(a) >= n && len(b) >= n && string(a[:n]) == string(id) && string(b[:n]) == string(id)
	}
	a, b = a[:n:n], b[:n:n]
	var diff uint64
	for i := 0; i < n-8; i += 8 {
		w := binary.LittleEndian.Uint64(id[i : i+8])
		diff |= (binary.LittleEndian.Uint64(a[i:i+8]) ^ w) | (binary.LittleEndian.Uint64(b[i:i+8]) ^ w)
	}
	// The last word overlaps the one before it when n is not a multiple
	// of eight.
	w := binary.LittleEndian.Uint64(id[n-8:])
	diff |= (binary.LittleEndian.Uint64(a[n-8:]) ^ w) | (binary.LittleEndian.Uint64(b[n-8:]) ^ w)
	return diff == 0
}

func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// endsField reports whether b[lo:end] is not empty and followed by sep:
// whether a field of graphic bytes found by graphicEnd ends right.
func endsField(b []byte, lo, end int, sep byte) bool {
	return end > lo && end < len(b) && b[end] == sep
}

// graphicEnd returns the index of the first byte of b at or after lo that
// is not graphic ASCII (or DEL), or lo if it finds none. It looks at two
// words of b at a time: a byte in the last 15 of b may not be looked at.
//
// In a word, the bytes below '!' get their top bit from the subtraction,
// those at or above 0x80 have it. A borrow can flag a wrong byte only
// above one below '!': the lowest flag is always right. (The sums are
// written out here: a function for them would cost an instruction a word
// where it is inlined.)
func graphicEnd(b []byte, lo int) int {
	for i, last := lo, len(b)-16; i <= last; i += 16 {
		w := binary.LittleEndian.Uint64(b[i:])
		m := ((w - '!'*ones) | w) & highs
		if m == 0 {
			w = binary.LittleEndian.Uint64(b[i+8:])
			if m = ((w - '!'*ones) | w) & highs; m == 0 {
				continue
			}
			i += 8
		}
		return i + bits.TrailingZeros64(m)/8
	}
	return lo
}

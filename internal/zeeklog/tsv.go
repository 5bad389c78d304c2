package zeeklog

import (
	"encoding/binary"
	"net/netip"

	"github.com/wirebench/wirebench/internal/ipv4text"
)

// The TSV fast path. conn.log, dns.log and http.log records in TSV, the
// default format and the bulk of an analyzer's output, are appended field
// by field to one local slice by the functions below, each value followed
// by its separator, instead of through the Writer's value methods: a
// record is then one straight run of appends, with no method call,
// format test or field count per value. The Writer's methods stay the
// general way (and JSON's); TestTSVFastPath holds the two to the same
// bytes.

// tsvBegin returns the buffer to append a TSV record to, once the block
// a record before filled is written out. tsvBegin and tsvEnd are small
// enough to be inlined: a record costs no call but its own.
func (w *Writer) tsvBegin() []byte {
	if w.rec >= blockSize {
		w.writeOut()
	}
	return w.buf[:w.rec]
}

// tsvEnd ends a record appended to b by the tsv functions: the last
// separator becomes the newline. (The field count End checks is of the
// value methods' records only.)
func (w *Writer) tsvEnd(b []byte) {
	b[len(b)-1] = '\n'
	w.buf, w.rec = b, len(b)
	w.records++
}

func tsvUnset(b []byte) []byte { return append(b, '-', separator) }

// tsvUint is v; a single digit (counts of packets, flags, codes: a third of
// the numbers of conn.log and dns.log) is appended in line.
func tsvUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v), separator)
	}
	return appendUintTab(b, v)
}

// tsvSmallUint is tsvUint of v below 1000, from smallDecimals, small
// enough to be inlined where such numbers are the rule; ok is false, with
// b as it was, for larger v.
func tsvSmallUint(b []byte, v uint64) (_ []byte, ok bool) {
	if v >= uint64(len(smallDecimals)) {
		return b, false
	}
	e := smallDecimals[v]
	l := len(b)
	return append(b, byte(e), byte(e>>8), byte(e>>16), byte(e>>24))[:l+int(e>>32)+1], true
}

// tsvOptUint is v, or unset when it is 0.
func tsvOptUint(b []byte, v uint64) []byte {
	if v == 0 {
		return tsvUnset(b)
	}
	return tsvUint(b, v)
}

func tsvBool(b []byte, v bool) []byte {
	if v {
		return append(b, 'T', separator)
	}
	return append(b, 'F', separator)
}

// tsvTime is a time in ns since the epoch; 0 (unknown) is unset.
func tsvTime(b []byte, ns int64) []byte {
	if ns == 0 {
		return tsvUnset(b)
	}
	return append(appendTSVSeconds(b, ns), separator)
}

// secondsPrefix keeps the first seven of the ten digits of the seconds of
// a time a log rendered: the times of a log's records are close, and share
// them nearly always (they change every 1000 seconds).
type secondsPrefix struct {
	hi   uint64 // the seconds / 1000 of text; 0 when text is not set
	text uint64 // their seven digits, the first in the lowest byte
}

// set keeps the first seven digits of secs, of ten digits.
func (p *secondsPrefix) set(secs uint64) {
	var t [10]byte
	p.hi, p.text = secs/1000, binary.LittleEndian.Uint64(append10(t[:0], secs))
}

// put stores the ten digits of secs and the dot after them in d[:11]: the
// first seven from p, which must hold those of secs (set), and the last
// three from digits3, with the dot, in one store.
func (p *secondsPrefix) put(d []byte, secs uint64) {
	_ = d[10]
	binary.LittleEndian.PutUint64(d, p.text) // its eighth byte is overwritten
	binary.LittleEndian.PutUint32(d[7:], digits3[secs%1000]|'.'<<24)
}

// tsvTimePrefixed is tsvTime, with the first seven digits of a time's
// seconds copied from p when they are p's (and kept in p when they are
// not): the seconds then cost a copy and the last three digits, not the
// divisions of all ten.
func tsvTimePrefixed(b []byte, ns int64, p *secondsPrefix) []byte {
	us := (uint64(ns) + 500) / 1000
	secs := us / 1e6
	if ns <= 0 || secs < 1e9 || secs >= 1e10 {
		return tsvTime(b, ns) // 0 is unset; negative and other sizes are rare
	}
	if secs/1000 != p.hi {
		p.set(secs)
	}
	// The 18 bytes are stored in room made once, at constant offsets.
	l := len(b)
	b = room(b, 18)
	d := b[l : l+18]
	p.put(d, secs)
	putMicrosTab(d[11:18], us%1e6)
	return b[:l+18]
}

// tsvInterval is an interval, in seconds with 6 decimals. Those below
// half a microsecond short of a second (the durations of most
// connections, DNS round trips: subsecond), "0." and 6 decimals, are
// stored in room made once, at constant offsets (putSubsecond).
func tsvInterval(b []byte, ns int64) []byte {
	if !subsecond(ns) {
		return append(appendTSVSeconds(b, ns), separator)
	}
	l := len(b)
	b = room(b, 9)
	putSubsecond((*[9]byte)(b[l:l+9]), ns)
	return b[:l+9]
}

// subsecond reports whether the interval ns, rounded to the microsecond,
// is below a second and not negative: whether putSubsecond can store it.
func subsecond(ns int64) bool { return uint64(ns) < 1e9-500 }

// putSubsecond stores the subsecond interval ns, as tsvInterval renders
// it, in d.
func putSubsecond(d *[9]byte, ns int64) {
	d[0], d[1] = '0', '.'
	putMicrosTab(d[2:9], (uint64(ns)+500)/1000)
}

// tsvAddr is an address; the zero Addr is unset.
func tsvAddr(b []byte, a netip.Addr) []byte {
	if !a.IsValid() {
		return tsvUnset(b)
	}
	if a.Is4() {
		b = ipv4text.AppendDotted(b, a.As4())
		b[len(b)-1] = separator // in place of the last octet's dot
		return b
	}
	return append(a.AppendTo(b), separator)
}

// tsvStr is a string; "" is "(empty)".
func tsvStr(b []byte, s string) []byte {
	if plainShort(s) {
		return append(append(b, s...), separator)
	}
	return append(appendTSVString(b, s, false), separator)
}

// plainShort reports whether s is of 2 to 6 bytes that a TSV string
// copies as they are, such as the services, states and histories of
// conn.log: then it is no reserved value either ("-" and "(empty)" are 1
// and 7 bytes long), and appendTSVString's general way is not needed.
func plainShort[S ~string | ~[]byte](s S) bool {
	if len(s) < 2 || len(s) > 6 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if tsvClass[s[i]]&escAlways != 0 {
			return false
		}
	}
	return true
}

// tsvStrOrUnset is s, or unset when it is "".
func tsvStrOrUnset(b []byte, s string) []byte {
	if s == "" {
		return tsvUnset(b)
	}
	return tsvStr(b, s)
}

// tsvUID is a connection's uid, or unset when it is "". Zeek's uids are
// base62 digits after a letter, at least 8 bytes long in practice: such a
// uid is checked a word at a time and copied, instead of scanned byte by
// byte; anything else is rendered as tsvStrOrUnset does. The uids of
// parsers.UIDFromKey, of 17 or 18 bytes, are three words, whose flag bits
// are tested at once here, and which are then stored as they are, with
// the separator, without a call to copy them.
func tsvUID(b []byte, uid string) []byte {
	n := len(uid)
	if n > 16 && n <= 24 {
		// Sliced to their length, as appendLead slices them.
		w0, w1, w2 := stringWord(uid[:8]), stringWord(uid[8:16]), stringWord(uid[n-8:n])
		if (unplainBytes(w0, '\\')|unplainBytes(w1, '\\')|unplainBytes(w2, '\\'))&topBits != 0 {
			return tsvStrOrUnset(b, uid)
		}
		l := len(b)
		b = room(b, 32)
		d := (*[32]byte)(b[l : l+32])
		binary.LittleEndian.PutUint64(d[:], w0)
		binary.LittleEndian.PutUint64(d[8:], w1)
		binary.LittleEndian.PutUint64(d[n-8:], w2)
		d[n] = separator
		return b[:l+n+1]
	}
	if n >= 8 && plainString(uid) { // 8 bytes and more: never "-" or "(empty)"
		return append(append(b, uid...), separator)
	}
	return tsvStrOrUnset(b, uid)
}

// plainString reports whether s, of 8 bytes or more, is all printable
// ASCII other than the backslash: bytes a TSV string copies as they are.
func plainString(s string) bool {
	for i := 0; i+8 < len(s); i += 8 {
		if !plainWord(stringWord(s[i:]), '\\') {
			return false
		}
	}
	return plainWord(stringWord(s[len(s)-8:]), '\\') // overlaps the word before
}

// plainBytes is plainString for s of 8 bytes or more in a byte slice.
// It tests every word before it says, as the values it checks are
// nearly always plain.
func plainBytes(s []byte) bool {
	bad := unplainBytes(binary.LittleEndian.Uint64(s[len(s)-8:]), '\\') // may overlap the word before
	for ; len(s) > 8; s = s[8:] {
		bad |= unplainBytes(binary.LittleEndian.Uint64(s), '\\')
	}
	return bad&topBits == 0
}

// stringWord returns the first 8 bytes of s as a little-endian word (one
// load: the compiler combines the bytes).
func stringWord(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// tsvBytes is a string; nil is unset, empty is "(empty)". It is small
// enough to be inlined, so that the fields an HTTP transaction mostly
// lacks (origin, info_msg, username, password) cost no call.
func tsvBytes(b []byte, s []byte) []byte {
	if s == nil {
		return tsvUnset(b)
	}
	return tsvBytesValue(b, s)
}

// tsvBytesValue is tsvBytes for a string that is set. Hosts, URIs and user
// agents are mostly longer than a word and plain: they are checked eight
// bytes at a time (plainBytes; 8 bytes and more are never "-" or
// "(empty)") and copied.
func tsvBytesValue(b []byte, s []byte) []byte {
	if plainShort(s) || len(s) >= 8 && plainBytes(s) {
		return append(append(b, s...), separator)
	}
	return append(appendTSVString(b, s, false), separator)
}

// tsvSet is a set or vector of strings; an empty one is unset.
func tsvSet[S ~string | ~[]byte](b []byte, set []S) []byte {
	if len(set) == 0 {
		return tsvUnset(b)
	}
	for i, s := range set {
		if i > 0 {
			b = append(b, setSeparator)
		}
		b = appendTSVString(b, s, true)
	}
	return append(b, separator)
}

// appendTSVSeconds renders ns as seconds with 6 decimals, as
// Writer.appendSeconds does in TSV.
func appendTSVSeconds(b []byte, ns int64) []byte {
	u := uint64(ns)
	if ns < 0 {
		u = uint64(-ns)
	}
	us := (u + 500) / 1000
	if ns < 0 && us != 0 {
		b = append(b, '-')
	}
	// Most values are durations below a second or times of 10 digits:
	// those skip appendUint's tests of the number's size.
	switch secs := us / 1e6; {
	case secs == 0:
		b = append(b, '0')
	case secs >= 1e9 && secs < 1e10:
		b = append10(b, secs)
	default:
		b = appendUint(b, secs)
	}
	return appendMicros(b, us%1e6)
}

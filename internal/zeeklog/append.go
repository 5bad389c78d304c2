package zeeklog

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/wirebench/wirebench/internal/ipv4text"
)

// The renderers of values. Every log field goes through them, so they scan
// a value once with a 256-entry table and copy it whole when no byte needs
// escaping (the common case), and render numbers, times and IPv4 addresses
// with two-digit tables instead of strconv and netip.

// Classes of bytes in string values: byte c needs escaping in a TSV
// string when tsvClass[c]&mask != 0, mask being escAlways, or escAlways|
// escInVec inside a set or vector. escUTF8 marks the bytes that start or
// continue a multi-byte UTF-8 sequence, which are kept when the sequence
// is valid. textClass is the same for already rendered text (Writer.Text),
// which escapes neither the backslash nor non-ASCII bytes, and jsonClass
// for JSON strings.
const (
	escAlways uint8 = 1 << iota
	escInVec
	escUTF8
)

var (
	tsvClass  = byteClasses(true, true)
	textClass = byteClasses(false, false)
	jsonClass = func() (t [256]uint8) {
		t = byteClasses(false, true)
		t['\\'], t['"'] = escAlways, escAlways
		t[setSeparator] = 0
		return t
	}()
)

func byteClasses(backslash, utf8 bool) (t [256]uint8) {
	for c := range 256 {
		switch {
		case c < 0x20 || c == 0x7f:
			t[c] = escAlways
		case c >= 0x80 && utf8:
			t[c] = escAlways | escUTF8
		case c == '\\' && backslash:
			t[c] = escAlways
		case c == setSeparator:
			t[c] = escInVec
		}
	}
	return t
}

// plainPrefix returns how many bytes at the start of s need no escaping.
func plainPrefix[S ~string | ~[]byte](s S, class *[256]uint8, mask uint8) int {
	i := 0
	for i < len(s) && class[s[i]]&mask == 0 {
		i++
	}
	return i
}

// reserved reports whether s is one of the values that mean unset or
// empty in TSV, "-" and "(empty)", which are written with their first
// byte escaped.
func reserved[S ~string | ~[]byte](s S) bool {
	return (len(s) == 1 && s[0] == '-') || (len(s) == 7 && string(s) == emptyField)
}

// appendTSVString escapes as Zeek's ASCII writer does with UTF-8 output
// enabled: printable ASCII and valid UTF-8 sequences as they are; control
// bytes, DEL, invalid UTF-8 bytes, the backslash, the separator and (inside
// a set or vector) the set separator as \xNN. An empty string is
// "(empty)", and a value equal to "-" or "(empty)" gets its first byte
// escaped so that it cannot be mistaken for unset or empty.
func appendTSVString[S ~string | ~[]byte](b []byte, s S, inVec bool) []byte {
	if len(s) == 0 {
		return append(b, emptyField...)
	}
	mask := escAlways
	if inVec {
		mask |= escInVec
	}
	i := plainPrefix(s, &tsvClass, mask)
	if i == len(s) && !reserved(s) {
		return append(b, s...)
	}
	if reserved(s) {
		b = appendHexEscape(b, s[0])
		s = s[1:]
		i = 0
	}
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case tsvClass[c]&mask == 0:
			b = append(b, c)
			i++
		case tsvClass[c]&escUTF8 != 0:
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r == utf8.RuneError && size <= 1 {
				b = appendHexEscape(b, c)
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
		default:
			b = appendHexEscape(b, c)
			i++
		}
	}
	return b
}

// appendTSVText appends text already rendered the Zeek way (see
// Writer.Text): only control bytes, DEL, the set separator inside a set or
// vector, and the first byte of a reserved value are escaped.
func appendTSVText(b []byte, s []byte, inVec bool) []byte {
	if len(s) == 0 {
		return append(b, emptyField...)
	}
	mask := escAlways
	if inVec {
		mask |= escInVec
	}
	i := plainWords(s, setSeparator)
	for i < len(s) && textClass[s[i]]&mask == 0 {
		i++
	}
	if i == len(s) && !reserved(s) {
		return append(b, s...)
	}
	if reserved(s) {
		b = appendHexEscape(b, s[0])
		s = s[1:]
		i = 0
	}
	b = append(b, s[:i]...)
	for _, c := range s[i:] {
		if textClass[c]&mask != 0 {
			b = appendHexEscape(b, c)
		} else {
			b = append(b, c)
		}
	}
	return b
}

// plainWords returns how many bytes at the start of s are plain by whole
// words: eight bytes at a time, the last word overlapping the one before,
// while a word holds only printable ASCII other than c (see plainWord);
// strings shorter than a word are left to the caller's table. Rendered
// text (query names, answers) is mostly longer than a word, and plain.
func plainWords(s []byte, c byte) int {
	if len(s) < 8 {
		return 0
	}
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if !plainWord(binary.LittleEndian.Uint64(s[i:]), c) {
			return i
		}
	}
	if i < len(s) && !plainWord(binary.LittleEndian.Uint64(s[len(s)-8:]), c) {
		return i
	}
	return len(s)
}

// plainWord reports whether the 8 bytes of w are all printable ASCII (0x20
// to 0x7e) other than c. Each term sets the top bit of a byte that is not:
// w itself for 0x80 and up, w+1 for DEL, w-0x20 for the control bytes, and
// (w^c)-1 for c. A carry or borrow crosses into the next byte only from a
// byte flagged already, so a word is rejected only if it holds such a byte.
func plainWord(w uint64, c byte) bool { return unplainBytes(w, c)&topBits == 0 }

// unplainBytes returns a word whose top bits (topBits) are those plainWord
// tests, none set when w is plain; its other bits mean nothing. Those of
// several words can be ORed, and masked and tested at once.
func unplainBytes(w uint64, c byte) uint64 {
	const lo = 0x0101010101010101
	wc := w ^ lo*uint64(c)
	return w | (w + lo) | (w - 0x20*lo) | (wc - lo)
}

// topBits is the top bit of each byte of a word.
const topBits = 0x8080808080808080

func appendHexEscape(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendJSONString appends s as a JSON string the way Zeek's JSON writer
// does: quotes, backslashes and control characters escaped JSON-style,
// valid UTF-8 as is, invalid bytes as the text \xNN.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	i := plainPrefix(s, &jsonClass, escAlways)
	b = append(b, s[:i]...)
	for i < len(s) {
		c := s[i]
		switch {
		case jsonClass[c] == 0:
			b = append(b, c)
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default: // c >= 0x80
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r == utf8.RuneError && size <= 1 {
				b = append(b, '\\', '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}

// digits2 holds "00" to "99".
const digits2 = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// smallDecimals holds, for v below 1000, the decimal digits of v followed
// by a tab (the TSV separator) in the low four bytes, and the number of
// digits above: most numbers of a log (byte and packet counts, codes,
// TTLs) are below 1000, and are then one load and one four-byte store.
var smallDecimals = func() (t [1000]uint64) {
	for v := range t {
		d := append(strconv.AppendUint(nil, uint64(v), 10), separator)
		var e uint64
		for i, c := range d {
			e |= uint64(c) << (8 * i)
		}
		t[v] = e | uint64(len(d)-1)<<32
	}
	return t
}()

// appendUint appends v in decimal, as strconv.AppendUint(b, v, 10) does:
// numbers below 1000 from smallDecimals, larger ones by appendLargeUint.
func appendUint(b []byte, v uint64) []byte {
	if v < uint64(len(smallDecimals)) {
		return appendSmallUint(b, v)
	}
	return appendLargeUint(b, v)
}

// appendSmallUint is appendUint of v below 1000, small enough to be
// inlined where such numbers are the rule (the TTLs of dns.log).
func appendSmallUint(b []byte, v uint64) []byte {
	e := smallDecimals[v]
	l := len(b)
	// The tab after the digits stays in the spare capacity.
	return append(b, byte(e), byte(e>>8), byte(e>>16), byte(e>>24))[:l+int(e>>32)]
}

// appendUintTab is appendUint followed by a tab, which smallDecimals and
// put5 write with the digits: the numbers of a TSV record need no append
// of their own for the separator. Numbers from 1000 to 99,999 (ports,
// transaction ids) are stored in room made once.
func appendUintTab(b []byte, v uint64) []byte {
	if b, ok := tsvSmallUint(b, v); ok {
		return b
	}
	if v >= 100000 {
		return append(appendLargeUint(b, v), separator)
	}
	l := len(b)
	b = room(b, 8)
	n := put5(b[l:l+8], v)
	return b[:l+n+1]
}

// put5 stores v, from 1000 to 99,999, in decimal followed by a tab in
// d[:8], and returns the number of digits: the digits of v/100 (10 to
// 999) from smallDecimals, then the last two and the tab in the room
// after them.
func put5(d []byte, v uint64) int {
	q, r := v/100, v%100
	e := smallDecimals[q]
	n := int(e>>32) & 3
	binary.LittleEndian.PutUint32(d, uint32(e))
	d[n], d[n+1], d[n+2] = digits2[2*r], digits2[2*r+1], separator
	return n + 2
}

// appendLargeUint is appendUint of v of 1000 and more.
func appendLargeUint(b []byte, v uint64) []byte {
	switch {
	case v < 100000:
		l := len(b)
		b = room(b, 8)
		n := put5(b[l:l+8], v)
		return b[:l+n]
	case v < 1e9:
		return append5(appendUint(b, v/100000), v%100000)
	case v < 1e10: // times in seconds, from 2001 to 2286: every log's ts
		return append10(b, v)
	}
	n := decimalLen(v)
	l := len(b)
	b = room(b, n)[:l+n]
	d := b[l:]
	i := n
	for v >= 100 {
		q := v / 100
		r := v - q*100
		i -= 2
		d[i], d[i+1] = digits2[2*r], digits2[2*r+1]
		v = q
	}
	if v >= 10 {
		d[0], d[1] = digits2[2*v], digits2[2*v+1]
	} else {
		d[0] = byte('0' + v)
	}
	return b
}

// append5 appends v (below 100,000) as exactly five digits.
func append5(b []byte, v uint64) []byte {
	q, r := v/10000, v%10000
	m, r := r/100, r%100
	return append(b, byte('0'+q), digits2[2*m], digits2[2*m+1], digits2[2*r], digits2[2*r+1])
}

// append10 appends v, of ten digits, with one division into halves of
// five.
func append10(b []byte, v uint64) []byte {
	hi, lo := v/100000, v%100000
	h1, h2 := hi/10000, hi%10000
	l1, l2 := lo/10000, lo%10000
	hm, hl := h2/100, h2%100
	lm, ll := l2/100, l2%100
	return append(b, byte('0'+h1), digits2[2*hm], digits2[2*hm+1], digits2[2*hl], digits2[2*hl+1],
		byte('0'+l1), digits2[2*lm], digits2[2*lm+1], digits2[2*ll], digits2[2*ll+1])
}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// decimalLen returns the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := bits.Len64(v) * 1233 >> 12 // about log10(2) * bits
	if n < len(pow10) && v >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// appendInt appends v in decimal.
func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), uint64(-v))
	}
	return appendUint(b, uint64(v))
}

// appendMicros appends the 6 decimals of a microsecond fraction (0 to
// 999999), with a leading dot.
func appendMicros(b []byte, frac uint64) []byte {
	hi, lo := frac/10000, frac%10000
	mid, lo := lo/100, lo%100
	return append(b, '.',
		digits2[2*hi], digits2[2*hi+1],
		digits2[2*mid], digits2[2*mid+1],
		digits2[2*lo], digits2[2*lo+1])
}

// putMicrosTab stores the 6 decimals of a microsecond fraction (0 to
// 999999) and a tab in d[:7], as two runs of three digits from digits3,
// for the writers that make their room first (it is inlined, as
// appendMicros is).
func putMicrosTab(d []byte, frac uint64) {
	hi, lo := frac/1000, frac%1000
	_ = d[6]
	binary.LittleEndian.PutUint32(d, digits3[hi])
	binary.LittleEndian.PutUint32(d[3:], digits3[lo]|separator<<24)
}

// digits3 holds "000" to "999", each in the low three bytes of a word.
var digits3 = func() (t [1000]uint32) {
	for v := range t {
		t[v] = uint32('0'+v/100) | uint32('0'+v/10%10)<<8 | uint32('0'+v%10)<<16
	}
	return t
}()

// appendAddr appends a in netip's notation; IPv4 addresses from a table
// of the decimal forms of 0 to 255 instead of netip's per-byte
// formatting.
func appendAddr(b []byte, a netip.Addr) []byte {
	if !a.Is4() {
		return a.AppendTo(b)
	}
	b = ipv4text.AppendDotted(b, a.As4())
	return b[:len(b)-1] // the last octet's dot
}

// room returns b with room for n more bytes, as slices.Grow does, with
// the test of the room b has in line as one comparison: the writers
// make room once per record or column.
func room(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		return slices.Grow(b, n)
	}
	return b
}

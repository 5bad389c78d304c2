package http

// Byte classes and small scanners that reproduce the character sets and
// number parsing of Zeek's HTTP and MIME analyzers, so that the fields this
// parser reports split where Zeek's do.

import (
	"encoding/binary"
	"math"
)

const (
	clsToken     = 1 << iota // HTTP token character (request method)
	clsURI                   // reserved or unreserved URI character, or '%'
	clsMIMEToken             // MIME token character (RFC 2045, Zeek's MIME_is_token_char)
	clsFieldName             // MIME header field-name character
	clsHex                   // hexadecimal digit
	clsSpace                 // C isspace: space, \t, \n, \v, \f, \r
)

var class = func() (t [256]uint8) {
	for c := 33; c < 127; c++ {
		t[c] |= clsToken | clsMIMEToken | clsFieldName
	}
	for _, c := range []byte(`()<>@,;:\"/[]?={}`) {
		t[c] &^= clsToken
	}
	for _, c := range []byte(`()<>@,;:\"/[]?=`) {
		t[c] &^= clsMIMEToken
	}
	t[':'] &^= clsFieldName
	for c := '0'; c <= '9'; c++ {
		t[c] |= clsURI | clsHex
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= clsURI
		t[c-'a'+'A'] |= clsURI
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] |= clsHex
		t[c-'a'+'A'] |= clsHex
	}
	for _, c := range []byte(":/?#[]@!$&'()*+,;=-_.~%") {
		t[c] |= clsURI
	}
	for _, c := range []byte(" \t\n\v\f\r") {
		t[c] |= clsSpace
	}
	return t
}()

// isLWS reports linear white space as MIME defines it (space or tab).
func isLWS(c byte) bool { return c == ' ' || c == '\t' }

// skipWhitespace skips spaces and tabs (Zeek's util::skip_whitespace).
func skipWhitespace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// hexValue maps hexadecimal digits to their value and other bytes to 0xff.
var hexValue = func() (t [256]byte) {
	for c := range t {
		t[c] = 0xff
		if class[c]&clsHex != 0 {
			t[c] = unhex(byte(c))
		}
	}
	return t
}()

// unhex returns the value of a hexadecimal digit.
func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// atoiN parses an optionally negative number the way Zeek's util::atoi_n
// does: digits of the base are read until the first other byte, a leading
// non-digit fails, a lone "-" is zero. Unlike atoi_n, whose overflow wraps
// (a Content-Length of 2^64+5 reads as 5, and the bytes after the fifth
// pass for the next message: request smuggling), a number too large for
// an int64 saturates at ±math.MaxInt64: a length longer than any stream.
func atoiN(b []byte, base int64) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	var n int64
	for i, c := range b {
		var d int64
		switch {
		case c >= '0' && c <= '9':
			d = int64(c - '0')
		case c >= 'a' && int64(c) < 'a'-10+base:
			d = int64(c-'a') + 10
		case c >= 'A' && int64(c) < 'A'-10+base:
			d = int64(c-'A') + 10
		case i > 0:
			if neg {
				return -n, true
			}
			return n, true
		default:
			return 0, false
		}
		n = accumulate(n, base, d)
	}
	if neg {
		return -n, true
	}
	return n, true
}

// accumulate returns n*base + d for a non-negative n and a digit d of a
// base up to 16, or math.MaxInt64 when that does not fit in an int64.
func accumulate(n, base, d int64) int64 {
	// Below 2^59, n*16 + 15 fits: one comparison on the usual path.
	if n < 1<<59 || n <= (math.MaxInt64-d)/base {
		return n*base + d
	}
	return math.MaxInt64
}

// skipComment skips a MIME comment "(...)" starting at b[i], honouring
// nesting and backslash escapes (Zeek's MIME_skip_comments).
func skipComment(b []byte, i int) int {
	if i >= len(b) || b[i] != '(' {
		return i
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		case '\\':
			i++
		}
	}
	return len(b)
}

// skipLWSComments skips white space and comments (MIME_skip_lws_comments).
func skipLWSComments(b []byte, i int) int {
	for i < len(b) {
		switch {
		case isLWS(b[i]):
			i++
		case b[i] == '(':
			i = skipComment(b, i)
		default:
			return i
		}
	}
	return len(b)
}

// mimeToken finds the first MIME token of b (MIME_get_token): it returns
// the token and the offset just after it, or ok == false when b holds no
// token.
func mimeToken(b []byte) (tok []byte, end int, ok bool) {
	if len(b) > 0 && class[b[0]]&clsMIMEToken != 0 {
		// The usual case: the value starts with its token.
		j := 1
		for j < len(b) && class[b[j]]&clsMIMEToken != 0 {
			j++
		}
		return b[:j], j, true
	}
	i := skipLWSComments(b, 0)
	for i < len(b) {
		if class[b[i]]&clsMIMEToken != 0 {
			j := i + 1
			for j < len(b) && class[b[j]]&clsMIMEToken != 0 {
				j++
			}
			return b[i:j], j, true
		}
		if j := skipLWSComments(b, i); j > i {
			i = j
		} else {
			i++
		}
	}
	return nil, 0, false
}

// boundaryToken is mimeToken for multipart boundaries: everything printable
// but '"' is accepted and no white space or comment is skipped.
func boundaryToken(b []byte) (tok []byte, end int, ok bool) {
	isChar := func(c byte) bool { return c >= 33 && c <= 126 && c != '"' }
	for i := 0; i < len(b); i++ {
		if isChar(b[i]) {
			j := i + 1
			for j < len(b) && isChar(b[j]) {
				j++
			}
			return b[i:j], j, true
		}
	}
	return nil, 0, false
}

// equalFold reports whether b equals lower, an ASCII string of lower-case
// letters, digits and '-', ignoring the case of b. b must hold printable
// ASCII only (header names and MIME tokens do): the comparison folds case by
// setting bit 0x20, which maps no other printable byte onto a letter or '-'.
// It compares eight or four bytes at a time, the last load overlapping the
// one before.
func equalFold(b []byte, lower string) bool {
	n := len(b)
	if n != len(lower) {
		return false
	}
	switch {
	case n >= 8:
		for i := 0; i < n-8; i += 8 {
			if binary.LittleEndian.Uint64(b[i:])|fold64 != str64(lower[i:]) {
				return false
			}
		}
		return binary.LittleEndian.Uint64(b[n-8:])|fold64 == str64(lower[n-8:])
	case n >= 4:
		return binary.LittleEndian.Uint32(b)|fold32 == str32(lower) &&
			binary.LittleEndian.Uint32(b[n-4:])|fold32 == str32(lower[n-4:])
	}
	for i := 0; i < n; i++ {
		if b[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}

// str64 and str32 load the first eight and four bytes of s, little endian.
func str64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func str32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// isPrefixFold reports whether the upper-case word starts with b, ignoring
// case. Zeek compares request methods with strncasecmp(method, "HEAD",
// len(method)), so a method "He" counts as HEAD and "CON" as CONNECT.
func isPrefixFold(b []byte, upper string) bool {
	if len(b) == 0 || len(b) > len(upper) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != upper[i] {
			return false
		}
	}
	return true
}

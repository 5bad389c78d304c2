package http

import (
	"bytes"
	"encoding/binary"
)

// AppendUnescapedURI appends uri with its %-escapes decoded the way Zeek's
// unescape_URI does, which is what http.log's uri field holds:
//
//   - "%XX" with two hex digits is the byte 0xXX;
//   - "%uXXXX" is two bytes (the first dropped when it is 00);
//   - "%%" drops the first '%' and decodes from the second;
//   - a '%' without valid digits, or at the end, is kept as is.
//
// The native parser logs its URIs with it; a parser of another
// implementation can, to log the field as Zeek does.
func AppendUnescapedURI(dst, uri []byte) []byte {
	if !mayHavePercent(uri) {
		return append(dst, uri...)
	}
	i := bytes.IndexByte(uri, '%')
	if i < 0 {
		return append(dst, uri...)
	}
	return appendUnescaped(dst, uri, i)
}

// mayHavePercent says b may hold a '%': for fewer than 16 bytes, the most
// common URIs, it reads b a word at a time itself, which costs less than
// calling IndexByte; for more it says true.
func mayHavePercent(b []byte) bool {
	const ones, highs, percents = 0x0101010101010101, 0x8080808080808080, 0x2525252525252525
	switch n := len(b); {
	case n >= 16:
		return true
	case n >= 8:
		// Two words, overlapping when n < 16, cover every byte.
		x := binary.LittleEndian.Uint64(b) ^ percents
		y := binary.LittleEndian.Uint64(b[n-8:]) ^ percents
		return ((x-ones)&^x|(y-ones)&^y)&highs != 0
	}
	for _, c := range b {
		if c == '%' {
			return true
		}
	}
	return false
}

// appendUnescaped is AppendUnescapedURI for a uri whose first '%' is at i.
func appendUnescaped(dst, uri []byte, i int) []byte {
	dst = append(dst, uri[:i]...)
	n := len(uri)
	for ; i < n; i++ {
		c := uri[i]
		if c != '%' {
			dst = append(dst, c)
			continue
		}
		i++
		switch {
		case i == n:
			return append(dst, '%')
		case i+1 == n:
			return append(dst, '%', uri[i])
		case uri[i] == '%':
			i-- // decode from the second '%'
		case class[uri[i]]&clsHex != 0 && class[uri[i+1]]&clsHex != 0:
			dst = append(dst, unhex(uri[i])<<4|unhex(uri[i+1]))
			i++
		case n-i >= 5 && uri[i] == 'u' && class[uri[i+1]]&clsHex != 0 && class[uri[i+2]]&clsHex != 0 &&
			class[uri[i+3]]&clsHex != 0 && class[uri[i+4]]&clsHex != 0:
			if uri[i+1] != '0' || uri[i+2] != '0' {
				dst = append(dst, unhex(uri[i+1])<<4|unhex(uri[i+2]))
			}
			dst = append(dst, unhex(uri[i+3])<<4|unhex(uri[i+4]))
			i += 4
		default:
			dst = append(dst, '%', uri[i])
		}
	}
	return dst
}

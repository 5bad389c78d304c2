package http

import "bytes"

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
	if len(uri) < 16 {
		// Short URIs, the most common, are searched in place: calling
		// IndexByte would cost more than the search.
		for i, c := range uri {
			if c == '%' {
				return appendUnescaped(dst, uri, i)
			}
		}
		return append(dst, uri...)
	}
	i := bytes.IndexByte(uri, '%')
	if i < 0 {
		return append(dst, uri...)
	}
	return appendUnescaped(dst, uri, i)
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

package http

import "bytes"

// scanLineGeneric reads a line at the start of b, up to its first LF, and
// returns what the head parser needs to know about it at once: lf, the
// offset of that LF (-1 when b holds none); cr, the offset of the first CR
// before it (-1 when there is none); and name, the offset of the first byte
// before it that ends a header name: a ':', or any byte but printable ASCII
// other than space (-1 when there is none). When there is no LF, cr and
// name cover all of b.
//
// The line ends at its LF exactly when cr is -1 or lf-1, and it starts
// with a header name followed by ':' exactly when name > 0 and b[name] is
// ':'. On amd64, scanLine does the same in assembly, 16 bytes at a time;
// elsewhere scanLine is this function.
func scanLineGeneric(b []byte) (lf, cr, name int) {
	lf = bytes.IndexByte(b, '\n')
	end := lf
	if lf < 0 {
		end = len(b)
	}
	cr = bytes.IndexByte(b[:end], '\r')
	name = -1
	for i, c := range b[:end] {
		if c == ':' || c < 0x21 || c > 0x7e {
			name = i
			break
		}
	}
	return lf, cr, name
}

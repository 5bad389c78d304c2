package http

import "bytes"

// scanLines is how many lines scanHead reports at most; maxScan bounds the
// bytes it reads, so that offsets fit in 31 bits.
const (
	scanLines = 32
	maxScan   = 1 << 30
)

// scanHeadGeneric finds the lines at the start of b as the head parser
// needs them, in one pass: for each line, up to scanLines of them, it
// writes out[i] = end | name<<32 | crlf<<63, where end is the offset of the
// line's end (its CR LF, or its LF), crlf says which of the two ends it, and
// name is the offset of the first byte of the line that ends a header name:
// a ':', or any byte but printable ASCII other than space (the line end at
// the latest). It returns the number of lines found, and stops after an
// empty line (the end of a head), before a line that b does not end, and
// before a line holding a lone CR (which ends a line to Zeek, so the
// general path must split it), a CR at the end of b included.
//
// On amd64, scanHead does the same in assembly, 16 bytes at a time;
// elsewhere scanHead is this function.
func scanHeadGeneric(b []byte, out *[scanLines]uint64) int {
	n, start := 0, 0
	for n < scanLines {
		rest := b[start:]
		lf := bytes.IndexByte(rest, '\n')
		if lf < 0 {
			return n
		}
		end, crlf := lf, uint64(0)
		if cr := bytes.IndexByte(rest[:lf], '\r'); cr >= 0 {
			if cr != lf-1 {
				return n
			}
			end, crlf = cr, 1
		}
		name := end
		for i, c := range rest[:end] {
			if c == ':' || c < 0x21 || c > 0x7e {
				name = i
				break
			}
		}
		out[n] = uint64(start+end) | uint64(start+name)<<32 | crlf<<63
		n++
		if end == 0 {
			return n
		}
		start += lf + 1
	}
	return n
}

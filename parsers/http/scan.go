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
// the latest). It returns the number of lines found. It stops after an
// empty line (the end of a head), and before a line that the general path
// must split or that it must see first:
//
//   - a line that b does not end;
//   - a line holding a lone CR (a line end to Zeek), a CR at the end of b
//     included;
//   - a line that starts with a space or a tab (a continuation line) or
//     with a NUL byte (which ends a header section);
//   - a line longer than maxLine;
//   - a line other than an empty one whose next line is not in b, or
//     starts with a space or a tab (and may continue it) or a NUL byte.
//
// On amd64, scanHead does the same in assembly, 32 or 16 bytes at a time;
// elsewhere scanHead is this function.
func scanHeadGeneric(b []byte, out *[scanLines]uint64, maxLine int) int {
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
		if start == 0 && firstOfGeneralPath(rest[0]) {
			return n
		}
		if end > 0 && (end > maxLine || lf+1 >= len(rest) || firstOfGeneralPath(rest[lf+1])) {
			return n
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

// firstOfGeneralPath says a line that starts with c is for the general path.
func firstOfGeneralPath(c byte) bool { return c == ' ' || c == '\t' || c == 0 }

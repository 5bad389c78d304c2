package dns

// maxPointers bounds the compression pointers followed in one name: a valid
// name of at most 255 bytes has at most 127 labels, so it never needs more
// (the same bound as miekg/dns).
const maxPointers = 126

// maxNameWire is the longest valid name in wire form, root byte included.
const maxNameWire = 255

// Name is a domain name inside a message, as the parser found it: a
// reference to its first label. The parser validated it (labels, pointers,
// length), so rendering it cannot fail. The zero Name renders empty.
type Name struct {
	msg []byte
	off int
}

// Offset returns where the name starts in the message.
func (n Name) Offset() int { return n.off }

// IsRoot reports whether the name is the root (or the zero Name).
func (n Name) IsRoot() bool { return n.off >= len(n.msg) || n.msg[n.off] == 0 }

// skipName validates the name at off and returns the offset just after it in
// the message (after its first compression pointer or its root label).
func (p *Parser) skipName(off int, s Section) (int, error) {
	return p.skipNameLimit(off, len(p.msg), s)
}

// skipNameLimit is skipName for a name whose own bytes must end before
// limit (the end of a record's data). Compression pointers must point
// strictly before themselves, and once a pointer is followed the name may
// not run into that pointer again: every jump lowers the ceiling, which
// rules out loops, and maxPointers bounds the work.
func (p *Parser) skipNameLimit(off, limit int, s Section) (int, error) {
	msg := p.msg
	if limit > len(msg) {
		limit = len(msg)
	}
	ceiling := limit
	end := -1
	wire := 0
	ptrs := 0
	for {
		if off >= ceiling {
			// Report where the name's bytes ran out: the pointer it ran
			// into, the end of the record data, or the end of the message.
			switch {
			case ptrs > 0:
				return 0, p.fail(ErrPointerLoop, ceiling, s, 0)
			case ceiling < len(msg):
				return 0, p.fail(ErrRDLength, ceiling, s, p.rdType)
			}
			return 0, p.fail(ErrTruncated, ceiling, s, 0)
		}
		c := int(msg[off])
		switch c & 0xc0 {
		case 0x00:
			if c == 0 {
				if end < 0 {
					end = off + 1
				}
				return end, nil
			}
			wire += c + 1
			if wire+1 > maxNameWire {
				return 0, p.fail(ErrNameTooLong, off, s, 0)
			}
			off += c + 1
		case 0xc0:
			if off+1 >= ceiling {
				return 0, p.fail(ErrTruncated, off, s, 0)
			}
			ptr := (c&0x3f)<<8 | int(msg[off+1])
			if ptr >= off {
				return 0, p.fail(ErrPointerForward, off, s, 0)
			}
			if ptrs++; ptrs > maxPointers {
				return 0, p.fail(ErrTooManyPointers, off, s, 0)
			}
			if end < 0 {
				end = off + 2
			}
			ceiling = off
			off = ptr
		default:
			return 0, p.fail(ErrBadLabelType, off, s, 0)
		}
	}
}

// walk calls fn for each label of the name in order. It is safe on any
// Name: it stops at anything a validated name cannot contain.
func (n Name) walk(dst []byte, fn func(dst, label []byte, first bool) []byte) []byte {
	msg, off := n.msg, n.off
	first := true
	for hops := 0; off < len(msg); {
		c := int(msg[off])
		switch {
		case c == 0:
			return dst
		case c&0xc0 == 0xc0:
			if off+1 >= len(msg) || hops >= maxPointers {
				return dst
			}
			off = (c&0x3f)<<8 | int(msg[off+1])
			hops++
		case c&0xc0 != 0 || off+1+c > len(msg):
			return dst
		default:
			dst = fn(dst, msg[off+1:off+1+c], first)
			first = false
			off += 1 + c
		}
	}
	return dst
}

// zeekMap maps each byte to what Zeek's rendering writes for it: printable
// ASCII is kept (folded to lower case when folding), and 0 marks the bytes
// Zeek's log writer escapes as \xHH: non-printable ones and the backslash.
var zeekFold, zeekKeep = func() (fold, keep [256]byte) {
	for i := 0x20; i <= 0x7e; i++ {
		if i == '\\' {
			continue
		}
		fold[i], keep[i] = byte(i), byte(i)
		if i >= 'A' && i <= 'Z' {
			fold[i] = byte(i) + 'a' - 'A'
		}
	}
	return fold, keep
}()

const hexDigits = "0123456789abcdef"

// appendZeekBytes appends b with Zeek's log escaping: non-printable bytes
// and the backslash become \xHH; fold turns A-Z into a-z. The common case,
// nothing to escape, is one table lookup per byte.
func appendZeekBytes(dst, b []byte, fold bool) []byte {
	m := &zeekKeep
	if fold {
		m = &zeekFold
	}
	start := len(dst)
	dst = append(dst, b...)
	out := dst[start:]
	for i, c := range b {
		v := m[c]
		if v == 0 {
			return appendZeekSlow(dst[:start+i], b[i:], m)
		}
		out[i] = v
	}
	return dst
}

func appendZeekSlow(dst, b []byte, m *[256]byte) []byte {
	for _, c := range b {
		if v := m[c]; v != 0 {
			dst = append(dst, v)
		} else {
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	return dst
}

// AppendZeek appends the name as Zeek's dns.log writes it: labels joined by
// dots, no trailing dot, the root as the empty string, ASCII letters folded
// to lower case, and non-printable bytes and the backslash as \xHH.
func (n Name) AppendZeek(dst []byte) []byte {
	msg, off := n.msg, n.off
	first := true
	for hops := 0; off < len(msg); {
		c := int(msg[off])
		switch {
		case c == 0:
			return dst
		case c&0xc0 == 0xc0:
			if off+1 >= len(msg) || hops >= maxPointers {
				return dst
			}
			off = (c&0x3f)<<8 | int(msg[off+1])
			hops++
		case c&0xc0 != 0 || off+1+c > len(msg):
			return dst
		default:
			if !first {
				dst = append(dst, '.')
			}
			first = false
			dst = appendZeekBytes(dst, msg[off+1:off+1+c], true)
			off += 1 + c
		}
	}
	return dst
}

// AppendText appends the name in presentation format as miekg/dns and
// dig print it: fully qualified (trailing dot, "." for the root), special
// characters escaped with a backslash and other non-printable bytes as \DDD.
func (n Name) AppendText(dst []byte) []byte {
	start := len(dst)
	dst = n.walk(dst, func(dst, label []byte, _ bool) []byte {
		for _, b := range label {
			switch {
			case isLabelSpecial(b):
				dst = append(dst, '\\', b)
			case b < ' ' || b > '~':
				dst = append(dst, '\\', '0'+b/100, '0'+b/10%10, '0'+b%10)
			default:
				dst = append(dst, b)
			}
		}
		return append(dst, '.')
	})
	if len(dst) == start {
		dst = append(dst, '.')
	}
	return dst
}

func isLabelSpecial(b byte) bool {
	switch b {
	case '.', ' ', '\'', '@', ';', '(', ')', '"', '\\':
		return true
	}
	return false
}

// String returns the name in presentation format (see AppendText).
func (n Name) String() string { return string(n.AppendText(nil)) }

// WireLen returns the length of the name in uncompressed wire form,
// root byte included.
func (n Name) WireLen() int {
	l := 1
	n.walk(nil, func(dst, label []byte, _ bool) []byte {
		l += len(label) + 1
		return dst
	})
	return l
}

package dns

import (
	"encoding/binary"
	"slices"
)

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

// nameCacheSize is how many checked names a Parser remembers per message
// (a power of two). A reply's compression pointers nearly all point to the
// question name or to a name of an earlier record, so a few suffice.
const nameCacheSize = 16

// checkedName is what checking a name found out, kept so that a compression
// pointer to the name needs no second walk through it.
type checkedName struct {
	key uint16 // where the name starts, plus one: 0 marks an empty slot
	// last is the last byte of the name's first run of labels: its root
	// byte, or the second byte of its first compression pointer.
	last uint16
	wire uint8 // the bytes of its labels in wire form, root byte excluded
	ptrs uint8 // the compression pointers it follows
}

// nameCache holds names checked in the current message, in a slot chosen
// by their offset: a name whose slot another one took is walked again, at
// no other cost.
type nameCache [nameCacheSize]checkedName

func nameSlot(off int) int { return (off ^ off>>4) & (nameCacheSize - 1) }

func (c *nameCache) find(off int) (checkedName, bool) {
	e := c[nameSlot(off)]
	return e, int(e.key) == off+1
}

// remember adds a checked name to the cache, unless the cache is off.
func (p *Parser) remember(start, last, wire, ptrs int) {
	if !p.uncached {
		p.names.add(start, last, wire, ptrs)
	}
}

// add remembers a checked name, unless compression pointers cannot reach
// it or it already follows as many pointers as a name may.
func (c *nameCache) add(start, last, wire, ptrs int) {
	if start > 0x3fff || ptrs >= maxPointers {
		return
	}
	c[nameSlot(start)] = checkedName{key: uint16(start + 1), last: uint16(last), wire: uint8(wire), ptrs: uint8(ptrs)}
}

// skipNameLimit validates the name at off, whose own bytes must end before
// limit (the end of the message or of a record's data; at most len(p.msg)),
// and returns the offset just after it (after its first compression
// pointer or its root label). Compression pointers must point strictly
// before themselves, and once a pointer is followed the name may not run
// into that pointer again: every jump lowers the ceiling, which rules out
// loops, and maxPointers bounds the work.
//
// A name that is a single pointer to a name checked before in the message
// (most owner names of answers) takes no walk at all: that name's first
// run of labels must end before the pointer, and the pointer count must
// stay within bounds; that is all the walk would find out.
func (p *Parser) skipNameLimit(off, limit int, s Section) (int, error) {
	if end, ok := p.pointerName(off, limit); ok {
		return end, nil
	}
	return p.walkName(off, limit, s)
}

// pointerName returns the offset after the name at off when the name is a
// single compression pointer to a name checked before, and that name's
// first run of labels ends before the pointer, and the pointer count stays
// within bounds: that is all a walk would find out. ok is false when the
// name needs a walk. limit is at most len(p.msg).
func (p *Parser) pointerName(off, limit int) (end int, ok bool) {
	if off+1 < limit && p.msg[off] >= 0xc0 {
		ptr := int(p.msg[off]&0x3f)<<8 | int(p.msg[off+1])
		// The cache holds no name with maxPointers pointers: one more is
		// always within bounds. A checked name always ends before a later
		// one starts when names are read in message order; the test of
		// last keeps the cache from depending on that.
		if e := &p.names[nameSlot(ptr)]; int(e.key) == ptr+1 && int(e.last) < off {
			return off + 2, true
		}
	}
	return 0, false
}

// walkName checks the name at start label by label (see skipNameLimit) and
// remembers it. At a pointer to a name checked before, it stops walking
// when that name's first run ends before the pointer and the combined
// length and pointer count stay within bounds: the rest of the walk could
// only repeat that name's.
func (p *Parser) walkName(start, limit int, s Section) (int, error) {
	msg := p.msg
	limit = min(limit, len(msg))
	off := start
	ceiling := limit
	end, last := -1, -1
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
					end, last = off+1, off
				}
				p.remember(start, last, wire, ptrs)
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
				end, last = off+2, off+1
			}
			if e, ok := p.names.find(ptr); ok && int(e.last) < off &&
				wire+int(e.wire)+1 <= maxNameWire && ptrs+int(e.ptrs) <= maxPointers {
				p.remember(start, last, wire+int(e.wire), ptrs+int(e.ptrs))
				return end, nil
			}
			ceiling = off
			off = ptr
		default:
			return 0, p.fail(ErrBadLabelType, off, s, 0)
		}
	}
}

// appendCheckedName checks the name at start as walkName does, with the
// same limit, remembers it, and appends its rendering as
// Name.appendZeekPlain would, in one walk, when the labels it walks are
// plain: each run of labels up to a pointer or the root is checked, then
// rendered in one loop (see appendDotted). It returns the rendering, where
// the name ends, and whether the rendering is plain: the walk stops at a pointer to a name checked
// before, whose labels are then only rendered, and need not be plain. ok
// is false, with dst as it was, for a name walkName would refuse and for
// walked labels that are not plain: the caller then checks and renders
// the name apart, which also finds the error.
func (p *Parser) appendCheckedName(dst []byte, start, limit int) (out []byte, end int, plain, ok bool) {
	msg := p.msg
	base := len(dst)
	// The labels walked render to fewer bytes than maxNameWire, which
	// bounds them in wire form.
	dst = slices.Grow(dst, maxNameWire)
	off, ceiling := start, min(limit, len(msg))
	end, last := -1, -1
	wire, ptrs := 0, 0
	for {
		// Check the run of labels up to the root or a pointer, then
		// render it.
		// The loop only finds the run's end, the first byte that is no
		// label's length: the root, a pointer, or a bad label type, which
		// fails after it. A label must end before the ceiling, where the
		// next byte is.
		run := off
		for off < ceiling {
			c := int(msg[off])
			if c == 0 || c > 63 {
				break
			}
			off += 1 + c
		}
		if wire += off - run; off >= ceiling || wire+1 > maxNameWire {
			return dst[:base], 0, false, false
		}
		c := int(msg[off])
		if c != 0 && c < 0xc0 {
			return dst[:base], 0, false, false
		}
		if off > run {
			if len(dst) > base {
				dst = append(dst, '.')
			}
			if dst, ok = appendDotted(dst, msg[run:off], &zeekFoldPlain); !ok {
				return dst[:base], 0, false, false
			}
		}
		if c == 0 {
			if end < 0 {
				end, last = off+1, off
			}
			p.remember(start, last, wire, ptrs)
			return dst, end, true, true
		}
		if off+1 >= ceiling {
			return dst[:base], 0, false, false
		}
		ptr := (c&0x3f)<<8 | int(msg[off+1])
		if ptrs++; ptr >= off || ptrs > maxPointers {
			return dst[:base], 0, false, false
		}
		if end < 0 {
			end, last = off+2, off+1
		}
		if e, ok := p.names.find(ptr); ok && int(e.last) < off &&
			wire+int(e.wire)+1 <= maxNameWire && ptrs+int(e.ptrs) <= maxPointers {
			p.remember(start, last, wire+int(e.wire), ptrs+int(e.ptrs))
			out, plain = p.appendRest(dst, base, ptr)
			return out, end, plain, true
		}
		ceiling, off = off, ptr
	}
}

// appendRest appends to dst, which holds the rendering of a name's first
// labels from base on, the rendering of the name checked before at off,
// which the name's compression pointer leads to, joined by a dot unless
// either is empty; and whether the latter is plain.
func (p *Parser) appendRest(dst []byte, base, off int) ([]byte, bool) {
	rest := Name{msg: p.msg, off: off}
	if len(dst) == base {
		return rest.appendZeekPlain(dst)
	}
	out, plain := rest.appendZeekPlain(append(dst, '.'))
	if len(out) == len(dst)+1 {
		out = out[:len(dst)] // the rest is the root: no dot
	}
	return out, plain
}

// appendDotted appends the rendering of labels, checked labels of a name
// in wire form (at least one, up to the name's root or a pointer), as
// appendZeekPlain would; ok is false, with dst as it was, when it is not
// plain. The rendering is the bytes after the first length byte, mapped
// by fold (zeekFoldPlain), with dots for the other length bytes. The bytes
// are mapped in one loop without a test, length bytes too, the dots then
// overwrite those, and a zero byte of the rendering, found a word at a
// time (zeroByte), says it is not plain. dst has room for it. The table
// is a parameter so that the loop keeps its address in a register: the
// address of a global is computed anew in each turn.
func appendDotted(dst, labels []byte, fold *[256]byte) ([]byte, bool) {
	base := len(dst)
	span := labels[1:]
	out := dst[base : base+len(span)]
	t := fold[:] // checked for nil here, not in the loop
	for i, b := range span {
		out[i] = t[b]
	}
	for i := int(labels[0]); i < len(span); i += 1 + int(span[i]) {
		out[i] = '.'
	}
	if zeroByte(out) {
		return dst[:base], false
	}
	return dst[:base+len(span)], true
}

// zeroByte reports whether b holds a zero byte, testing it eight bytes at
// a time: (w-lo)&^w sets the top bit of a zero byte of w (and perhaps of
// bytes above it, but of no byte of a word without one).
func zeroByte(b []byte) bool {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	if len(b) < 8 {
		for _, c := range b {
			if c == 0 {
				return true
			}
		}
		return false
	}
	w := binary.LittleEndian.Uint64(b[len(b)-8:]) // may overlap the word before
	z := (w - lo) &^ w
	for ; len(b) > 8; b = b[8:] {
		w = binary.LittleEndian.Uint64(b)
		z |= (w - lo) &^ w
	}
	return z&hi != 0
}

// plainNameRoot checks the labels of the name at start up to its root
// byte as walkName does, for a name without compression pointers, and
// returns where the root byte is and the length of the labels in wire
// form; ok is false for a pointer, a bad label, too long a name, and a
// name that runs past the end of the message. The loop only finds the
// root: the length bytes it passes are ORed, and tested with the length
// of the name (the distance to the root) once at the root. A bad length
// byte or too long a name fails there as it would have at once, since
// the lengths only add up.
func (p *Parser) plainNameRoot(start int) (root, wire int, ok bool) {
	msg := p.msg
	lengths := 0
	for off := start; off < len(msg); {
		c := int(msg[off])
		if c == 0 {
			if wire = off - start; lengths > 63 || wire+1 > maxNameWire {
				break
			}
			return off, wire, true
		}
		lengths |= c
		off += 1 + c
	}
	return 0, 0, false
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

// zeekFold and zeekKeep map each byte to what Zeek's rendering writes for
// it: printable ASCII is kept (folded to lower case by zeekFold), and 0
// marks the bytes Zeek's log writer escapes as \xHH: non-printable ones and
// the backslash. zeekFoldPlain is zeekFold with the comma marked too: the
// bytes it keeps need no escaping in a log's vector either.
var zeekFold, zeekKeep, zeekFoldPlain = func() (fold, keep, plain [256]byte) {
	for i := 0x20; i <= 0x7e; i++ {
		if i == '\\' {
			continue
		}
		fold[i], keep[i] = byte(i), byte(i)
		if i >= 'A' && i <= 'Z' {
			fold[i] = byte(i) + 'a' - 'A'
		}
	}
	plain = fold
	plain[','] = 0
	return fold, keep, plain
}()

const hexDigits = "0123456789abcdef"

// appendZeekBytes appends b with Zeek's log escaping: non-printable bytes
// and the backslash become \xHH; fold turns A-Z into a-z. The common case,
// nothing to escape, is one table lookup per byte, or, without folding, a
// test of eight bytes at a time (TXT strings are long) and a copy.
func appendZeekBytes(dst, b []byte, fold bool) []byte {
	if !fold {
		i := 0
		for ; i+8 <= len(b) && keptWord(binary.LittleEndian.Uint64(b[i:])); i += 8 {
		}
		for ; i < len(b); i++ {
			if zeekKeep[b[i]] == 0 {
				return appendZeekSlow(append(dst, b[:i]...), b[i:], &zeekKeep)
			}
		}
		return append(dst, b...)
	}
	m := &zeekFold
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

// keptWord reports whether zeekKeep keeps each byte of w as it is:
// printable ASCII but the backslash. Each test flags the high bit of some
// byte when a byte of the word is out, and of none otherwise: the borrows
// and carries of one byte spill only into bytes above one that is out.
func keptWord(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	low := w - ' '*ones // a byte below ' ' (one of 0x80 and up is flagged below)
	high := w + (0x80-0x7f)*ones | w
	bs := w ^ '\\'*ones
	return (low|high|(bs-ones)&^bs)&highs == 0
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
//
// The common case, nothing to escape and no comma (see appendZeekPlain),
// writes each byte in place after one check of dst's capacity per name: a
// name without escapes renders to at most maxNameWire bytes. Any other
// name is rendered again from its start, appending.
func (n Name) AppendZeek(dst []byte) []byte {
	dst, _ = n.appendZeekPlain(dst)
	return dst
}

// appendZeekPlain is AppendZeek, also reporting whether the rendering is
// plain (see Answer.Plain): whether it took the common case. A comma,
// which Zeek writes as it is, leaves the common case too, so that a plain
// name needs no escaping in a log's vector.
func (n Name) appendZeekPlain(dst []byte) ([]byte, bool) {
	start := len(dst)
	dst = slices.Grow(dst, maxNameWire)
	out := dst[:cap(dst)]
	w := start
	msg, off := n.msg, n.off
	for hops := 0; off < len(msg); {
		c := int(msg[off])
		switch {
		case c == 0:
			off = len(msg)
		case c&0xc0 == 0xc0:
			if off+1 >= len(msg) || hops >= maxPointers {
				off = len(msg)
				break
			}
			off = (c&0x3f)<<8 | int(msg[off+1])
			hops++
		case c&0xc0 != 0 || off+1+c > len(msg):
			off = len(msg)
		default:
			label := msg[off+1 : off+1+c]
			if w > start {
				if w >= len(out) {
					return n.appendZeekSlow(dst[:start]), false
				}
				out[w] = '.'
				w++
			}
			if w+len(label) > len(out) {
				return n.appendZeekSlow(dst[:start]), false
			}
			o := out[w : w+len(label)]
			for i, b := range label {
				v := zeekFoldPlain[b]
				if v == 0 {
					return n.appendZeekSlow(dst[:start]), false
				}
				o[i] = v
			}
			w += len(label)
			off += 1 + c
		}
	}
	return dst[:w], true
}

// appendZeekSlow is AppendZeek for names with bytes to escape.
func (n Name) appendZeekSlow(dst []byte) []byte {
	return n.walk(dst, func(dst, label []byte, first bool) []byte {
		if !first {
			dst = append(dst, '.')
		}
		return appendZeekBytes(dst, label, true)
	})
}

// AppendText appends the name in presentation format as miekg/dns and
// dig print it: fully qualified (trailing dot, "." for the root), special
// characters escaped with a backslash and other non-printable bytes as \DDD.
func (n Name) AppendText(dst []byte) []byte {
	start := len(dst)
	msg, off := n.msg, n.off
	for hops := 0; off < len(msg); {
		c := int(msg[off])
		switch {
		case c == 0:
			off = len(msg)
		case c&0xc0 == 0xc0:
			if off+1 >= len(msg) || hops >= maxPointers {
				off = len(msg)
				break
			}
			off = (c&0x3f)<<8 | int(msg[off+1])
			hops++
		case c&0xc0 != 0 || off+1+c > len(msg):
			off = len(msg)
		default:
			dst = appendTextLabel(dst, msg[off+1:off+1+c])
			dst = append(dst, '.')
			off += 1 + c
		}
	}
	if len(dst) == start {
		dst = append(dst, '.')
	}
	return dst
}

// textEscape marks the bytes a label in presentation format escapes: 1 with
// a backslash, 2 as \DDD.
var textEscape = func() (t [256]byte) {
	for i := range t {
		if i < ' ' || i > '~' {
			t[i] = 2
		}
	}
	for _, c := range ".'@;()\" \\" {
		t[c] = 1
	}
	return t
}()

// appendTextLabel appends a label in presentation format. The common case,
// nothing to escape, is a copy and one table lookup per byte.
func appendTextLabel(dst, label []byte) []byte {
	start := len(dst)
	dst = append(dst, label...)
	for i, c := range label {
		if textEscape[c] != 0 {
			return appendTextSlow(dst[:start+i], label[i:])
		}
	}
	return dst
}

func appendTextSlow(dst, label []byte) []byte {
	for _, b := range label {
		switch textEscape[b] {
		case 0:
			dst = append(dst, b)
		case 1:
			dst = append(dst, '\\', b)
		default:
			dst = append(dst, '\\', '0'+b/100, '0'+b/10%10, '0'+b%10)
		}
	}
	return dst
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

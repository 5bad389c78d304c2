package filemagic

import (
	"fmt"
	"math/bits"
	"strconv"
)

// The regular expressions of Zeek's signatures use flex's syntax (Zeek's
// src/re-scan.l and re-parse.y): literal bytes, escapes (\xHH, octal \NNN,
// \n and the other C escapes, \c for any other c), "quoted strings",
// bracket classes with ranges, negation and the POSIX classes
// ([:digit:] ...) of the C locale, ".", groups, "|", "*", "+", "?",
// {n}, {n,} and {n,m}, "^" and "$". In signatures "." matches every byte,
// the newline included (RuleMatcher compiles them multi-line), and a
// pattern matches a prefix of the data (Zeek anchors signature patterns at
// the start).

// node is a parsed pattern.
type node struct {
	op       nodeOp
	set      *byteSet // opSet
	subs     []*node  // opCat, opAlt; opRep: subs[0]
	min, max int      // opRep; max < 0: unbounded
}

type nodeOp uint8

const (
	opEmpty nodeOp = iota
	opSet          // one byte of set
	opCat
	opAlt
	opRep
	opBOL // "^": the start of the data
	opEOL // "$": the end of the data
)

// byteSet is a set of bytes.
type byteSet [4]uint64

func (s *byteSet) add(c byte)      { s[c>>6] |= 1 << (c & 63) }
func (s *byteSet) has(c byte) bool { return s[c>>6]&(1<<(c&63)) != 0 }
func (s *byteSet) negate()         { s[0], s[1], s[2], s[3] = ^s[0], ^s[1], ^s[2], ^s[3] }
func (s *byteSet) addRange(lo, hi byte) {
	for c := int(lo); c <= int(hi); c++ {
		s.add(byte(c))
	}
}

func (s *byteSet) union(t *byteSet) {
	s[0], s[1], s[2], s[3] = s[0]|t[0], s[1]|t[1], s[2]|t[2], s[3]|t[3]
}

// count returns how many bytes s holds.
func (s *byteSet) count() int {
	return bits.OnesCount64(s[0]) + bits.OnesCount64(s[1]) + bits.OnesCount64(s[2]) + bits.OnesCount64(s[3])
}

// all reports whether s holds every byte.
func (s *byteSet) all() bool { return s[0]&s[1]&s[2]&s[3] == ^uint64(0) }

// single returns the byte of a one-byte set.
func (s *byteSet) single() (byte, bool) {
	n, last := 0, 0
	for c := 0; c < 256; c++ {
		if s.has(byte(c)) {
			n++
			last = c
		}
	}
	return byte(last), n == 1
}

// posixClasses are the [:name:] expressions, in the C locale.
var posixClasses = map[string]func(c byte) bool{
	"alnum":  func(c byte) bool { return isAlpha(c) || isDigit(c) },
	"alpha":  isAlpha,
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"cntrl":  func(c byte) bool { return c < 0x20 || c == 0x7f },
	"digit":  isDigit,
	"graph":  func(c byte) bool { return c > 0x20 && c < 0x7f },
	"lower":  func(c byte) bool { return c >= 'a' && c <= 'z' },
	"print":  func(c byte) bool { return c >= 0x20 && c < 0x7f },
	"punct":  func(c byte) bool { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) },
	"space":  func(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' },
	"upper":  func(c byte) bool { return c >= 'A' && c <= 'Z' },
	"xdigit": func(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' },
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// parser reads one pattern.
type parser struct {
	s   string
	pos int
}

// parse parses a pattern (without its slashes).
func parse(s string) (n *node, err error) {
	p := &parser{s: s}
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			n, err = nil, fmt.Errorf("pattern /%s/: at offset %d: %s", s, pe.pos, pe.msg)
		}
	}()
	n = p.alt()
	if p.pos < len(s) {
		p.fail("unexpected %q", s[p.pos])
	}
	return n, nil
}

type parseError struct {
	pos int
	msg string
}

func (p *parser) fail(format string, args ...any) {
	panic(parseError{p.pos, fmt.Sprintf(format, args...)})
}

func (p *parser) more() bool { return p.pos < len(p.s) }
func (p *parser) peek() byte { return p.s[p.pos] }

func (p *parser) alt() *node {
	subs := []*node{p.cat()}
	for p.more() && p.peek() == '|' {
		p.pos++
		subs = append(subs, p.cat())
	}
	if len(subs) == 1 {
		return subs[0]
	}
	return &node{op: opAlt, subs: subs}
}

func (p *parser) cat() *node {
	var subs []*node
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		subs = append(subs, p.repeat())
	}
	switch len(subs) {
	case 0:
		return &node{op: opEmpty}
	case 1:
		return subs[0]
	}
	return &node{op: opCat, subs: subs}
}

func (p *parser) repeat() *node {
	n := p.single()
	for p.more() {
		switch p.peek() {
		case '*':
			n = &node{op: opRep, subs: []*node{n}, min: 0, max: -1}
		case '+':
			n = &node{op: opRep, subs: []*node{n}, min: 1, max: -1}
		case '?':
			n = &node{op: opRep, subs: []*node{n}, min: 0, max: 1}
		case '{':
			if p.pos+1 >= len(p.s) || !isDigit(p.s[p.pos+1]) {
				return n
			}
			n = p.counted(n)
			continue
		default:
			return n
		}
		p.pos++
	}
	return n
}

// counted reads {n}, {n,} or {n,m} after n.
func (p *parser) counted(n *node) *node {
	p.pos++ // {
	lo := p.number()
	hi := lo
	if p.more() && p.peek() == ',' {
		p.pos++
		hi = -1
		if p.more() && isDigit(p.peek()) {
			hi = p.number()
		}
	}
	if !p.more() || p.peek() != '}' {
		p.fail("unterminated repetition")
	}
	p.pos++
	if hi >= 0 && lo > hi {
		p.fail("bad iteration values")
	}
	return &node{op: opRep, subs: []*node{n}, min: lo, max: hi}
}

func (p *parser) number() int {
	start := p.pos
	for p.more() && isDigit(p.peek()) {
		p.pos++
	}
	v, err := strconv.Atoi(p.s[start:p.pos])
	if err != nil || v > 1<<16 {
		p.fail("bad number %q", p.s[start:p.pos])
	}
	return v
}

func (p *parser) single() *node {
	c := p.peek()
	switch c {
	case '(':
		p.pos++
		n := p.alt()
		if !p.more() || p.peek() != ')' {
			p.fail("missing )")
		}
		p.pos++
		return n
	case '[':
		return &node{op: opSet, set: p.class()}
	case '.':
		p.pos++
		var s byteSet
		s.negate()
		return &node{op: opSet, set: &s}
	case '^':
		p.pos++
		return &node{op: opBOL}
	case '$':
		p.pos++
		return &node{op: opEOL}
	case '"':
		p.pos++
		var subs []*node
		for p.more() && p.peek() != '"' {
			subs = append(subs, literal(p.char()))
		}
		if !p.more() {
			p.fail("unterminated string")
		}
		p.pos++
		return &node{op: opCat, subs: subs}
	case '*', '+', '?', ')':
		p.fail("unexpected %q", c)
	}
	return literal(p.char())
}

func literal(c byte) *node {
	var s byteSet
	s.add(c)
	return &node{op: opSet, set: &s}
}

// char reads one possibly escaped byte.
func (p *parser) char() byte {
	c := p.peek()
	p.pos++
	if c != '\\' {
		return c
	}
	if !p.more() {
		p.fail("trailing backslash")
	}
	c = p.peek()
	p.pos++
	switch {
	case c == 'x':
		v, n := 0, 0
		for n < 2 && p.more() && isHex(p.peek()) {
			v = v<<4 | hexVal(p.peek())
			p.pos++
			n++
		}
		if n == 0 {
			p.fail(`\x without hex digits`)
		}
		return byte(v)
	case c >= '0' && c <= '7':
		v := int(c - '0')
		for n := 1; n < 3 && p.more() && p.peek() >= '0' && p.peek() <= '7'; n++ {
			v = v<<3 | int(p.peek()-'0')
			p.pos++
		}
		return byte(v)
	}
	if e, ok := cEscapes[c]; ok {
		return e
	}
	return c
}

var cEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'f': '\f', 'v': '\v', 'a': '\a', 'b': '\b'}

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
func hexVal(c byte) int {
	if isDigit(c) {
		return int(c - '0')
	}
	return int(c|0x20-'a') + 10
}

// class reads a bracket expression.
func (p *parser) class() *byteSet {
	p.pos++ // [
	var s byteSet
	neg := false
	if p.more() && p.peek() == '^' {
		neg = true
		p.pos++
	}
	first := true
	for {
		if !p.more() {
			p.fail("unterminated character class")
		}
		c := p.peek()
		if c == ']' && !first {
			p.pos++
			break
		}
		first = false
		if c == '[' && p.pos+1 < len(p.s) && p.s[p.pos+1] == ':' {
			end := p.pos + 2
			for end < len(p.s) && p.s[end] != ':' {
				end++
			}
			if end+1 < len(p.s) && p.s[end+1] == ']' {
				name := p.s[p.pos+2 : end]
				f, ok := posixClasses[name]
				if !ok {
					p.fail("unknown class [:%s:]", name)
				}
				for b := 0; b < 128; b++ {
					if f(byte(b)) {
						s.add(byte(b))
					}
				}
				p.pos = end + 2
				continue
			}
		}
		lo := p.char()
		if p.pos+1 < len(p.s) && p.peek() == '-' && p.s[p.pos+1] != ']' {
			p.pos++
			hi := p.char()
			if lo > hi {
				p.fail("negative range in character class")
			}
			s.addRange(lo, hi)
			continue
		}
		s.add(lo)
	}
	if neg {
		s.negate()
	}
	return &s
}

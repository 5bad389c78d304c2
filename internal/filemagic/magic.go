package filemagic

import (
	"bytes"
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// BOFSize is how many bytes of a file Zeek matches its file-magic
// signatures against: default_file_bof_buffer_size (base/init-bare.zeek).
const BOFSize = 4096

// Signature is a file-magic signature: Zeek's "file-magic /Pattern/" with
// "file-mime MIME, Strength".
type Signature struct {
	Name     string
	MIME     string
	Strength int
	Pattern  string // Zeek's regular expression syntax, without the slashes
}

// Program is a compiled set of signatures. It is immutable and may be
// shared; each goroutine matches with its own [Matcher].
type Program struct {
	// sigs sorted best first: by strength, then MIME type, as Zeek's
	// file_sniff picks its mime_type (the lowest MIME type of the highest
	// strength: RuleMatcher's MIME_Matches is a map from strength, in
	// decreasing order, to a std::set of MIME types).
	sigs []Signature
	// all is the automaton of the signatures matched together; offsets
	// and searches are matched one by one (see New).
	all      prog
	allEntry int32
	offsets  []offsetSig
	searches []searchSig
	// scans groups the searches by the byte their literals are found by
	// (see searchScans).
	scans []searchScan
	// guards tells the offsets whose guard holds at a position.
	guards guardIndex
}

// offsetSig is a signature that starts with skip to skipMax arbitrary
// bytes, or one that stays alive on most inputs for offsetMin bytes or
// more before a byte of a narrow set must follow (tar's 100 printable
// bytes, then digits): it is matched only when the byte at guardAt is in
// guard, a condition of every match.
type offsetSig struct {
	rank          int32
	skip, skipMax int
	first         byteSet // the bytes the rest can start with
	guardAt       int
	guard         byteSet
	p             prog
	entry         int32
}

// searchSig is a signature that starts with ".*" followed by lit: it
// matches where the rest of it, which starts with lit, matches at an
// occurrence of lit. When ".*" follows lit too (absorbs), a match at a
// later occurrence is one at the first as well.
type searchSig struct {
	rank    int32
	lit     []byte
	absorbs bool
	p       prog
	entry   int32
}

// offsetMin is the shortest run of leading arbitrary bytes matched apart
// from the shared automaton: in it each would make a new state per byte
// up to its offset (some of Zeek's signatures skip 2080 bytes).
const offsetMin = 16

// New compiles signatures.
func New(sigs []Signature) (*Program, error) {
	p := &Program{sigs: slices.Clone(sigs)}
	sortSignatures(p.sigs)
	all := &compiler{p: &p.all, sets: map[byteSet]int32{}}
	var entries []int32
	for i, s := range p.sigs {
		n, err := parse(s.Pattern)
		if err != nil {
			return nil, fmt.Errorf("signature %s: %w", s.Name, err)
		}
		rank := int32(i)
		items := flatten(n)
		for len(items) > 0 && items[0].op == opBOL {
			items = items[1:]
		}
		if skip, skipMax, rest := leadingAny(items); skipMax >= offsetMin {
			o := offsetSig{rank: rank, skip: skip, skipMax: skipMax, first: firstBytes(rest), guardAt: skip}
			o.guard.negate()
			if skip == skipMax {
				o.guard = o.first
			}
			o.entry = compileRest(&o.p, rank, rest)
			p.offsets = append(p.offsets, o)
			continue
		}
		if at, guard, ok := lateGuard(items); ok {
			o := offsetSig{rank: rank, first: firstBytes(items), guardAt: at, guard: guard}
			o.entry = compileRest(&o.p, rank, items)
			p.offsets = append(p.offsets, o)
			continue
		}
		if lit, ok := searchLiteral(items); ok {
			rest := flatten(&node{op: opCat, subs: items[1:]})
			sr := searchSig{rank: rank, lit: lit}
			if len(rest) > len(lit) {
				next := rest[len(lit)]
				sr.absorbs = next.op == opRep && next.min == 0 && next.max < 0 && isAny(next.subs[0])
			}
			sr.entry = compileRest(&sr.p, rank, rest)
			p.searches = append(p.searches, sr)
			continue
		}
		all.rank = rank
		entries = append(entries, all.emit(n, all.inst(inst{op: iMatch})))
	}
	p.scans = searchScans(p.searches)
	p.guards = newGuardIndex(p.offsets)
	// One entry branching to every signature's.
	if len(entries) == 0 {
		entries = append(entries, all.inst(inst{op: iMatch, rank: noRank}))
		p.all.insts[entries[0]].rank = noRank
	}
	e := entries[len(entries)-1]
	all.rank = noRank
	for i := len(entries) - 2; i >= 0; i-- {
		e = all.inst(inst{op: iSplit, out: entries[i], alt: e})
	}
	p.allEntry = e
	return p, nil
}

// sortSignatures orders signatures best first (see Program.sigs).
func sortSignatures(sigs []Signature) { slices.SortStableFunc(sigs, compareSignatures) }

// compareSignatures orders a before b when it is the better (see
// Program.sigs).
func compareSignatures(a, b Signature) int {
	return cmp.Or(cmp.Compare(b.Strength, a.Strength), cmp.Compare(a.MIME, b.MIME))
}

func compileRest(p *prog, rank int32, items []*node) int32 {
	c := &compiler{p: p, rank: rank, sets: map[byteSet]int32{}}
	return c.emit(&node{op: opCat, subs: items}, c.inst(inst{op: iMatch}))
}

// flatten returns the items of a concatenation, nested ones spliced in.
func flatten(n *node) []*node {
	if n.op != opCat {
		return []*node{n}
	}
	var out []*node
	for _, s := range n.subs {
		out = append(out, flatten(s)...)
	}
	return out
}

// isAny reports whether n matches any one byte.
func isAny(n *node) bool { return n.op == opSet && n.set.all() }

// leadingAny counts the arbitrary bytes items start with (".", ".{n}",
// ".{n,m}"), at least skip and at most skipMax, and returns the items after
// them.
func leadingAny(items []*node) (skip, skipMax int, rest []*node) {
	for len(items) > 0 {
		switch n := items[0]; {
		case isAny(n):
			skip++
			skipMax++
		case n.op == opRep && n.max >= 0 && isAny(n.subs[0]):
			skip += n.min
			skipMax += n.max
		default:
			return skip, skipMax, items
		}
		items = items[1:]
	}
	return skip, skipMax, items
}

// narrowSet is the most bytes a set may hold and still end most inputs'
// matches: text keeps a signature of [[:print:]] alive, one of [0-9 ] not.
const narrowSet = 64

// lateGuard finds, for a signature whose fixed-width start keeps most
// inputs alive for offsetMin bytes or more (its first narrow set that far
// in), the position in that start of its narrowest set.
func lateGuard(items []*node) (at int, guard byteSet, ok bool) {
	var sets []byteSet
	for _, n := range items {
		s, fixed := fixedSets(n, BOFSize+1-len(sets))
		sets = append(sets, s...)
		if !fixed {
			break
		}
	}
	first := slices.IndexFunc(sets, func(s byteSet) bool { return s.count() <= narrowSet })
	if first < offsetMin {
		return 0, guard, false
	}
	at = first
	for i, s := range sets[first:] {
		if s.count() < sets[at].count() {
			at = first + i
		}
	}
	return at, sets[at], true
}

// fixedSets returns the sets of the bytes at each position of a match of
// n, up to limit positions, and whether n matches that many bytes only
// (when not, the sets are those of a prefix every match starts with).
func fixedSets(n *node, limit int) ([]byteSet, bool) {
	switch n.op {
	case opEmpty:
		return nil, true
	case opSet:
		if limit < 1 {
			return nil, false
		}
		return []byteSet{*n.set}, true
	case opCat:
		var sets []byteSet
		for _, sub := range n.subs {
			s, fixed := fixedSets(sub, limit-len(sets))
			sets = append(sets, s...)
			if !fixed {
				return sets, false
			}
		}
		return sets, true
	case opAlt:
		var union []byteSet
		for i, sub := range n.subs {
			s, fixed := fixedSets(sub, limit)
			if !fixed || i > 0 && len(s) != len(union) {
				return nil, false
			}
			if i == 0 {
				union = s
				continue
			}
			for j := range union {
				union[j].union(&s[j])
			}
		}
		return union, true
	case opRep:
		if n.min != n.max {
			return nil, false
		}
		var sets []byteSet
		for range n.min {
			s, fixed := fixedSets(n.subs[0], limit-len(sets))
			sets = append(sets, s...)
			if !fixed {
				return sets, false
			}
		}
		return sets, true
	}
	return nil, false // "^", "$"
}

// searchLiteral returns the literal bytes after a leading ".*".
func searchLiteral(items []*node) ([]byte, bool) {
	if len(items) < 2 || items[0].op != opRep || items[0].min != 0 || items[0].max >= 0 || !isAny(items[0].subs[0]) {
		return nil, false
	}
	var lit []byte
	for _, n := range flatten(&node{op: opCat, subs: items[1:]}) {
		if n.op != opSet {
			break
		}
		c, ok := n.set.single()
		if !ok {
			break
		}
		lit = append(lit, c)
	}
	return lit, len(lit) > 0
}

// firstBytes returns the bytes a match of items can start with (every
// byte when items can match the empty string or start with an assertion).
func firstBytes(items []*node) byteSet {
	var s byteSet
	if len(items) > 0 && items[0].op == opSet {
		return *items[0].set
	}
	s.negate()
	return s
}

// compiledProgram is a Program's automata, as zeek_prog.go holds them.
type compiledProgram struct {
	// order lists the signatures of the tables, zeek.go's then
	// zeek_libmagic.go's, best first: sorting them takes more than a
	// short trace's sniffing.
	order    []int16
	all      prog
	allEntry int32
	offsets  []offsetSig
	searches []searchSig
}

// zeekOnce makes Zeek's program from its automata compiled ahead of time
// (zeek_prog.go, generated from the tables by a test that also checks it
// is up to date): compiling them takes milliseconds and leaves megabytes
// of garbage, which every run of a short trace would pay.
var zeekOnce = sync.OnceValue(func() *Program {
	z := &zeekProgram
	tables := slices.Concat(zeekSignatures, libmagicSignatures)
	sigs := make([]Signature, len(z.order))
	for i, k := range z.order {
		sigs[i] = tables[k]
	}
	return &Program{sigs: sigs, all: z.all, allEntry: z.allEntry, offsets: z.offsets, searches: z.searches,
		scans: searchScans(z.searches), guards: newGuardIndex(z.offsets)}
})

// Zeek returns the program of the file-magic signatures Zeek loads by
// default (base/frameworks/files/magic; see zeek.go).
func Zeek() *Program { return zeekOnce() }

// Stats counts what a Matcher did.
type Stats struct {
	Sniffed int64 // calls of Sniff
	Matched int64 // of which found a MIME type
	// Resets counts the times a lazily built automaton reached its state
	// cap and started over (see MaxStates).
	Resets int64
}

// Caps on the states kept of the automata a Matcher builds as it goes: each
// state takes 512 bytes for its transitions plus its instruction list, so
// a Matcher holds at most about MaxStates/2 KiB for the shared automaton
// and, for each signature matched alone, MaxStatesEach/2 KiB plus half a
// KiB per instruction of its automaton (tar's, a chain of over 150 byte
// sets, takes a state for each).
const (
	MaxStates     = 2048
	MaxStatesEach = 128
)

// Matcher matches data against a Program, building the automata's states
// as inputs need them: once warm it matches without allocating. A Matcher
// is not safe for concurrent use.
type Matcher struct {
	p        *Program
	all      *machine
	offsets  []*machine
	searches []*machine
	cand     []uint64 // the offset signatures to try (see guardIndex)
	stats    Stats
	// fused says the scans of the searches take one pass together (see
	// scanFused). keyScan tells the scan of each key, follows the bytes
	// that may follow it (sc.after), and every the searches of each scan
	// and worst their worst rank; hits is scratch.
	fused   bool
	keyScan [256]uint8
	follows [fusedTables][256]bool
	every   [fusedTables]uint64
	worst   [fusedTables]int32
	hits    [keyHitsMax]uint16
	// padBlock is keyBlock bytes that are no key of a scan fused: data
	// shorter than keyBlock, copied over it, is as long as keyHits reads.
	padBlock [keyBlock]byte
}

// maxFused is the most scans scanFused does in one pass; keyHitsMax the
// most hits keyHits reports at a time, and keyBlock the fewest bytes it
// reads.
const (
	maxFused = 3
	// fusedTables is the length of the tables of the scans fused, a power
	// of two above maxFused so that indexes masked into it need no check.
	fusedTables = 4
	keyHitsMax  = 128
	keyBlock    = 32
)

// NewMatcher returns a Matcher of p.
func NewMatcher(p *Program) *Matcher {
	m := &Matcher{p: p, cand: make([]uint64, p.guards.words)}
	m.fused = haveKeyHits && len(p.scans) <= maxFused
	var keys byteSet
	for i, sc := range p.scans {
		if keys.has(sc.key) {
			m.fused = false // scans of the same key, found at other offsets
		}
		keys.add(sc.key)
		if i >= maxFused {
			break
		}
		m.keyScan[sc.key] = uint8(i)
		for c := range 256 {
			m.follows[i][c] = sc.after.has(byte(c))
		}
		m.every[i] = 1<<len(sc.ids) - 1
		m.worst[i] = slices.Max(sc.ranks)
	}
	if m.fused {
		pad := byte(0)
		for keys.has(pad) {
			pad++
		}
		for i := range m.padBlock {
			m.padBlock[i] = pad
		}
	}
	m.all = newMachine(&p.all, p.allEntry, MaxStates, &m.stats.Resets)
	for i := range p.offsets {
		o := &p.offsets[i]
		m.offsets = append(m.offsets, newMachine(&o.p, o.entry, MaxStatesEach+len(o.p.insts), &m.stats.Resets))
	}
	for i := range p.searches {
		s := &p.searches[i]
		m.searches = append(m.searches, newMachine(&s.p, s.entry, MaxStatesEach+len(s.p.insts), &m.stats.Resets))
	}
	return m
}

// Stats returns the counters so far.
func (m *Matcher) Stats() Stats { return m.stats }

// Sniff returns the MIME type Zeek's file analysis gives a file whose first
// bytes are bof: the type of the strongest signature matching a prefix of
// bof[:BOFSize] (the lowest type among equally strong ones), or ok false
// when none matches (Zeek then leaves mime_type unset).
func (m *Matcher) Sniff(bof []byte) (mime string, ok bool) {
	m.stats.Sniffed++
	if len(bof) > BOFSize {
		bof = bof[:BOFSize]
	}
	if len(bof) == 0 {
		return "", false
	}
	best := m.all.run(bof, true, noRank)
	m.p.guards.holding(m.cand, bof, best)
offsets:
	for w, set := range m.cand {
		for ; set != 0; set &= set - 1 {
			i := w<<6 | bits.TrailingZeros64(set)
			if m.p.offsets[i].rank >= best {
				break offsets
			}
			if r := m.offset(i, bof, best); r < best {
				best = r
				break offsets // the others rank lower
			}
		}
	}
	if m.fused {
		best = m.scanFused(bof, best)
	} else {
		for i := range m.p.scans {
			if sc := &m.p.scans[i]; sc.best < best {
				best = m.scan(sc, bof, best)
			}
		}
	}
	if best == noRank {
		return "", false
	}
	m.stats.Matched++
	return m.p.sigs[best].MIME, true
}

// guardIndex holds, for each position an offset signature's guard is at,
// the bit set of the signatures whose guard holds each byte there: one
// look-up per position instead of one test per signature. The positions
// are in increasing order, so that a short file's look-ups stop at its
// end.
type guardIndex struct {
	at    []guardPos // the positions
	words int        // uint64 words of a bit set
	sets  []uint64   // the bit set for the k-th position and byte b at (k*256+b)*words
	// windows, with one word a set, take the signatures whose guard
	// holds every byte (OCSP's, that may start 11 to 19 bytes in): they
	// are tried where one of the bytes they may start with is within the
	// offsets they may start at.
	windows []guardWindow
}

// guardWindow is the offsets from to to at which the signatures sigs may
// start, with one of the bytes first.
type guardWindow struct {
	from, to int
	best     int32 // the best rank of sigs
	first    byteSet
	one      int // the byte of first when it holds one (OCSP's 0x06), else -1
	sigs     uint64
}

// guardPos is a position of guardIndex, in few bytes, as holding reads
// them all at most calls, cold: most bytes are held by no guard there,
// which some tells without a look-up in sets (2 KiB a position).
type guardPos struct {
	at   uint32
	best int32 // the best rank of the signatures guarded at it
	// some has bit b%64 set for each byte b a guard there holds, but for
	// those of windows.
	some uint64
}

func newGuardIndex(offsets []offsetSig) guardIndex {
	g := guardIndex{words: (len(offsets) + 63) / 64}
	index := func(at int) int {
		return slices.IndexFunc(g.at, func(p guardPos) bool { return int(p.at) == at })
	}
	// A signature whose guard holds every byte goes to a window instead:
	// only the others need a position for holding to visit.
	inWindow := func(o offsetSig) bool { return g.words == 1 && o.guard.all() }
	for _, o := range offsets { // best first
		if !inWindow(o) && index(o.guardAt) < 0 {
			g.at = append(g.at, guardPos{at: uint32(o.guardAt), best: o.rank})
		}
	}
	slices.SortFunc(g.at, func(a, b guardPos) int { return cmp.Compare(a.at, b.at) })
	g.sets = make([]uint64, len(g.at)*256*g.words)
	for i, o := range offsets {
		if inWindow(o) {
			g.addWindow(o, i)
			continue
		}
		k := index(o.guardAt)
		for b := range 256 {
			if o.guard.has(byte(b)) {
				g.sets[(k*256+b)*g.words+i/64] |= 1 << (i % 64)
				g.at[k].some |= 1 << (b % 64)
			}
		}
	}
	return g
}

// addWindow adds offset signature i, whose guard holds every byte, to the
// window of the same offsets and first bytes, or to a new one.
func (g *guardIndex) addWindow(o offsetSig, i int) {
	k := slices.IndexFunc(g.windows, func(w guardWindow) bool {
		return w.from == o.skip && w.to == o.skipMax && w.first == o.first
	})
	if k < 0 {
		g.windows = append(g.windows, guardWindow{from: o.skip, to: o.skipMax, best: o.rank, first: o.first, one: -1})
		k = len(g.windows) - 1
		if c, ok := o.first.single(); ok {
			g.windows[k].one = int(c)
		}
	}
	g.windows[k].sigs |= 1 << i
}

// opens says whether one of w's first bytes is within its offsets in
// bof, which holds w.from.
func (w *guardWindow) opens(bof []byte) bool {
	in := bof[w.from:min(w.to+1, len(bof))]
	if w.one >= 0 {
		return bytes.IndexByte(in, byte(w.one)) >= 0
	}
	for _, c := range in {
		if w.first.has(c) {
			return true
		}
	}
	return false
}

// holding sets set (g.words long) to the offset signatures whose guard
// holds in bof, but for some of those that rank bound or worse, which
// cannot beat it anyway.
func (g *guardIndex) holding(set []uint64, bof []byte, bound int32) {
	if g.words == 1 {
		var s uint64
		for k := range g.at {
			p := &g.at[k]
			at := int(p.at)
			if at >= len(bof) {
				break
			}
			// Most bytes are held by no guard at their position: some
			// tells them first.
			if b := bof[at]; p.some>>(b%64)&1 != 0 && p.best < bound {
				s |= g.sets[k<<8|int(b)]
			}
		}
		for i := range g.windows {
			if w := &g.windows[i]; w.best < bound && w.from < len(bof) && w.opens(bof) {
				s |= w.sigs
			}
		}
		set[0] = s
		return
	}
	clear(set)
	for k := range g.at {
		p := &g.at[k]
		at := int(p.at)
		if at >= len(bof) {
			break
		}
		if b := bof[at]; p.some>>(b%64)&1 != 0 && p.best < bound {
			row := g.sets[(k*256+int(b))*g.words:][:len(set)]
			for w := range set {
				set[w] |= row[w]
			}
		}
	}
}

// offset matches offset signature i from each of its offsets.
func (m *Matcher) offset(i int, bof []byte, bound int32) int32 {
	o := &m.p.offsets[i]
	if o.skip >= len(bof) {
		return bound
	}
	for j, c := range bof[o.skip:min(o.skipMax+1, len(bof))] {
		if !o.first.has(c) {
			continue
		}
		at := o.skip + j
		if r := m.offsets[i].run(bof[at:], at == 0, bound); r < bound {
			return r
		}
	}
	return bound
}

// searchScan is one pass over the data for the searches whose literals
// are found by the same byte at the same offset in them (the literals P1,
// P2 and P3 by their P): where that byte occurs, each of them whose
// literal is there is run.
type searchScan struct {
	key   byte    // the byte looked for, the rarest of the literals' in text
	keyAt int     // its offset in the literals
	ids   []int32 // indexes into Program.searches, best first
	// ranks are the ids' ranks, kept here so that a scan reads the
	// searches only where their literals may be.
	ranks []int32
	best  int32 // the best rank of them
	// after holds the bytes that follow key in the literals (every byte
	// when one ends with it): most occurrences of key are passed over by
	// it alone.
	after byteSet
}

// searchScans groups searches by the byte their literals are looked for
// by: the rarest in text of each literal (see rarity), so that the scan
// stops at few places that are not a match.
func searchScans(searches []searchSig) []searchScan {
	var scans []searchScan
	for i, s := range searches {
		at := 0
		for j := range s.lit {
			if rarity(s.lit[j]) < rarity(s.lit[at]) {
				at = j
			}
		}
		k := slices.IndexFunc(scans, func(sc searchScan) bool {
			return sc.key == s.lit[at] && sc.keyAt == at && len(sc.ids) < 64 // scan's bit set
		})
		if k < 0 {
			scans = append(scans, searchScan{key: s.lit[at], keyAt: at, best: noRank})
			k = len(scans) - 1
		}
		sc := &scans[k]
		sc.ids = append(sc.ids, int32(i))
		sc.ranks = append(sc.ranks, s.rank)
		sc.best = min(sc.best, s.rank)
		if at+1 < len(s.lit) {
			sc.after.add(s.lit[at+1])
		} else {
			sc.after = byteSet{}
			sc.after.negate()
		}
	}
	return scans
}

// rarity ranks how common a byte is in the text bodies that reach the
// searches (markup, scripts, style sheets, JSON): lower is rarer.
func rarity(c byte) int {
	switch {
	case c >= 0x7f || c < 0x20 && c != '\t' && c != '\n' && c != '\r':
		return 0
	case strings.IndexByte("?!@#$%^&*+|~`\\[]", c) >= 0:
		return 1
	case c >= 'A' && c <= 'Z':
		return 2
	case c >= '0' && c <= '9':
		return 3
	case c >= 'a' && c <= 'z' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
		return 5
	}
	return 4 // other punctuation: < > / " ' = - . , ; : ( ) { } _
}

// candidate returns the offset after the next occurrence of sc.key in
// bof from off on that the byte after it does not rule out, or -1. It is
// the scan's inner loop, apart so that its call of IndexByte at each
// occurrence saves and restores few registers.
func (sc *searchScan) candidate(bof []byte, off int) int {
	for off < len(bof) {
		j := bytes.IndexByte(bof[off:], sc.key)
		if j < 0 {
			return -1
		}
		off += j + 1
		if off == len(bof) || sc.after.has(bof[off]) {
			return off
		}
	}
	return -1
}

// scan matches the searches of sc that could beat bound at the
// occurrences of their literals, in one pass, and returns the best rank
// found (bound if none).
func (m *Matcher) scan(sc *searchScan, bof []byte, bound int32) int32 {
	// pending has bit i set while sc.ids[i] may still match.
	var pending uint64
	for i, r := range sc.ranks {
		if r < bound {
			pending |= 1 << i
		}
	}
	for off := sc.keyAt; pending != 0; {
		if off = sc.candidate(bof, off); off < 0 {
			break
		}
		bound = m.tryAt(sc, &pending, bof, off-1-sc.keyAt, bound)
	}
	return bound
}

// tryAt runs the searches of sc that pending holds at offset at of bof,
// where sc's key is and the byte after it does not rule them out, and
// returns the best rank found (bound if none). It drops from pending those
// done: matched, unable to beat bound, or matching here if anywhere.
func (m *Matcher) tryAt(sc *searchScan, pending *uint64, bof []byte, at int, bound int32) int32 {
	for i, id := range sc.ids {
		if *pending&(1<<i) == 0 {
			continue
		}
		if sc.ranks[i] >= bound {
			*pending &^= 1 << i
			continue
		}
		s := &m.p.searches[id]
		if !bytes.HasPrefix(bof[at:], s.lit) {
			continue
		}
		if r := m.searches[id].run(bof[at:], at == 0, bound); r < bound {
			bound = r
			*pending &^= 1 << i
		} else if s.absorbs {
			// A match at a later occurrence would be one here too.
			*pending &^= 1 << i
		}
	}
	return bound
}

// scanFused does the scans that could beat bound in one pass over bof:
// keyHits finds the bytes of all their keys together, 64 bytes at a time,
// where a pass each would look at every byte once per scan and stop at
// every key byte (a bof shorter than keyHits reads, as small request
// bodies are, is padded with bytes that are no key). It returns the best rank
// found (bound if none), as the scans one after the other do: each search
// still runs at each occurrence of its literal until it is done, and a
// tighter bound only drops searches that could not beat it.
func (m *Matcher) scanFused(bof []byte, bound int32) int32 {
	scans := m.p.scans
	var pending [fusedTables]uint64 // as in scan, for each of scans
	var keys [maxFused]byte         // those of the scans pending, repeated
	live := 0                       // bit k set while pending[k] is not empty
	nkeys := 0                      // the scans live has
	for k := range scans {
		if m.worst[k] < bound {
			pending[k] = m.every[k] // the usual case: nothing matched yet
		} else {
			for i, r := range scans[k].ranks {
				if r < bound {
					pending[k] |= 1 << i
				}
			}
		}
		if pending[k] != 0 {
			if live == 0 {
				keys = [maxFused]byte{scans[k].key, scans[k].key, scans[k].key}
			}
			keys[nkeys] = scans[k].key
			nkeys++
			live |= 1 << k
		}
	}
	padded := bof
	if len(bof) < keyBlock {
		block := m.padBlock
		copy(block[:], bof)
		padded = block[:]
	}
	for from := 0; live != 0 && from < len(bof); {
		n, next := keyHits(padded, from, &keys, &m.hits)
		for _, h := range m.hits[:n] {
			off := int(h)
			k := m.keyScan[bof[off]] & (fusedTables - 1)
			if off+1 < len(bof) && !m.follows[k][bof[off+1]] || pending[k] == 0 || off < scans[k].keyAt {
				continue
			}
			sc := &scans[k]
			if bound = m.tryAt(sc, &pending[k], bof, off-sc.keyAt, bound); pending[k] == 0 {
				if live &^= 1 << k; live == 0 {
					break
				}
			}
		}
		from = next
	}
	return bound
}

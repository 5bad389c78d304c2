package filemagic

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// A prog is the Thompson automaton of a set of patterns: each instruction
// consumes a byte of a set, branches, asserts the start or end of the
// data, or accepts a signature. Every instruction carries the rank of its
// signature (see Program), so that a state knows the best signature it can
// still accept.
type prog struct {
	insts []inst
	sets  []byteSet
}

type inst struct {
	op       instOp
	set      int32 // iByte: index into prog.sets
	out, alt int32
	rank     int32
}

type instOp uint8

const (
	iByte instOp = iota
	iSplit
	iBOL
	iEOL
	iMatch
)

// noRank is worse than every signature's rank.
const noRank = int32(1 << 30)

// compiler emits a node's instructions in front of a known continuation.
type compiler struct {
	p    *prog
	rank int32
	sets map[byteSet]int32
}

func (c *compiler) inst(in inst) int32 {
	in.rank = c.rank
	c.p.insts = append(c.p.insts, in)
	return int32(len(c.p.insts) - 1)
}

// emit returns the entry of n's instructions, continuing to next.
func (c *compiler) emit(n *node, next int32) int32 {
	switch n.op {
	case opEmpty:
		return next
	case opSet:
		id, ok := c.sets[*n.set]
		if !ok {
			id = int32(len(c.p.sets))
			c.p.sets = append(c.p.sets, *n.set)
			c.sets[*n.set] = id
		}
		return c.inst(inst{op: iByte, set: id, out: next})
	case opCat:
		for i := len(n.subs) - 1; i >= 0; i-- {
			next = c.emit(n.subs[i], next)
		}
		return next
	case opAlt:
		e := c.emit(n.subs[len(n.subs)-1], next)
		for i := len(n.subs) - 2; i >= 0; i-- {
			e = c.inst(inst{op: iSplit, out: c.emit(n.subs[i], next), alt: e})
		}
		return e
	case opBOL:
		return c.inst(inst{op: iBOL, out: next})
	case opEOL:
		return c.inst(inst{op: iEOL, out: next})
	}
	// opRep: min copies, then max-min nested optional ones or a loop.
	sub := n.subs[0]
	cont := next
	if n.max < 0 {
		loop := c.inst(inst{op: iSplit, alt: next})
		c.p.insts[loop].out = c.emit(sub, loop)
		cont = loop
	} else {
		for range n.max - n.min {
			cont = c.inst(inst{op: iSplit, out: c.emit(sub, cont), alt: next})
		}
	}
	for range n.min {
		cont = c.emit(sub, cont)
	}
	return cont
}

// machine runs a prog from one entry as a DFA built lazily: a state is the
// set of byte-consuming (and end-asserting) instructions reached, its
// transitions are filled in when first taken. At most maxStates states are
// kept; when a new one would exceed that, the cache starts over (Resets
// counts it), so memory stays bounded on any input.
type machine struct {
	p         *prog
	entry     int32
	maxStates int
	resets    *int64

	states []dstate
	info   []stateInfo // the states' ranks, packed for run's loop
	trans  []int16     // 256 per state: 0 not built yet, -1 dead, else state+1 (see mark)
	index  map[string]int32
	starts [2]int32 // not at / at the start of the data; -1 not built

	// scratch
	stamp []uint32
	gen   uint32
	stack []int32
	list  []int32
	outs  []int32 // the instructions a byte or the end leads to; closure copies them
	key   []byte
}

// A transition holds its state's number plus one in an int16, half the
// memory of an int32, so that more of the table stays in the cache; the
// bit transFlag marks those after which run must look at the state (see
// mark).
const (
	transFlag     = 1 << 14
	maxTransState = transFlag - 2 // the most states a machine keeps
)

// stateInfo is what run's loop reads of a state: best, the best rank
// accepted on entering it, and potential, the best rank any of its
// instructions may still accept.
type stateInfo struct{ best, potential int32 }

// dstate is a state of the DFA; its ranks are in machine.info. It keeps
// what next and eolBest read of its instructions side by side: a start
// state holds hundreds of instructions, each on a cache line of its own
// in the prog.
type dstate struct {
	moves   []move  // its byte-consuming instructions, in order
	eols    []int32 // where its end assertions lead, in order
	eolBest int32   // the best rank accepted if the data ends here; -2: not computed
	// exits are the bytes whose transitions leave the state's loop, the
	// first nexits of them, repeated (see crossLoop); -1: not computed
	// since its transitions last changed, maxFused+1: more.
	exits  [maxFused]byte
	nexits int8
}

// move is a byte-consuming instruction: on a byte of prog.sets[set], on
// to out.
type move struct{ set, out int32 }

func newMachine(p *prog, entry int32, maxStates int, resets *int64) *machine {
	maxStates = min(maxStates, maxTransState) // a transition holds state+1
	return &machine{p: p, entry: entry, maxStates: maxStates, resets: resets, starts: [2]int32{-1, -1}}
}

func (m *machine) reset() {
	m.states = m.states[:0]
	m.info = m.info[:0]
	m.trans = m.trans[:0]
	clear(m.index)
	m.starts = [2]int32{-1, -1}
}

// closure collects the instructions reached from ids without consuming a
// byte into m.list (sorted) and returns the best rank accepted on the way.
func (m *machine) closure(ids []int32, atStart, atEnd bool) int32 {
	if len(m.stamp) < len(m.p.insts) {
		m.stamp = make([]uint32, len(m.p.insts))
	}
	m.gen++
	if m.gen == 0 {
		clear(m.stamp)
		m.gen = 1
	}
	best := noRank
	m.list = m.list[:0]
	m.stack = append(m.stack[:0], ids...)
	for len(m.stack) > 0 {
		id := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if m.stamp[id] == m.gen {
			continue
		}
		m.stamp[id] = m.gen
		in := &m.p.insts[id]
		switch in.op {
		case iByte:
			m.list = append(m.list, id)
		case iSplit:
			m.stack = append(m.stack, in.alt, in.out)
		case iBOL:
			if atStart {
				m.stack = append(m.stack, in.out)
			}
		case iEOL:
			if atEnd {
				m.stack = append(m.stack, in.out)
			} else {
				m.list = append(m.list, id)
			}
		case iMatch:
			best = min(best, in.rank)
		}
	}
	sortIDs(m.list)
	return best
}

// sortIDs sorts the instructions a closure reached. The compiler emits a
// pattern's instructions from its end back, so a walk along them finds
// them mostly in decreasing order, which is the slowest for a sort.
func sortIDs(ids []int32) {
	if slices.IsSortedFunc(ids, func(a, b int32) int { return cmp.Compare(b, a) }) {
		slices.Reverse(ids)
		return
	}
	slices.Sort(ids)
}

// state returns the state of m.list, adding it when new.
func (m *machine) state(best int32) int32 {
	m.key = m.key[:0]
	for _, id := range m.list {
		m.key = binary.LittleEndian.AppendUint32(m.key, uint32(id))
	}
	m.key = binary.LittleEndian.AppendUint32(m.key, uint32(best))
	if s, ok := m.index[string(m.key)]; ok {
		return s
	}
	if len(m.states) >= m.maxStates {
		*m.resets++
		m.reset()
	}
	if m.index == nil {
		m.index = make(map[string]int32)
	}
	pot := best
	for _, id := range m.list {
		pot = min(pot, m.p.insts[id].rank)
	}
	s := int32(len(m.states))
	m.states = append(m.states, m.newState())
	m.info = append(m.info, stateInfo{best, pot})
	m.addRow()
	m.index[string(m.key)] = s
	return s
}

// newState returns the state of the instructions in m.list.
func (m *machine) newState() dstate {
	st := dstate{moves: make([]move, 0, len(m.list)), eolBest: -2, nexits: -1}
	for _, id := range m.list {
		switch in := &m.p.insts[id]; in.op {
		case iByte:
			st.moves = append(st.moves, move{in.set, in.out})
		case iEOL:
			st.eols = append(st.eols, in.out)
		}
	}
	return st
}

// addRow appends a row of transitions, none built yet, for a new state.
// The table doubles when full, up to maxStates rows: append would grow a
// table of this size by a quarter at a time, copying all of it each time.
func (m *machine) addRow() {
	n := len(m.trans)
	if cap(m.trans)-n < 256 {
		m.trans = slices.Grow(m.trans, max(256, min(n, m.maxStates<<8-n)))
	}
	m.trans = m.trans[:n+256]
	clear(m.trans[n:])
}

func (m *machine) start(atStart bool) int32 {
	i := 0
	if atStart {
		i = 1
	}
	if m.starts[i] < 0 {
		best := m.closure([]int32{m.entry}, atStart, false)
		m.starts[i] = m.state(best)
	}
	return m.starts[i]
}

// next builds the transition from s on byte b, which run calls it for only
// while that is not built, and returns the state after s on b, or -1 when
// no instruction survives it. The transition is built for every byte that
// each of the sets of s holds or lacks as b does at once: it leads where
// b does. Text crossing a state takes most of its bytes from few such
// classes.
func (m *machine) next(s int32, b byte) int32 {
	m.outs = m.outs[:0]
	sets, w, bit := m.p.sets, b>>6, uint64(1)<<(b&63)
	var same byteSet // the bytes that go where b goes
	same.negate()
	for _, mv := range m.states[s].moves {
		set := &sets[mv.set]
		if set[w]&bit != 0 { // set.has(b)
			m.outs = append(m.outs, mv.out)
			same[0], same[1], same[2], same[3] = same[0]&set[0], same[1]&set[1], same[2]&set[2], same[3]&set[3]
		} else {
			same[0], same[1], same[2], same[3] = same[0]&^set[0], same[1]&^set[1], same[2]&^set[2], same[3]&^set[3]
		}
	}
	best := m.closure(m.outs, false, false)
	if len(m.list) == 0 && best == noRank {
		m.fill(s, &same, -1)
		return -1
	}
	resets := *m.resets
	t := m.state(best)
	if *m.resets == resets { // s is still valid
		m.fill(s, &same, m.mark(s, t))
	}
	return t
}

// fill sets the transitions from s on the bytes of set to e.
func (m *machine) fill(s int32, set *byteSet, e int16) {
	m.states[s].nexits = -1
	row := (*[256]int16)(m.trans[int(s)<<8:])
	for w, word := range set {
		for ; word != 0; word &= word - 1 {
			row[w<<6|bits.TrailingZeros64(word)] = e
		}
	}
}

// mark returns the transition from s to t, flagged when run must look at
// t: t accepts a signature, its potential is not that of s, or it is s (a
// loop, which run crosses in a loop of its own). Between other states
// nothing run checks changes, as a state's potential never falls along
// a path (its instructions come from those of the state before, with the
// same ranks).
func (m *machine) mark(s, t int32) int16 {
	e := int16(t + 1)
	if in := m.info[t]; t == s || in.best != noRank || in.potential != m.info[s].potential {
		e |= transFlag
	}
	return e
}

// eolBest returns the best rank accepted when the data ends in state s.
func (m *machine) eolBest(s int32) int32 {
	st := &m.states[s]
	if st.eolBest == -2 {
		best := noRank
		if len(st.eols) > 0 {
			best = m.closure(st.eols, false, true)
		}
		m.states[s].eolBest = best
	}
	return m.states[s].eolBest
}

// run matches data from its start (atStart says whether that is the start
// of the file) and returns the best rank accepted, stopping as soon as no
// rank better than bound can follow.
func (m *machine) run(data []byte, atStart bool, bound int32) int32 {
	s := m.start(atStart)
	in := m.info[s]
	best := min(bound, in.best)
	if in.potential >= best {
		return best
	}
	info, trans := m.info, m.trans
	for i := 0; i < len(data); i++ {
		t := trans[int(s)<<8|int(data[i])]
		if t > 0 && t < transFlag {
			s = int32(t) - 1 // nothing to look at (see mark)
			continue
		}
		switch {
		case t < 0:
			return best
		case t == 0:
			if s = m.next(s, data[i]); s < 0 {
				return best
			}
			info, trans = m.info, m.trans
		case int32(t&^transFlag)-1 == s:
			// A state that loops on a byte stays itself, its ranks unchanged,
			// over the bytes it has looped on before: a run of NULs, the
			// text of an INI section name or a comment running to its end.
			i = skipRun(data, i)
			i = m.crossLoop(s, t, data, i)
			continue
		default:
			s = int32(t&^transFlag) - 1
		}
		in := info[s]
		best = min(best, in.best)
		if in.potential >= best {
			return best
		}
	}
	return min(best, m.eolBest(s))
}

// loopFar is how many bytes must be left for crossLoop to look for the
// end of a loop with firstKey, which reads 32 at a time.
const loopFar = 64

// crossLoop returns what skipLoop does for the row of s. When few bytes
// leave the loop (file-ini's section name, which JSON starting with "["
// keeps open to its end, ends at "]", CR or LF), it looks for them 32
// bytes at a time instead.
func (m *machine) crossLoop(s int32, t int16, data []byte, i int) int {
	row := (*[256]int16)(m.trans[int(s)<<8:])
	if haveKeyHits && len(data)-i > loopFar {
		st := &m.states[s]
		if st.nexits < 0 {
			st.exits, st.nexits = loopExits(row, t)
		}
		switch {
		case st.nexits == 0:
			return len(data) - 1
		case st.nexits <= maxFused:
			return firstKey(data, i+1, &st.exits) - 1
		}
	}
	return skipLoop(row, t, data, i)
}

// loopExits returns the bytes whose transitions in row are not t, the
// first repeated to fill exits, and how many there are (maxFused+1 for
// more than exits holds).
func loopExits(row *[256]int16, t int16) (exits [maxFused]byte, n int8) {
	for b, e := range row {
		if e == t {
			continue
		}
		if n == maxFused {
			return exits, maxFused + 1
		}
		if n == 0 {
			exits = [maxFused]byte{byte(b), byte(b), byte(b)}
		}
		exits[n] = byte(b)
		n++
	}
	return exits, n
}

// skipLoop returns the offset of the last byte of the run that starts at
// data[i+1] and whose transitions in row are all t (i if data[i+1] is not
// one). A state looping over text, such as a search running to its match,
// takes most of the bytes run reads, so it tests eight at a time.
func skipLoop(row *[256]int16, t int16, data []byte, i int) int {
	rest := data[i+1:]
	n := 0
	for ; n+8 <= len(rest); n += 8 {
		w := rest[n : n+8 : n+8]
		if row[w[0]] != t || row[w[1]] != t || row[w[2]] != t || row[w[3]] != t ||
			row[w[4]] != t || row[w[5]] != t || row[w[6]] != t || row[w[7]] != t {
			break
		}
	}
	for n < len(rest) && row[rest[n]] == t {
		n++
	}
	return i + n
}

// skipRun returns the index of the last byte of the run of data[i],
// comparing eight bytes at a time.
func skipRun(data []byte, i int) int {
	rep := uint64(data[i]) * 0x0101010101010101
	for i+9 <= len(data) && binary.LittleEndian.Uint64(data[i+1:]) == rep {
		i += 8
	}
	for i+1 < len(data) && data[i+1] == data[i] {
		i++
	}
	return i
}

package parsers

// Binding holds the parsers bound to one connection: the ConnParsers the
// analyzers of its entries opened and the Parser reading each side. A
// driver keeps one per open connection and feeds it; the [Dispatcher]
// does so for batch records, and a driver with other input (a flow
// engine reading packets) does the same with its own events.
//
// A Binding must not be copied after [Binding.Bind]: the analyzers keep a
// pointer to its [Conn]. Its zero value is an unbound connection.
type Binding struct {
	conn  Conn
	sides [2]boundSide
	// split says the sides have a ConnParser each.
	split bool
	// held is what Held asks: the ConnParser that implements Holder, or
	// pair when both sides' do. Held, asked after every chunk, then makes
	// one call and is in line.
	held Holder
	pair holderPair
}

// boundSide is one side of a bound connection.
type boundSide struct {
	cp   ConnParser // the ConnParser that owns p; nil: the side is not parsed
	p    Parser
	done bool // Finish was called
}

// Bind opens the parsers of connection c: the entry e[pos] reads the
// connection's side pos (Orig or Resp) when ok[pos]. The two sides share
// one ConnParser when their entries have the same analyzer and read
// different sides, as the requests and replies of HTTP or the queries and
// replies of DNS do; otherwise each side gets its own. Bind returns how
// many sides it bound.
func (b *Binding) Bind(c Conn, e [2]Entry, ok [2]bool) int {
	b.conn = c
	return b.bindConn(&e, ok)
}

// BindIn is Bind for a driver that has set the connection in place, in
// the Conn that [Binding.Conn] returns, and passes the entries where it
// found them (see [Registry.PortEntries]): a Conn is some fifteen words
// and the entries ten, which Bind copies for every connection.
func (b *Binding) BindIn(e *[2]Entry, ok [2]bool) int { return b.bindConn(e, ok) }

// bindConn is Bind for a Binding whose conn its driver has set in place,
// as the Dispatcher does.
func (b *Binding) bindConn(e *[2]Entry, ok [2]bool) int {
	if ok[Orig] && ok[Resp] && e[Orig].Analyzer == e[Resp].Analyzer {
		// The roles are read in place: side takes a copy of its Entry.
		if so, sr := sideOf(e[Orig].Role, Orig), sideOf(e[Resp].Role, Resp); so != sr {
			cp := e[Orig].Analyzer.Open(&b.conn)
			b.hold(cp)
			o, r := cp.Orig(), cp.Resp()
			if so == Resp {
				o, r = r, o // each entry reads the other side
			}
			// Set side by side: a composite literal of both is built
			// aside and copied over them.
			b.sides[Orig] = boundSide{cp: cp, p: o}
			b.sides[Resp] = boundSide{cp: cp, p: r}
			return 2
		}
	}
	n := 0
	for _, pos := range [...]Role{Orig, Resp} {
		if ok[pos] {
			cp := e[pos].Analyzer.Open(&b.conn)
			b.hold(cp)
			b.sides[pos] = boundSide{cp: cp, p: sideParser(cp, e[pos].side(pos))}
			n++
		}
	}
	b.split = n == 2
	return n
}

// sharedSides reports whether the entries of a connection's two flows,
// which have the same analyzer, read different sides, so that one
// ConnParser serves both, and whether each entry reads the other side
// than its flow's (swap).
func sharedSides(e *[2]Entry) (shared, swap bool) {
	// The roles are read in place: side takes a copy of its Entry.
	so, sr := sideOf(e[Orig].Role, Orig), sideOf(e[Resp].Role, Resp)
	return so != sr, so == Resp
}

// bindShared binds both sides to one ConnParser of a, as bindConn does
// for entries that sharedSides finds shared (swap is sharedSides'), for
// the Dispatcher, which knows that of the entries it binds. bindConn does
// the same in line: a call per connection costs the analyzer more than
// the lines.
func (b *Binding) bindShared(a Analyzer, swap bool) {
	cp := a.Open(&b.conn)
	b.hold(cp)
	o, r := cp.Orig(), cp.Resp()
	if swap {
		o, r = r, o // each entry reads the other side
	}
	// Set side by side: a composite literal of both is built aside and
	// copied over them.
	b.sides[Orig] = boundSide{cp: cp, p: o}
	b.sides[Resp] = boundSide{cp: cp, p: r}
}

// hold adds cp to the holders when it is a Holder.
func (b *Binding) hold(cp ConnParser) {
	if h, ok := cp.(Holder); ok {
		if b.held == nil {
			b.held = h
		} else {
			b.pair = holderPair{b.held, h}
			b.held = &b.pair
		}
	}
}

// holderPair is the Holder of two ConnParsers.
type holderPair [2]Holder

func (p *holderPair) Held() int { return p[0].Held() + p[1].Held() }

// sideOf returns the side of a connection an entry of role role reads
// when its flow is at position pos (Orig or Resp): Entry.side without the
// copy of the Entry.
func sideOf(role, pos Role) Role {
	if role == Both {
		return pos
	}
	return role
}

func sideParser(cp ConnParser, side Role) Parser {
	if side == Resp {
		return cp.Resp()
	}
	return cp.Orig()
}

// Holds reports whether a bound ConnParser implements [Holder]: only then
// can [Binding.Held] be above zero.
func (b *Binding) Holds() bool { return b.held != nil }

// Held is what the bound ConnParsers hold (see [Holder]), each counted
// once: what a driver bounding the parsers' memory asks after each Feed
// and Gap.
func (b *Binding) Held() int {
	if b.held == nil {
		return 0
	}
	return b.held.Held()
}

// Conn returns the parsing context the parsers share. A driver updates
// its TS before feeding a chunk whose time it knows.
func (b *Binding) Conn() *Conn { return &b.conn }

// Parses reports whether side pos is bound to a parser that has not
// finished: only then may it be fed.
func (b *Binding) Parses(pos Role) bool {
	s := &b.sides[pos]
	return s.p != nil && !s.done
}

// Feed passes the next chunk of side pos to its parser (see
// [Parser.Feed]). The side must be parsing.
func (b *Binding) Feed(pos Role, data []byte) { b.sides[pos].p.Feed(data) }

// Gap tells the parser of side pos that n bytes are missing. The side must
// be parsing.
func (b *Binding) Gap(pos Role, n int) { b.sides[pos].p.Gap(n) }

// Finish ends side pos: its parser's Finish is called once, and later
// calls do nothing.
func (b *Binding) Finish(pos Role) {
	s := &b.sides[pos]
	if s.p != nil && !s.done {
		s.p.Finish()
	}
	s.done = true
}

// Finished reports whether every bound side has finished.
func (b *Binding) Finished() bool {
	for _, s := range &b.sides {
		if s.p != nil && !s.done {
			return false
		}
	}
	return true
}

// Close finishes the sides still open and closes the ConnParsers, each
// once. The Binding is then unbound and may be bound again.
func (b *Binding) Close() {
	b.Release()
	*b = Binding{}
}

// Release is Close without the reset of the Binding, for a driver that
// zeroes the memory the Binding is in right after, as a list of
// connection states kept for reuse does. The Binding must not be used
// again until it is zeroed.
func (b *Binding) Release() {
	// Finish's work for each side, without its calls, written out for the
	// two: done need not be set, as every caller zeroes the sides next.
	o, r := &b.sides[Orig], &b.sides[Resp]
	if o.p != nil && !o.done {
		o.p.Finish()
	}
	if r.p != nil && !r.done {
		r.p.Finish()
	}
	if o.cp != nil {
		o.cp.Close()
	}
	if r.cp != nil && (b.split || o.cp == nil) {
		r.cp.Close()
	}
}

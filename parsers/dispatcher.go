package parsers

import (
	"fmt"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/flow"
)

// Stats counts what a Dispatcher did.
type Stats struct {
	Records int64 // batch records dispatched
	// Bytes is the number of data bytes fed to parsers; SkippedBytes the
	// number of data bytes of flows without a parser, of unknown flow ids,
	// or that came after their flow's end.
	Bytes, SkippedBytes int64
	// Flows is the number of flows (directions) opened with a parser;
	// SkippedFlows the number of flows skipped because no parser was
	// known for them.
	Flows, SkippedFlows int64
	// Conns is the number of connections opened; DuplicateConns counts
	// @begin-conn records for a connection id already open (ignored).
	Conns, DuplicateConns int64
	// Gaps and GapBytes count the gaps passed to parsers.
	Gaps, GapBytes int64
}

// Config configures a Dispatcher.
type Config struct {
	// Fallback names the parser of flows whose parser name is unknown
	// (spicy-driver's -p); empty: such flows are skipped.
	Fallback string
	// UIDSeed seeds the derivation of connection uids (see UIDFromID).
	UIDSeed uint64
	// UID, when set, gives the uid of a flow-engine connection that gets
	// parsers, instead of UIDFromKey(c.Key, c.Start, UIDSeed): a program
	// that already made one for its own logs passes it on, so the
	// connection's logs agree and the uid is made once.
	UID func(c *flow.Conn) string
	// Charge, when set, is told how the memory the parsers of a
	// flow-engine connection hold (see Holder) changed by delta bytes,
	// after the Feed or Gap that changed it: the analyzer counts it against
	// its flow engine's budget, which releases it when the connection
	// ends.
	Charge func(c *flow.Conn, delta int)
}

// Dispatcher turns batch records (Record, End) or flow-engine events (it is
// a flow.Handler) into parser calls. Per connection it opens one ConnParser
// through the analyzer its parser names resolve to in the Registry, feeds
// each direction to that ConnParser's Orig or Resp parser, and finishes and
// closes it when the connection ends.
//
// A Dispatcher is not safe for concurrent use. It allocates per connection,
// never per @data record or Data event.
type Dispatcher struct {
	reg         *Registry
	fallback    Entry
	hasFallback bool
	seed        uint64
	uid         func(c *flow.Conn) string
	charge      func(c *flow.Conn, delta int)

	flows map[string]flowRef    // open flow ids of batch input
	conns map[string]*connState // open connection ids of batch input
	// head and tail link the open connections in the order they were
	// opened, so that End closes them deterministically.
	head, tail *connState
	free       []*connState
	stats      Stats
}

// connState is one open connection.
type connState struct {
	conn  Conn
	cid   string // key in Dispatcher.conns; "" when not a @begin-conn
	sides [2]sideState
	n     int  // number of sides in use
	split bool // the sides have a ConnParser each
	// fc is the flow-engine connection whose User holds this state.
	fc *flow.Conn
	// holders are the connection's ConnParsers that report what they hold
	// (nil when Config.Charge is not set), held their total last reported.
	holders [2]Holder
	held    int
	prev    *connState
	next    *connState
}

// sideState is one flow of a connection.
type sideState struct {
	fid  string     // key in Dispatcher.flows; "" for flow-engine connections
	cp   ConnParser // the ConnParser that owns p
	p    Parser     // nil: this side is not parsed
	done bool       // Finish was called
}

type flowRef struct {
	cs   *connState
	side int
}

// NewDispatcher returns a dispatcher resolving parser names in reg.
func NewDispatcher(reg *Registry, cfg Config) (*Dispatcher, error) {
	d := &Dispatcher{
		reg:    reg,
		seed:   cfg.UIDSeed,
		uid:    cfg.UID,
		charge: cfg.Charge,
		flows:  make(map[string]flowRef),
		conns:  make(map[string]*connState),
	}
	if cfg.Fallback != "" {
		e, ok := reg.LookupString(cfg.Fallback)
		if !ok {
			return nil, fmt.Errorf("no parser named %q (known: %s)", cfg.Fallback, reg.unitNames())
		}
		d.fallback, d.hasFallback = e, true
	}
	return d, nil
}

// Stats returns the counters so far.
func (d *Dispatcher) Stats() Stats { return d.stats }

// Record dispatches one batch record. The record's slices are not kept. It
// returns an error only for a record with an unknown command.
func (d *Dispatcher) Record(r *batch.Record) error {
	switch r.Op {
	case batch.BeginConn:
		d.beginConn(r)
	case batch.BeginFlow:
		d.beginFlow(r)
	case batch.Data:
		d.data(r.ID, r.Data)
	case batch.Gap:
		d.gap(r.ID, r.Size)
	case batch.EndFlow:
		d.endFlow(r.ID)
	case batch.EndConn:
		if cs, ok := d.conns[string(r.ID)]; ok {
			d.closeConn(cs)
		}
	default:
		return fmt.Errorf("line %d: unknown batch command %d", r.Line, r.Op)
	}
	d.stats.Records++
	return nil
}

// End finishes and closes every connection still open, in the order they
// were opened: call it at the end of the input (after the flow engine's
// Flush, which ends its connections itself).
func (d *Dispatcher) End() {
	for d.head != nil {
		d.closeConn(d.head)
	}
}

// resolve finds the entry for a flow's parser name, or the fallback.
func (d *Dispatcher) resolve(name []byte) (Entry, bool) {
	if e, ok := d.reg.Lookup(name); ok {
		return e, true
	}
	return d.fallback, d.hasFallback
}

func connKind(k batch.Kind) Kind {
	if k == batch.Block {
		return Block
	}
	return Stream
}

// beginConn opens a connection of two flows. As in spicy-driver, a
// connection is parsed only when the parsers of both flows are known (or
// the fallback stands in); otherwise both flows are skipped.
func (d *Dispatcher) beginConn(r *batch.Record) {
	if _, open := d.conns[string(r.ID)]; open {
		d.stats.DuplicateConns++
		return
	}
	eo, okO := d.resolve(r.OrigParser)
	er, okR := d.resolve(r.RespParser)
	if !okO || !okR {
		d.stats.SkippedFlows += 2
		return
	}
	cid := string(r.ID)
	cs := d.newConn(cid)
	d.replayConn(cs, cid, r.Kind)
	cs.n = 2
	so, sr := eo.side(Orig), er.side(Resp)
	cpO := eo.Analyzer.Open(&cs.conn)
	cpR := cpO
	if eo.Analyzer != er.Analyzer || so == sr {
		cpR = er.Analyzer.Open(&cs.conn)
		cs.split = true
	}
	cs.sides[0] = sideState{fid: string(r.OrigID), cp: cpO, p: sideParser(cpO, so)}
	cs.sides[1] = sideState{fid: string(r.RespID), cp: cpR, p: sideParser(cpR, sr)}
	d.conns[cid] = cs
	d.flows[cs.sides[0].fid] = flowRef{cs, 0}
	d.flows[cs.sides[1].fid] = flowRef{cs, 1}
	d.stats.Flows += 2
}

// beginFlow opens a connection with a single flow. A @begin-flow for a flow
// id already open is ignored, like a repeated @begin-conn.
func (d *Dispatcher) beginFlow(r *batch.Record) {
	if _, open := d.flows[string(r.ID)]; open {
		d.stats.DuplicateConns++
		return
	}
	e, ok := d.resolve(r.Parser)
	if !ok {
		d.stats.SkippedFlows++
		return
	}
	fid := string(r.ID)
	cs := d.newConn("")
	d.replayConn(cs, fid, r.Kind)
	cs.n = 1
	cp := e.Analyzer.Open(&cs.conn)
	cs.sides[0] = sideState{fid: fid, cp: cp, p: sideParser(cp, e.side(Orig))}
	d.flows[fid] = flowRef{cs, 0}
	d.stats.Flows++
}

func sideParser(cp ConnParser, side Role) Parser {
	if side == Resp {
		return cp.Resp()
	}
	return cp.Orig()
}

func (d *Dispatcher) data(fid, data []byte) {
	ref, ok := d.flows[string(fid)]
	if !ok || ref.cs.sides[ref.side].done {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	d.stats.Bytes += int64(len(data))
	ref.cs.sides[ref.side].p.Feed(data)
}

func (d *Dispatcher) gap(fid []byte, size int64) {
	ref, ok := d.flows[string(fid)]
	if !ok || ref.cs.sides[ref.side].done || size <= 0 {
		return
	}
	d.stats.Gaps++
	d.stats.GapBytes += size
	ref.cs.sides[ref.side].p.Gap(clampInt(size))
}

func clampInt(n int64) int {
	if int64(int(n)) != n {
		return int(^uint(0) >> 1)
	}
	return int(n)
}

// endFlow finishes one flow; the connection is closed once all its flows
// have finished.
func (d *Dispatcher) endFlow(fid []byte) {
	ref, ok := d.flows[string(fid)]
	if !ok {
		return
	}
	cs := ref.cs
	s := &cs.sides[ref.side]
	if !s.done {
		s.done = true
		s.p.Finish()
	}
	delete(d.flows, s.fid)
	for i := range cs.n {
		if !cs.sides[i].done {
			return
		}
	}
	d.closeConn(cs)
}

// replayConn sets the parsing context of a connection of batch input: the
// 5-tuple comes from the id when it follows Zeek's convention.
func (d *Dispatcher) replayConn(cs *connState, id string, kind batch.Kind) {
	key, _ := ParseConnID(id)
	cs.conn = Conn{ID: id, Kind: connKind(kind), Key: key, UID: UIDFromID(id, d.seed)}
}

// newConn takes a connection from the free list and links it as the
// newest open one. cid is its key in d.conns, if any.
func (d *Dispatcher) newConn(cid string) *connState {
	var cs *connState
	if n := len(d.free); n > 0 {
		cs, d.free = d.free[n-1], d.free[:n-1]
	} else {
		cs = new(connState)
	}
	cs.cid = cid
	cs.prev, cs.next = d.tail, nil
	if d.tail != nil {
		d.tail.next = cs
	} else {
		d.head = cs
	}
	d.tail = cs
	d.stats.Conns++
	return cs
}

// closeConn finishes the connection's flows that are still open, closes
// its ConnParsers and returns it to the free list.
func (d *Dispatcher) closeConn(cs *connState) {
	for i := range cs.n {
		s := &cs.sides[i]
		if !s.done && s.p != nil {
			s.p.Finish()
		}
		s.done = true
	}
	for i := range cs.n {
		s := &cs.sides[i]
		if s.cp != nil && (i == 0 || cs.split || cs.sides[0].cp == nil) {
			s.cp.Close()
		}
		if cs.fc != nil {
			continue // a flow-engine connection: in no map
		}
		if ref, ok := d.flows[s.fid]; ok && ref.cs == cs {
			delete(d.flows, s.fid)
		}
	}
	if cs.fc == nil && cs.cid != "" && d.conns[cs.cid] == cs {
		delete(d.conns, cs.cid)
	}
	if cs.fc != nil && cs.fc.User == cs {
		cs.fc.User = nil // End ran before the engine's EndConn
	}
	if cs.prev != nil {
		cs.prev.next = cs.next
	} else {
		d.head = cs.next
	}
	if cs.next != nil {
		cs.next.prev = cs.prev
	} else {
		d.tail = cs.prev
	}
	*cs = connState{}
	d.free = append(d.free, cs)
}

// BeginConn implements flow.Handler: it picks the parsers of a connection
// seen in a trace by its responder's port and protocol in the registry's
// port map. A connection to a port without parsers is not parsed, unless
// Attach gives it parsers later.
func (d *Dispatcher) BeginConn(c *flow.Conn) {
	c.User = nil
	e, ok := d.reg.ForPort(Port{Num: c.Key.Resp.Port(), Proto: c.Key.Proto})
	if !ok[Orig] && !ok[Resp] {
		d.stats.SkippedFlows += 2
		return
	}
	d.open(c, e, ok)
}

// Parsing reports whether a flow-engine connection has parsers.
func (d *Dispatcher) Parsing(c *flow.Conn) bool {
	cs, _ := c.User.(*connState)
	return cs != nil
}

// Attach gives a flow-engine connection that BeginConn left without
// parsers the parsers named orig (for the originator's data) and resp (for
// the responder's), as when dynamic protocol detection recognises a
// protocol by content. Data and gaps passed after it are parsed; the
// caller replays what it held back. An empty name leaves that side
// unparsed. Attach fails when the connection already has parsers or a name
// is unknown.
func (d *Dispatcher) Attach(c *flow.Conn, orig, resp string) error {
	if d.Parsing(c) {
		return fmt.Errorf("connection %v already has parsers", c.Key)
	}
	var e [2]Entry
	var ok [2]bool
	for side, name := range [2]string{orig, resp} {
		if name == "" {
			continue
		}
		if e[side], ok[side] = d.reg.LookupString(name); !ok[side] {
			return fmt.Errorf("no parser named %q (known: %s)", name, d.reg.unitNames())
		}
	}
	if !ok[Orig] && !ok[Resp] {
		return nil
	}
	d.stats.SkippedFlows -= 2 // counted by BeginConn
	d.open(c, e, ok)
	return nil
}

// open opens the parsers of a flow-engine connection: e[side] reads side
// when ok[side].
func (d *Dispatcher) open(c *flow.Conn, e [2]Entry, ok [2]bool) {
	kind := Stream
	if c.Key.Proto != flow.ProtoTCP {
		kind = Block
	}
	var uid string
	if d.uid != nil {
		uid = d.uid(c)
	} else {
		uid = UIDFromKey(c.Key, c.Start, d.seed)
	}
	cs := d.newConn("")
	cs.conn = Conn{ID: uid, UID: uid, Kind: kind, Key: c.Key, TS: c.Start}
	cs.n = 2
	cs.fc = c
	for _, side := range [...]Role{Orig, Resp} {
		if !ok[side] {
			d.stats.SkippedFlows++
			continue
		}
		es := e[side].side(side)
		var cp ConnParser
		if side == Resp && ok[Orig] && e[Orig].Analyzer == e[Resp].Analyzer && e[Orig].side(Orig) != es {
			cp = cs.sides[Orig].cp
		} else {
			cp = e[side].Analyzer.Open(&cs.conn)
			cs.split = side == Resp && ok[Orig]
		}
		cs.sides[side] = sideState{cp: cp, p: sideParser(cp, es)}
		d.stats.Flows++
		if h, ok := cp.(Holder); ok && d.charge != nil && (side == Orig || cp != cs.sides[Orig].cp) {
			cs.holders[side] = h
		}
	}
	c.User = cs
}

// recharge tells Config.Charge how the memory a connection's parsers hold
// changed.
func (d *Dispatcher) recharge(cs *connState) {
	held := 0
	for _, h := range cs.holders {
		if h != nil {
			held += h.Held()
		}
	}
	if held != cs.held {
		d.charge(cs.fc, held-cs.held)
		cs.held = held
	}
}

// Data implements flow.Handler.
func (d *Dispatcher) Data(c *flow.Conn, dir flow.Dir, data []byte) {
	cs, _ := c.User.(*connState)
	if cs == nil || cs.sides[dir].p == nil || cs.sides[dir].done {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	cs.conn.TS = c.Last
	d.stats.Bytes += int64(len(data))
	cs.sides[dir].p.Feed(data)
	if cs.holders[0] != nil || cs.holders[1] != nil {
		d.recharge(cs)
	}
}

// Gap implements flow.Handler.
func (d *Dispatcher) Gap(c *flow.Conn, dir flow.Dir, n int) {
	cs, _ := c.User.(*connState)
	if cs == nil || cs.sides[dir].p == nil || cs.sides[dir].done || n <= 0 {
		return
	}
	cs.conn.TS = c.Last
	d.stats.Gaps++
	d.stats.GapBytes += int64(n)
	cs.sides[dir].p.Gap(n)
	if cs.holders[0] != nil || cs.holders[1] != nil {
		d.recharge(cs)
	}
}

// EndStream implements flow.StreamEnder: the direction's parser finishes
// when its stream reaches its FIN, as Zeek's analyzers see EndpointEOF.
func (d *Dispatcher) EndStream(c *flow.Conn, dir flow.Dir) {
	cs, _ := c.User.(*connState)
	if cs == nil || cs.sides[dir].p == nil || cs.sides[dir].done {
		return
	}
	cs.conn.TS = c.Last
	cs.sides[dir].done = true
	cs.sides[dir].p.Finish()
}

// EndConn implements flow.Handler.
func (d *Dispatcher) EndConn(c *flow.Conn) {
	cs, _ := c.User.(*connState)
	if cs == nil {
		return
	}
	cs.conn.TS = c.Last
	c.User = nil
	d.closeConn(cs)
}

var _ flow.StreamEnder = (*Dispatcher)(nil)

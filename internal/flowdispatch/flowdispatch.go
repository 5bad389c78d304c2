// Package flowdispatch feeds the flow engine's events to parsers: it is
// the [flow.Handler] that binds (see [parsers.Binding]) the parsers of a
// connection seen in a trace, chosen by its responder port in a
// [parsers.Registry]'s port map or later by content ([Dispatcher.Attach]),
// and feeds them each direction's data, gaps and end. It is the analyzer's
// counterpart of [parsers.Dispatcher], which does the same for batch
// records.
package flowdispatch

import (
	"fmt"

	"github.com/wirebench/wirebench/internal/connlist"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// Config configures a Dispatcher.
type Config struct {
	// UIDSeed seeds the connections' uids (see [parsers.UIDFromKey]).
	UIDSeed uint64
	// UID, when set, gives the uid of a connection that gets parsers,
	// instead of parsers.UIDFromKey(c.Key, c.Start, UIDSeed): a program
	// that already made one for its own logs passes it on, so the
	// connection's logs agree and the uid is made once.
	UID func(c *flow.Conn) string
	// Charge, when set, is told how the memory the parsers of a
	// connection hold (see [parsers.Holder]) changed by delta bytes, after
	// the Feed or Gap that changed it: the analyzer counts it against its
	// flow engine's budget, which releases it when the connection ends.
	Charge func(c *flow.Conn, delta int)
}

// Dispatcher is a flow.Handler (and flow.StreamEnder) feeding parsers. It
// keeps its state of a connection in flow.Conn.User; a driver that keeps
// its own state of each connection can keep the parsers in it instead (see
// State). It is not safe for concurrent use; it allocates per connection,
// never per Data event.
type Dispatcher struct {
	reg    *parsers.Registry
	seed   uint64
	uid    func(c *flow.Conn) string
	charge func(c *flow.Conn, delta int)
	// conns holds the connections with parsers, so that End closes them in
	// the order they were opened.
	conns connlist.List[connState]
	stats parsers.Stats
}

// State is the parsers of one connection, kept by a driver in its own
// state of the connection rather than by the Dispatcher in flow.Conn.User
// (see OpenIn): its events then reach the parsers without the look-up of
// User, and the connection costs no state of the Dispatcher's. The zero
// value is a connection without parsers. A State must not be copied once
// opened: the parsers keep a pointer into it.
type State struct {
	b parsers.Binding
	// held is what its parsers held when Config.Charge was last told.
	held int
}

// connState is one connection with parsers whose State the Dispatcher
// keeps.
type connState struct {
	State
	fc *flow.Conn // whose User holds this state
}

type conn = connlist.Node[connState]

// New returns a dispatcher choosing parsers in reg.
func New(reg *parsers.Registry, cfg Config) *Dispatcher {
	return &Dispatcher{reg: reg, seed: cfg.UIDSeed, uid: cfg.UID, charge: cfg.Charge}
}

// Stats returns the counters so far (Records stays 0).
func (d *Dispatcher) Stats() parsers.Stats { return d.stats }

// BeginConn implements flow.Handler: it picks the parsers of a connection
// by its responder's port and protocol in the registry's port map. A
// connection to a port without parsers is not parsed, unless Attach gives
// it parsers later.
func (d *Dispatcher) BeginConn(c *flow.Conn) { d.Begin(c) }

// Begin is BeginConn that reports whether the connection got parsers, as
// Parsing would: a driver that asks for every connection saves the call.
func (d *Dispatcher) Begin(c *flow.Conn) bool {
	c.User = nil
	e, ok := d.Entries(c)
	if e == nil {
		d.stats.SkippedFlows += 2
		return false
	}
	d.Open(c, e, ok, d.uidOf(c))
	return true
}

// Entries returns the entries of the parsers Begin would give c, those of
// its responder's port and protocol, nil when there are none. With Open
// they are Begin for a driver that has the uid of c at hand: it passes
// the uid to Open rather than answer a call of Config.UID. A connection
// it does not open counts as skipped in its driver's figures, not in
// Stats.
func (d *Dispatcher) Entries(c *flow.Conn) (*[2]parsers.Entry, [2]bool) {
	return d.reg.PortEntries(parsers.Port{Num: c.Key.Resp.Port(), Proto: c.Key.Proto})
}

// uidOf returns the uid of c: Config.UID's, or one made from its key.
func (d *Dispatcher) uidOf(c *flow.Conn) string {
	if d.uid != nil {
		return d.uid(c)
	}
	return parsers.UIDFromKey(c.Key, c.Start, d.seed)
}

// Parsing reports whether a connection has parsers.
func (d *Dispatcher) Parsing(c *flow.Conn) bool {
	cs, _ := c.User.(*conn)
	return cs != nil
}

// Attach gives a connection that BeginConn left without parsers the
// parsers named orig (for the originator's data) and resp (for the
// responder's), as when dynamic protocol detection recognises a protocol
// by content. Data and gaps passed after it are parsed; the caller replays
// what it held back. An empty name leaves that side unparsed. Attach fails
// when the connection already has parsers or a name is unknown.
func (d *Dispatcher) Attach(c *flow.Conn, orig, resp string) error {
	if d.Parsing(c) {
		return fmt.Errorf("connection %v already has parsers", c.Key)
	}
	e, ok, err := d.lookup(orig, resp)
	if err != nil || !ok[parsers.Orig] && !ok[parsers.Resp] {
		return err
	}
	d.stats.SkippedFlows -= 2 // counted by BeginConn
	d.Open(c, &e, ok, d.uidOf(c))
	return nil
}

// AttachIn is Attach of a connection whose parsers its driver keeps in s,
// which has none (see OpenIn); it reports whether s got parsers. The
// connection counts as skipped in its driver's figures until it has them.
func (d *Dispatcher) AttachIn(s *State, c *flow.Conn, orig, resp string) (bool, error) {
	e, ok, err := d.lookup(orig, resp)
	if err != nil || !ok[parsers.Orig] && !ok[parsers.Resp] {
		return false, err
	}
	d.OpenIn(s, c, &e, ok, d.uidOf(c))
	return true, nil
}

// lookup returns the entries of the parsers named orig and resp, as
// Attach takes them.
func (d *Dispatcher) lookup(orig, resp string) (e [2]parsers.Entry, ok [2]bool, err error) {
	for side, name := range [2]string{orig, resp} {
		if name == "" {
			continue
		}
		if e[side], ok[side] = d.reg.LookupString(name); !ok[side] {
			return e, ok, fmt.Errorf("no parser named %q (known: %s)", name, d.reg.UnitNames())
		}
	}
	return e, ok, nil
}

// Open gives c, which has no parsers, those of the entries e that Entries
// (or Attach) found for it, and names it uid in their records: e[side]
// reads side when ok[side]. The entries come by pointer: the array is ten
// words, which every call would copy.
func (d *Dispatcher) Open(c *flow.Conn, e *[2]parsers.Entry, ok [2]bool, uid string) {
	cs := d.conns.Open()
	cs.Value.fc = c
	d.OpenIn(&cs.Value.State, c, e, ok, uid)
	c.User = cs
}

// OpenIn is Open of a connection whose parsers its driver keeps in s,
// which must be zero: the driver then passes the connection's events to
// DataIn, GapIn, EndStreamIn and EndConnIn with s, and the Dispatcher
// keeps nothing of the connection (End does not close it).
func (d *Dispatcher) OpenIn(s *State, c *flow.Conn, e *[2]parsers.Entry, ok [2]bool, uid string) {
	kind := parsers.Stream
	if c.Key.Proto != flow.ProtoTCP {
		kind = parsers.Block
	}
	d.stats.Conns++
	// Set field by field: the state comes zeroed, and a composite literal
	// is built aside and copied over it, as is the key of a tuple
	// assignment.
	cn := s.b.Conn()
	cn.ID, cn.UID, cn.Kind, cn.TS = uid, uid, kind, c.Start
	cn.Key = c.Key
	n := s.b.BindIn(e, ok)
	d.stats.Flows += int64(n)
	d.stats.SkippedFlows += int64(2 - n)
}

// recharge tells Config.Charge that the parsers of c, kept in s, hold
// held bytes now. Data and Gap call it only when held changed, which few
// of their calls see: the test stays in line.
func (d *Dispatcher) recharge(s *State, c *flow.Conn, held int) {
	d.charge(c, held-s.held)
	s.held = held
}

// Data implements flow.Handler.
func (d *Dispatcher) Data(c *flow.Conn, dir flow.Dir, data []byte) {
	cs, _ := c.User.(*conn)
	if cs == nil {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	d.DataIn(&cs.Value.State, c, dir, data)
}

// DataIn is Data of a connection whose parsers are kept in s.
func (d *Dispatcher) DataIn(s *State, c *flow.Conn, dir flow.Dir, data []byte) {
	side := parsers.Role(dir)
	if !s.b.Parses(side) {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	s.b.Conn().TS = c.Last
	d.stats.Bytes += int64(len(data))
	s.b.Feed(side, data)
	if d.charge != nil && s.b.Holds() {
		if held := s.b.Held(); held != s.held {
			d.recharge(s, c, held)
		}
	}
}

// Gap implements flow.Handler.
func (d *Dispatcher) Gap(c *flow.Conn, dir flow.Dir, n int) {
	if cs, _ := c.User.(*conn); cs != nil {
		d.GapIn(&cs.Value.State, c, dir, n)
	}
}

// GapIn is Gap of a connection whose parsers are kept in s.
func (d *Dispatcher) GapIn(s *State, c *flow.Conn, dir flow.Dir, n int) {
	side := parsers.Role(dir)
	if !s.b.Parses(side) || n <= 0 {
		return
	}
	s.b.Conn().TS = c.Last
	d.stats.Gaps++
	d.stats.GapBytes += int64(n)
	s.b.Gap(side, n)
	if d.charge != nil && s.b.Holds() {
		if held := s.b.Held(); held != s.held {
			d.recharge(s, c, held)
		}
	}
}

// EndStream implements flow.StreamEnder: the direction's parser finishes
// when its stream reaches its FIN, as Zeek's analyzers see EndpointEOF.
func (d *Dispatcher) EndStream(c *flow.Conn, dir flow.Dir) {
	if cs, _ := c.User.(*conn); cs != nil {
		d.EndStreamIn(&cs.Value.State, c, dir)
	}
}

// EndStreamIn is EndStream of a connection whose parsers are kept in s.
func (d *Dispatcher) EndStreamIn(s *State, c *flow.Conn, dir flow.Dir) {
	side := parsers.Role(dir)
	if !s.b.Parses(side) {
		return
	}
	s.b.Conn().TS = c.Last
	s.b.Finish(side)
}

// EndConn implements flow.Handler.
func (d *Dispatcher) EndConn(c *flow.Conn) {
	cs, _ := c.User.(*conn)
	if cs == nil {
		return
	}
	// closeConn, written out: every connection with parsers ends here.
	// The list zeroes the state it keeps, the Binding with it.
	d.EndConnIn(&cs.Value.State, c)
	c.User = nil
	d.conns.Close(cs)
}

// EndConnIn is EndConn of a connection whose parsers are kept in s: the
// parsers finish and are closed. It leaves s as it is, for a driver that
// zeroes its state of the connection next, with s in it; s must be zeroed
// before it is opened again.
func (d *Dispatcher) EndConnIn(s *State, c *flow.Conn) {
	s.b.Conn().TS = c.Last
	s.b.Release()
}

// End finishes and closes every connection still open, in the order they
// were opened: call it after the flow engine's Flush, for the connections
// the engine did not end. The connections whose parsers a driver keeps
// are its own to end.
func (d *Dispatcher) End() {
	for n := d.conns.Oldest(); n != nil; n = d.conns.Oldest() {
		d.closeConn(n)
	}
}

// closeConn closes the connection's parsers and keeps its state for
// reuse.
func (d *Dispatcher) closeConn(n *conn) {
	n.Value.b.Release()
	if n.Value.fc.User == n {
		n.Value.fc.User = nil
	}
	d.conns.Close(n)
}

var _ flow.StreamEnder = (*Dispatcher)(nil)

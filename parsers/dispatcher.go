package parsers

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/internal/connlist"
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
	// EvictedConns counts connections closed before their end because
	// Config.MaxConns were open; BufferEvictions those closed because
	// their parsers' buffers passed Config.MaxBuffered.
	EvictedConns, BufferEvictions int64
	// Buffered is what the parsers of the open connections hold now (see
	// [Holder]), PeakBuffered the most they held at once.
	Buffered, PeakBuffered int64
}

// Config configures a Dispatcher.
type Config struct {
	// Fallback names the parser of flows whose parser name is unknown
	// (spicy-driver's -p); empty: such flows are skipped.
	Fallback string
	// UIDSeed seeds the derivation of connection uids (see UIDFromID).
	UIDSeed uint64
	// NoUIDs leaves Conn.UID empty, for a driver whose sinks do not read
	// it, such as a replay that only counts transactions: deriving a uid
	// is a good part of what opening a connection costs.
	NoUIDs bool
	// KeyUse says which parts of Conn.Key the parsers and sinks read (the
	// Join of the protocols' Protocol.KeyUse and what the sinks read):
	// the Dispatcher parses only those out of a connection id and leaves
	// the others zero. With KeyResp, the originator's address and port
	// are skipped, not parsed, so not checked either: an id whose
	// responder's part follows the convention gets its Resp and Proto
	// whatever comes before. The zero value, KeyAll, parses all.
	KeyUse KeyUse

	// MaxConns caps the connections open at once (0: no cap). A
	// @begin-conn or @begin-flow past it first closes the connection idle
	// the longest, as if it had ended: its parsers finish, so its
	// transactions are reported, and its later records are skipped as
	// those of an unknown flow (Stats.EvictedConns).
	MaxConns int
	// MaxBuffered caps the bytes of memory the parsers of the open
	// connections hold between records, partial lines above all, as
	// reported by ConnParsers that implement [Holder] (0: no cap).
	// When a record takes the total past it, the connections idle the
	// longest are closed the same way until it fits
	// (Stats.BufferEvictions).
	MaxBuffered int64
}

// Dispatcher turns batch records ([Dispatcher.Record] or, for a whole
// batch.Reader, [Dispatcher.Dispatch], then [Dispatcher.End]) into parser
// calls. Per connection it binds (see [Binding]) the parsers
// its flows' parser names resolve to in the Registry, feeds each flow to
// its side's parser, and finishes and closes them when the connection
// ends. (The analyzer drives a Binding per connection from the flow
// engine's events in the same way.)
//
// A Dispatcher is not safe for concurrent use. It never allocates per
// @data record, and per connection only a share of a chunk of ids.
type Dispatcher struct {
	reg         *Registry
	fallback    Entry
	hasFallback bool
	uids        idHasher
	noUIDs      bool
	keyUse      KeyUse
	connIDs     respCache // parses the ids of connections
	// names are the latest parser names of a connection's flows
	// resolved: a batch file names the same few for all its connections.
	names resolvedNames
	ids   idArena // the ids and uids the parsers see
	// fidBufs are the flow id buffers of closed connections, for the
	// next ones (see connState.fidBuf).
	fidBufs [][]byte

	// flows holds the open flow ids of batch input, but for those
	// derived from their connection's id (see connState.derived).
	flows idTable[flowRef]
	conns idTable[*conn] // open connection ids of batch input
	// last is the connection a derived flow id led to the latest: the
	// next record is often one of its own (a reply follows its query),
	// which a comparison of ids finds without hashing one.
	last *conn
	// recent holds connections whose flow ids derive from their ids, in
	// the slot recentSlot picks for the id: the reply of a query that
	// other connections' records followed is found without hashing the
	// id in full. A slot may be nil or hold another connection, or a
	// closed one, whose state is zero (its id empty, nothing derived)
	// until a connection reuses it.
	recent [recentSlots]*conn
	// open holds the open connections in the order they were opened or,
	// under the caps, from the one idle the longest to the one that got
	// the latest record: the order in which the caps close them.
	open        connlist.List[connState]
	nOpen       int // connections in open
	maxConns    int
	maxBuffered int64
	stats       Stats
}

// connState is one open connection.
type connState struct {
	b Binding
	// fidBuf holds the fids of a @begin-conn. Unlike the ids in the
	// arena, they are seen by the Dispatcher alone, which drops them
	// when the connection closes, so the buffer serves the next
	// connection and a replay makes no garbage of them.
	fidBuf []byte
	// cidHash and fidHash are the hashes of the connection's keys in
	// Dispatcher.conns and Dispatcher.flows; 0 for a key it does not
	// have, as a stored hash is never 0.
	cidHash uint64
	fidHash [2]uint64
	// derived says a side's flow id is the connection's id with "-orig"
	// or "-resp" appended, as recorders name flows: it is found through
	// Dispatcher.conns, which holds the connection's id anyway, and
	// costs no key of its own in Dispatcher.flows.
	derived [2]bool
	// seq numbers the connection in the order connections were opened
	// (Stats.Conns when it was), which End keeps.
	seq int64
	// buffered is what its parsers held after its latest record.
	buffered int64
}

type conn = connlist.Node[connState]

// NewDispatcher returns a dispatcher resolving parser names in reg.
func NewDispatcher(reg *Registry, cfg Config) (*Dispatcher, error) {
	d := &Dispatcher{
		reg: reg,

		noUIDs:      cfg.NoUIDs,
		keyUse:      cfg.KeyUse,
		maxConns:    cfg.MaxConns,
		maxBuffered: cfg.MaxBuffered,
	}
	d.uids.seed(cfg.UIDSeed)
	d.flows.init()
	d.conns.init()
	if cfg.Fallback != "" {
		e, ok := reg.LookupString(cfg.Fallback)
		if !ok {
			return nil, fmt.Errorf("no parser named %q (known: %s)", cfg.Fallback, reg.UnitNames())
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
	if r.Op < batch.BeginFlow || r.Op > batch.EndConn {
		return fmt.Errorf("line %d: unknown batch command %d", r.Line, r.Op)
	}
	(*recordHandler)(d).Record(r)
	d.stats.Records++
	return nil
}

// Dispatch dispatches the records of r, as Record does each, to the end
// of its input, and returns nil there, or r's first error. Every
// checkEvery records (when above 0) it calls check and stops with the
// error check returns, if any: a driver looks at its context so. It
// takes the records from [batch.Reader.Handle], a call for each, without
// the call of Next and the switch on the command that Record makes, which
// a batch file of small records makes costly.
func (d *Dispatcher) Dispatch(r *batch.Reader, checkEvery int, check func() error) error {
	n := checkEvery
	if n <= 0 {
		n = math.MaxInt
	}
	h := (*recordHandler)(d)
	for {
		k, err := r.Handle(h, n)
		d.stats.Records += int64(k)
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if checkEvery > 0 {
			if err := check(); err != nil {
				return err
			}
		}
	}
}

// recordHandler is the batch.Handler of Dispatch: the Dispatcher with the
// methods of one, which are not its own.
type recordHandler Dispatcher

// Record dispatches a record of any command: Dispatcher.Record, but for
// its count and error.
func (h *recordHandler) Record(r *batch.Record) {
	d := (*Dispatcher)(h)
	switch r.Op {
	case batch.BeginConn:
		h.BeginConn(r)
	case batch.BeginFlow:
		d.beginFlow(r)
	case batch.Gap:
		d.gap(r.ID, r.Size)
	case batch.EndFlow:
		d.endFlow(r.ID)
	case batch.Data:
		h.Data(r.ID, r.Data)
	case batch.EndConn:
		h.EndConn(r.ID)
	}
}

// End finishes and closes every connection still open, in the order they
// were opened: call it at the end of the input (after the flow engine's
// Flush, which ends its connections itself).
func (d *Dispatcher) End() {
	if !d.capped() {
		// Only the caps move connections in d.open; under them, the
		// order of opening is their seq.
		for n := d.open.Oldest(); n != nil; n = d.open.Oldest() {
			d.closeConn(n)
		}
		return
	}
	open := make([]*conn, 0, d.nOpen)
	for n := d.open.Oldest(); n != nil; n = n.Next() {
		open = append(open, n)
	}
	slices.SortFunc(open, func(a, b *conn) int { return cmp.Compare(a.Value.seq, b.Value.seq) })
	for _, n := range open {
		d.closeConn(n)
	}
}

// resolvedNames are the parser names of a connection's two flows and
// what they resolved to while the registry's names were at generation
// gen.
type resolvedNames struct {
	orig, resp []byte
	e          [2]Entry
	ok         bool // both resolved
	gen        uint64
	// shared and swap are sharedSides' for e, when both entries have
	// one analyzer: worked out once for the pair, not per connection.
	shared, swap bool
}

// resolveNames resolves the parser names of a connection's two flows
// into d.names, which remembers the latest pair: BeginConn compares the
// names with it and calls resolveNames only for other names, so that
// the entries and how they bind are found without a call for each side,
// and most connections make no call at all.
func (d *Dispatcher) resolveNames(orig, resp []byte) {
	c := &d.names
	eo, okO := d.resolve(orig)
	er, okR := d.resolve(resp)
	*c = resolvedNames{
		orig: append(c.orig[:0], orig...), resp: append(c.resp[:0], resp...),
		e: [2]Entry{eo, er}, ok: okO && okR, gen: d.reg.namesGen,
	}
	if c.ok && eo.Analyzer == er.Analyzer {
		c.shared, c.swap = sharedSides(&c.e)
	}
}

// sameName reports whether a and b are the same parser name. Names of 8
// to 16 bytes, as port names like "53/udp%orig" are, are compared as two
// words that may overlap, without the call of a comparison of strings.
func sameName(a, b []byte) bool {
	n := len(a)
	if n != len(b) {
		return false
	}
	if n < 8 || n > 16 {
		return string(a) == string(b)
	}
	return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
		binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
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

// BeginConn opens a connection of two flows. As in spicy-driver, a
// connection is parsed only when the parsers of both flows are known (or
// the fallback stands in); otherwise both flows are skipped. It is a
// method of the handler, as Data is.
func (h *recordHandler) BeginConn(r *batch.Record) {
	d := (*Dispatcher)(h)
	ch := d.conns.hash(r.ID)
	if d.conns.full() {
		d.conns.grow() // for addAt below
	}
	slot, open := d.conns.find(ch, r.ID)
	if open {
		d.stats.DuplicateConns++
		return
	}
	names := &d.names
	if names.orig == nil || names.gen != d.reg.namesGen || !sameName(names.orig, r.OrigParser) || !sameName(names.resp, r.RespParser) {
		d.resolveNames(r.OrigParser, r.RespParser)
	}
	if !names.ok {
		d.stats.SkippedFlows += 2
		return
	}
	if d.full() {
		d.makeRoom()
		slot, _ = d.conns.find(ch, r.ID) // closing moved ids
	}
	cid := d.ids.str(r.ID)
	n := d.newConn()
	cs := &n.Value
	d.setReplayConn(&cs.b.conn, cid, r.Kind)
	if names.shared {
		cs.b.bindShared(names.e[Orig].Analyzer, names.swap)
	} else {
		cs.b.bindConn(&names.e, [2]bool{true, true})
	}
	cs.cidHash = ch
	d.conns.addAt(slot, ch, cid, n)
	// A Reader has compared the flow ids with the connection's already.
	if r.DerivedFlowIDs || derivedFid(r.ID, r.OrigID, Orig) && derivedFid(r.ID, r.RespID, Resp) {
		// The ids a flow of this connection had before are its own
		// now, as set would make them below.
		if d.flows.live > 0 {
			d.dropFlow(r.OrigID)
			d.dropFlow(r.RespID)
		}
		cs.derived = [2]bool{true, true}
		d.last = n
		d.recent[recentSlot(r.ID)] = n
	} else {
		fo, fr := d.setFids(cs, r.OrigID, r.RespID)
		cs.fidHash = [2]uint64{d.flows.hash(r.OrigID), d.flows.hash(r.RespID)}
		d.setFlow(cs.fidHash[0], fo, flowRef{n, Orig})
		d.setFlow(cs.fidHash[1], fr, flowRef{n, Resp})
	}
	d.stats.Flows += 2
}

// EndConn closes the connection of id cid. Recorders end connections
// when they time out, so the one idle the longest is the likeliest: the
// oldest of d.open (the one opened first when there are no caps) is
// compared first and, if it is the one, found in d.conns by its stored
// hash, without hashing cid. (A connection of a @begin-flow has no id in
// d.conns: cidHash is 0.) It is a method of the handler, not of the
// Dispatcher, so that the Reader's call runs it without another.
func (h *recordHandler) EndConn(cid []byte) {
	d := (*Dispatcher)(h)
	if c := d.open.Oldest(); c != nil && c.Value.cidHash != 0 && c.Value.b.conn.ID == string(cid) {
		d.closeConn(c)
		return
	}
	if i, ok := d.conns.find(d.conns.hash(cid), cid); ok {
		d.closeConnAt(d.conns.slots[i].val, i)
	}
}

// origSuffix and respSuffix, of the same length, are what a connection's
// id takes to name the flow of each side. They are constants so that a
// comparison with them is a few loads, not a call.
const (
	origSuffix = "-orig"
	respSuffix = "-resp"
)

// derivedFid reports whether fid is cid's flow id for side (see
// connState.derived).
func derivedFid(cid, fid []byte, side Role) bool {
	n := len(cid)
	if len(fid) != n+len(origSuffix) {
		return false
	}
	if side == Orig && string(fid[n:]) != origSuffix || side != Orig && string(fid[n:]) != respSuffix {
		return false
	}
	return string(fid[:n]) == string(cid)
}

// setFlow maps the flow id fid, whose hash is h, to ref in d.flows; a
// connection whose id fid derives from loses it, as a flow in d.flows
// does by the set.
func (d *Dispatcher) setFlow(h uint64, fid string, ref flowRef) {
	if cs, side, ok := d.derivedFlow(bytesOf(fid)); ok {
		cs.Value.derived[side] = false
	}
	d.flows.set(h, fid, ref)
}

// dropFlow removes the flow id fid from d.flows.
func (d *Dispatcher) dropFlow(fid []byte) {
	if i, ok := d.flows.find(d.flows.hash(fid), fid); ok {
		d.flows.removeAt(i)
	}
}

// flowSlot returns the slot of d.flows holding fid, if any.
func (d *Dispatcher) flowSlot(fid []byte) (int, bool) {
	if d.flows.live == 0 {
		return 0, false
	}
	return d.flows.find(d.flows.hash(fid), fid)
}

// flow returns the open flow of id fid.
func (d *Dispatcher) flow(fid []byte) (flowRef, bool) {
	if d.flows.live > 0 {
		if ref, ok := d.flows.get(d.flows.hash(fid), fid); ok {
			return ref, true
		}
	}
	cs, side, ok := d.derivedFlow(fid)
	return flowRef{cs, side}, ok
}

// derivedFlow returns the connection and side whose flow id, derived from
// the connection's id, is fid.
func (d *Dispatcher) derivedFlow(fid []byte) (*conn, Role, bool) {
	n := len(fid) - len(origSuffix)
	if n < 0 {
		return nil, 0, false
	}
	var side Role
	switch string(fid[n:]) {
	case origSuffix:
		side = Orig
	case respSuffix:
		side = Resp
	default:
		return nil, 0, false
	}
	cid := fid[:n]
	if c := d.last; c != nil && c.Value.derived[side] && c.Value.b.conn.ID == string(cid) {
		return c, side, true
	}
	r := &d.recent[recentSlot(cid)]
	if c := *r; c != nil && c.Value.derived[side] && c.Value.b.conn.ID == string(cid) {
		d.last = c
		return c, side, true
	}
	cs, ok := d.conns.get(d.conns.hash(cid), cid)
	if !ok || !cs.Value.derived[side] {
		return nil, 0, false
	}
	d.last, *r = cs, cs
	return cs, side, true
}

// recentSlots is the size of Dispatcher.recent: more than the
// connections whose records come between a query and its reply, as a
// rule, which for a busy resolver are thousands. A miss costs a hash of
// the id and a lookup in Dispatcher.conns; a slot costs a pointer.
const (
	recentBits  = 12
	recentSlots = 1 << recentBits
)

// recentSlot picks the slot of Dispatcher.recent for a connection id from
// the eight bytes in its middle, where the ids of a trace differ most (in
// the originator's port, or in an IPv6 address).
func recentSlot(cid []byte) uint {
	if len(cid) < 8 {
		return uint(len(cid))
	}
	w := binary.LittleEndian.Uint64(cid[len(cid)/2-4:])
	return uint((w * 0x9e3779b97f4a7c15) >> (64 - recentBits))
}

// beginFlow opens a connection with a single flow, in the originator's
// place. A @begin-flow for a flow id already open is ignored, like a
// repeated @begin-conn.
func (d *Dispatcher) beginFlow(r *batch.Record) {
	fh := d.flows.hash(r.ID) // looked up as flow does, with the hash kept
	_, inTable := d.flows.get(fh, r.ID)
	if _, _, derived := d.derivedFlow(r.ID); inTable || derived {
		d.stats.DuplicateConns++
		return
	}
	e, ok := d.resolve(r.Parser)
	if !ok {
		d.stats.SkippedFlows++
		return
	}
	if d.full() {
		d.makeRoom()
	}
	fid := d.ids.str(r.ID)
	n := d.newConn()
	d.setReplayConn(&n.Value.b.conn, fid, r.Kind)
	n.Value.b.bindConn(&[2]Entry{e}, [2]bool{true, false})
	n.Value.fidHash[0] = fh
	d.flows.set(fh, fid, flowRef{n, Orig})
	d.stats.Flows++
}

// setFids keeps the flow ids of a @begin-conn in the connection's fidBuf
// and returns them as strings backed by it.
func (d *Dispatcher) setFids(cs *connState, orig, resp []byte) (o, r string) {
	var buf []byte
	if k := len(d.fidBufs); k > 0 {
		buf, d.fidBufs = d.fidBufs[k-1], d.fidBufs[:k-1]
	}
	if n := len(orig) + len(resp); cap(buf) < n {
		// Rounded up, so that a buffer grows once for the ids of a
		// form (IPv4's, IPv6's), not with each longer pair.
		buf = make([]byte, 0, (n+fidBufRound-1)/fidBufRound*fidBufRound)
	}
	buf = append(append(buf[:0], orig...), resp...)
	cs.fidBuf = buf
	return bufString(buf[:len(orig)]), bufString(buf[len(orig):])
}

// The sizes of fid buffers are rounded up to fidBufRound: the two flow
// ids of an IPv4 connection take some 90 bytes, of an IPv6 one up to 180.
// Only buffers of at most maxKeptFidBuf are kept for the next connection:
// a few long ids must not stay in the free list.
const (
	fidBufRound   = 64
	maxKeptFidBuf = 512
)

// bufString returns b as a string that is valid while b is not written.
func bufString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

type flowRef struct {
	cs   *conn
	side Role
}

// Data feeds a @data record: the hot path, so it reads the side once
// instead of through Binding's Parses and Feed, and looks for a derived
// flow id (see connState.derived) without the call of flow when d.flows
// is empty, as it is for recorders' flows. It is a method of the
// handler, as EndConn is, for the Reader's call to run it without
// another.
func (h *recordHandler) Data(fid, data []byte) {
	d := (*Dispatcher)(h)
	var ref flowRef
	var ok bool
	if d.flows.live > 0 {
		ref, ok = d.flow(fid)
	} else {
		ref.cs, ref.side, ok = d.derivedFlow(fid)
	}
	if !ok {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	s := &ref.cs.Value.b.sides[ref.side&1]
	if s.p == nil || s.done {
		d.stats.SkippedBytes += int64(len(data))
		return
	}
	d.stats.Bytes += int64(len(data))
	s.p.Feed(data)
	// touch's work, written out (keep the two the same): a call per
	// record costs more than the lines, and touch is too large to be
	// inlined.
	n := ref.cs
	if !d.capped() {
		return
	}
	d.open.MoveToBack(n)
	if d.maxBuffered > 0 {
		if b := int64(n.Value.b.Held()); b != n.Value.buffered {
			d.rebuffer(n, b)
		}
	}
}

func (d *Dispatcher) gap(fid []byte, size int64) {
	ref, ok := d.flow(fid)
	if !ok || !ref.cs.Value.b.Parses(ref.side) || size <= 0 {
		return
	}
	d.stats.Gaps++
	d.stats.GapBytes += size
	ref.cs.Value.b.Gap(ref.side, clampInt(size))
	d.touch(ref.cs)
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
	// Looked up as flow does, once: the id is taken out where it was.
	var ref flowRef
	if i, ok := d.flowSlot(fid); ok {
		ref = d.flows.slots[i].val
		d.flows.removeAt(i)
	} else if cs, side, ok := d.derivedFlow(fid); ok {
		ref = flowRef{cs, side}
		cs.Value.derived[side] = false
	} else {
		return
	}
	cs := &ref.cs.Value
	cs.b.Finish(ref.side)
	if cs.b.Finished() {
		d.closeConn(ref.cs)
	}
}

// setReplayConn sets c, in place, to the parsing context of a connection
// of batch input: the 5-tuple comes from the id when it follows Zeek's
// convention.
func (d *Dispatcher) setReplayConn(c *Conn, id string, kind batch.Kind) {
	c.ID, c.Kind, c.UID, c.TS = id, connKind(kind), "", 0
	switch d.keyUse {
	case KeyAll:
		d.connIDs.parseInto(&c.Key, id)
	case KeyResp:
		d.connIDs.parseRespInto(&c.Key, id)
	default:
		c.Key = connid.Key{}
	}
	if !d.noUIDs {
		c.UID = d.ids.uid(&d.uids, id)
	}
}

// idArena holds the ids and uids of a Dispatcher's connections without
// allocating each: it copies them one after another into chunks and
// returns strings that point into the chunks. A byte of a chunk is never
// written again, so the strings stay valid and unchanged however long a
// parser or sink keeps them; a full chunk is dropped, and the garbage
// collector frees it once no string points into it. Each open connection
// pins at most the chunks its own ids are in (one or two of
// idChunkSize); an id longer than maxArenaID gets its own allocation.
type idArena struct {
	chunk []byte // len: bytes used; never reallocated by append
}

const (
	idChunkSize = 1024 // the ids and uid of some five connections
	maxArenaID  = idChunkSize / 4
)

// str returns b as a string.
func (a *idArena) str(b []byte) string {
	if len(b) == 0 || len(b) > maxArenaID {
		return string(b)
	}
	n := a.room(len(b))
	a.chunk = append(a.chunk, b...)
	return unsafe.String(&a.chunk[n], len(b))
}

// uid returns the uid h derives from id (UIDFromID's).
func (a *idArena) uid(h *idHasher, id string) string {
	n := a.room(maxUIDLen)
	a.chunk = h.appendUID(a.chunk, id)
	return unsafe.String(&a.chunk[n], len(a.chunk)-n)
}

// room makes sure the chunk has room for n more bytes and returns where
// they go.
func (a *idArena) room(n int) int {
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, idChunkSize)
	}
	return len(a.chunk)
}

// newConn opens a connection.
func (d *Dispatcher) newConn() *conn {
	n := d.open.Open()
	d.nOpen++
	d.stats.Conns++
	n.Value.seq = d.stats.Conns
	return n
}

// closeConn finishes the connection's flows that are still open, closes
// its parsers and keeps its state for reuse.
func (d *Dispatcher) closeConn(n *conn) { d.closeConnAt(n, -1) }

// closeConnAt is closeConn for the connection whose id is in slot i of
// d.conns, -1 when not known.
func (d *Dispatcher) closeConnAt(n *conn, i int) {
	cs := &n.Value
	cs.b.Release() // d.open.Close zeroes the state
	if cs.fidHash != [2]uint64{} {
		d.dropFlows(n)
	}
	if i >= 0 {
		d.conns.removeAt(i)
	} else if cs.cidHash != 0 {
		if i, ok := d.conns.findValue(cs.cidHash, n); ok {
			d.conns.removeAt(i)
		}
	}
	if cs.fidBuf != nil && cap(cs.fidBuf) <= maxKeptFidBuf {
		d.fidBufs = append(d.fidBufs, cs.fidBuf[:0])
	}
	if d.last == n {
		d.last = nil
	}
	d.nOpen--
	d.stats.Buffered -= cs.buffered
	d.open.Close(n)
}

// dropFlows removes the flow ids a closing connection has in d.flows (not
// those derived from its id, which have none). An id is removed only if it
// is still this connection's: a later @begin-conn or @begin-flow may have
// taken a flow id over.
func (d *Dispatcher) dropFlows(n *conn) {
	for side, h := range n.Value.fidHash {
		if h == 0 {
			continue
		}
		if i, ok := d.flows.findValue(h, flowRef{n, Role(side)}); ok {
			d.flows.removeAt(i)
		}
	}
}

// touch moves a connection that just got a record to the end of d.open
// and, under MaxBuffered, takes the bytes its parsers hold into
// account, closing the connections idle the longest while the total is
// over the cap, with that rare work out of line (rebuffer). It is too
// large to be inlined: Data, which runs for every chunk, does its work
// in line, and a change here must be made there too.
func (d *Dispatcher) touch(n *conn) {
	if !d.capped() {
		return // the idle order serves the caps only
	}
	d.open.MoveToBack(n)
	if d.maxBuffered <= 0 {
		return
	}
	// When nothing changed, the total is at most its peak and within the
	// cap, as the last record that changed it left it (closing
	// connections only lowers it).
	if b := int64(n.Value.b.Held()); b != n.Value.buffered {
		d.rebuffer(n, b)
	}
}

// rebuffer is touch for a connection whose parsers now hold b bytes,
// other than after its record before.
func (d *Dispatcher) rebuffer(n *conn, b int64) {
	cs := &n.Value
	d.stats.Buffered += b - cs.buffered
	cs.buffered = b
	d.stats.PeakBuffered = max(d.stats.PeakBuffered, d.stats.Buffered)
	for d.stats.Buffered > d.maxBuffered && d.open.Oldest() != nil {
		d.stats.BufferEvictions++
		d.closeConn(d.open.Oldest())
	}
}

// capped reports whether a cap is set: only then are the connections
// kept in d.open in the order they were last used.
func (d *Dispatcher) capped() bool { return d.maxConns > 0 || d.maxBuffered > 0 }

// full reports whether MaxConns are open: then makeRoom must be called
// before another one opens.
func (d *Dispatcher) full() bool { return d.maxConns > 0 && d.nOpen >= d.maxConns }

// makeRoom closes the connections idle the longest while the Dispatcher
// is full.
func (d *Dispatcher) makeRoom() {
	for d.full() {
		d.stats.EvictedConns++
		d.closeConn(d.open.Oldest())
	}
}

package analyzer

import (
	"slices"
	"unsafe"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/flowdispatch"
	"github.com/wirebench/wirebench/internal/tunnel"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
)

// connInfo is the analyzer's state of one connection, kept in
// flow.Conn.Aux.
type connInfo struct {
	// uid is made when something first asks for it (the dispatcher giving
	// the connection parsers, a tunnel naming its parent): conn.log makes
	// the uid of a connection nothing asked for as it writes the record.
	uid string
	// services confirmed, in the order of confirmation.
	services [3]string
	nsvc     int
	parents  [MaxTunnelParents]string
	nparents int
	depth    int // tunnel nesting of the packet that created it

	// The tunnel this UDP connection may carry.
	tkind    tunnel.Kind
	detect   bool    // Teredo found by content: check every packet
	valid    [2]bool // a direction carried a valid encapsulation (Teredo)
	violated bool    // Teredo, VXLAN, Geneve: a packet was not valid; stop

	dpd *dpdState // dynamic protocol detection, while undecided
	// started says the connection carried data (or lost some) and so has
	// its parsers or detection: a connection that never does, such as a
	// bare SYN, costs no parser state.
	started bool
	// parsed says the dispatcher gave it parsers, kept in parsers. The
	// events of a connection without them stop at the analyzer, which
	// counts its data as skipped, as the dispatcher would.
	parsed  bool
	parsers flowdispatch.State
	// cols are the leading columns of its records, rendered by its first
	// protocol record for the others and conn.log's; nil until a protocol
	// record of a connection that had the connInfo comes, then reset for
	// each next one.
	cols *zeeklog.ConnColumns
}

// confirm adds a service to conn.log's service field, once.
func (ci *connInfo) confirm(svc string) { addOnce(ci.services[:], &ci.nsvc, svc) }

func (ci *connInfo) addParent(uid string) { addOnce(ci.parents[:], &ci.nparents, uid) }

// addOnce appends s to list[:*n] unless it is there already or the list
// is full.
func addOnce(list []string, n *int, s string) {
	if *n < len(list) && !slices.Contains(list[:*n], s) {
		list[*n] = s
		*n++
	}
}

func (a *Analyzer) newInfo() *connInfo {
	if n := len(a.freeInfos); n > 0 {
		ci := a.freeInfos[n-1]
		a.freeInfos = a.freeInfos[:n-1]
		return ci
	}
	return new(connInfo)
}

func (a *Analyzer) freeInfo(ci *connInfo) {
	// The columns stay with the connInfo, reset, for its next connection.
	cols := ci.cols
	if cols != nil {
		cols.Reset()
	}
	*ci = connInfo{cols: cols}
	a.freeInfos = append(a.freeInfos, ci)
}

// columns returns the columns of ci's records, giving it them at its
// first protocol record. The uids of the records passed with them, ci's,
// are the UIDArena's.
func (a *Analyzer) columns(ci *connInfo) *zeeklog.ConnColumns {
	if ci.cols == nil {
		ci.cols = new(zeeklog.ConnColumns)
		ci.cols.MarkMadeUIDs()
	}
	return ci.cols
}

func info(c *flow.Conn) *connInfo {
	ci, _ := c.Aux.(*connInfo)
	return ci
}

// connUID gives the dispatcher the uid of a connection, so that http.log
// and dns.log name connections as conn.log does. The dispatcher asks as
// detection attaches a connection's parsers, which dpdStart makes a.cur
// for; bind, for parsers by port, hands it the uid itself.
func (a *Analyzer) connUID(c *flow.Conn) string {
	if ci := a.cur; ci != nil {
		return a.uid(c, ci)
	}
	return parsers.UIDFromKey(c.Key, c.Start, a.cfg.UIDSeed)
}

// uid returns the uid of c, whose state is ci, making it the first time.
func (a *Analyzer) uid(c *flow.Conn, ci *connInfo) string {
	if ci.uid == "" {
		ci.uid = a.uids.FromKeyPtr(&c.Key, c.Start, a.cfg.UIDSeed)
	}
	return ci.uid
}

// BeginConn implements flow.Handler.
func (a *Analyzer) BeginConn(c *flow.Conn) {
	ci := a.newInfo()
	ci.depth = a.encapDepth
	if a.encapUID != "" {
		ci.addParent(a.encapUID)
	}
	c.Aux = ci
	if c.Key.Proto == flow.ProtoUDP && !a.cfg.NoTunnels && ci.depth < a.cfg.MaxTunnelDepth {
		ci.tkind = tunnel.ForUDPPort(c.Key.Resp.Port())
		if ci.tkind == tunnel.None {
			ci.tkind, ci.detect = tunnel.Teredo, true
		}
	}
}

// start gives a connection its parsers, or dynamic protocol detection,
// when its first data (or gap) comes. When no port has parsers and no
// protocol is detected there is nothing to give, and start is in line.
func (a *Analyzer) start(c *flow.Conn, ci *connInfo) {
	ci.started = true
	if a.portless && len(a.detectors) == 0 {
		a.skipped.SkippedFlows += 2 // as the dispatcher's BeginConn counts
		return
	}
	a.bind(c, ci)
}

// bind is start of a connection that may get parsers or detection.
func (a *Analyzer) bind(c *flow.Conn, ci *connInfo) {
	// The entries of the port are looked up once for each run of
	// connections to the same port (see lastPort), in line.
	pe := &a.lastPort
	if portKey(c) != pe.key {
		a.lookUpPort(c)
	}
	if pe.e != nil {
		// The dispatcher's Begin, with the uid passed rather than asked
		// for through connUID.
		a.disp.OpenIn(&ci.parsers, c, pe.e, pe.ok, a.uid(c, ci))
		ci.parsed = true
	} else {
		a.skipped.SkippedFlows += 2 // as the dispatcher's BeginConn counts
	}
	if c.Key.Proto == flow.ProtoTCP && len(a.detectors) > 0 && !ci.parsed {
		ci.dpd = a.newDPD()
	}
	if ci.dpd != nil || ci.parsed {
		if c.Key.Proto == flow.ProtoTCP {
			a.eng.Charge(c, streamParserCost)
		} else {
			a.eng.Charge(c, blockParserCost)
		}
	}
}

// portEntries are the dispatcher's entries of the parsers of one
// responder port (see flowdispatch.Dispatcher.Entries).
type portEntries struct {
	key uint32 // portKey of the port; 0: none yet
	e   *[2]parsers.Entry
	ok  [2]bool
}

// portKey packs the responder port and the protocol of c, with a bit
// set above them.
func portKey(c *flow.Conn) uint32 {
	return 1<<24 | uint32(c.Key.Proto)<<16 | uint32(c.Key.Resp.Port())
}

// lookUpPort makes lastPort the entries of the port of c. The
// dispatcher's Entries of a connection are those of its responder port,
// which those of a trace mostly share with the one before (a DNS
// server's), and the registry's port map does not change after New.
func (a *Analyzer) lookUpPort(c *flow.Conn) {
	pe := &a.lastPort
	pe.e, pe.ok = a.disp.Entries(c)
	pe.key = portKey(c)
}

// Memory the analyzer counts against the flow engine's budget
// (flow.Config.MaxMemory) for each connection: its connInfo (the conn.log
// state, and the dispatcher's state of its parsers, kept there whether it
// gets parsers or not) and uid from the start, and parsers or detection
// once it carries data: those of a TCP connection (HTTP's take about 4 KB
// with a request line under way) or those of a UDP one (DNS's take about
// 1 KB). TestConnMemory checks the figures.
const (
	connCost         = int(unsafe.Sizeof(connInfo{})) + 32
	streamParserCost = 5 << 10
	blockParserCost  = 1536
)

// Data implements flow.Handler.
func (a *Analyzer) Data(c *flow.Conn, dir flow.Dir, data []byte) {
	ci := info(c)
	if ci == nil {
		return
	}
	if !ci.started {
		a.start(c, ci)
	}
	// Whether the datagram may carry a tunnel, asked for every packet's
	// data here, in line (tunnel.DetectTeredo's first test too).
	switch ci.tkind {
	case tunnel.None: // all TCP connections
	case tunnel.Teredo:
		// A UDP connection on a port without a tunnel is checked for
		// Teredo with every datagram (as Zeek's Teredo analyzer does),
		// and nearly every one fails at once.
		if !ci.violated && (!ci.detect || tunnel.DetectTeredo(data)) {
			a.udpTunnel(c, ci, dir, data)
		}
	default:
		a.udpTunnel(c, ci, dir, data)
	}
	if ci.dpd != nil {
		a.dpdData(c, ci, dir, data)
		return
	}
	if !ci.parsed {
		a.skipped.SkippedBytes += int64(len(data))
		return
	}
	a.cur = ci
	a.disp.DataIn(&ci.parsers, c, dir, data)
}

// Gap implements flow.Handler.
func (a *Analyzer) Gap(c *flow.Conn, dir flow.Dir, n int) {
	ci := info(c)
	if ci == nil {
		return
	}
	if !ci.started {
		a.start(c, ci)
	}
	if ci.dpd != nil {
		a.dpdGap(c, ci, dir, n)
		return
	}
	if !ci.parsed {
		return
	}
	a.cur = ci
	a.disp.GapIn(&ci.parsers, c, dir, n)
}

// EndStream implements flow.StreamEnder. While DPD still holds a
// connection's first bytes no parser runs, and the stream's end reaches the
// parsers with the connection's.
func (a *Analyzer) EndStream(c *flow.Conn, dir flow.Dir) {
	ci := info(c)
	if ci == nil || !ci.parsed {
		return // detection (which leaves parsed unset) holds the stream
	}
	a.cur = ci
	a.disp.EndStreamIn(&ci.parsers, c, dir)
}

// EndConn implements flow.Handler: the parsers finish, then the
// connection's conn.log record is written.
func (a *Analyzer) EndConn(c *flow.Conn) {
	ci := info(c)
	if ci == nil {
		return
	}
	if ci.dpd != nil {
		a.releaseDPD(ci)
	}
	if ci.parsed {
		a.cur = ci
		a.disp.EndConnIn(&ci.parsers, c) // freeInfo zeroes the state
		a.cur = nil
	}
	if l := a.connLog; l != nil {
		// Nearly every record of a UDP connection whose columns a
		// protocol record kept is of the shape WriteCommon takes, with no
		// record to fill (services[0] is "" when there is none).
		if ci.cols == nil || ci.nparents != 0 || ci.nsvc > 1 || c.Key.Proto != flow.ProtoUDP || !l.WriteCommon(c, ci.cols, ci.services[0]) {
			a.writeConn(c, ci)
		}
		a.stats.Conns++
	}
	c.Aux = nil
	a.freeInfo(ci)
}

// writeConn writes the conn.log record of c that WriteCommon does not
// take, through a ConnRecord. The record is the
// Analyzer's, every field of its own set anew (zeroing one first, on the
// stack as in the Analyzer, cost more than the write barrier checks of
// its pointers); the connection's figures the log takes from c itself.
func (a *Analyzer) writeConn(c *flow.Conn, ci *connInfo) {
	r := &a.rec
	r.Conn = c
	r.UID = ci.uid
	r.MakeUID, r.UIDSeed = ci.uid == "", a.cfg.UIDSeed
	r.Service = a.serviceString(ci)
	r.TunnelParents = ci.parents[:ci.nparents]
	r.Columns = ci.cols
	a.connLog.Write(r)
}

// serviceString joins the confirmed services with commas; it allocates
// only for connections that have one.
func (a *Analyzer) serviceString(ci *connInfo) string {
	switch ci.nsvc {
	case 0:
		return ""
	case 1:
		return ci.services[0]
	}
	b := a.svcBuf[:0]
	for i, s := range ci.services[:ci.nsvc] {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s...)
	}
	a.svcBuf = b
	return string(b)
}

var _ flow.Handler = (*Analyzer)(nil)

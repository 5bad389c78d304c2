package analyzer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/flowdispatch"
	"github.com/wirebench/wirebench/internal/tunnel"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// Config configures an Analyzer. The zero value analyzes like Zeek's
// default scripts with the native parsers.
type Config struct {
	// Parsers is the parser implementation, builtin.Native ("native",
	// the default) or builtin.Std.
	Parsers string
	// Format of the logs (zeeklog.TSV or zeeklog.JSON).
	Format zeeklog.Format
	// Protocols are the protocols parsed when their log is asked for
	// (nil: builtin.Protocols()).
	Protocols []*parsers.Protocol
	// Ports replace, for the protocols named (by parsers.Protocol.Name),
	// the ports of their descriptor, Zeek's defaults; an empty non-nil
	// list: no port.
	Ports map[string][]parsers.Port
	// NoDPD turns dynamic protocol detection off: only the ports pick
	// parsers.
	NoDPD bool
	// DPDBuffer and DPDMaxChunks bound detection on a connection: once
	// its two sides delivered more than DPDBuffer bytes, or more than
	// DPDMaxChunks segments and gaps, without a match, detection gives up
	// on it (defaults DefaultDPDBuffer and DefaultDPDMaxChunks, Zeek's
	// dpd_buffer_size and dpd_max_packets). The delivery that goes past
	// DPDBuffer is held and matched too.
	DPDBuffer, DPDMaxChunks int
	// DPDMaxBuffered caps the bytes held back by all connections together
	// (default DefaultDPDMaxBuffered); past it, new bytes are not held and
	// reach the parsers as a gap if the protocol is recognised.
	DPDMaxBuffered int
	// NoTunnels turns tunnel decapsulation off.
	NoTunnels bool
	// MaxTunnelDepth is how deep tunnels are followed (default 2, Zeek's
	// Tunnel::max_depth).
	MaxTunnelDepth int
	// Flow configures the flow engine (timeouts, buffer caps, and the
	// memory budget, MaxMemory, which also counts the analyzer's and the
	// parsers' state of each connection).
	Flow flow.Config
	// UIDSeed seeds the connection uids (see parsers.UIDFromKey).
	UIDSeed uint64
	// Now gives the times of the logs' #open and #close lines (nil:
	// time.Now).
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultDPDBuffer      = 1024
	DefaultDPDMaxChunks   = 100
	DefaultDPDMaxBuffered = 32 << 20
	DefaultTunnelDepth    = 2
	// MaxIPTunnels caps the GRE and IP-in-IP tunnels whose uid is
	// remembered; when it is reached the table starts afresh (the next
	// packets of a tunnel then get a new uid).
	MaxIPTunnels = 1 << 16
	// MaxTunnelParents caps the tunnel uids kept per connection.
	MaxTunnelParents = 4
)

// Output says where the logs go. A nil log writer leaves that log out; a
// protocol without a log writer is not parsed.
type Output struct {
	Conn io.Writer
	// Logs are the writers of the protocols' logs, by log name
	// (parsers.Log.Name: "http").
	Logs map[string]io.Writer
}

// Stats counts what an Analyzer did.
type Stats struct {
	Packets int64 // frames read from the traces (not counting decapsulated ones)
	Bytes   int64 // their captured bytes
	// DecodeErrors counts frames whose headers were invalid.
	DecodeErrors int64
	// Conns counts the records of conn.log; Records those of the
	// protocols' logs, by log name.
	Conns   int64
	Records map[string]int64
	// Decapsulated counts inner frames taken out of tunnels.
	Decapsulated int64
	// DPDMatches counts connections whose protocol dynamic protocol
	// detection recognised; DPDLostBytes the bytes it could not hold back.
	DPDMatches, DPDLostBytes int64
	Flow                     flow.Stats
	Dispatch                 parsers.Stats
}

// Analyzer turns packets into Zeek logs. It is single-threaded: feed it
// frames in capture order (ReadTrace, or Frame per packet), then Close it.
type Analyzer struct {
	cfg  Config
	dec  *capture.Decoder
	eng  *flow.Engine
	disp *flowdispatch.Dispatcher
	// portless says no port has parsers: the dispatcher gives none to a
	// connection when it begins (protocols found by content still may).
	portless bool
	// lastPort holds the entries of the port of the latest connection
	// bound (see lookUpPort).
	lastPort portEntries
	// skipped counts, as the dispatcher would, the flows and bytes of the
	// connections without parsers, whose events stop at the analyzer.
	skipped parsers.Stats

	connLog *zeeklog.ConnLog
	rec     zeeklog.ConnRecord // written by writeConn
	logs    []*protoLog        // of the protocols parsed
	svcBuf  []byte

	// cur is the connection whose events are being passed to the
	// dispatcher: the parsers report its transactions synchronously.
	cur       *connInfo
	freeInfos []*connInfo
	// uids holds the connections' uids, which outlive their connInfo
	// when they name a tunnel in another connection's tunnel_parents.
	uids parsers.UIDArena

	// detectors are the protocols parsed that can be detected by content
	// (parsers.Protocol.Detect), in the order of Config.Protocols; none
	// under Config.NoDPD.
	detectors []*parsers.Protocol
	dpdFree   []*dpdState
	dpdHeld   int // bytes held back now, over all connections

	// The tunnel of the packet being processed: its uid (for the
	// tunnel_parents of connections it creates) and nesting depth.
	encapUID   string
	encapDepth int
	queue      frameQueue
	inner      capture.Packet
	draining   bool
	ipTunnels  map[ipPair]string

	stats  Stats
	closed bool
}

// ipPair is a GRE or IP-in-IP tunnel: its endpoints, lower address first.
type ipPair struct{ a, b netip.Addr }

// New returns an Analyzer writing to out. It fails when the parser
// implementation lacks a parser for a log that is asked for, or a log
// cannot be written.
func New(cfg Config, out Output) (*Analyzer, error) {
	if cfg.Parsers == "" {
		cfg.Parsers = builtin.Native
	}
	if cfg.DPDBuffer <= 0 {
		cfg.DPDBuffer = DefaultDPDBuffer
	}
	if cfg.DPDMaxChunks <= 0 {
		cfg.DPDMaxChunks = DefaultDPDMaxChunks
	}
	if cfg.DPDMaxBuffered <= 0 {
		cfg.DPDMaxBuffered = DefaultDPDMaxBuffered
	}
	if cfg.MaxTunnelDepth <= 0 {
		cfg.MaxTunnelDepth = DefaultTunnelDepth
	}
	a := &Analyzer{cfg: cfg, dec: capture.NewDecoder(), ipTunnels: make(map[ipPair]string)}
	protos := cfg.Protocols
	if protos == nil {
		protos = builtin.Protocols()
	}
	opts := zeeklog.Options{Format: cfg.Format, Now: cfg.Now}
	for _, p := range protos {
		if w := out.Logs[p.Log.Name]; w != nil {
			a.logs = append(a.logs, &protoLog{p: p, w: w})
		}
	}
	reg, err := builtin.NewFor(cfg.Parsers, protos, a.sink)
	if err != nil {
		return nil, err
	}
	for _, l := range a.logs {
		if err := setPorts(reg, l.p, cfg.Ports); err != nil {
			return nil, err
		}
	}
	a.disp = flowdispatch.New(reg, flowdispatch.Config{UIDSeed: cfg.UIDSeed, UID: a.connUID, Charge: a.charge})
	a.portless = len(reg.Ports()) == 0
	for _, l := range a.logs {
		if l.p.Detect != nil && !cfg.NoDPD {
			a.detectors = append(a.detectors, l.p)
		}
	}
	if out.Conn != nil {
		if a.connLog, err = zeeklog.NewConnLog(out.Conn, opts); err != nil {
			return nil, err
		}
	}
	for _, l := range a.logs {
		if l.p.Log.NewWriter == nil {
			return nil, fmt.Errorf("no writer of %s.log is known", l.p.Log.Name)
		}
		if l.log, err = l.p.Log.NewWriter(l.w, parsers.LogOptions{JSON: cfg.Format == zeeklog.JSON, Now: cfg.Now}); err != nil {
			return nil, err
		}
		if cfg.Format == zeeklog.TSV { // JSON records share no columns
			l.cols, _ = l.log.(zeeklog.ColumnsWriter)
		}
	}
	if cfg.Flow.ConnCost <= 0 {
		cfg.Flow.ConnCost = connCost
	}
	a.eng = flow.New(cfg.Flow, a)
	return a, nil
}

// charge counts what a connection's parsers hold against the flow engine's
// memory budget.
func (a *Analyzer) charge(c *flow.Conn, delta int) { a.eng.Charge(c, delta) }

// setPorts replaces the registry's default ports of protocol p with
// ports[p.Name], when that is not nil.
func setPorts(reg *parsers.Registry, p *parsers.Protocol, ports map[string][]parsers.Port) error {
	list := ports[p.Name]
	if list == nil {
		return nil
	}
	orig, resp := p.OrigUnit, p.RespUnit
	for _, port := range reg.Ports() {
		e, ok := reg.ForPort(port)
		if (ok[parsers.Orig] && e[parsers.Orig].Name == orig) || (ok[parsers.Resp] && e[parsers.Resp].Name == resp) {
			reg.RemovePort(port)
		}
	}
	for _, port := range list {
		if err := reg.SetPort(port, orig, resp); err != nil {
			return fmt.Errorf("%s port %v: %w", strings.ToUpper(p.Name), port, err)
		}
	}
	return nil
}

// ReadTrace analyzes every frame of the capture file at path. An error
// reading the file (a truncated or damaged record) ends the file; what
// came before it has been analyzed, and the logs are complete once Close
// is called.
func (a *Analyzer) ReadTrace(path string) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	return a.Read(r)
}

// Read analyzes every frame r delivers until its end or an error.
func (a *Analyzer) Read(r *capture.Reader) error {
	return a.ReadContext(context.Background(), r)
}

// checkEvery is how many frames pass between two looks at the context of
// ReadContext: often enough to stop within milliseconds, rarely enough to
// cost nothing per frame. It is a power of two, for a mask test.
const checkEvery = 1024

// ReadContext is Read that also stops when ctx is done (a command's
// interrupt), with an error naming the file and the offset that wraps
// context.Cause(ctx). What was read before is analyzed; Close then
// completes the logs.
func (a *Analyzer) ReadContext(ctx context.Context, r *capture.Reader) error {
	var p capture.Packet
	return readFrames(ctx, r, &p, a)
}

// A framer takes one frame at a time: an Analyzer or a Parallel. Calling
// its method through the interface, rather than through a method value,
// spares every frame the wrapper's call.
type framer interface {
	Frame(p *capture.Packet) error
}

// readFrames reads every frame of r into p and hands it to f, until r's
// end, an error, or ctx is done (see ReadContext).
func readFrames(ctx context.Context, r *capture.Reader, p *capture.Packet, f framer) error {
	for n := 1; ; n++ {
		err := r.Next(p)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f.Frame(p); err != nil {
			return fmt.Errorf("%s: %w", r.Name(), err)
		}
		if n&(checkEvery-1) == 0 && ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted at offset %d: %w", r.Name(), r.Offset(), context.Cause(ctx))
		}
	}
}

// Frame decodes and analyzes one captured frame (p.Data, p.LinkType, p.TS
// and p.OrigLen must be set). It returns an error only for a frame of a
// link type the decoder does not know; frames with invalid headers are
// counted in Stats.DecodeErrors and analyzed as far as they were decoded.
func (a *Analyzer) Frame(p *capture.Packet) error {
	if err := a.dec.Decode(p); err != nil {
		return a.badFrame(p, err)
	}
	// decoded, written out: one call less for every frame.
	a.stats.Packets++
	a.stats.Bytes += int64(len(p.Data))
	a.eng.Packet(p)
	if ipTunnelProto[p.Proto] || a.queue.waiting() {
		a.decapsulate(p)
	}
	return nil
}

// badFrame is Frame for a frame the decoder gave err for.
func (a *Analyzer) badFrame(p *capture.Packet, err error) error {
	var lt *capture.LinkTypeError
	if errors.As(err, &lt) {
		a.stats.Packets++
		a.stats.Bytes += int64(len(p.Data))
		return err
	}
	a.decoded(p, true)
	return nil
}

// decoded analyzes a frame decoded already, bad when its headers were
// invalid: the workers of a Parallel, whose reader decoded their frames,
// and Frame for a bad one.
func (a *Analyzer) decoded(p *capture.Packet, bad bool) {
	a.stats.Packets++
	a.stats.Bytes += int64(len(p.Data))
	if bad {
		a.stats.DecodeErrors++
	}
	a.eng.Packet(p)
	if ipTunnelProto[p.Proto] || a.queue.waiting() {
		a.decapsulate(p)
	}
}

// decapsulate takes apart the IP tunnel p may be and analyzes the frames
// waiting in the queue. Between packets the tunnel fields are already
// those of a packet outside tunnels (packet resets them): this is route
// at depth 0, written out, after the flow engine took p.
func (a *Analyzer) decapsulate(p *capture.Packet) {
	if ipTunnelProto[p.Proto] {
		a.ipTunnel(p, 0)
	}
	if a.queue.waiting() {
		a.drain()
	}
}

// packet routes a decapsulated packet, carried by the tunnel encapUID at
// depth, with the tunnel fields set for the connections it creates.
func (a *Analyzer) packet(p *capture.Packet, encapUID string, depth int) {
	a.encapUID, a.encapDepth = encapUID, depth
	a.route(p, depth)
	a.encapUID, a.encapDepth = "", 0
}

// route passes a decoded packet at tunnel depth to the flow engine, and
// takes IP-protocol tunnels apart.
func (a *Analyzer) route(p *capture.Packet, depth int) {
	a.eng.Packet(p)
	// The protocol alone rules out nearly every packet, with one load;
	// the rest of the test stays out of line.
	if ipTunnelProto[p.Proto] {
		a.ipTunnel(p, depth)
	}
}

// ipTunnelProto marks the IP protocols of the tunnels ipTunnel takes
// apart: IP-in-IP (4), IPv6 in IP (41) and GRE (47).
var ipTunnelProto = [256]bool{4: true, 41: true, 47: true}

// ipTunnel queues the inner packet of p, of IP protocol 4, 41 or 47,
// when it is a tunnel to take apart.
func (a *Analyzer) ipTunnel(p *capture.Packet, depth int) {
	if a.cfg.NoTunnels || depth >= a.cfg.MaxTunnelDepth || p.IPVersion == 0 || p.Fragment {
		return
	}
	switch p.Proto {
	case 4, 41:
		if in, err := tunnel.DecodeIPinIP(p.Proto, p.IPPayload); err == nil {
			a.queue.push(in, p.TS, a.ipTunnelUID(p.Src, p.Dst, p.Proto, p.TS), depth+1)
		}
	case 47:
		if in, err := tunnel.DecodeGRE(p.IPPayload); err == nil {
			a.queue.push(in, p.TS, a.ipTunnelUID(p.Src, p.Dst, 47, p.TS), depth+1)
		}
	}
}

// drain analyzes the decapsulated frames waiting in the queue, and those
// they carry in turn.
func (a *Analyzer) drain() {
	if a.draining {
		return
	}
	a.draining = true
	for {
		f, ok := a.queue.pop()
		if !ok {
			break
		}
		a.stats.Decapsulated++
		a.inner = capture.Packet{TS: f.ts, Data: f.data, OrigLen: len(f.data), LinkType: f.linkType}
		if err := a.dec.Decode(&a.inner); err != nil {
			a.stats.DecodeErrors++
		}
		a.packet(&a.inner, f.parent, f.depth)
	}
	a.queue.reset()
	a.draining = false
}

// ipTunnelUID returns the uid of the GRE or IP-in-IP tunnel between src
// and dst, making one for a new tunnel.
func (a *Analyzer) ipTunnelUID(src, dst netip.Addr, proto uint8, ts int64) string {
	k := ipPair{src, dst}
	if dst.Less(src) {
		k = ipPair{dst, src}
	}
	if uid, ok := a.ipTunnels[k]; ok {
		return uid
	}
	if len(a.ipTunnels) >= MaxIPTunnels {
		clear(a.ipTunnels)
	}
	key := flow.Key{Orig: netip.AddrPortFrom(k.a, 0), Resp: netip.AddrPortFrom(k.b, 0), Proto: proto}
	uid := parsers.UIDFromKey(key, ts, a.cfg.UIDSeed)
	a.ipTunnels[k] = uid
	return uid
}

// Close ends every connection still open, writes their records and closes
// the logs. It returns the first error writing a log.
func (a *Analyzer) Close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	a.eng.Flush()
	a.disp.End()
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	if a.connLog != nil {
		keep(a.connLog.Close())
	}
	for _, l := range a.logs {
		keep(l.log.Close())
	}
	return first
}

// Stats returns the counters so far.
func (a *Analyzer) Stats() Stats {
	s := a.stats
	s.Flow = a.eng.Stats()
	s.Dispatch = a.disp.Stats()
	s.Dispatch.SkippedFlows += a.skipped.SkippedFlows
	s.Dispatch.SkippedBytes += a.skipped.SkippedBytes
	s.Records = make(map[string]int64, len(a.logs))
	for _, l := range a.logs {
		s.Records[l.p.Log.Name] = l.records
	}
	return s
}

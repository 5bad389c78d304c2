package http

import (
	"github.com/wirebench/wirebench/internal/filemagic"
	"github.com/wirebench/wirebench/parsers"
)

// Default limits. DefaultMaxLine is far above what real clients send (most
// servers refuse request lines and header lines beyond 8 KiB); the header
// limit bounds one message's header section, folded lines included.
const (
	DefaultMaxLine   = 64 << 10
	DefaultMaxHeader = 256 << 10
)

// GapPolicy says what a direction does after a gap (bytes missing from the
// stream) that does not fall inside a message body of known length.
type GapPolicy uint8

const (
	// Resync ends the message the gap hit and resynchronises on the next
	// line that is a complete request line (orig) or status line (resp).
	// Gaps inside bodies only add to the body length.
	Resync GapPolicy = iota
	// StopOnGap does what Zeek's HTTP analyzer does: a gap inside a body of
	// known length (Content-Length or a chunk) that has started adds to its
	// length; any other gap ends the current messages and stops parsing the
	// direction (a gap in the requests stops the replies too).
	StopOnGap
)

// Option configures an Analyzer.
type Option func(*config)

type config struct {
	maxLine, maxHeader int
	gaps               GapPolicy
	capturePassword    bool
	decompress         bool
	dpd                bool
	sniff              bool
	sniffBudget        int
}

// WithLimits sets the longest line (request line, status line, header line,
// chunk-size line) and the largest header section of one message, in bytes.
// A longer line is cut at maxLine and the rest of it is skipped
// (Stats.LongLines); a message whose header section grows beyond maxHeader
// is ended and the direction resynchronises on the next request or status
// line (Stats.LargeHeaders). Values below 256 are raised to 256.
func WithLimits(maxLine, maxHeader int) Option {
	return func(c *config) {
		c.maxLine, c.maxHeader = max(maxLine, 256), max(maxHeader, 256)
	}
}

// WithGapPolicy sets what happens after a gap outside a body; the default is
// Resync.
func WithGapPolicy(p GapPolicy) Option {
	return func(c *config) { c.gaps = p }
}

// WithCapturePassword reports the password of Basic authentication, as Zeek
// does when HTTP::default_capture_password is set. Off by default, as in
// Zeek.
func WithCapturePassword(on bool) Option {
	return func(c *config) { c.capturePassword = on }
}

// WithDecompression sets whether the body lengths of gzip- and
// deflate-encoded bodies count decompressed bytes, as Zeek's
// request_body_len and response_body_len do (the default), or the bytes on
// the wire. Bodies are never decompressed into memory: only the length of
// the output is computed.
func WithDecompression(on bool) Option {
	return func(c *config) { c.decompress = on }
}

// WithDPD sets whether a protocol violation (a line that is neither a
// request line nor a status line where one must come) removes the analyzer
// from the connection, as Zeek's dynamic protocol detection does once the
// analyzer was confirmed (a request line parsed, or a status line answering
// a request). On by default. Without it, the violating direction stops and
// the other goes on.
func WithDPD(on bool) Option {
	return func(c *config) { c.dpd = on }
}

// WithMIMESniffing sets whether bodies are sniffed for their MIME type, as
// Zeek's file analysis does for orig_mime_types and resp_mime_types (see
// Transaction). On by default.
func WithMIMESniffing(on bool) Option {
	return func(c *config) { c.sniff = on }
}

// WithSniffBudget sets how many bytes the buffers that collect the first
// bytes of bodies may hold at once, across all connections (default
// DefaultSniffBudget). A body whose first bytes arrive in pieces, or are
// decompressed, holds 4 KiB until they are all there; when the budget is
// spent, a body is sniffed from its first piece alone, or not at all
// when compressed (Stats.SniffBudget).
func WithSniffBudget(bytes int) Option {
	return func(c *config) { c.sniffBudget = bytes }
}

// Stats counts what an Analyzer met, across all its connections.
type Stats struct {
	Connections  int64 // connections opened
	Transactions int64 // transactions reported
	Gaps         int64 // gaps reported by Gap
	GapBytes     int64 // bytes missing in those gaps
	BodyGaps     int64 // gaps that fell inside a body and only added to its length
	Resyncs      int64 // times a direction resynchronised on a request or status line
	LongLines    int64 // lines cut at the line limit
	LargeHeaders int64 // messages ended because their headers exceeded the limit
	// Violations counts lines that were neither a request line nor a status
	// line where one was expected. Zeek's DPD then removes a confirmed
	// analyzer from the connection, unless more than 10 KiB were exchanged
	// already; so does this parser (Disabled counts those).
	Violations int64
	Disabled   int64
	// ExcessivePipelining counts requests that found more than 100
	// unanswered requests pending and flushed them, as Zeek does.
	ExcessivePipelining int64
	// EarlyReports counts records reported before the end of their
	// connection because it held too many (see maxRecords).
	EarlyReports int64
	// InflateErrors counts compressed bodies whose decompression failed;
	// their length stops growing at the error, as in Zeek.
	InflateErrors int64
	// SniffBudget counts bodies sniffed from their first delivery alone
	// (or not at all, when compressed) because the sniff buffers' budget
	// was spent (see WithSniffBudget).
	SniffBudget int64
	// MagicResets counts the times the MIME matcher's automaton reached
	// its cap of states and started over (filemagic.Stats.Resets).
	MagicResets int64
}

// Analyzer is the native HTTP/1.x analyzer: it makes the parsers of each
// connection and reports every transaction to its Sink. An Analyzer and its
// connections must be used from one goroutine.
type Analyzer struct {
	sink Sink
	cfg  config
	free []*connState
	// tables lends the code tables of dynamic deflate blocks to the
	// connections decoding one.
	tables tablePool
	stats  Stats
	// magic sniffs bodies' MIME types, made at the first body (Zeek's
	// signatures take milliseconds to compile), with buffers from
	// sniffPool.
	magic     *filemagic.Matcher
	sniffPool sniffPool
	// lines keeps the large line buffers of closed connections.
	lines lineStore
	// noRecord stands in the connections' record caches (connState.cur)
	// for no record: its key, noKey, matches no request or response, so
	// that the cache needs no nil test. It never enters a table.
	noRecord record
}

// matcher returns the MIME matcher, making it when first needed.
func (a *Analyzer) matcher() *filemagic.Matcher {
	if a.magic == nil {
		a.magic = filemagic.NewMatcher(filemagic.Zeek())
	}
	return a.magic
}

// New returns an Analyzer that reports transactions to sink.
func New(sink Sink, opts ...Option) *Analyzer {
	a := &Analyzer{sink: sink, noRecord: record{key: noKey}, cfg: config{
		maxLine:     DefaultMaxLine,
		maxHeader:   DefaultMaxHeader,
		decompress:  true,
		dpd:         true,
		sniff:       true,
		sniffBudget: DefaultSniffBudget,
	}}
	for _, o := range opts {
		o(&a.cfg)
	}
	a.sniffPool.budget = a.cfg.sniffBudget
	return a
}

// Stats returns the counters accumulated so far.
func (a *Analyzer) Stats() Stats {
	st := a.stats
	if a.magic != nil {
		st.MagicResets = a.magic.Stats().Resets
	}
	return st
}

// Open starts parsing a connection. Its state comes from a free list, so
// opening a connection allocates nothing once the analyzer has warmed up.
func (a *Analyzer) Open(c *parsers.Conn) parsers.ConnParser {
	a.stats.Connections++
	var cs *connState
	if n := len(a.free); n > 0 {
		cs = a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
	} else {
		cs = newConnState(a)
	}
	cs.open(c)
	return cs
}

// release returns a closed connection's state to the free list.
func (a *Analyzer) release(cs *connState) {
	a.free = append(a.free, cs)
}

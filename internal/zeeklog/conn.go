package zeeklog

import (
	"encoding/binary"
	"io"
	"net/netip"
	"unsafe"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/ipv4text"
	"github.com/wirebench/wirebench/parsers"
)

// ConnFields are the columns of Zeek's default conn.log.
var ConnFields = []Field{
	{"ts", "time"}, {"uid", "string"},
	{"id.orig_h", "addr"}, {"id.orig_p", "port"}, {"id.resp_h", "addr"}, {"id.resp_p", "port"},
	{"proto", "enum"}, {"service", "string"}, {"duration", "interval"},
	{"orig_bytes", "count"}, {"resp_bytes", "count"}, {"conn_state", "string"},
	{"local_orig", "bool"}, {"local_resp", "bool"}, {"missed_bytes", "count"}, {"history", "string"},
	{"orig_pkts", "count"}, {"orig_ip_bytes", "count"}, {"resp_pkts", "count"}, {"resp_ip_bytes", "count"},
	{"tunnel_parents", "set[string]"}, {"ip_proto", "count"},
}

// ConnRecord is one conn.log record. The analyzer fills it from a
// flow.Conn when the connection ends.
type ConnRecord struct {
	TS  int64 // start of the connection, ns since the epoch
	UID string
	// MakeUID says the record's uid is made as it is written, as
	// parsers.UIDFromKey(Key, TS, UIDSeed), in place of UID: rendered
	// straight into the record, the uid of a connection that nothing
	// else named costs no string and no check of its bytes.
	MakeUID bool
	UIDSeed uint64
	Key     flow.Key
	// Service is the comma-separated list of analyzers that parsed the
	// connection ("http", "dns"); empty: unset.
	Service string
	// Duration is the time between first and last packet (ns); unset
	// when HasDuration is false (a single packet).
	Duration    int64
	HasDuration bool
	// OrigBytes and RespBytes are the payload bytes (sequence space for
	// TCP); unset when HasBytes is false.
	OrigBytes, RespBytes  int64
	HasBytes              bool
	ConnState             string // S0, SF, REJ, ... as Zeek computes it
	MissedBytes           int64
	History               []byte
	OrigPkts, OrigIPBytes int64
	RespPkts, RespIPBytes int64
	// TunnelParents are the uids of the tunnels that carried the
	// connection (Zeek's tunnel_parents); none: unset.
	TunnelParents []string
	// Columns, when not nil, are the leading columns of the connection's
	// records as its protocol records rendered them (see ConnColumns),
	// which must be those of UID (not MakeUID's) and Key: TSV copies
	// them, with the ts rendered anew when TS is not theirs.
	Columns *ConnColumns
	// Conn, when not nil, is the flow engine's connection the record is
	// of, which Write takes the record's figures from: TS, Key, Duration,
	// the sizes, ConnState, MissedBytes, History and the counts, set in
	// the record as it is written (with the duration and the sizes unset
	// when the duration is not positive, as Zeek logs them). A record of
	// the common shape is written from the connection in place: copying
	// the figures cost about as much as writing them.
	Conn *flow.Conn
}

// setFromConn sets the figures of r from r.Conn, if set.
func (r *ConnRecord) setFromConn() {
	c := r.Conn
	if c == nil {
		return
	}
	o, p := &c.Stats[flow.Orig], &c.Stats[flow.Resp]
	r.Key = c.Key // on its own: a tuple assignment copies it twice
	r.TS = c.Start
	r.HasDuration = c.Last > c.Start
	r.HasBytes = r.HasDuration
	r.Duration, r.OrigBytes, r.RespBytes = c.Last-c.Start, o.Bytes, p.Bytes
	r.ConnState = c.State()
	r.MissedBytes = o.Missed + p.Missed
	r.History = c.History
	r.OrigPkts, r.OrigIPBytes = o.Packets, o.IPBytes
	r.RespPkts, r.RespIPBytes = p.Packets, p.IPBytes
}

// ConnLog writes conn.log records.
type ConnLog struct {
	w   *Writer
	tsv connTSV
}

// NewConnLog returns a conn.log writer writing to w.
func NewConnLog(w io.Writer, o Options) (*ConnLog, error) {
	lw, err := NewWriter(w, "conn", ConnFields, o)
	return &ConnLog{w: lw}, err
}

// Write appends one record, setting its figures from its Conn when that
// is set. local_orig and local_resp say whether the addresses are in
// private address space, as Zeek's default
// Site::private_address_space_is_local does.
func (l *ConnLog) Write(r *ConnRecord) error { return l.writeRecord(r) }

// writeRecord is Write. A TSV record of a UDP connection of the common
// shape (see appendCommonUDP) is appended here, with none of writeTSV's
// frame and tests; writeTSV takes the others. (Write, which only calls
// it, is inlined: the record costs one call.)
func (l *ConnLog) writeRecord(r *ConnRecord) error {
	if c := r.Conn; c != nil && c.Key.Proto == flow.ProtoUDP && len(r.TunnelParents) == 0 && l.WriteCommon(c, r.Columns, r.Service) {
		return l.w.err
	}
	return l.writeTSV(r)
}

// WriteCommon writes the record of the ended connection c, whose records'
// leading columns cc keeps (see ConnRecord.Columns; nil: none), with the
// service given and no tunnel parents, when it takes the shape of nearly
// all the records of a DNS trace: a TSV record of a UDP connection whose
// columns appendCommonUDP stores. It reports whether it wrote the record;
// Write, with a ConnRecord, takes any other. A program that knows this is
// the common case spares the record of the common case being filled in
// and read again.
func (l *ConnLog) WriteCommon(c *flow.Conn, cc *ConnColumns, service string) bool {
	w := l.w
	if c.Key.Proto != flow.ProtoUDP || w.format != TSV || w.inVec {
		return false
	}
	b, ok := l.tsv.appendCommonUDP(w.tsvBegin(), c, cc, service)
	if ok {
		w.tsvEnd(b)
	}
	return ok
}

// write is Write through the Writer's value methods: JSON, and the
// reference of the TSV fast path.
func (l *ConnLog) write(r *ConnRecord) error {
	w := l.w
	w.Begin()
	w.Time(r.TS)
	if r.MakeUID {
		var uid [24]byte // room for any uid
		w.String(parsers.AppendUIDFromKey(uid[:0], r.Key, r.TS, r.UIDSeed))
	} else {
		w.StrOrUnset(r.UID)
	}
	w.Addr(r.Key.Orig.Addr())
	w.Port(r.Key.Orig.Port())
	w.Addr(r.Key.Resp.Addr())
	w.Port(r.Key.Resp.Port())
	w.Enum(protoEnum(r.Key.Proto))
	w.StrOrUnset(r.Service)
	if r.HasDuration {
		w.Interval(r.Duration)
	} else {
		w.Unset()
	}
	if r.HasBytes {
		w.Count(uint64(r.OrigBytes))
		w.Count(uint64(r.RespBytes))
	} else {
		w.Unset()
		w.Unset()
	}
	w.StrOrUnset(r.ConnState)
	w.Bool(IsLocal(r.Key.Orig.Addr()))
	w.Bool(IsLocal(r.Key.Resp.Addr()))
	w.Count(uint64(r.MissedBytes))
	if len(r.History) == 0 {
		w.Unset()
	} else {
		w.String(r.History)
	}
	w.Count(uint64(r.OrigPkts))
	w.Count(uint64(r.OrigIPBytes))
	w.Count(uint64(r.RespPkts))
	w.Count(uint64(r.RespIPBytes))
	writeSet(w, r.TunnelParents)
	w.Count(uint64(r.Key.Proto))
	return w.End()
}

// connTSV is what conn.log's TSV records keep from one to the next: the
// leading digits of their ts (see tsvTimePrefixed), the addresses of
// their id.orig_h and id.resp_h columns (consecutive records share them
// most of the time: a DNS server's, a busy client's), and the service and
// conn_state columns, which take a few values each.
type connTSV struct {
	secs           secondsPrefix
	orig, resp     addrColumn
	service, state strColumn
	mid            midColumns
}

// midColumns keeps the text of the columns from conn_state to orig_pkts
// of a record, with what they render: they take few values together
// (a DNS connection's are mostly "SF", local, no missed bytes, history
// "Dd" and one packet), and copying their text costs a fraction of
// rendering them. Those of TCP connections, whose histories and packet
// counts vary, are not kept.
type midColumns struct {
	state                string
	localOrig, localResp bool
	key                  uint64 // midKey of the text; 0 when not set
	n                    uint8  // the length of text
	text                 [32]byte
}

// midKey packs the history (of 7 bytes at most: the bytes and the
// length) and orig_pkts (below 4) of a record without missed bytes, with
// the top bit set, and, for a record whose figures are those of its Conn,
// the stateKey of its resp_pkts. It is 0 for any other record, whose
// columns are not kept, and for a history with less than a word of
// capacity (not the flow engine's): the bytes are one load, and midKey is
// inlined.
func midKey(r *ConnRecord) uint64 {
	var sk uint64
	if r.Conn != nil {
		sk = stateKey(r.RespPkts)
	}
	return historyKey(r.History, r.MissedBytes, r.OrigPkts, sk)
}

// historyKey is midKey of the history h, missed bytes and orig_pkts of a
// record, with the bits sk of stateKey (or none).
func historyKey(h []byte, missed, origPkts int64, sk uint64) uint64 {
	n := len(h)
	if n > 7 || cap(h) < 8 || missed != 0 || uint64(origPkts) >= 4 {
		return 0
	}
	// The bytes past the history, within its capacity, are masked off.
	w := binary.LittleEndian.Uint64(h[:8]) & (1<<(8*n) - 1)
	return w | sk | uint64(n)<<56 | uint64(origPkts)<<61 | 1<<63
}

// stateKey is the bits of midKey that say a record's figures are those of
// its flow.Conn and whether the responder sent packets. The conn_state of
// a UDP connection (flow.Conn.State) follows from whether each side sent
// packets: a key with these bits, and orig_pkts, says the state too.
func stateKey(respPkts int64) uint64 {
	k := uint64(1) << 60
	if respPkts > 0 {
		k |= 1 << 59
	}
	return k
}

// holds reports whether m holds the text of the columns of a record whose
// midKey is k (not 0), with the state and the local_* columns given.
func (m *midColumns) holds(k uint64, state string, localOrig, localResp bool) bool {
	return k != 0 && k == m.key && localOrig == m.localOrig && localResp == m.localResp && sameString(state, m.state)
}

// holdsState is holds of a record of a UDP connection whose figures are
// those of its flow.Conn, whose midKey k says its state.
func (m *midColumns) holdsState(k uint64, localOrig, localResp bool) bool {
	return k != 0 && k == m.key && localOrig == m.localOrig && localResp == m.localResp
}

// keep appends the columns from conn_state to orig_pkts of r, whose
// local_* columns are localOrig and localResp, when m does not hold their
// text, rendered by s, and keeps it when their midKey is k (not 0).
func (m *midColumns) keep(b []byte, r *ConnRecord, localOrig, localResp bool, s *connTSV, k uint64) []byte {
	start := len(b)
	b = s.appendMid(b, r, localOrig, localResp)
	if n := len(b) - start; k != 0 && n <= len(m.text) {
		m.state, m.key, m.n = r.ConnState, k, uint8(n)
		m.localOrig, m.localResp = localOrig, localResp
		copy(m.text[:], b[start:])
	}
	return b
}

// appendMid renders the columns that midColumns keeps.
func (s *connTSV) appendMid(b []byte, r *ConnRecord, localOrig, localResp bool) []byte {
	b = s.state.appendTSV(b, r.ConnState)
	b = tsvBool(b, localOrig)
	b = tsvBool(b, localResp)
	b = tsvUint(b, uint64(r.MissedBytes))
	// The history is nearly always short and plain (plainShort), and
	// appended here in line; tsvBytesValue, not in line, takes the others.
	switch h := r.History; {
	case plainShort(h):
		b = append(append(b, h...), separator)
	case len(h) == 0:
		b = tsvUnset(b)
	default:
		b = tsvBytesValue(b, h)
	}
	return tsvUint(b, uint64(r.OrigPkts))
}

// writeTSV is Write: it appends r as a TSV record (see tsv.go), in the
// TSV format, and hands it to write in the others.
func (l *ConnLog) writeTSV(r *ConnRecord) error {
	w, s := l.w, &l.tsv
	if w.format != TSV || w.inVec {
		r.setFromConn()
		return l.write(r)
	}
	b := w.tsvBegin()
	r.setFromConn()
	var localOrig, localResp, ok bool
	switch cc := r.Columns; {
	case cc != nil && cc.n > 0 && r.TS == cc.ts:
		// appendKept's copy, in line: the record starts as the
		// connection's first did, nearly always.
		l := len(b)
		b = room(b, len(cc.text))
		*(*[len(cc.text)]byte)(b[l : l+len(cc.text)]) = cc.text
		b = b[:l+int(cc.n)]
		localOrig, localResp = cc.localOrig, cc.localResp
	case cc != nil && cc.n > 0:
		b = cc.appendKept(b, r.TS, &s.secs)
		localOrig, localResp = cc.localOrig, cc.localResp
	default:
		// Not kept for later: conn.log's record is a connection's last.
		b = tsvTimePrefixed(b, r.TS, &s.secs)
		if r.MakeUID { // base62 digits after a letter: nothing to escape
			b = append(parsers.AppendUIDFromKey(b, r.Key, r.TS, r.UIDSeed), separator)
		} else {
			b = tsvUID(b, r.UID)
		}
		b = s.orig.appendTSV(b, r.Key.Orig.Addr())
		b = tsvUint(b, uint64(r.Key.Orig.Port()))
		b = s.resp.appendTSV(b, r.Key.Resp.Addr())
		b = tsvUint(b, uint64(r.Key.Resp.Port()))
		localOrig, localResp = s.orig.local, s.resp.local // of the addresses appended
	}
	b = appendProto(b, r.Key.Proto)
	// The kept texts of the service and of the columns from conn_state
	// to orig_pkts are copied in line, as nearly always; the room for
	// the service is made with that of a subsecond duration, which is
	// then stored in line too.
	if sc := &s.service; sc.n != 0 && sameString(r.Service, sc.s) {
		l := len(b)
		b = room(b, len(sc.text)+9)
		*(*[len(sc.text)]byte)(b[l : l+len(sc.text)]) = sc.text // the bytes past n are spare capacity
		b = b[:l+int(sc.n)]
	} else {
		b = sc.keep(b, r.Service)
	}
	switch l := len(b); {
	case r.HasDuration && subsecond(r.Duration) && cap(b)-l >= 9:
		putSubsecond((*[9]byte)(b[l:l+9]), r.Duration)
		b = b[:l+9]
	case r.HasDuration:
		b = tsvInterval(b, r.Duration)
	default:
		b = tsvUnset(b)
	}
	// The sizes are mostly below 1000 (tsvSmallUint), and rendered in line.
	if r.HasBytes {
		if b, ok = tsvSmallUint(b, uint64(r.OrigBytes)); !ok {
			b = appendUintTab(b, uint64(r.OrigBytes))
		}
		if b, ok = tsvSmallUint(b, uint64(r.RespBytes)); !ok {
			b = appendUintTab(b, uint64(r.RespBytes))
		}
	} else {
		b = append(b, "-\t-\t"...)
	}
	if r.Key.Proto != flow.ProtoUDP { // TCP's columns vary too much to keep
		b = s.appendMid(b, r, localOrig, localResp)
	} else if k := midKey(r); s.mid.holds(k, r.ConnState, localOrig, localResp) {
		m := &s.mid
		l := len(b)
		b = room(b, len(m.text))
		*(*[len(m.text)]byte)(b[l : l+len(m.text)]) = m.text // the bytes past n are spare capacity
		b = b[:l+int(m.n)]
	} else {
		b = s.mid.keep(b, r, localOrig, localResp, s, k)
	}
	if b, ok = tsvSmallUint(b, uint64(r.OrigIPBytes)); !ok {
		b = appendUintTab(b, uint64(r.OrigIPBytes))
	}
	b = tsvUint(b, uint64(r.RespPkts))
	if b, ok = tsvSmallUint(b, uint64(r.RespIPBytes)); !ok {
		b = appendUintTab(b, uint64(r.RespIPBytes))
	}
	if len(r.TunnelParents) == 0 { // nearly always: tsvSet is not in line
		b = tsvUnset(b)
	} else {
		b = tsvSet(b, r.TunnelParents)
	}
	w.tsvEnd(appendIPProto(b, r.Key.Proto))
	return w.err
}

// commonRoom is the room appendCommonUDP stores a record in: the record
// takes 172 bytes at most (the kept leading columns 86, proto 4, the kept
// service 16, the duration 9, the sizes and counts 4 each, the kept
// columns from conn_state to orig_pkts 32, the last two 5), and its
// offsets are bytes, so that a store of up to 32 bytes at one needs no
// bounds check.
const commonRoom = 256 + 32

// appendCommonUDP appends the record of c, a UDP connection without
// tunnel parents, of the service given, when its columns are of the shape
// of nearly all of a DNS trace's: the leading ones kept (in cc, of its
// start), the service and the columns from conn_state to orig_pkts those
// the log kept last, a subsecond duration, sizes and counts below 1000.
// They are stored in one straight pass, in room made once, at
// offsets that follow from the kept lengths, with the separators of the
// numbers from smallDecimals: the general way's room checks and calls
// cost more than the stores. ok is false, with b as it was, for any other
// record.
func (s *connTSV) appendCommonUDP(b []byte, c *flow.Conn, cc *ConnColumns, service string) (_ []byte, ok bool) {
	sc, m := &s.service, &s.mid
	o, p := &c.Stats[flow.Orig], &c.Stats[flow.Resp]
	dur := c.Last - c.Start
	if cc == nil || cc.n == 0 || c.Start != cc.ts ||
		dur <= 0 || !subsecond(dur) ||
		sc.n == 0 || !sameString(service, sc.s) ||
		!m.holdsState(historyKey(c.History, o.Missed+p.Missed, o.Packets, stateKey(p.Packets)), cc.localOrig, cc.localResp) {
		return b, false
	}
	const small = uint64(len(smallDecimals))
	ob, rb, oi, rp, ri := uint64(o.Bytes), uint64(p.Bytes), uint64(o.IPBytes), uint64(p.Packets), uint64(p.IPBytes)
	if ob >= small || rb >= small || oi >= small || rp >= small || ri >= small {
		return b, false
	}
	if cap(b)-len(b) < commonRoom {
		b = room(b, commonRoom)
	}
	l := len(b)
	d := (*[commonRoom]byte)(b[l : l+commonRoom])
	// The kept texts are copied whole, arrays of sizes known when
	// compiling, without a call; the bytes past their lengths are spare
	// room the next column overwrites.
	*(*[len(cc.text)]byte)(d[:]) = cc.text
	n := cc.n
	binary.LittleEndian.PutUint32(d[n:], 'u'|'d'<<8|'p'<<16|separator<<24)
	n += 4
	*(*[len(sc.text)]byte)(d[n:]) = sc.text
	n += sc.n
	putSubsecond((*[9]byte)(d[n:]), dur)
	n += 9
	n += putSmallTab(d, n, ob)
	n += putSmallTab(d, n, rb)
	*(*[len(m.text)]byte)(d[n:]) = m.text
	n += m.n
	n += putSmallTab(d, n, oi)
	n += putSmallTab(d, n, rp)
	n += putSmallTab(d, n, ri)
	// The unset tunnel_parents and the ip_proto of UDP.
	binary.LittleEndian.PutUint32(d[n:], '-'|separator<<8|'1'<<16|'7'<<24)
	d[n+4] = separator
	return b[:l+int(n)+5], true
}

// putSmallTab stores v (below 1000) and a tab at d[o:] from smallDecimals,
// and returns their length.
func putSmallTab(d *[commonRoom]byte, o uint8, v uint64) uint8 {
	e := smallDecimals[v]
	binary.LittleEndian.PutUint32(d[o:], uint32(e))
	return uint8(e>>32)&3 + 1
}

// Records returns the number of records written.
func (l *ConnLog) Records() int64 { return l.w.Records() }

// Flush writes buffered records out.
func (l *ConnLog) Flush() error { return l.w.Flush() }

// Close writes the footer and flushes; it returns the first write error.
func (l *ConnLog) Close() error { return l.w.Close() }

// appendProto appends the proto field of p: a constant, nothing to
// escape; those of TCP and UDP are copied as constants of known length,
// without a call.
func appendProto(b []byte, p uint8) []byte {
	switch p {
	case flow.ProtoUDP:
		return append(b, "udp\t"...)
	case flow.ProtoTCP:
		return append(b, "tcp\t"...)
	}
	return append(append(b, protoEnum(p)...), separator)
}

// appendIPProto appends the ip_proto field of p, the last of a record:
// those of TCP and UDP as constants, without a call.
func appendIPProto(b []byte, p uint8) []byte {
	switch p {
	case flow.ProtoUDP:
		return append(b, "17\t"...)
	case flow.ProtoTCP:
		return append(b, "6\t"...)
	}
	return append(appendUint(b, uint64(p)), separator)
}

func protoEnum(p uint8) string {
	switch p {
	case flow.ProtoTCP:
		return "tcp"
	case flow.ProtoUDP:
		return "udp"
	case flow.ProtoICMP, flow.ProtoICMPv6:
		return "icmp"
	}
	return "unknown_transport"
}

// addrColumn keeps the address a column rendered last,
// whether it is local (IsLocal) and, for an IPv4 address, its text, for
// the next records of the same address.
type addrColumn struct {
	a     netip.Addr
	local bool // IsLocal(a): false for the zero Addr, as kept at first
	// n is the length of text, a and its separator; 0 when text is not
	// set.
	n    uint8
	text [24]byte // room for the window tsvAddr writes an IPv4 address in
}

// appendTSV is tsvAddr, copying the kept text when a is the address
// kept; local is IsLocal(a) then.
func (ac *addrColumn) appendTSV(b []byte, a netip.Addr) []byte {
	l := len(b)
	if a != ac.a || ac.n == 0 || cap(b)-l < len(ac.text) {
		return ac.keep(b, a)
	}
	// The whole array, of a size known when compiling, is copied without
	// a call; the bytes past n are spare capacity.
	*(*[len(ac.text)]byte)(b[l : l+len(ac.text)]) = ac.text
	return b[:l+int(ac.n)]
}

// keep is appendTSV of an address that is not the one kept: it keeps a,
// with its text when it is an IPv4 address.
func (ac *addrColumn) keep(b []byte, a netip.Addr) []byte {
	ac.a, ac.local, ac.n = a, IsLocal(a), 0
	l := len(b)
	b = tsvAddr(room(b, len(ac.text)), a)
	if a.Is4() { // of 16 bytes at most, written in the room just made
		ac.text, ac.n = [len(ac.text)]byte(b[l:l+len(ac.text)]), uint8(len(b)-l)
	}
	return b
}

// keep4 stores an IPv4 address a that is not the one kept at d[o:] (o
// at most 67), as appendTSV would, and keeps a and its text. It returns
// the offset after the separator.
func (ac *addrColumn) keep4(d *[leadRoom]byte, o int, a netip.Addr) int {
	a4 := a.As4()
	t := ipv4text.AppendDotted(d[o:o:leadRoom], a4) // within d: room for 20 bytes
	t[len(t)-1] = separator                         // in place of the last octet's dot
	ac.a, ac.local, ac.n = a, isLocal4(a4), uint8(len(t))
	ac.text = [len(ac.text)]byte(d[o : o+len(ac.text)])
	return o + len(t)
}

// strColumn keeps the string a column rendered last with its text (as
// tsvStrOrUnset renders it, with the separator), for the next records of
// the same string.
type strColumn struct {
	s string
	// n is the length of text; 0 when text is not set.
	n    uint8
	text [16]byte
}

// appendTSV is tsvStrOrUnset, copying the kept text when s is the string
// kept.
func (sc *strColumn) appendTSV(b []byte, s string) []byte {
	if sc.n == 0 || !sameString(s, sc.s) {
		return sc.keep(b, s)
	}
	// The whole array, of a size known when compiling, is copied without
	// a call; the bytes past n are spare capacity.
	l := len(b)
	b = room(b, len(sc.text))
	*(*[len(sc.text)]byte)(b[l : l+len(sc.text)]) = sc.text
	return b[:l+int(sc.n)]
}

// sameString reports whether s and t are equal. The strings of a column
// (services, states) are nearly always the very same string, whose bytes
// need no comparing: the call to compare them costs more than the rest of
// appendTSV.
func sameString(s, t string) bool {
	return len(s) == len(t) && (unsafe.StringData(s) == unsafe.StringData(t) || s == t)
}

// keep is appendTSV of a string that is not the one kept: it keeps s,
// with its text when that fits.
func (sc *strColumn) keep(b []byte, s string) []byte {
	l := len(b)
	b = tsvStrOrUnset(b, s)
	sc.s, sc.n = s, 0
	if n := len(b) - l; n <= len(sc.text) {
		sc.n = uint8(copy(sc.text[:], b[l:]))
	}
	return b
}

var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// IsLocal reports whether a is in private address space (RFC 1918, RFC
// 6598 shared space, loopback, link-local, unique local IPv6), which Zeek
// treats as local by default.
func IsLocal(a netip.Addr) bool {
	if a.Is4() { // the flow engine's IPv4 addresses: no Unmap to do
		return isLocal4(a.As4())
	}
	if a = a.Unmap(); a.Is4() {
		return isLocal4(a.As4())
	}
	return a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || cgnat.Contains(a)
}

// isLocal4 is IsLocal of an IPv4 address, with the prefixes checked on
// its 32 bits: conn.log asks twice per record.
func isLocal4(b [4]byte) bool {
	v := binary.BigEndian.Uint32(b[:])
	return v>>24 == 10 || v>>20 == 172<<4|16>>4 || v>>16 == 192<<8|168 || // RFC 1918
		v>>24 == 127 || v>>16 == 169<<8|254 || // loopback, link-local
		v>>22 == 100<<2|64>>6 // shared space (cgnat)
}

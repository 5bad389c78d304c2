package zeeklog

import (
	"encoding/binary"
	"io"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// DNSFields are the columns of Zeek's default dns.log (as current Zeek
// writes it: with opcode and opcode_name after rejected).
var DNSFields = []Field{
	{"ts", "time"}, {"uid", "string"},
	{"id.orig_h", "addr"}, {"id.orig_p", "port"}, {"id.resp_h", "addr"}, {"id.resp_p", "port"},
	{"proto", "enum"}, {"trans_id", "count"}, {"rtt", "interval"}, {"query", "string"},
	{"qclass", "count"}, {"qclass_name", "string"}, {"qtype", "count"}, {"qtype_name", "string"},
	{"rcode", "count"}, {"rcode_name", "string"},
	{"AA", "bool"}, {"TC", "bool"}, {"RD", "bool"}, {"RA", "bool"}, {"Z", "count"},
	{"answers", "vector[string]"}, {"TTLs", "vector[interval]"}, {"rejected", "bool"},
	{"opcode", "count"}, {"opcode_name", "string"},
}

// DNSLog writes dns.log: it is a dns.Sink that appends one record per
// transaction. The query and the answers are taken as rendered by the
// parser, with non-printable bytes and backslashes already escaped as
// Zeek's DNS analyzer and log writer leave them; DNSLog escapes only the
// log's own separators.
type DNSLog struct {
	w     *Writer
	names dnsNames
	// lead keeps what the leading columns of the records render from.
	lead  connTSV
	codes [codesSlots]codesText
}

// codesText is the TSV text of the columns from qclass to Z of a
// transaction, kept for the next ones with the same codes and flags: few
// combinations make up nearly all of a log's records, and copying their
// text costs a fraction of rendering its eleven fields.
type codesText struct {
	key  uint64 // codesKey of the text; 0 when not set
	n    uint8  // the length of text
	text [48]byte
}

// codesSlots is the number of codesText a DNSLog keeps: 1<<codesBits, so
// that the top codesBits bits of a hash index them.
const (
	codesBits  = 3
	codesSlots = 1 << codesBits
)

// codesKey packs what the columns from qclass to Z are a function of,
// with its lowest bit set: a key is never 0.
func codesKey(tx *dns.Transaction) uint64 {
	return uint64(tx.QClass)<<48 | uint64(tx.QType)<<32 | uint64(tx.RCode)<<16 | uint64(tx.Z)<<8 |
		b2u(tx.AA)<<1 | b2u(tx.TC)<<2 | b2u(tx.RD)<<3 | b2u(tx.RA)<<4 |
		b2u(tx.HasQuestion)<<5 | b2u(tx.HasReply)<<6 | b2u(tx.NetBIOS)<<7 | 1
}

// b2u returns 1 for true and 0 for false.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// dnsNames remembers the names of the codes below 256 that the log met,
// with their TSV fields: the transaction's name methods look them up in
// maps (and format the names of codes Zeek does not know), and escaping
// scans them, which cost more than the rest of a field. The names are
// functions of the codes (and of NetBIOS for the type and the opcode), as
// dns.Transaction documents them.
type dnsNames struct {
	class, rcode [256]codeName
	qtype        [2][256]codeName // by NetBIOS
	opcode       [2][256]codeName // by NetBIOS
	// tail holds the last three fields of a record, rejected, opcode
	// and opcode_name, as one text, by tailIndex.
	tail [64]codeName
	// other holds the name of a code above 255 of each kind, which is
	// not remembered.
	otherClass, otherType, otherRCode codeName
}

// codeName is the name of a code and, once remembered, its two TSV
// fields: the code and its name, escaped, each with the separator after
// it (every code field of dns.log is followed by its name). Fields that
// fit in fixed, nearly all, are copied from there as a whole array, whose
// size is known when compiling: without a call to copy them.
type codeName struct {
	name, tsv string
	fixed     [16]byte
	n         uint8 // of fixed: the length of tsv, or 0 when it does not fit
}

// remember sets the name of code n, met for the first time.
func (c *codeName) remember(n uint16, name string) {
	c.name = name
	c.tsv = string(tsvStr(tsvUint(nil, uint64(n)), name))
	if len(c.tsv) <= len(c.fixed) {
		c.n = uint8(copy(c.fixed[:], c.tsv))
	}
}

// appendTSV appends the TSV fields of code n, whose name c is.
func (c *codeName) appendTSV(b []byte, n uint16) []byte {
	switch {
	case c.n > 0:
		l := len(b)
		b = room(b, len(c.fixed))
		*(*[16]byte)(b[l : l+16]) = c.fixed // the bytes past n are spare capacity
		return b[:l+int(c.n)]
	case c.tsv == "": // a code above 255: not remembered
		return tsvStr(tsvUint(b, uint64(n)), c.name)
	}
	return append(b, c.tsv...)
}

func netbiosIndex(tx *dns.Transaction) int {
	if tx.NetBIOS {
		return 1
	}
	return 0
}

func (n *dnsNames) classOf(tx *dns.Transaction) *codeName {
	if tx.QClass >= 256 {
		n.otherClass = codeName{name: tx.QClassName()}
		return &n.otherClass
	}
	c := &n.class[tx.QClass]
	if c.tsv == "" {
		c.remember(tx.QClass, tx.QClassName())
	}
	return c
}

func (n *dnsNames) typeOf(tx *dns.Transaction) *codeName {
	if tx.QType >= 256 {
		n.otherType = codeName{name: tx.QTypeName()}
		return &n.otherType
	}
	c := &n.qtype[netbiosIndex(tx)][tx.QType]
	if c.tsv == "" {
		c.remember(tx.QType, tx.QTypeName())
	}
	return c
}

func (n *dnsNames) rcodeOf(tx *dns.Transaction) *codeName {
	if tx.RCode >= 256 {
		n.otherRCode = codeName{name: tx.RCodeName()}
		return &n.otherRCode
	}
	c := &n.rcode[tx.RCode]
	if c.tsv == "" {
		c.remember(tx.RCode, tx.RCodeName())
	}
	return c
}

func (n *dnsNames) opcodeOf(tx *dns.Transaction) *codeName {
	c := &n.opcode[netbiosIndex(tx)][tx.Opcode]
	if c.tsv == "" {
		c.remember(uint16(tx.Opcode), tx.OpcodeName())
	}
	return c
}

// tailIndex is the index in tail of the last fields of tx: its opcode
// (below 16, the four bits of a header's), rejected and NetBIOS.
func tailIndex(tx *dns.Transaction) uint64 {
	return uint64(tx.Opcode&15) | b2u(tx.Rejected)<<4 | b2u(tx.NetBIOS)<<5
}

// appendTail appends the last fields of tx, rejected, opcode and
// opcode_name, when tail does not hold their text, and keeps it.
func (l *DNSLog) appendTail(b []byte, tx *dns.Transaction) []byte {
	start := len(b)
	b = tsvBool(b, tx.Rejected)
	b = l.names.opcodeOf(tx).appendTSV(b, uint16(tx.Opcode))
	if c := &l.names.tail[tailIndex(tx)]; tx.Opcode < 16 && len(b)-start <= len(c.fixed) {
		c.n = uint8(copy(c.fixed[:], b[start:]))
	}
	return b
}

// NewDNSLog returns a dns.log writer writing to w.
func NewDNSLog(w io.Writer, o Options) (*DNSLog, error) {
	lw, err := NewWriter(w, "dns", DNSFields, o)
	return &DNSLog{w: lw}, err
}

// DNS implements dns.Sink: the Has* flags of the transaction say which
// fields Zeek sets. Only a code met for the first time allocates (its
// remembered TSV field, and the name of a code Zeek has no name for,
// "query-N"), once per code below 256. Write errors are kept for Close.
func (l *DNSLog) DNS(c *parsers.Conn, tx *dns.Transaction) { l.WriteColumns(nil, c, tx) }

// write is DNS through the Writer's value methods: JSON, and the
// reference of the TSV fast path.
func (l *DNSLog) write(c *parsers.Conn, tx *dns.Transaction) {
	w := l.w
	w.Begin()
	w.Time(tx.TS)
	writeConnID(w, c)
	w.Enum(dnsProto(c))
	w.Count(uint64(tx.TransID))
	if tx.HasRTT {
		w.Interval(tx.RTT)
	} else {
		w.Unset()
	}
	if tx.HasQueryName {
		w.Text(nonNil(tx.Query))
	} else {
		w.Unset()
	}
	if tx.HasQuestion {
		w.Count(uint64(tx.QClass))
		w.Str(l.names.classOf(tx).name)
		w.Count(uint64(tx.QType))
		w.Str(l.names.typeOf(tx).name)
	} else {
		for range 4 {
			w.Unset()
		}
	}
	if tx.HasReply {
		w.Count(uint64(tx.RCode))
		w.Str(l.names.rcodeOf(tx).name)
	} else {
		w.Unset()
		w.Unset()
	}
	w.Bool(tx.AA)
	w.Bool(tx.TC)
	w.Bool(tx.RD)
	w.Bool(tx.RA)
	w.Count(uint64(tx.Z))
	if len(tx.Answers) == 0 {
		w.Unset()
		w.Unset()
	} else {
		w.BeginVector()
		for i := range tx.Answers {
			w.VecText(tx.Answers[i].Data)
		}
		w.EndVector()
		w.BeginVector()
		for i := range tx.Answers {
			w.VecInterval(int64(tx.Answers[i].TTL) * 1e9)
		}
		w.EndVector()
	}
	w.Bool(tx.Rejected)
	w.Count(uint64(tx.Opcode))
	w.Str(l.names.opcodeOf(tx).name)
	w.End()
}

// WriteColumns implements ColumnsWriter: it is DNS with the connection's
// leading columns from cc (nil: none).
//
// In TSV, it appends the record straight to the Writer's buffer (see
// tsv.go); the other formats go through write.
func (l *DNSLog) WriteColumns(cc *ConnColumns, c *parsers.Conn, txn any) {
	tx := txn.(*dns.Transaction)
	w := l.w
	if w.format != TSV || w.inVec {
		l.write(c, tx)
		return
	}
	b := l.lead.appendLead(w.tsvBegin(), tx.TS, c, cc)
	// The proto, the trans_id and a subsecond rtt, nearly always, are
	// stored in room made once.
	at := len(b)
	b = room(b, 24)
	d := (*[24]byte)(b[at : at+24])
	proto := uint32('u' | 'd'<<8 | 'p'<<16 | separator<<24)
	if dnsOverTCP(c) {
		proto = 't' | 'c'<<8 | 'p'<<16 | separator<<24
	}
	binary.LittleEndian.PutUint32(d[:], proto)
	o := 4
	if id := tx.TransID; id >= 1000 { // nearly always: five digits, mostly
		o += put5(d[4:12], uint64(id)) + 1
	} else {
		o += putPort((*[8]byte)(d[4:12]), id)
	}
	switch {
	case tx.HasRTT && subsecond(tx.RTT):
		putSubsecond((*[9]byte)(d[o:o+9]), tx.RTT)
		b = b[:at+o+9]
	case tx.HasRTT:
		b = tsvInterval(b[:at+o], tx.RTT)
	default:
		b = tsvUnset(b[:at+o])
	}
	if tx.HasQueryName {
		b = append(appendDNSText(b, tx.Query, tx.QueryPlain, false), separator)
	} else {
		b = tsvUnset(b)
	}
	// The kept texts of the codes and of the last fields are copied in
	// line, as nearly always.
	if k := codesKey(tx); l.codes[codesSlot(k)].key == k {
		ct := &l.codes[codesSlot(k)]
		// The whole array, of a size known when compiling, is copied
		// without a call; the bytes past n are spare capacity.
		at := len(b)
		b = room(b, len(ct.text))
		*(*[len(ct.text)]byte)(b[at : at+len(ct.text)]) = ct.text
		b = b[:at+int(ct.n)]
	} else {
		b = l.appendCodes(b, tx, k)
	}
	// The answers the parser joined (see dns.Transaction.AnswersJoined),
	// nearly always, are copied at once.
	switch joined := tx.AnswersJoined(); {
	case len(tx.Answers) == 0:
		b = append(b, "-\t-\t"...)
	case joined != nil:
		b = append(b, joined...)
		b = appendTTLs(append(b, separator), tx.Answers)
	default:
		b = appendTTLs(appendEachAnswer(b, tx.Answers), tx.Answers)
	}
	if c := &l.names.tail[tailIndex(tx)]; c.n > 0 && tx.Opcode < 16 {
		at := len(b)
		b = room(b, len(c.fixed))
		*(*[len(c.fixed)]byte)(b[at : at+len(c.fixed)]) = c.fixed // the bytes past n are spare capacity
		b = b[:at+int(c.n)]
	} else {
		b = l.appendTail(b, tx)
	}
	w.tsvEnd(b)
}

// appendEachAnswer appends the answers column one answer at a time, for
// answers the parser did not join: those that the parser marked plain and
// are short (addresses, mostly) are stored by word stores instead of a
// call to copy them.
func appendEachAnswer(b []byte, answers []dns.Answer) []byte {
	for i := range answers {
		s := answers[i].Data
		// See appendDNSText: the reserved values are 1 or 7 bytes long.
		if l := len(s); answers[i].Plain && l > 1 && l <= 16 && l != len(emptyField) {
			if cap(b)-len(b) < 24 {
				b = room(b, 24)
			}
			n := len(b)
			w := (*[24]byte)(b[n : n+24])
			putShort(w, s)
			w[l] = setSeparator
			b = b[:n+l+1]
			continue
		}
		b = append(appendDNSText(b, s, answers[i].Plain, true), setSeparator)
	}
	b[len(b)-1] = separator
	return b
}

// appendTTLs appends the TTLs column of a transaction with answers, in
// room made once for all of them.
func appendTTLs(b []byte, answers []dns.Answer) []byte {
	// A TTL has up to 10 digits, then ".000000" and its separator; the
	// stores of one write up to 24 bytes, in a window of an array whose
	// bounds are checked once.
	n := len(b)
	need := len(answers)*(10+8) + 24
	b = room(b, need)
	d := b[:n+need]
	for i := range answers {
		// A TTL is whole seconds: its interval ends in ".000000".
		w := (*[24]byte)(d[n : n+24])
		if ttl := answers[i].TTL; ttl < uint32(len(smallDecimals)) {
			e := smallDecimals[ttl]
			binary.LittleEndian.PutUint32(w[:], uint32(e))
			m := int(e>>32) & 3
			binary.LittleEndian.PutUint64(w[m:], micros0Set)
			n += m + 8
		} else if ttl < 100000 { // an hour, a day: five digits at most
			m := put5(w[:], uint64(ttl)) & 7
			binary.LittleEndian.PutUint64(w[m:], micros0Set)
			n += m + 8
		} else {
			n = len(appendUint(d[:n], uint64(ttl)))
			binary.LittleEndian.PutUint64(d[n:n+8], micros0Set)
			n += 8
		}
	}
	d[n-1] = separator
	return d[:n]
}

// micros0Set is ".000000" and the set separator, as a little-endian word.
const micros0Set = '.' | '0'<<8 | '0'<<16 | '0'<<24 | '0'<<32 | '0'<<40 | '0'<<48 | setSeparator<<56

// putShort stores s, of 2 to 16 bytes, at the start of w: from 4 bytes
// on by two word stores that may overlap, instead of a call to copy.
func putShort(w *[24]byte, s []byte) {
	switch l := len(s); {
	case l >= 8:
		*(*[8]byte)(w[:]) = [8]byte(s)
		*(*[8]byte)(w[(l-8)&15:]) = [8]byte(s[l-8 : l : l])
	case l >= 4:
		*(*[4]byte)(w[:]) = [4]byte(s)
		*(*[4]byte)(w[(l-4)&3:]) = [4]byte(s[l-4 : l : l])
	default:
		copy(w[:], s)
	}
}

// codesSlot is the index in DNSLog.codes of the text of codesKey k.
func codesSlot(k uint64) uint64 { return k * 0x9e3779b97f4a7c15 >> (64 - codesBits) }

// appendCodes appends the columns from qclass to Z, whose codesKey is k,
// when DNSLog.codes does not hold their text, and keeps it.
func (l *DNSLog) appendCodes(b []byte, tx *dns.Transaction, k uint64) []byte {
	ct := &l.codes[codesSlot(k)]
	start := len(b)
	b = l.renderCodes(b, tx)
	if n := len(b) - start; n <= len(ct.text) {
		ct.key, ct.n = k, uint8(n)
		copy(ct.text[:], b[start:])
	}
	return b
}

// renderCodes is appendCodes rendering the columns.
func (l *DNSLog) renderCodes(b []byte, tx *dns.Transaction) []byte {
	if tx.HasQuestion {
		b = l.names.classOf(tx).appendTSV(b, tx.QClass)
		b = l.names.typeOf(tx).appendTSV(b, tx.QType)
	} else {
		b = append(b, "-\t-\t-\t-\t"...)
	}
	if tx.HasReply {
		b = l.names.rcodeOf(tx).appendTSV(b, tx.RCode)
	} else {
		b = append(b, "-\t-\t"...)
	}
	b = tsvBool(b, tx.AA)
	b = tsvBool(b, tx.TC)
	b = tsvBool(b, tx.RD)
	b = tsvBool(b, tx.RA)
	return tsvUint(b, uint64(tx.Z))
}

// appendDNSText appends a query name or an answer as appendTSVText does.
// Text the parser marked plain (printable ASCII without the set separator:
// addresses and most names) is copied without looking at its bytes, unless
// it is empty or a reserved value.
func appendDNSText(b, s []byte, plain, inVec bool) []byte {
	// Small enough to be inlined: the reserved values are 1 or 7 bytes
	// long, so other lengths need no test of the bytes.
	if plain && len(s) > 1 && len(s) != len(emptyField) {
		return append(b, s...)
	}
	return appendDNSTextShort(b, s, plain, inVec)
}

// appendDNSTextShort is appendDNSText for text that may be reserved or
// may need escaping.
func appendDNSTextShort(b, s []byte, plain, inVec bool) []byte {
	if plain && len(s) > 0 && !reserved(s) {
		return append(b, s...)
	}
	return appendTSVText(b, s, inVec)
}

// nonNil turns a nil slice into an empty one: a set query name may be
// empty (the root), which is "(empty)", not unset.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Records returns the number of records written.
func (l *DNSLog) Records() int64 { return l.w.Records() }

// Flush writes buffered records out.
func (l *DNSLog) Flush() error { return l.w.Flush() }

// Close writes the footer and flushes; it returns the first write error.
func (l *DNSLog) Close() error { return l.w.Close() }

var _ dns.Sink = (*DNSLog)(nil)

// dnsProto is the transport protocol of a DNS connection (dnsOverTCP).
func dnsProto(c *parsers.Conn) string {
	if dnsOverTCP(c) {
		return "tcp"
	}
	return "udp"
}

// dnsOverTCP reports whether a DNS connection is over TCP: from its
// 5-tuple, else from its kind (stream: tcp).
func dnsOverTCP(c *parsers.Conn) bool {
	return c.Key.Proto == flow.ProtoTCP || c.Key.Proto != flow.ProtoUDP && c.Kind == parsers.Stream
}

// Write is DNS for a transaction of any type, *dns.Transaction: it makes
// DNSLog a parsers.LogWriter.
func (l *DNSLog) Write(c *parsers.Conn, tx any) { l.WriteColumns(nil, c, tx) }

package zeeklog

import (
	"io"
	"strconv"

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
	w *Writer
}

// NewDNSLog returns a dns.log writer writing to w.
func NewDNSLog(w io.Writer, o Options) (*DNSLog, error) {
	lw, err := NewWriter(w, "dns", DNSFields, o)
	return &DNSLog{lw}, err
}

// DNS implements dns.Sink, following Zeek's base/protocols/dns/main.zeek:
// qclass and qtype come from the query's question (unset without one), the
// rcode from the reply (unset without one), rtt only when a query and its
// answered reply were both seen at different times. Write errors are kept
// for Close.
func (l *DNSLog) DNS(c *parsers.Conn, tx *dns.Transaction) {
	w := l.w
	w.Begin()
	w.Time(tx.TS)
	writeConnID(w, c)
	w.Enum(dnsProto(c))
	w.Count(uint64(tx.TransID))
	if tx.HasQuery && tx.HasReply && tx.RTT != 0 {
		w.Interval(tx.RTT)
	} else {
		w.Unset()
	}
	w.Text(tx.Query)
	if tx.HasQuery && tx.Query != nil {
		w.Count(uint64(tx.QClass))
		w.nameOrNum(className(tx.QClass), "qclass-", int(tx.QClass))
		w.Count(uint64(tx.QType))
		name := queryTypes[tx.QType]
		if netbios(c) && tx.QType == 33 {
			name = "NBSTAT" // the SRV code is NetBIOS's node status
		}
		w.nameOrNum(name, "query-", int(tx.QType))
	} else {
		for range 4 {
			w.Unset()
		}
	}
	if tx.HasReply {
		w.Count(uint64(tx.RCode))
		w.nameOrNum(rcodeName(tx.RCode), "rcode-", int(tx.RCode))
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
	if netbios(c) {
		w.nameOrNum(netbiosOpcodeName(tx.Opcode), "netbios-opcode-", int(tx.Opcode))
	} else {
		w.nameOrNum(opcodeName(tx.Opcode), "opcode-", int(tx.Opcode))
	}
	w.End()
}

// Records returns the number of records written.
func (l *DNSLog) Records() int64 { return l.w.Records() }

// Flush writes buffered records out.
func (l *DNSLog) Flush() error { return l.w.Flush() }

// Close writes the footer and flushes; it returns the first write error.
func (l *DNSLog) Close() error { return l.w.Close() }

var _ dns.Sink = (*DNSLog)(nil)

// dnsProto is the transport protocol of a DNS connection: from its
// 5-tuple, else from its kind (stream: tcp).
func dnsProto(c *parsers.Conn) string {
	switch {
	case c.Key.Proto == flow.ProtoTCP:
		return "tcp"
	case c.Key.Proto == flow.ProtoUDP:
		return "udp"
	case c.Kind == parsers.Stream:
		return "tcp"
	}
	return "udp"
}

func netbios(c *parsers.Conn) bool {
	return c.Key.Proto == flow.ProtoUDP && c.Key.Resp.Port() == 137
}

// TypeName returns Zeek's name of a DNS query type (DNS::query_types), or
// "query-N" for an unknown one.
func TypeName(t uint16) string {
	if s, ok := queryTypes[t]; ok {
		return s
	}
	return "query-" + strconv.Itoa(int(t))
}

// nameOrNum writes name, or prefix and n when name is "" (Zeek's &default
// names for unknown codes), without allocating.
func (w *Writer) nameOrNum(name, prefix string, n int) {
	if name != "" {
		w.Str(name)
		return
	}
	w.next()
	if w.format == JSON {
		w.buf = append(w.buf, '"')
	}
	w.buf = append(w.buf, prefix...)
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	if w.format == JSON {
		w.buf = append(w.buf, '"')
	}
}

// ClassName returns Zeek's name of a DNS class (DNS::classes), or
// "qclass-N".
func ClassName(c uint16) string {
	if s := className(c); s != "" {
		return s
	}
	return "qclass-" + strconv.Itoa(int(c))
}

func className(c uint16) string {
	switch c {
	case 1:
		return "C_INTERNET"
	case 2:
		return "C_CSNET"
	case 3:
		return "C_CHAOS"
	case 4:
		return "C_HESIOD"
	case 254:
		return "C_NONE"
	case 255:
		return "C_ANY"
	}
	return ""
}

// RcodeName returns Zeek's name of a response code (DNS::base_errors), or
// "rcode-N".
func RcodeName(r uint16) string {
	if s := rcodeName(r); s != "" {
		return s
	}
	return "rcode-" + strconv.Itoa(int(r))
}

func rcodeName(r uint16) string {
	if int(r) < len(rcodeNames) {
		return rcodeNames[r]
	}
	if r == 3842 {
		return "BADSIG"
	}
	return ""
}

// OpcodeName returns Zeek's name of an opcode (DNS::opcodes), or
// "opcode-N".
func OpcodeName(op uint8) string {
	if s := opcodeName(op); s != "" {
		return s
	}
	return "opcode-" + strconv.Itoa(int(op))
}

func opcodeName(op uint8) string {
	switch op {
	case 0:
		return "query"
	case 1:
		return "iquery"
	case 2:
		return "server-status"
	case 4:
		return "notify"
	case 5:
		return "dynamic-update"
	case 6:
		return "dso"
	}
	return ""
}

// NetBIOSOpcodeName returns Zeek's name of a NetBIOS name service opcode
// (DNS::netbios_opcodes), or "netbios-opcode-N".
func NetBIOSOpcodeName(op uint8) string {
	if s := netbiosOpcodeName(op); s != "" {
		return s
	}
	return "netbios-opcode-" + strconv.Itoa(int(op))
}

func netbiosOpcodeName(op uint8) string {
	switch op {
	case 0:
		return "netbios-query"
	case 5:
		return "netbios-registration"
	case 6:
		return "netbios-release"
	case 7:
		return "netbios-wack"
	case 8:
		return "netbios-refresh"
	}
	return ""
}

var rcodeNames = [...]string{
	"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET",
	"NXRRSet", "NOTAUTH", "NOTZONE", "unassigned-11", "unassigned-12", "unassigned-13",
	"unassigned-14", "unassigned-15", "BADVERS", "BADKEY", "BADTIME", "BADMODE", "BADNAME",
	"BADALG", "BADTRUNC", "BADCOOKIE",
}

// queryTypes is Zeek's DNS::query_types.
var queryTypes = map[uint16]string{
	1: "A", 2: "NS", 3: "MD", 4: "MF", 5: "CNAME", 6: "SOA", 7: "MB", 8: "MG", 9: "MR",
	10: "NULL", 11: "WKS", 12: "PTR", 13: "HINFO", 14: "MINFO", 15: "MX", 16: "TXT",
	17: "RP", 18: "AFSDB", 19: "X25", 20: "ISDN", 21: "RT", 22: "NSAP", 23: "NSAP-PTR",
	24: "SIG", 25: "KEY", 26: "PX", 27: "GPOS", 28: "AAAA", 29: "LOC", 30: "NXT",
	31: "EID", 32: "NIMLOC", 33: "SRV", 34: "ATMA", 35: "NAPTR", 36: "KX", 37: "CERT",
	38: "A6", 39: "DNAME", 40: "SINK", 41: "OPT", 42: "APL", 43: "DS", 44: "SSHFP",
	45: "IPSECKEY", 46: "RRSIG", 47: "NSEC", 48: "DNSKEY", 49: "DHCID", 50: "NSEC3",
	51: "NSEC3PARAM", 52: "TLSA", 53: "SMIMEA", 55: "HIP", 56: "NINFO", 57: "RKEY",
	58: "TALINK", 59: "CDS", 60: "CDNSKEY", 61: "OPENPGPKEY", 62: "CSYNC", 63: "ZONEMD",
	64: "SVCB", 65: "HTTPS", 99: "SPF", 100: "UINFO", 101: "UID", 102: "GID",
	103: "UNSPEC", 104: "NID", 105: "L32", 106: "L64", 107: "LP", 108: "EUI48",
	109: "EUI64", 249: "TKEY", 250: "TSIG", 251: "IXFR", 252: "AXFR", 253: "MAILB",
	254: "MAILA", 255: "*", 256: "URI", 257: "CAA", 32768: "TA", 32769: "DLV",
	65281: "WINS", 65282: "WINS-R", 65422: "XPF", 65521: "INTEGRITY",
}

package dns

import "strconv"

// Names of numeric DNS codes as Zeek writes them in dns.log (Zeek's
// base/protocols/dns/consts.zeek), so that wirebench's logs compare equal to
// Zeek's field by field.

var typeNames = map[uint16]string{
	1: "A", 2: "NS", 3: "MD", 4: "MF", 5: "CNAME", 6: "SOA", 7: "MB", 8: "MG",
	9: "MR", 10: "NULL", 11: "WKS", 12: "PTR", 13: "HINFO", 14: "MINFO", 15: "MX",
	16: "TXT", 17: "RP", 18: "AFSDB", 19: "X25", 20: "ISDN", 21: "RT", 22: "NSAP",
	23: "NSAP-PTR", 24: "SIG", 25: "KEY", 26: "PX", 27: "GPOS", 28: "AAAA",
	29: "LOC", 30: "NXT", 31: "EID", 32: "NIMLOC", 33: "SRV", 34: "ATMA",
	35: "NAPTR", 36: "KX", 37: "CERT", 38: "A6", 39: "DNAME", 40: "SINK",
	41: "OPT", 42: "APL", 43: "DS", 44: "SSHFP", 45: "IPSECKEY", 46: "RRSIG",
	47: "NSEC", 48: "DNSKEY", 49: "DHCID", 50: "NSEC3", 51: "NSEC3PARAM",
	52: "TLSA", 53: "SMIMEA", 55: "HIP", 56: "NINFO", 57: "RKEY", 58: "TALINK",
	59: "CDS", 60: "CDNSKEY", 61: "OPENPGPKEY", 62: "CSYNC", 63: "ZONEMD",
	64: "SVCB", 65: "HTTPS", 99: "SPF", 100: "UINFO", 101: "UID", 102: "GID",
	103: "UNSPEC", 104: "NID", 105: "L32", 106: "L64", 107: "LP", 108: "EUI48",
	109: "EUI64", 249: "TKEY", 250: "TSIG", 251: "IXFR", 252: "AXFR",
	253: "MAILB", 254: "MAILA", 255: "*", 256: "URI", 257: "CAA", 32768: "TA",
	32769: "DLV", 65281: "WINS", 65282: "WINS-R", 65422: "XPF", 65521: "INTEGRITY",
}

var rcodeNames = map[uint16]string{
	0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP",
	5: "REFUSED", 6: "YXDOMAIN", 7: "YXRRSET", 8: "NXRRSet", 9: "NOTAUTH",
	10: "NOTZONE", 11: "unassigned-11", 12: "unassigned-12", 13: "unassigned-13",
	14: "unassigned-14", 15: "unassigned-15", 16: "BADVERS", 17: "BADKEY",
	18: "BADTIME", 19: "BADMODE", 20: "BADNAME", 21: "BADALG", 22: "BADTRUNC",
	23: "BADCOOKIE", 3842: "BADSIG",
}

var classNames = map[uint16]string{
	1: "C_INTERNET", 2: "C_CSNET", 3: "C_CHAOS", 4: "C_HESIOD", 254: "C_NONE", 255: "C_ANY",
}

var opcodeNames = map[uint8]string{
	0: "query", 1: "iquery", 2: "server-status", 4: "notify", 5: "dynamic-update", 6: "dso",
}

var netbiosOpcodeNames = map[uint8]string{
	0: "netbios-query", 5: "netbios-registration", 6: "netbios-release",
	7: "netbios-wack", 8: "netbios-refresh",
}

// TypeName returns Zeek's name of an RR type or QTYPE ("A", "AAAA", "*"),
// or "query-N" for a type Zeek has no name for.
func TypeName(t uint16) string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return "query-" + strconv.Itoa(int(t))
}

// appendTypeName appends TypeName(t) to dst without making a string.
func appendTypeName(dst []byte, t uint16) []byte {
	if s, ok := typeNames[t]; ok {
		return append(dst, s...)
	}
	return strconv.AppendUint(append(dst, "query-"...), uint64(t), 10)
}

// ClassName returns Zeek's name of a class ("C_INTERNET"), or "qclass-N".
func ClassName(c uint16) string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return "qclass-" + strconv.Itoa(int(c))
}

// RcodeName returns Zeek's name of a response code ("NOERROR",
// "NXDOMAIN"), or "rcode-N".
func RcodeName(r uint16) string {
	if s, ok := rcodeNames[r]; ok {
		return s
	}
	return "rcode-" + strconv.Itoa(int(r))
}

// OpcodeName returns Zeek's name of an opcode ("query", "notify",
// "dynamic-update"), or "opcode-N". NetBIOS name service messages use their
// own names ("netbios-query"), or "netbios-opcode-N".
func OpcodeName(op uint8, netbios bool) string {
	if netbios {
		if s, ok := netbiosOpcodeNames[op]; ok {
			return s
		}
		return "netbios-opcode-" + strconv.Itoa(int(op))
	}
	if s, ok := opcodeNames[op]; ok {
		return s
	}
	return "opcode-" + strconv.Itoa(int(op))
}

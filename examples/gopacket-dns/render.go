package gopacketdns

import (
	"net/netip"
	"strconv"

	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/parsers/dns"
)

// Rendering of answers as Zeek's dns.log shows them (hook DNS::do_reply in
// base/protocols/dns/main.zeek), from what gopacket decoded: its names,
// addresses and the fields of the types it knows (A, AAAA, NS, CNAME, PTR,
// SOA, MX, SRV, TXT), and the record's raw data for the other types Zeek
// logs.

// section says which part of a message a record comes from, for the
// renderings of DNS UPDATE (RFC 2136).
type section uint8

const (
	sectionAnswer section = iota
	sectionPrereq         // an UPDATE's answer section: prerequisites
	sectionUpdate         // an UPDATE's authority section: the updates
)

// appendRecord appends rr's rendering to dst.
func appendRecord(dst []byte, rr *layers.DNSResourceRecord, sec section, netbios bool) ([]byte, dns.Logged) {
	switch sec {
	case sectionPrereq:
		return appendPrereq(dst, rr), dns.LoggedText
	case sectionUpdate:
		return appendUpdate(dst, rr)
	}
	d := rr.Data
	switch t := uint16(rr.Type); t {
	case uint16(layers.DNSTypeA):
		if len(d) != 4 {
			return dst, dns.NotLogged
		}
		return netip.AddrFrom4([4]byte(d)).AppendTo(dst), dns.LoggedText
	case uint16(layers.DNSTypeAAAA), dns.TypeA6:
		if len(d) != 16 {
			return dst, dns.NotLogged
		}
		return netip.AddrFrom16([16]byte(d)).AppendTo(dst), dns.LoggedText
	case uint16(layers.DNSTypeNS):
		return appendZeekName(dst, rr.NS), dns.LoggedText
	case uint16(layers.DNSTypeCNAME):
		return appendZeekName(dst, rr.CNAME), dns.LoggedText
	case uint16(layers.DNSTypePTR):
		return appendZeekName(dst, rr.PTR), dns.LoggedText
	case uint16(layers.DNSTypeSOA):
		return appendZeekName(dst, rr.SOA.MName), dns.LoggedText
	case uint16(layers.DNSTypeMX):
		return appendZeekName(dst, rr.MX.Name), dns.LoggedText
	case uint16(layers.DNSTypeSRV):
		if netbios {
			return dst, dns.NotLogged // a NetBIOS node status record
		}
		return appendZeekName(dst, rr.SRV.Name), dns.LoggedText
	case uint16(layers.DNSTypeTXT), dns.TypeSPF:
		word := "TXT "
		if t == dns.TypeSPF {
			word = "SPF "
		}
		// The strings are read from the data: gopacket decodes those of
		// TXT (into a new slice), not those of SPF.
		for first := true; len(d) > 0 && 1+int(d[0]) <= len(d); first = false {
			s := d[1 : 1+int(d[0])]
			d = d[1+len(s):]
			if !first {
				dst = append(dst, ' ')
			}
			dst = append(dst, word...)
			dst = strconv.AppendInt(dst, int64(len(s)), 10)
			dst = append(dst, ' ')
			dst = appendZeekBytes(dst, s, false)
		}
		return dst, dns.LoggedText
	case dns.TypeNAPTR:
		return appendNAPTR(dst, d)
	case dns.TypeWKS:
		return dst, dns.LoggedEmpty
	case dns.TypeRRSIG:
		if len(d) < 19 {
			return dst, dns.NotLogged
		}
		dst = append(dst, "RRSIG "...)
		dst = strconv.AppendUint(dst, uint64(d[0])<<8|uint64(d[1]), 10)
		dst = append(dst, ' ')
		signer, _ := wireName(d[18:])
		if signer.root {
			return append(dst, "<Root>"...), dns.LoggedText
		}
		return signer.appendZeek(dst), dns.LoggedText
	case dns.TypeDNSKEY:
		if len(d) < 4 {
			return dst, dns.NotLogged
		}
		dst = append(dst, "DNSKEY "...)
		return strconv.AppendUint(dst, uint64(d[3]), 10), dns.LoggedText
	case dns.TypeDS:
		if len(d) < 4 {
			return dst, dns.NotLogged
		}
		dst = append(dst, "DS "...)
		dst = strconv.AppendUint(dst, uint64(d[2]), 10)
		dst = append(dst, ' ')
		return strconv.AppendUint(dst, uint64(d[3]), 10), dns.LoggedText
	case dns.TypeNSEC:
		next, ok := wireName(d)
		if !ok {
			return dst, dns.NotLogged
		}
		dst = append(dst, "NSEC "...)
		dst = appendZeekName(dst, rr.Name)
		dst = append(dst, ' ')
		return next.appendZeek(dst), dns.LoggedText
	case dns.TypeNSEC3:
		return append(dst, "NSEC3"...), dns.LoggedText
	case dns.TypeNSEC3PARAM:
		return append(dst, "NSEC3PARAM"...), dns.LoggedText
	case dns.TypeBINDS:
		return append(dst, "BIND9 signing signal"...), dns.LoggedText
	case dns.TypeSSHFP:
		if len(d) < 2 {
			return dst, dns.NotLogged
		}
		dst = append(dst, "SSHFP: "...)
		for _, b := range d[2:] {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
		}
		return dst, dns.LoggedText
	case dns.TypeLOC:
		if len(d) < 16 {
			return dst, dns.NotLogged
		}
		dst = append(dst, "LOC:  "...)
		dst = strconv.AppendUint(dst, uint64(d[1]), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(d[2]), 10)
		dst = append(dst, ' ')
		return strconv.AppendUint(dst, uint64(d[3]), 10), dns.LoggedText
	case uint16(layers.DNSTypeHINFO), uint16(layers.DNSTypeOPT), dns.TypeCAA, dns.TypeSVCB, dns.TypeHTTPS, dns.TypeTSIG, dns.TypeTKEY:
		return dst, dns.NotLogged
	default:
		dst = append(dst, "<unknown type="...)
		dst = strconv.AppendUint(dst, uint64(t), 10)
		return append(dst, '>'), dns.LoggedText
	}
}

// appendPrereq renders a prerequisite of an UPDATE as Zeek does.
func appendPrereq(dst []byte, rr *layers.DNSResourceRecord) []byte {
	dst = append(dst, "pre: "...)
	typ, class := uint16(rr.Type), uint16(rr.Class)
	switch {
	case class == dns.ClassNONE && typ == dns.TypeANY:
		dst = append(dst, "NameNotInUse "...)
	case class == dns.ClassANY && typ == dns.TypeANY:
		dst = append(dst, "NameInUse "...)
	case class == dns.ClassNONE:
		dst = append(dst, "NoRRSet "...)
		dst = append(append(dst, dns.TypeName(typ)...), ' ')
	default:
		dst = append(dst, "RRSetExists "...)
		dst = append(append(dst, dns.TypeName(typ)...), ' ')
	}
	return appendZeekName(dst, rr.Name)
}

// appendUpdate renders an update of an UPDATE as Zeek does: deletions as
// "del: ...", additions as the record's usual rendering after "add: ".
func appendUpdate(dst []byte, rr *layers.DNSResourceRecord) ([]byte, dns.Logged) {
	typ, class := uint16(rr.Type), uint16(rr.Class)
	switch {
	case class == dns.ClassANY && typ == dns.TypeANY:
		dst = append(dst, "del: RRSet * "...)
		return appendZeekName(dst, rr.Name), dns.LoggedText
	case class == dns.ClassNONE:
		dst = append(dst, "del: RR "...)
		dst = append(append(dst, dns.TypeName(typ)...), ' ')
		return appendZeekName(dst, rr.Name), dns.LoggedText
	case class == dns.ClassANY:
		dst = append(dst, "del: RRSet "...)
		return append(dst, dns.TypeName(typ)...), dns.LoggedText
	}
	start := len(dst)
	dst = append(dst, "add: "...)
	switch typ {
	case uint16(layers.DNSTypeA), uint16(layers.DNSTypeAAAA), dns.TypeA6:
		dst = append(append(dst, dns.TypeName(typ)...), ' ')
		dst = appendZeekName(dst, rr.Name)
		dst = append(dst, ' ')
	}
	out, l := appendRecord(dst, rr, sectionAnswer, false)
	if l != dns.LoggedText {
		return out[:start], l
	}
	return out, l
}

// appendNAPTR renders "NAPTR order preference flags service regexp
// replacement", leaving out an empty regexp or a root replacement as Zeek
// does. gopacket does not decode NAPTR: the data is read here (its
// replacement is never compressed, RFC 3403).
func appendNAPTR(dst, d []byte) ([]byte, dns.Logged) {
	if len(d) < 4 {
		return dst, dns.NotLogged
	}
	order, pref := uint64(d[0])<<8|uint64(d[1]), uint64(d[2])<<8|uint64(d[3])
	var strs [3][]byte
	rest := d[4:]
	for i := range strs {
		if len(rest) == 0 || 1+int(rest[0]) > len(rest) {
			return dst, dns.NotLogged
		}
		strs[i], rest = rest[1:1+int(rest[0])], rest[1+int(rest[0]):]
	}
	repl, ok := wireName(rest)
	if !ok {
		return dst, dns.NotLogged
	}
	dst = append(dst, "NAPTR "...)
	dst = strconv.AppendUint(dst, order, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, pref, 10)
	for _, s := range strs {
		dst = append(dst, ' ')
		dst = appendZeekBytes(dst, s, false)
	}
	if !repl.root {
		if len(strs[2]) > 0 {
			dst = append(dst, ' ')
		}
		dst = repl.appendZeek(dst)
	}
	return dst, dns.LoggedText
}

// rawName is an uncompressed name in wire format, as some records carry
// in their data (RRSIG's signer, NSEC's next name).
type rawName struct {
	wire []byte
	root bool
}

// wireName reads the uncompressed name at the start of d; ok is false when
// it does not end within d.
func wireName(d []byte) (rawName, bool) {
	for i := 0; i < len(d); {
		n := int(d[i])
		switch {
		case n == 0:
			return rawName{wire: d[:i+1], root: i == 0}, true
		case n&0xc0 != 0 || i+1+n > len(d):
			return rawName{root: true}, false
		}
		i += 1 + n
	}
	return rawName{root: true}, false
}

func (n rawName) appendZeek(dst []byte) []byte {
	for i, first := 0, true; i < len(n.wire) && n.wire[i] != 0; first = false {
		l := int(n.wire[i])
		if !first {
			dst = append(dst, '.')
		}
		dst = appendZeekBytes(dst, n.wire[i+1:i+1+l], true)
		i += 1 + l
	}
	return dst
}

// appendZeekName appends a name as gopacket decodes it (labels joined by
// dots, no trailing dot, the root empty) as Zeek's dns.log writes it: ASCII
// letters in lower case, non-printable bytes and the backslash as \xHH.
func appendZeekName(dst, name []byte) []byte { return appendZeekBytes(dst, name, true) }

const hexDigits = "0123456789abcdef"

// appendZeekBytes appends b with Zeek's log escaping, folding ASCII
// letters to lower case when fold is set.
func appendZeekBytes(dst, b []byte, fold bool) []byte {
	for _, c := range b {
		switch {
		case c < 0x20 || c > 0x7e || c == '\\':
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
		case fold && 'A' <= c && c <= 'Z':
			dst = append(dst, c+'a'-'A')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// plainText reports whether a rendering holds only printable ASCII other
// than the comma and the backslash, so that a TSV writer has nothing to
// escape in it (see dns.Answer.Plain).
func plainText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e || c == ',' || c == '\\' {
			return false
		}
	}
	return true
}

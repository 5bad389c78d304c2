package dns

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/wirebench/wirebench/internal/ipv4text"
)

// Rendering of answers as Zeek's dns.log shows them. Zeek's DNS analyzer
// raises one event per record type and its base script turns some of them
// into an entry of the log's answers vector (hook DNS::do_reply); records of
// the other types it knows (HINFO, CAA, SVCB, HTTPS, OPT, TSIG, TKEY, NetBIOS
// status) leave no trace in the log, and types it does not know become
// "<unknown type=N>".

// Logged says what Zeek does with an answer record.
type Logged uint8

// What an answer record contributes to dns.log.
const (
	// NotLogged: Zeek's base script ignores the record entirely.
	NotLogged Logged = iota
	// LoggedEmpty: the record counts as an answer (it sets AA, RA, the
	// rtt and the query name) but adds no text, as WKS records do.
	LoggedEmpty
	// LoggedText: the record adds its rendering to answers and its TTL to
	// TTLs.
	LoggedText
)

// AppendZeekAnswer decodes the data of the current answer record (whose
// header rh ResourceHeader just returned) and appends its rendering in
// Zeek's dns.log to dst. update selects the rendering of the sections of a
// DNS UPDATE message: rh.Section SectionAnswer holds prerequisites and
// SectionAuthority the updates. netbios selects NetBIOS name service rules
// (on 137/udp, type 33 is a node status record rather than SRV).
//
// On an error the record's data is malformed; Zeek stops reading the
// message at such a record, and so should the caller. rh must be the header
// of the current record, whose data was not consumed yet: ErrNoRecord
// otherwise.
func (p *Parser) AppendZeekAnswer(dst []byte, rh ResourceHeader, update, netbios bool) ([]byte, Logged, error) {
	if !p.haveRR || rh.Offset != p.rdStart {
		return dst, NotLogged, ErrNoRecord
	}
	return p.appendZeek(dst, update, netbios)
}

// appendZeek is AppendZeekAnswer for the current record. It sets p.plain
// when it knows the rendering is plain: for addresses, and for the names
// of the common types that render as a name.
func (p *Parser) appendZeek(dst []byte, update, netbios bool) ([]byte, Logged, error) {
	p.plain = false
	if update {
		out, logged, err := p.appendZeekUpdate(dst)
		p.plain = false // an addition's rendering is more than its record's
		return out, logged, err
	}
	switch p.rdType {
	case TypeA:
		return p.appendA(dst)
	case TypeAAAA, TypeA6:
		return p.appendAAAA(dst)
	case TypeNS, TypeCNAME, TypePTR:
		return p.appendLastName(dst, p.rdStart)
	case TypeSOA:
		return p.appendSOA(dst)
	case TypeMX:
		// The checks of checkMX.
		if p.rdEnd-p.rdStart < 2 {
			return dst, NotLogged, p.badData(p.rdStart)
		}
		return p.appendLastName(dst, p.rdStart+2)
	case TypeSRV:
		if netbios {
			p.SkipRData()
			return dst, NotLogged, nil
		}
		// The checks of checkSRV.
		if p.rdEnd-p.rdStart < 6 {
			return dst, NotLogged, p.short(p.rdStart, 2, 2, 2)
		}
		return p.appendLastName(dst, p.rdStart+6)
	case TypeTXT, TypeSPF:
		return p.appendTXT(dst)
	case TypeNAPTR:
		return p.appendNAPTR(dst)
	case TypeWKS:
		p.SkipRData()
		return dst, LoggedEmpty, nil
	case TypeRRSIG:
		return p.appendRRSIG(dst)
	case TypeDNSKEY:
		v, err := p.DNSKEY()
		if err != nil {
			return dst, NotLogged, err
		}
		dst = append(dst, "DNSKEY "...)
		return strconv.AppendUint(dst, uint64(v.Algorithm), 10), LoggedText, nil
	case TypeDS:
		v, err := p.DS()
		if err != nil {
			return dst, NotLogged, err
		}
		dst = append(dst, "DS "...)
		dst = strconv.AppendUint(dst, uint64(v.Algorithm), 10)
		dst = append(dst, ' ')
		return strconv.AppendUint(dst, uint64(v.DigestType), 10), LoggedText, nil
	case TypeNSEC:
		v, err := p.NSEC()
		if err != nil {
			return dst, NotLogged, err
		}
		dst = append(dst, "NSEC "...)
		dst = p.owner().AppendZeek(dst)
		dst = append(dst, ' ')
		return v.NextName.AppendZeek(dst), LoggedText, nil
	case TypeNSEC3:
		if _, err := p.NSEC3(); err != nil {
			return dst, NotLogged, err
		}
		return append(dst, "NSEC3"...), LoggedText, nil
	case TypeNSEC3PARAM:
		if _, err := p.NSEC3PARAM(); err != nil {
			return dst, NotLogged, err
		}
		return append(dst, "NSEC3PARAM"...), LoggedText, nil
	case TypeBINDS:
		p.SkipRData()
		return append(dst, "BIND9 signing signal"...), LoggedText, nil
	case TypeSSHFP:
		v, err := p.SSHFP()
		if err != nil {
			return dst, NotLogged, err
		}
		dst = append(dst, "SSHFP: "...)
		for _, b := range v.Fingerprint {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&0xf])
		}
		return dst, LoggedText, nil
	case TypeLOC:
		v, err := p.LOC()
		if err != nil {
			return dst, NotLogged, err
		}
		dst = append(dst, "LOC:  "...)
		dst = strconv.AppendUint(dst, uint64(v.Size), 10)
		dst = append(dst, ' ')
		dst = strconv.AppendUint(dst, uint64(v.HorizPre), 10)
		dst = append(dst, ' ')
		return strconv.AppendUint(dst, uint64(v.VertPre), 10), LoggedText, nil
	case TypeHINFO:
		_, err := p.HINFO()
		return dst, NotLogged, err
	case TypeCAA:
		_, err := p.CAA()
		return dst, NotLogged, err
	case TypeSVCB, TypeHTTPS:
		_, err := p.SVCB()
		return dst, NotLogged, err
	case TypeOPT:
		_, err := p.OPT()
		return dst, NotLogged, err
	case TypeTSIG:
		_, err := p.TSIG()
		return dst, NotLogged, err
	case TypeTKEY:
		_, err := p.TKEY()
		return dst, NotLogged, err
	}
	p.SkipRData()
	dst = append(dst, "<unknown type="...)
	dst = strconv.AppendUint(dst, uint64(p.rdType), 10)
	return append(dst, '>'), LoggedText, nil
}

// appendA is appendZeek for an A record outside an UPDATE, which most
// answers are: the loop over them calls it without appendZeek's tests.
func (p *Parser) appendA(dst []byte) ([]byte, Logged, error) {
	d := p.msg[p.rdStart:p.rdEnd]
	if len(d) != 4 {
		p.plain = false
		return dst, NotLogged, p.wrongSize(4)
	}
	p.consume()
	p.plain = true
	return appendIPv4(dst, d), LoggedText, nil
}

// nextType returns the low byte of the next record's type where an
// owner name of one compression pointer would have it, as the records
// appendAnswersA, appendAnswersAAAA and connState.nameAnswer read do, or 0
// past the end of the message. It is inlined: other records cost no call.
func (p *Parser) nextType() byte {
	off := p.off
	if off+4 > len(p.msg) {
		return 0
	}
	return p.msg[off+3]
}

// appendAnswersA is nextRR and appendA in one for the most common answer
// records: A records, in the answer section, whose owner name is a
// compression pointer to a name checked before (see pointerName). It
// reads those that follow, up to n of them, while their renderings stay
// within budget bytes: it appends the renderings to tx.buf, each followed
// by a comma (see Transaction.AnswersJoined), and an Answer for each to
// tx.Answers, and returns how many it read. A reply's A records mostly
// come in runs, which this loop reads at a fraction of the cost of calls
// for each record.
func (p *Parser) appendAnswersA(tx *Transaction, n, budget int) int {
	if !p.inAnswers() {
		return 0
	}
	msg, start := p.msg, p.off
	if start+aSize > len(msg) || !p.pointedRR((*[12]byte)(msg[start:start+12]), start, TypeA, 4) {
		return 0
	}
	buf, ans := tx.buf, tx.Answers
	// The records of a run share their owner name, a pointer whose name
	// the first one's check found in the cache, and whose first run of
	// labels ends before every later record too: the first four bytes,
	// pointer and TYPE, are all they need to match.
	head := binary.LittleEndian.Uint32(msg[start:])
	n = min(n, int(p.left[SectionAnswer]), (len(msg)-start)/aSize)
	// Room for the whole run is made once, in both slices: the loop
	// stores the renderings and the Answers by index, with no test of
	// capacity or append of its own, and fewer values to keep.
	if cap(buf)-len(buf) < n*ipv4text.Room {
		buf = slices.Grow(buf, n*ipv4text.Room)
	}
	if cap(ans)-len(ans) < n {
		ans = slices.Grow(ans, n)
	}
	text, run := buf[:cap(buf)], ans[len(ans):len(ans)+n]
	// Keeping the grown slices in tx leaves the loop fewer values to
	// hold in registers.
	tx.buf, tx.Answers = buf, ans
	// The loop stops before a rendering could pass the budget; the room
	// grows by each comma, which the budget does not count.
	s, room := len(buf), len(buf)+budget-len("255.255.255.255")
	off, k := start, 0
	for ; k < len(run) && s <= room; k, room = k+1, room+1 {
		rr := (*[aSize]byte)(msg[off : off+aSize])
		if binary.LittleEndian.Uint32(rr[:]) != head || rr[10] != 0 || rr[11] != 4 {
			break
		}
		// The address in dotted decimal; the comma replaces the dot
		// after the last octet.
		e := s + ipv4text.PutDotted((*[ipv4text.Room]byte)(text[s:s+ipv4text.Room]), [4]byte(rr[12:16])) - 1
		text[e] = ','
		run[k] = Answer{Data: text[s:e:e], TTL: binary.BigEndian.Uint32(rr[6:]), Plain: true}
		s = e + 1
		off += aSize
	}
	if k > 0 {
		p.readRun(off-aSize, k, TypeA, 4)
	}
	tx.buf, tx.Answers = tx.buf[:s], tx.Answers[:len(tx.Answers)+k]
	return k
}

// aSize is the size of an A record whose owner name is a compression
// pointer: the pointer, TYPE, CLASS, TTL, RDLENGTH and the address.
const aSize = 2 + 10 + 4

// inAnswers reports whether the next record is one of the answer section,
// and that no record's data is left to consume.
func (p *Parser) inAnswers() bool {
	if p.haveRR || p.left[SectionAnswer] == 0 {
		return false
	}
	switch p.section {
	case SectionQuestion:
		return p.left[SectionQuestion] == 0
	case SectionAnswer:
		return true
	}
	return false
}

// readRun moves the parser past k records of type t with owner names of
// one compression pointer and data of n bytes, which appendAnswersA,
// appendAnswersAAAA or connState.nameAnswer read, the last at off, as nextRR
// and the rendering of its data would have. It sets p.plain, as the
// addresses of A and AAAA records are; nameAnswer sets it after.
func (p *Parser) readRun(off, k int, t uint16, n int) {
	rr := p.msg[off : off+12]
	p.section = SectionAnswer
	p.left[SectionAnswer] -= uint16(k)
	p.rrName, p.rdType = off, t
	p.rrClass = binary.BigEndian.Uint16(rr[4:])
	p.rrTTL = binary.BigEndian.Uint32(rr[6:])
	p.rdStart, p.rdEnd = off+12, off+12+n
	p.off = off + 12 + n
	p.plain = true
}

// appendAnswersAAAA is appendAnswersA for AAAA records.
func (p *Parser) appendAnswersAAAA(tx *Transaction, n, budget int) int {
	const size = 2 + 10 + 16
	if !p.inAnswers() {
		return 0
	}
	buf, ans := tx.buf, tx.Answers
	n = min(n, int(p.left[SectionAnswer]))
	room := len(buf) + budget - len("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")
	msg := p.msg
	off := p.off
	// The room grows by each comma, which the budget does not count.
	for ; n > 0 && len(buf) <= room && off+size <= len(msg); n, room = n-1, room+1 {
		rr := (*[size]byte)(msg[off : off+size])
		if !p.pointedRR((*[12]byte)(rr[:12]), off, TypeAAAA, 16) {
			break
		}
		s := len(buf)
		buf = appendIPv6(buf, [16]byte(rr[12:]))
		e := len(buf)
		buf = append(buf, ',')
		ans = append(ans, Answer{Data: buf[s:e:e], TTL: binary.BigEndian.Uint32(rr[6:]), Plain: true})
		off += size
	}
	k := (off - p.off) / size
	if k > 0 {
		p.readRun(off-size, k, TypeAAAA, 16)
	}
	tx.buf, tx.Answers = buf, ans
	return k
}

// pointedRR reports whether rr, the first 12 bytes of a record at off, is
// the start of a record of type t with n bytes of data whose owner name
// is a compression pointer to a name checked before, which ends before
// the pointer (see pointerName).
func (p *Parser) pointedRR(rr *[12]byte, off int, t uint16, n int) bool {
	if binary.BigEndian.Uint16(rr[2:]) != t || rr[0] < 0xc0 || int(binary.BigEndian.Uint16(rr[10:])) != n {
		return false
	}
	ptr := int(rr[0]&0x3f)<<8 | int(rr[1])
	e := &p.names[nameSlot(ptr)]
	return int(e.key) == ptr+1 && int(e.last) < off
}

// appendLastName renders the name at off that ends the current record's
// data. The common case, a name that checks and renders in one pass (see
// appendCheckedName), walks its labels once; any other name is checked,
// which finds its error, and rendered apart.
func (p *Parser) appendLastName(dst []byte, off int) ([]byte, Logged, error) {
	if out, end, plain, ok := p.appendCheckedName(dst, off, p.rdEnd); ok && end == p.rdEnd {
		p.consume()
		p.plain = plain
		return out, LoggedText, nil
	}
	if err := p.lastName(off); err != nil {
		return dst, NotLogged, err
	}
	p.consume()
	return p.appendName(dst, off), LoggedText, nil
}

// appendName renders the name at off as a record's whole rendering, and
// sets p.plain from it.
func (p *Parser) appendName(dst []byte, off int) []byte {
	dst, p.plain = Name{msg: p.msg, off: off}.appendZeekPlain(dst)
	return dst
}

// appendSOA renders an SOA record as its MNAME.
func (p *Parser) appendSOA(dst []byte) ([]byte, Logged, error) {
	if _, _, err := p.checkSOA(); err != nil {
		return dst, NotLogged, err
	}
	p.consume()
	return p.appendName(dst, p.rdStart), LoggedText, nil
}

// appendRRSIG renders "RRSIG <type covered> <signer>", the signer "<Root>"
// when it is the root.
func (p *Parser) appendRRSIG(dst []byte) ([]byte, Logged, error) {
	if out, ok := p.appendCheckedRRSIG(dst); ok {
		return out, LoggedText, nil
	}
	if _, err := p.checkRRSIG(); err != nil {
		return dst, NotLogged, err
	}
	p.consume()
	d := p.msg[p.rdStart:p.rdEnd]
	dst = append(dst, "RRSIG "...)
	dst = strconv.AppendUint(dst, uint64(d[0])<<8|uint64(d[1]), 10)
	dst = append(dst, ' ')
	if signer := (Name{msg: p.msg, off: p.rdStart + 18}); !signer.IsRoot() {
		return signer.AppendZeek(dst), LoggedText, nil
	}
	return append(dst, "<Root>"...), LoggedText, nil
}

// appendCheckedRRSIG is appendRRSIG for the common case, a signer that is
// not the root and that checks and renders in one pass (see
// appendCheckedName); ok is false, with nothing read, for any other.
func (p *Parser) appendCheckedRRSIG(dst []byte) (out []byte, ok bool) {
	signer := Name{msg: p.msg, off: p.rdStart + 18}
	if p.rdEnd-p.rdStart < 18 || signer.IsRoot() {
		return dst, false
	}
	d := p.msg[p.rdStart:p.rdEnd]
	out = append(dst, "RRSIG "...)
	out = strconv.AppendUint(out, uint64(d[0])<<8|uint64(d[1]), 10)
	out = append(out, ' ')
	if out, _, _, ok = p.appendCheckedName(out, signer.off, p.rdEnd); !ok {
		return dst, false
	}
	p.consume()
	return out, true
}

func (p *Parser) appendAAAA(dst []byte) ([]byte, Logged, error) {
	d := p.msg[p.rdStart:p.rdEnd]
	if len(d) != 16 {
		return dst, NotLogged, p.wrongSize(16)
	}
	p.consume()
	p.plain = true
	return appendIPv6(dst, [16]byte(d)), LoggedText, nil
}

// appendIPv6 appends a as netip.Addr.AppendTo does (RFC 5952: the first
// longest run of two or more zero groups as "::", lowercase hex without
// leading zeros, an IPv4-mapped address as ::ffff:a.b.c.d), without its
// general machinery: a reply may carry many AAAA records.
func appendIPv6(dst []byte, a [16]byte) []byte {
	zeros := zeroGroups(binary.LittleEndian.Uint64(a[:8])) |
		zeroGroups(binary.LittleEndian.Uint64(a[8:]))<<4
	if zeros&0x1f == 0x1f && a[10] == 0xff && a[11] == 0xff {
		dst = ipv4text.AppendDotted(append(dst, "::ffff:"...), [4]byte(a[12:]))
		return dst[:len(dst)-1] // AppendDotted's trailing dot
	}
	run := zeroRuns[zeros]
	zeroStart, zeroEnd := int(run>>4), int(run&15)
	for i := 0; i < 8; i++ {
		if i == zeroStart {
			dst = append(dst, ':', ':')
			i = zeroEnd
			if i >= 8 {
				break
			}
		} else if i > 0 {
			dst = append(dst, ':')
		}
		dst = appendHex16(dst, uint16(a[2*i])<<8|uint16(a[2*i+1]))
	}
	return dst
}

// zeroGroups returns the zero groups among the four 16-bit groups of an
// IPv6 address in w, loaded little-endian (bit i: group i is zero),
// without a branch for each: a group's two bytes are ORed into its low
// one, and adding 0x7fff to that carries into the group's top bit unless
// both are zero. The multiplication gathers the four top bits, 16 apart,
// into bits 45 to 48 (group i's at 16i+15(3-i)); no other sum of the
// shifts lands on those, nor carries into them.
func zeroGroups(w uint64) int {
	const low, carry, top = 0x00ff00ff00ff00ff, 0x7fff7fff7fff7fff, 0x8000800080008000
	nonzero := ((w|w>>8)&low + carry) & top >> 15
	nonzero = nonzero * (1 | 1<<15 | 1<<30 | 1<<45) >> 45
	return int(^nonzero & 15)
}

// appendHex16 appends v in lowercase hex without leading zeros.
func appendHex16(dst []byte, v uint16) []byte {
	const digits = "0123456789abcdef"
	switch {
	case v >= 0x1000:
		return append(dst, digits[v>>12], digits[v>>8&15], digits[v>>4&15], digits[v&15])
	case v >= 0x100:
		return append(dst, digits[v>>8], digits[v>>4&15], digits[v&15])
	case v >= 0x10:
		return append(dst, digits[v>>4], digits[v&15])
	}
	return append(dst, digits[v])
}

// zeroRuns holds, for each set of zero groups of an IPv6 address (bit i:
// group i is zero), the first longest run of two or more of them as its
// start<<4 | end, 8<<4 | 8 when there is none: RFC 5952's "::", found by
// one lookup where a loop over the groups took a branch for each.
var zeroRuns = func() (t [256]uint8) {
	for m := range t {
		start, end := 8, 8
		for i := 0; i < 8; i++ {
			if m&(1<<i) == 0 {
				continue
			}
			j := i + 1
			for j < 8 && m&(1<<j) != 0 {
				j++
			}
			if j-i >= 2 && j-i > end-start {
				start, end = i, j
			}
			i = j
		}
		t[m] = uint8(start<<4 | end)
	}
	return t
}()

// appendTXT renders TXT and SPF records as Zeek does: "TXT <len> <string>"
// for each string, separated by spaces. It sets p.plain when each string
// is rendered as it is (escaping would lengthen it) and holds no comma:
// the log then copies the rendering without scanning it again.
func (p *Parser) appendTXT(dst []byte) ([]byte, Logged, error) {
	t, err := p.TXT()
	if err != nil {
		return dst, NotLogged, err
	}
	word := "TXT "
	if p.rdType == TypeSPF {
		word = "SPF "
	}
	plain := true
	for i := 0; ; i++ {
		s, rest, ok := t.Next()
		if !ok {
			break
		}
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, word...)
		dst = strconv.AppendInt(dst, int64(len(s)), 10)
		dst = append(dst, ' ')
		n := len(dst)
		dst = appendZeekBytes(dst, s, false)
		plain = plain && len(dst)-n == len(s) && bytes.IndexByte(s, ',') < 0
		t = rest
	}
	p.plain = plain
	return dst, LoggedText, nil
}

// appendNAPTR renders "NAPTR order preference flags service regexp
// replacement", leaving out an empty regexp or replacement as Zeek does.
func (p *Parser) appendNAPTR(dst []byte) ([]byte, Logged, error) {
	v, err := p.NAPTR()
	if err != nil {
		return dst, NotLogged, err
	}
	dst = append(dst, "NAPTR "...)
	dst = strconv.AppendUint(dst, uint64(v.Order), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(v.Preference), 10)
	dst = append(dst, ' ')
	dst = appendZeekBytes(dst, v.Flags, false)
	dst = append(dst, ' ')
	dst = appendZeekBytes(dst, v.Service, false)
	dst = append(dst, ' ')
	dst = appendZeekBytes(dst, v.Regexp, false)
	if !v.Replacement.IsRoot() {
		if len(v.Regexp) > 0 {
			dst = append(dst, ' ')
		}
		dst = v.Replacement.AppendZeek(dst)
	}
	return dst, LoggedText, nil
}

// appendZeekUpdate renders the records of a DNS UPDATE message (RFC 2136)
// as Zeek does: prerequisites as "pre: ...", deletions as "del: ...", and
// additions as the record's usual rendering after "add: " (A and AAAA
// additions also name their owner: "add: A host 192.0.2.1").
func (p *Parser) appendZeekUpdate(dst []byte) ([]byte, Logged, error) {
	typ, class, owner := p.rdType, p.rrClass, p.owner()
	switch p.section {
	case SectionAnswer:
		p.SkipRData()
		dst = append(dst, "pre: "...)
		switch {
		case class == ClassNONE && typ == TypeANY:
			dst = append(dst, "NameNotInUse "...)
		case class == ClassANY && typ == TypeANY:
			dst = append(dst, "NameInUse "...)
		case class == ClassNONE:
			dst = append(dst, "NoRRSet "...)
			dst = appendTypeName(dst, typ)
			dst = append(dst, ' ')
		default:
			dst = append(dst, "RRSetExists "...)
			dst = appendTypeName(dst, typ)
			dst = append(dst, ' ')
		}
		return owner.AppendZeek(dst), LoggedText, nil
	case SectionAuthority:
		if class == ClassANY || class == ClassNONE {
			p.SkipRData()
			dst = append(dst, "del: "...)
			switch {
			case class == ClassANY && typ == TypeANY:
				dst = append(dst, "RRSet * "...)
				return owner.AppendZeek(dst), LoggedText, nil
			case class == ClassNONE:
				dst = append(dst, "RR "...)
				dst = appendTypeName(dst, typ)
				dst = append(dst, ' ')
				return owner.AppendZeek(dst), LoggedText, nil
			}
			dst = append(dst, "RRSet "...)
			return appendTypeName(dst, typ), LoggedText, nil
		}
		start := len(dst)
		dst = append(dst, "add: "...)
		switch typ {
		case TypeA, TypeAAAA, TypeA6:
			dst = appendTypeName(dst, typ)
			dst = append(dst, ' ')
			dst = owner.AppendZeek(dst)
			dst = append(dst, ' ')
		}
		out, logged, err := p.appendZeek(dst, false, false)
		if logged != LoggedText {
			return out[:start], logged, err
		}
		return out, logged, err
	}
	p.SkipRData()
	return dst, NotLogged, nil
}

// owner returns the owner name of the current record.
func (p *Parser) owner() Name { return Name{msg: p.msg, off: p.rrName} }

// appendIPv4 appends the IPv4 address in a (4 bytes) in dotted decimal,
// from a table of the decimal forms of 0 to 255: most answers are A
// records, and per-digit division was most of their cost.
func appendIPv4(dst, a []byte) []byte {
	dst = ipv4text.AppendDotted(dst, [4]byte(a))
	return dst[:len(dst)-1] // the last octet's dot
}

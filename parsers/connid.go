package parsers

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"slices"
	"strings"
	"unsafe"

	"github.com/wirebench/wirebench/connid"
)

// ParseConnID parses a connection id in the convention of Zeek's batch
// recorder, "<orig_h>-<orig_p>-<resp_h>-<resp_p>-<proto>" (for example
// "192.168.0.253-50618-192.168.0.10-69-udp" or "2001:db8::1-5353-ff02::fb-5353-udp"),
// into a 5-tuple. ok is false for any other form.
func ParseConnID(id string) (k connid.Key, ok bool) {
	if k, ok := quickConnID(id); ok {
		return k, true
	}
	return parseConnIDParts(id)
}

// parseConnIDParts is ParseConnID by its five parts: the originator's
// address and port, then the responder's part as parseResp parses it.
func parseConnIDParts(id string) (k connid.Key, ok bool) {
	addr, rest, ok1 := strings.Cut(id, "-")
	port, rest, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 {
		return connid.Key{}, false
	}
	respH, respP, proto, ok := parseResp(rest)
	// netip itself: the quick paths are quickConnID's, which failed.
	origH, err := netip.ParseAddr(addr)
	origP, okP := parsePort(port)
	if !ok || err != nil || !okP || origH.Zone() != "" {
		return connid.Key{}, false
	}
	k.Proto = proto
	setKey(&k, origH, origP, respH, respP)
	return k, true
}

// setKey sets the addresses and ports of k, a connection id's parts whose
// protocol k holds already; ICMP between IPv6 addresses is ICMPv6.
func setKey(k *connid.Key, origH netip.Addr, origP uint16, respH netip.Addr, respP uint16) {
	if k.Proto == connid.ProtoICMP && origH.Is6() {
		k.Proto = connid.ProtoICMPv6
	}
	k.Orig = netip.AddrPortFrom(origH, origP)
	k.Resp = netip.AddrPortFrom(respH, respP)
}

// parseProto parses the last part of a connection id (ICMP stands for
// ICMPv6 too: the addresses tell).
func parseProto(s string) (uint8, bool) {
	switch s {
	case "tcp":
		return connid.ProtoTCP, true
	case "udp":
		return connid.ProtoUDP, true
	case "icmp":
		return connid.ProtoICMP, true
	}
	return 0, false
}

// addrPrefix parses an address at the start of s as ipv4Prefix or
// ipv6Prefix does.
func addrPrefix(s string) (a netip.Addr, n int, ok bool) {
	if a, n, ok = ipv4Prefix(s); ok {
		return a, n, true
	}
	return ipv6Prefix(s)
}

// quickConnID is ParseConnID for the ids whose addresses addrPrefix
// parses, in one pass; ok is false for any other id, which ParseConnID's
// general path may still accept.
func quickConnID(id string) (k connid.Key, ok bool) {
	origH, origP, rest, ok := addrPortPrefix(id)
	if !ok {
		return connid.Key{}, false
	}
	respH, respP, proto, ok := quickResp(rest)
	if !ok {
		return connid.Key{}, false
	}
	k.Proto = proto
	setKey(&k, origH, origP, respH, respP)
	return k, true
}

// quickResp parses the rest of a connection id after the originator's
// address and port (see addrPortPrefix): the responder's address and port
// and the protocol, as quickConnID does. The protocol is ICMP for ICMPv6
// too (see setKey).
func quickResp(rest string) (h netip.Addr, p uint16, proto uint8, ok bool) {
	h, p, rest, ok = addrPortPrefix(rest)
	if !ok {
		return netip.Addr{}, 0, 0, false
	}
	if proto, ok = parseProto(rest); !ok {
		return netip.Addr{}, 0, 0, false
	}
	return h, p, proto, true
}

// addrPortPrefix parses an address, a dash, a port and a dash at the start
// of s, as addrPrefix and portPrefix do, and returns what follows.
func addrPortPrefix(s string) (h netip.Addr, p uint16, rest string, ok bool) {
	// addrPrefix, written out: one call the fewer.
	h, n, ok := ipv4Prefix(s)
	if !ok {
		h, n, ok = ipv6Prefix(s)
	}
	if !ok || n == len(s) || s[n] != '-' {
		return netip.Addr{}, 0, "", false
	}
	rest = s[n+1:]
	if len(rest) >= 8 {
		// The digits of a word at once, as the rest of an id follows:
		// most ports have at most five.
		var v uint64
		v, n = portWord(binary.LittleEndian.Uint64(bytesOf(rest)))
		if n > 5 {
			p, n, ok = portPrefix(rest)
		} else {
			p, ok = uint16(v), n > 0 && v <= 0xffff
		}
	} else {
		p, n, ok = portPrefix(rest)
	}
	if !ok || n == len(rest) || rest[n] != '-' {
		return netip.Addr{}, 0, "", false
	}
	return h, p, rest[n+1:], true
}

// portWord returns the number n of decimal digits at the start of w, eight
// bytes of text in little-endian order, and their value v.
func portWord(w uint64) (v uint64, n int) {
	const ones = 0x0101010101010101
	t := w ^ '0'*ones // each digit byte now holds its value
	// The top bit of each byte that is not a digit: above 9, or with its
	// own top bit set. The masked sum never carries into the next byte.
	nondigit := (t&(0x7f*ones) + 0x76*ones | t) & (0x80 * ones)
	n = bits.TrailingZeros64(nondigit) / 8
	// The digits, the last in the top byte (none when n is 0: the shift
	// is by 64), summed in pairs, then pairs of pairs, then halves.
	v = t << (64 - 8*n)
	v = (v*10 + v>>8) & 0x00ff00ff00ff00ff
	v = (v*100 + v>>16) & 0x0000ffff0000ffff
	return (v*10000 + v>>32) & 0xffffffff, n
}

// respCache parses connection ids as ParseConnID does, remembering how
// the latest responder parts ("8.8.8.8-53-udp") parsed: the connections of
// a trace go to a few servers, so most ids need only their originator's
// parts parsed. The zero value is ready to use.
type respCache struct {
	e [respCacheSize]respEntry
}

// respCacheSize is the number of responder parts a respCache remembers:
// in pairs, each pair in the slot its text's respSlot picks (tailSlot, of
// the id's end, for parseRespInto: a Dispatcher uses the one or the
// other), so that two servers whose parts pick the same slot do not push
// each other out.
const respCacheSize = 32

type respEntry struct {
	text string // the rest of an id after addrPortPrefix; "" for none
	// resp is the key of the part alone, as parseRespInto gives it, made
	// once when the part is cached rather than for every id.
	resp  connid.Key
	proto uint8 // as the part names it: ICMP for ICMPv6 too
}

// newRespEntry returns the entry of a responder part, text, that
// quickResp parsed into h, p and proto.
func newRespEntry(text string, h netip.Addr, p uint16, proto uint8) respEntry {
	return respEntry{text: text, resp: respKey(h, p, proto), proto: proto}
}

// parse returns ParseConnID(id). It keeps a part of id: id must stay
// unchanged (as the ids of a Dispatcher's arena do).
func (c *respCache) parse(id string) (connid.Key, bool) {
	var k connid.Key
	ok := c.parseInto(&k, id)
	return k, ok
}

// parseInto is parse setting *k in place, as the Dispatcher sets the key
// of a connection: a Key is nine words, which a return of one copied
// twice.
func (c *respCache) parseInto(k *connid.Key, id string) bool {
	origH, origP, rest, ok := addrPortPrefix(id)
	if !ok || rest == "" {
		*k, ok = ParseConnID(id)
		return ok
	}
	pair := (*[2]respEntry)(c.e[respSlot(rest):])
	e := &pair[0]
	if e.text != rest {
		if pair[1].text == rest {
			e = &pair[1]
		} else {
			h, p, proto, ok := quickResp(rest)
			if !ok {
				*k, ok = ParseConnID(id)
				return ok
			}
			// The newest goes first, where it is found with one
			// comparison; the other makes way for it.
			pair[1] = *e
			*e = newRespEntry(rest, h, p, proto)
		}
	}
	// Every field is set: Orig and Resp by setKey.
	k.Proto = e.proto
	setKey(k, origH, origP, e.resp.Resp.Addr(), e.resp.Resp.Port())
	return true
}

// parseRespInto is parseInto for a Dispatcher whose parsers and sinks
// read only Key.Resp and Key.Proto (KeyResp): it parses only the
// responder's part of id, its last three fields, and leaves Orig zero,
// whatever the rest of id holds. ICMP is ICMPv6 when the responder's
// address is an IPv6 one.
//
// The part is found by comparing the end of id with the newest part
// cached in the pair of slots the end picks (a cached part holds two
// dashes, so the one before it in id makes it the last three fields),
// without a search for it; parseRespMiss does the rest.
func (c *respCache) parseRespInto(k *connid.Key, id string) bool {
	if len(id) >= minTail {
		if e := &c.e[tailSlot(id)]; isTail(id, e.text) {
			*k = e.resp
			return true
		}
	}
	return c.parseRespMiss(k, id)
}

// respKey returns the key of a responder part alone, parsed into h, p
// and proto.
func respKey(h netip.Addr, p uint16, proto uint8) connid.Key {
	k := connid.Key{Resp: netip.AddrPortFrom(h, p), Proto: proto}
	if k.Proto == connid.ProtoICMP && h.Is6() {
		k.Proto = connid.ProtoICMPv6
	}
	return k
}

// parseRespMiss is parseRespInto for an id whose responder part is not
// the newest of its pair of slots: it looks at the other, then parses the
// part and caches it. An id too short to pick a pair, or a part
// quickResp does not parse, is parsed without the cache.
func (c *respCache) parseRespMiss(k *connid.Key, id string) bool {
	var pair *[2]respEntry
	if len(id) >= minTail {
		pair = (*[2]respEntry)(c.e[tailSlot(id):])
		if e := &pair[1]; isTail(id, e.text) {
			*k = e.resp
			return true
		}
	}
	rest, ok := lastFields(id, 3)
	if !ok {
		*k = connid.Key{}
		return false
	}
	h, p, proto, ok := quickResp(rest)
	switch {
	case ok && pair != nil:
		// The newest goes first, where it is found with one
		// comparison; the other makes way for it.
		pair[1], pair[0] = pair[0], newRespEntry(rest, h, p, proto)
	case !ok:
		if h, p, proto, ok = parseResp(rest); !ok {
			*k = connid.Key{}
			return false
		}
	}
	*k = respKey(h, p, proto)
	return true
}

// parseResp parses the responder's part of an id as ParseConnID does.
func parseResp(rest string) (h netip.Addr, p uint16, proto uint8, ok bool) {
	addr, rest, _ := strings.Cut(rest, "-")
	port, name, _ := strings.Cut(rest, "-")
	h, err := netip.ParseAddr(addr)
	p, okP := parsePort(port)
	proto, okProto := parseProto(name)
	if err != nil || !okP || !okProto || h.Zone() != "" {
		return netip.Addr{}, 0, 0, false
	}
	return h, p, proto, true
}

// minTail is the shortest id whose end picks a pair of slots of a
// respCache: "1-2-1.2.3.4-5-udp".
const minTail = 17

// tailSlot picks the pair of slots of the responder's part at the end of
// id (at least minTail bytes) from the eight bytes before its last four,
// which are within the part for every id but few of IPv6: those that
// tell a trace's servers apart.
func tailSlot(id string) uint {
	w := binary.LittleEndian.Uint64(bytesOf(id[len(id)-12:]))
	return uint((w*0x9e3779b97f4a7c15)>>60) % (respCacheSize / 2) * 2
}

// isTail reports whether part, not empty, ends id and follows a dash
// there.
func isTail(id, part string) bool {
	n := len(id) - len(part)
	return n > 0 && part != "" && id[n-1] == '-' && id[n:] == part
}

// lastFields returns the last n dash-separated fields of s, which must
// have more (the first may be empty).
func lastFields(s string, n int) (string, bool) {
	i := len(s)
	for range n {
		if i = strings.LastIndexByte(s[:i], '-'); i < 0 {
			return "", false
		}
	}
	return s[i+1:], true
}

// respSlot picks the pair of slots of a responder part (never empty),
// the index of its first, from its length and two of its bytes, which
// tell a trace's servers apart.
func respSlot(rest string) uint {
	return (uint(len(rest)) + uint(rest[0])*3 + uint(rest[len(rest)/2])*5) % (respCacheSize / 2) * 2
}

// ipv4Prefix parses an IPv4 address at the start of s in the dotted
// decimal form netip.ParseAddr accepts, four fields of 0 to 255 without
// leading zeros, up to the first byte that is neither a digit nor a dot,
// and returns how many bytes it took; ok is false for anything else. Each
// field is read digit by digit, unrolled: a field has at most three.
func ipv4Prefix(s string) (a netip.Addr, n int, ok bool) {
	var ip [4]byte
	// i is unsigned so that a test against len(s) proves s[i] in
	// bounds.
	var i uint
	end := uint(len(s))
	for f := range ip {
		if f > 0 {
			if i >= end || s[i] != '.' {
				return netip.Addr{}, 0, false
			}
			i++
		}
		if i >= end || s[i]-'0' > 9 {
			return netip.Addr{}, 0, false
		}
		v := int(s[i] - '0')
		i++
		if i < end && s[i]-'0' <= 9 {
			if v == 0 {
				return netip.Addr{}, 0, false // a leading zero
			}
			v = v*10 + int(s[i]-'0')
			i++
			if i < end && s[i]-'0' <= 9 {
				v = v*10 + int(s[i]-'0')
				i++
				if v > 255 || i < end && s[i]-'0' <= 9 {
					return netip.Addr{}, 0, false
				}
			}
		}
		ip[f] = byte(v)
	}
	if i < end && s[i] == '.' {
		return netip.Addr{}, 0, false // a fifth field
	}
	return netip.AddrFrom4(ip), int(i), true
}

// ipv6Prefix parses an IPv6 address in the forms netip.ParseAddr accepts
// at the start of s, but for those with an IPv4 part or a zone: groups of
// one to four hex digits separated by colons, one "::" at most standing
// for at least one group of zeros. It stops at the first byte that cannot
// continue the address and returns how many bytes it took; ok is false
// for any other form, which netip.ParseAddr may still accept.
func ipv6Prefix(s string) (a netip.Addr, n int, ok bool) {
	var ip [16]byte
	gap := -1 // where "::" stands in ip
	j := 0    // bytes of ip filled
	// i is unsigned so that a test against len(s) proves s[i] in
	// bounds.
	var i uint
	end := uint(len(s))
	if end >= 2 && s[0] == ':' && s[1] == ':' {
		gap, i = 0, 2
		if i >= end || hexDigit[s[i]] < 0 {
			return netip.AddrFrom16(ip), int(i), true // "::"
		}
	}
	for j < len(ip) {
		v, k := 0, uint(0)
		for ; k < 4 && i+k < end; k++ {
			d := hexDigit[s[i+k]]
			if d < 0 {
				break
			}
			v = v<<4 | int(d)
		}
		if k == 0 {
			return netip.Addr{}, 0, false
		}
		i += k
		if i < end && (hexDigit[s[i]] >= 0 || s[i] == '.') {
			return netip.Addr{}, 0, false // five digits, or an IPv4 part
		}
		ip[j], ip[j+1] = byte(v>>8), byte(v)
		j += 2
		if j == len(ip) || i >= end || s[i] != ':' {
			break
		}
		if i+1 < end && s[i+1] == ':' {
			if gap >= 0 {
				return netip.Addr{}, 0, false
			}
			gap, i = j, i+2
			if i >= end || hexDigit[s[i]] < 0 {
				break
			}
			continue
		}
		i++ // a group must follow
	}
	switch {
	case gap < 0 && j < len(ip), gap >= 0 && j == len(ip):
		return netip.Addr{}, 0, false
	case gap >= 0:
		copy(ip[len(ip)-(j-gap):], ip[gap:j])
		clear(ip[gap : len(ip)-(j-gap)])
	}
	return netip.AddrFrom16(ip), int(i), true
}

// hexDigit holds the value of each hex digit, -1 for other bytes.
var hexDigit = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range 10 {
		t['0'+i] = int8(i)
	}
	for i := range 6 {
		t['a'+i], t['A'+i] = int8(10+i), int8(10+i)
	}
	return t
}()

// portPrefix parses a port as parsePort does at the start of s, up to the
// first byte that is not a digit, and returns how many bytes it took.
func portPrefix(s string) (port uint16, n int, ok bool) {
	v := 0
	for ; n < len(s) && s[n]-'0' <= 9; n++ {
		if v = v*10 + int(s[n]-'0'); v > 0xffff {
			return 0, 0, false
		}
	}
	return uint16(v), n, n > 0
}

// parsePort is strconv.ParseUint(s, 10, 16): decimal digits, leading
// zeros allowed.
func parsePort(s string) (uint16, bool) {
	p, n, ok := portPrefix(s)
	return p, ok && n == len(s)
}

// UIDFromID returns a Zeek-style connection uid ("C" and base62 digits,
// like CHhAvVGS1DHFjwGM9) derived from a connection id and a seed: the same
// id and seed always give the same uid, so runs are reproducible. Zeek draws
// its uids at random; wirebench derives them so that logs can be compared.
func UIDFromID(id string, seed uint64) string {
	var h idHasher
	h.seed(seed)
	var buf [maxUIDLen]byte
	return string(h.appendUID(buf[:0], id))
}

// idHasher makes the uids of UIDFromID: it keeps the hashes of its seed,
// so that a driver deriving many uids with one seed hashes only the ids.
type idHasher struct{ h1, h2 uint64 }

func (h *idHasher) seed(seed uint64) {
	h.h1, h.h2 = fnvStart(seed), fnvStart(seed^0x9e3779b97f4a7c15)
}

// appendUID appends the uid of id. Both words are FNV-1a of the seed and
// id (finished with a mixer so that similar ids give unrelated uids), hashed in one pass over id.
func (h *idHasher) appendUID(dst []byte, id string) []byte {
	h1, h2 := h.h1, h.h2
	// Four bytes a round: the loop's own count and test per byte cost
	// as much as the hashing (a uid per connection).
	rest := id
	for ; len(rest) >= 4; rest = rest[4:] {
		c0, c1, c2, c3 := uint64(rest[0]), uint64(rest[1]), uint64(rest[2]), uint64(rest[3])
		h1 = ((((h1^c0)*fnvPrime^c1)*fnvPrime^c2)*fnvPrime ^ c3) * fnvPrime
		h2 = ((((h2^c0)*fnvPrime^c1)*fnvPrime^c2)*fnvPrime ^ c3) * fnvPrime
	}
	for i := 0; i < len(rest); i++ {
		c := uint64(rest[i])
		h1 = (h1 ^ c) * fnvPrime
		h2 = (h2 ^ c) * fnvPrime
	}
	return appendUID(dst, mix(h1), mix(h2))
}

// UIDFromKey returns a Zeek-style uid derived from a connection's 5-tuple,
// its start time (ns since the epoch, so that a reused 5-tuple gets another
// uid) and a seed. It hashes the tuple's words with a multiply-and-fold
// mixer (as wyhash does) rather than byte by byte: the analyzer makes one
// per connection. A UIDArena makes the same uids without allocating each.
func UIDFromKey(k connid.Key, start int64, seed uint64) string {
	h1, h2 := keyHash(&k, start, seed)
	var buf [maxUIDLen]byte
	return string(appendUID(buf[:0], h1, h2))
}

// keyHash returns the two words of UIDFromKey's uid.
func keyHash(k *connid.Key, start int64, seed uint64) (h1, h2 uint64) {
	o := k.Orig.Addr().As16()
	r := k.Resp.Addr().As16()
	ports := uint64(k.Orig.Port())<<24 | uint64(k.Resp.Port())<<8 | uint64(k.Proto)
	h := mum(seed^mixA, binary.BigEndian.Uint64(o[:8])^mixB)
	h = mum(h^binary.BigEndian.Uint64(o[8:]), binary.BigEndian.Uint64(r[:8])^mixC)
	h = mum(h^binary.BigEndian.Uint64(r[8:]), ports^mixD)
	h = mum(h^uint64(start), mixE)
	return mum(h, mixA^mixC), mum(h^mixB, mixD^mixE)
}

// maxUIDLen is the longest uid: "C", 11 base62 digits of a 64-bit word
// and 6 of a 32-bit one.
const maxUIDLen = 1 + 11 + 6

// uidChunkSize is the size of a UIDArena's chunks (28 uids): large enough
// that allocating them costs little per uid, small enough that a uid kept
// long (by a connection that outlives its neighbours) pins little memory.
const uidChunkSize = 512

// UIDArena makes the uids of UIDFromKey without allocating each: it
// renders them one after another into chunks of memory and returns strings
// that point into the chunks. Bytes of a chunk are never written again
// once a uid is rendered there, so a uid stays valid and unchanged for as
// long as anything refers to it (a tunnel's uid in the tunnel_parents of
// connections that outlive the tunnel, a queued frame); a full chunk is
// dropped, and the garbage collector frees it once no uid points into it.
// Memory stays bounded by the uids in use: each pins at most one chunk.
//
// The zero value is ready to use. A UIDArena is not safe for concurrent
// use.
type UIDArena struct {
	chunk []byte // len: bytes used; never reallocated by append
}

// FromKey returns UIDFromKey(k, start, seed).
func (a *UIDArena) FromKey(k connid.Key, start int64, seed uint64) string {
	return a.FromKeyPtr(&k, start, seed)
}

// FromKeyPtr is FromKey for a key the caller holds, such as a
// connection's: a Key is nine words, which passing it by value copies.
func (a *UIDArena) FromKeyPtr(k *connid.Key, start int64, seed uint64) string {
	h1, h2 := keyHash(k, start, seed)
	if cap(a.chunk)-len(a.chunk) < maxUIDLen {
		a.chunk = make([]byte, 0, uidChunkSize)
	}
	n := len(a.chunk)
	d := (*[maxUIDLen]byte)(a.chunk[n : n+maxUIDLen]) // fits: the chunk is not moved
	a.chunk = a.chunk[:n+putUID(d, h1, h2)]
	return unsafe.String(&d[0], len(a.chunk)-n)
}

// AppendUIDFromKey appends UIDFromKey(k, start, seed) to dst, for a log
// writer that renders a uid nothing else asked for straight into its
// record.
func AppendUIDFromKey(dst []byte, k connid.Key, start int64, seed uint64) []byte {
	h1, h2 := keyHash(&k, start, seed)
	return appendUID(dst, h1, h2)
}

// Constants of the uid mixer: odd numbers with well spread bits (wyhash's).
const (
	mixA = 0xa0761d6478bd642f
	mixB = 0xe7037ed1a0b428db
	mixC = 0x8ebc6af09c88c6e3
	mixD = 0x589965cc75374cc3
	mixE = 0x1d8e4e27c47d124f
)

// mum multiplies a and b to 128 bits and folds the halves with xor.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// appendUID renders 96 bits (h1 and the low 32 bits of h2) as Zeek does:
// "C" followed by each word in base62, as putUID writes them.
func appendUID(dst []byte, h1, h2 uint64) []byte {
	n := len(dst)
	dst = slices.Grow(dst, maxUIDLen)
	return dst[:n+putUID((*[maxUIDLen]byte)(dst[n:n+maxUIDLen]), h1, h2)]
}

// putUID writes the uid of appendUID to the start of d and returns its
// length. Nearly every uid has 11 digits of h1 and 6 or 5 of the low
// word, written in place without a look for leading zeros; the others
// take appendBase62. Writing to an array of fixed size rather than
// appending spares a uid the checks of its bounds and of the capacity.
func putUID(d *[maxUIDLen]byte, h1, h2 uint64) int {
	lo := h2 & 0xffffffff
	if h1 < base62Pow5*base62Pow5 || lo < base62Pow4 {
		return putShortUID(d, h1, lo)
	}
	d[0] = 'C'
	q := h1 / base62Pow5
	put5Base62((*[5]byte)(d[7:12]), uint32(h1-q*base62Pow5))
	top := q / base62Pow5 // 1 to 21
	put5Base62((*[5]byte)(d[2:7]), uint32(q-top*base62Pow5))
	d[1] = base62Digits[top]
	if lo < base62Pow5 {
		put5Base62((*[5]byte)(d[12:17]), uint32(lo))
		return maxUIDLen - 1
	}
	q = lo / base62Pow5 // 1 to 4
	put5Base62((*[5]byte)(d[13:18]), uint32(lo-q*base62Pow5))
	d[12] = base62Digits[q]
	return maxUIDLen
}

// putShortUID is putUID for the few uids whose words have leading zeros
// (lo is the low word).
func putShortUID(d *[maxUIDLen]byte, h1, lo uint64) int {
	return len(appendBase62(appendBase62(append(d[:0], 'C'), h1), lo))
}

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62Pairs holds the two base62 digits of 0 to 62*62-1, in the order
// of a little-endian uint16, so that a uid takes half as many divisions
// and each pair is one load and one store.
var base62Pairs = func() (t [62 * 62]uint16) {
	for i := range t {
		t[i] = uint16(base62Digits[i/62]) | uint16(base62Digits[i%62])<<8
	}
	return t
}()

// base62Pow4 and base62Pow5 are 62 to the fourth and fifth.
const (
	base62Pow4 = 62 * 62 * 62 * 62
	base62Pow5 = 62 * base62Pow4
)

// appendBase62 appends v in base62 without leading zeros. Two divisions by
// 62^5 split it into two chunks of five digits and the one digit above
// them (v < 62^11), each chunk rendered with 32-bit divisions and the
// digit pairs; then the leading zeros are skipped. A loop of one division
// per pair took twice the instructions (uids are made per connection).
func appendBase62(dst []byte, v uint64) []byte {
	var buf [11]byte
	q := v / base62Pow5
	put5Base62((*[5]byte)(buf[6:11]), uint32(v-q*base62Pow5))
	i := 5
	if q < 62 {
		// At most six digits, as the second word of every uid has.
		buf[5] = base62Digits[q]
	} else {
		top := q / base62Pow5 // < 22
		put5Base62((*[5]byte)(buf[1:6]), uint32(q-top*base62Pow5))
		buf[0] = base62Digits[top]
		i = 0
	}
	for i < len(buf)-1 && buf[i] == '0' {
		i++
	}
	return append(dst, buf[i:]...)
}

// put5Base62 writes v (< 62^5) as five base62 digits, with leading zeros.
func put5Base62(d *[5]byte, v uint32) {
	hi := v / base62Pow4
	v -= hi * base62Pow4
	p := v / (62 * 62)
	v -= p * (62 * 62)
	d[0] = base62Digits[hi]
	binary.LittleEndian.PutUint32(d[1:], uint32(base62Pairs[p])|uint32(base62Pairs[v])<<16)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvStart(seed uint64) uint64 {
	h := uint64(fnvOffset)
	for range 8 {
		h = (h ^ (seed & 0xff)) * fnvPrime
		seed >>= 8
	}
	return h
}

// mix is the finaliser of splitmix64.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

package parsers

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"unsafe"

	"github.com/wirebench/wirebench/connid"
)

// ParseConnID parses a connection id in the convention of Zeek's batch
// recorder, "<orig_h>-<orig_p>-<resp_h>-<resp_p>-<proto>" (for example
// "192.168.0.253-50618-192.168.0.10-69-udp" or "2001:db8::1-5353-ff02::fb-5353-udp"),
// into a 5-tuple. ok is false for any other form.
func ParseConnID(id string) (k connid.Key, ok bool) {
	var part [5]string
	rest := id
	for i := range 4 {
		var found bool
		part[i], rest, found = strings.Cut(rest, "-")
		if !found {
			return connid.Key{}, false
		}
	}
	part[4] = rest
	switch part[4] {
	case "tcp":
		k.Proto = connid.ProtoTCP
	case "udp":
		k.Proto = connid.ProtoUDP
	case "icmp":
		k.Proto = connid.ProtoICMP
	default:
		return connid.Key{}, false
	}
	origH, err1 := netip.ParseAddr(part[0])
	origP, err2 := strconv.ParseUint(part[1], 10, 16)
	respH, err3 := netip.ParseAddr(part[2])
	respP, err4 := strconv.ParseUint(part[3], 10, 16)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || origH.Zone() != "" || respH.Zone() != "" {
		return connid.Key{}, false
	}
	if k.Proto == connid.ProtoICMP && origH.Is6() {
		k.Proto = connid.ProtoICMPv6
	}
	k.Orig = netip.AddrPortFrom(origH, uint16(origP))
	k.Resp = netip.AddrPortFrom(respH, uint16(respP))
	return k, true
}

// UIDFromID returns a Zeek-style connection uid ("C" and base62 digits,
// like CHhAvVGS1DHFjwGM9) derived from a connection id and a seed: the same
// id and seed always give the same uid, so runs are reproducible. Zeek draws
// its uids at random; wirebench derives them so that logs can be compared.
func UIDFromID(id string, seed uint64) string {
	h1 := hashString(seed, id)
	h2 := hashString(seed^0x9e3779b97f4a7c15, id)
	var buf [maxUIDLen]byte
	return string(appendUID(buf[:0], h1, h2))
}

// UIDFromKey returns a Zeek-style uid derived from a connection's 5-tuple,
// its start time (ns since the epoch, so that a reused 5-tuple gets another
// uid) and a seed. It hashes the tuple's words with a multiply-and-fold
// mixer (as wyhash does) rather than byte by byte: the analyzer makes one
// per connection. A UIDArena makes the same uids without allocating each.
func UIDFromKey(k connid.Key, start int64, seed uint64) string {
	h1, h2 := keyHash(k, start, seed)
	var buf [maxUIDLen]byte
	return string(appendUID(buf[:0], h1, h2))
}

// keyHash returns the two words of UIDFromKey's uid.
func keyHash(k connid.Key, start int64, seed uint64) (h1, h2 uint64) {
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
	h1, h2 := keyHash(k, start, seed)
	if cap(a.chunk)-len(a.chunk) < maxUIDLen {
		a.chunk = make([]byte, 0, uidChunkSize)
	}
	n := len(a.chunk)
	a.chunk = appendUID(a.chunk, h1, h2) // fits: the chunk is not moved
	return unsafe.String(&a.chunk[n], len(a.chunk)-n)
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
// "C" followed by each word in base62.
func appendUID(dst []byte, h1, h2 uint64) []byte {
	dst = append(dst, 'C')
	dst = appendBase62(dst, h1)
	return appendBase62(dst, h2&0xffffffff)
}

const base62Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62Pairs holds the two base62 digits of 0 to 62*62-1, so that a uid
// takes half as many divisions.
var base62Pairs = func() (t [2 * 62 * 62]byte) {
	for i := range 62 * 62 {
		t[2*i], t[2*i+1] = base62Digits[i/62], base62Digits[i%62]
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
	put5Base62(buf[6:11], uint32(v-q*base62Pow5))
	top := q / base62Pow5 // < 22
	put5Base62(buf[1:6], uint32(q-top*base62Pow5))
	buf[0] = base62Digits[top]
	i := 0
	for i < len(buf)-1 && buf[i] == '0' {
		i++
	}
	return append(dst, buf[i:]...)
}

// put5Base62 writes v (< 62^5) as five base62 digits, with leading zeros.
func put5Base62(d []byte, v uint32) {
	_ = d[4]
	hi := v / base62Pow4
	v -= hi * base62Pow4
	p := v / (62 * 62)
	v -= p * (62 * 62)
	d[0] = base62Digits[hi]
	d[1], d[2] = base62Pairs[2*p], base62Pairs[2*p+1]
	d[3], d[4] = base62Pairs[2*v], base62Pairs[2*v+1]
}

// hashString is FNV-1a over the seed and s, finished with a mixer so that
// similar ids give unrelated uids.
func hashString(seed uint64, s string) uint64 {
	h := fnvStart(seed)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return mix(h)
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

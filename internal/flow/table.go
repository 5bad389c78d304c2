package flow

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"net/netip"

	"github.com/wirebench/wirebench/internal/capture"
)

// tableKey is a connection's key with its two endpoints in a canonical
// order, so that packets of both directions find the same entry with one
// lookup. Addresses are kept as the two halves of their 16-byte form and
// the ports, protocol and flags packed in one word, so that hashing and
// comparing a key are a few word operations (a map keyed by two
// netip.AddrPort hashed and compared 72 bytes). The key of two IPv4
// endpoints, nearly every key, is packed tighter still (see packedKey):
// making and hashing it takes half the operations.
type tableKey struct {
	ahi, alo, bhi, blo uint64
	// meta holds a's port (bits 32-47), b's port (16-31), the protocol
	// (8-15), whether the addresses are IPv4 (bit 1; IPv4 and IPv4-mapped
	// IPv6 addresses share their 16-byte form) and oneWay (bit 0); it is
	// keyPacked, which no other key's has, in a packed key.
	meta uint64
}

// keyPacked is the meta word of a packed key.
const keyPacked = 1 << 2

// makeTableKey returns the key of a packet from src to dst. oneWay marks
// ICMP messages that have no reply type (Zeek's is_one_way): they are not
// matched in the reverse direction, so their endpoints are not reordered.
// Addresses with a zone are told apart by address and port only (decoded
// packets carry no zones).
func makeTableKey(src, dst netip.AddrPort, proto uint8, oneWay bool) tableKey {
	sa, da := src.Addr(), dst.Addr()
	if !sa.Is4() || !da.Is4() {
		return makeTableKey16(src, dst, proto, oneWay)
	}
	return packedKey(endpoint4(sa, src.Port()), endpoint4(da, dst.Port()), proto, oneWay)
}

// endpoint4 returns the endpoint of IPv4 address a and port as one word,
// the address above the port: words compare as orderedKey orders
// endpoints, by address and then by port.
func endpoint4(a netip.Addr, port uint16) uint64 {
	a4 := a.As4()
	return uint64(binary.BigEndian.Uint32(a4[:]))<<16 | uint64(port)
}

// packedKey is the key of two IPv4 endpoints, s and d as endpoint4 gives
// them: the lower endpoint, unless oneWay, shifted above the protocol and
// the flags in ahi (bits as in meta), the other in alo, and keyPacked in
// meta.
func packedKey(s, d uint64, proto uint8, oneWay bool) tableKey {
	flags := uint64(proto)<<8 | 2
	if oneWay {
		flags |= 1
	} else if d < s {
		s, d = d, s
	}
	return tableKey{ahi: s<<16 | flags, alo: d, meta: keyPacked}
}

// setPacketKey sets k to the key of packet p of a protocol whose packets
// have a reply direction (TCP, UDP): makeTableKey of its endpoints, taken
// from p. It returns k's hash with secret s. The key is set through k,
// and the endpoints read from p, instead of passing them by value: a
// packet's new connection or lookup costs fewer moves. (Its callers
// make the key of two IPv4 endpoints themselves, in line, as it does.)
func setPacketKey(k *tableKey, p *capture.Packet, proto uint8, s *hashSecret) uint64 {
	if !p.Src.Is4() || !p.Dst.Is4() {
		*k = makeTableKey16(netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort), proto, false)
		return k.hash(s)
	}
	*k = packedKey(endpoint4(p.Src, p.SrcPort), endpoint4(p.Dst, p.DstPort), proto, false)
	return k.packedHash(s)
}

// makeTableKey16 is makeTableKey for addresses that are not both IPv4:
// the key of their 16-byte forms.
func makeTableKey16(src, dst netip.AddrPort, proto uint8, oneWay bool) tableKey {
	shi, slo := addrWords(src.Addr())
	dhi, dlo := addrWords(dst.Addr())
	return orderedKey(shi, slo, dhi, dlo, src.Port(), dst.Port(), proto, src.Addr().Is4(), oneWay)
}

// orderedKey is the key of the endpoints whose addresses' words are shi,
// slo and dhi, dlo: the lower endpoint first, unless oneWay.
func orderedKey(shi, slo, dhi, dlo uint64, sp, dp uint16, proto uint8, is4, oneWay bool) tableKey {
	if !oneWay && (dhi < shi || dhi == shi && (dlo < slo || dlo == slo && dp < sp)) {
		shi, slo, sp, dhi, dlo, dp = dhi, dlo, dp, shi, slo, sp
	}
	meta := uint64(sp)<<32 | uint64(dp)<<16 | uint64(proto)<<8
	if is4 {
		meta |= 2
	}
	if oneWay {
		meta |= 1
	}
	return tableKey{ahi: shi, alo: slo, bhi: dhi, blo: dlo, meta: meta}
}

// addrWords returns the two halves of a's 16-byte form (IPv4 addresses
// as IPv4-mapped IPv6 ones). IPv4 addresses go through As4: As16 stores
// its array in two 8-byte halves that are then read back as one 16-byte
// copy, which the CPU cannot forward from the stores and stalls on, twice
// per packet; fewer instructions, but slower.
func addrWords(a netip.Addr) (hi, lo uint64) {
	if a.Is4() {
		v4 := a.As4()
		return 0, 0xffff<<32 | uint64(binary.BigEndian.Uint32(v4[:]))
	}
	b := a.As16()
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

// equal reports whether k and o are the same key. It compares the five
// words at once; == on the struct is a call to the runtime's memequal.
func (k *tableKey) equal(o *tableKey) bool {
	return (k.ahi^o.ahi)|(k.alo^o.alo)|(k.bhi^o.bhi)|(k.blo^o.blo)|(k.meta^o.meta) == 0
}

// hash mixes the key's words with the secret words of s (wyhash's
// multiply-and-fold). Without a secret the mix is easy to defeat: an
// address half equal to the word it is XORed with zeroes its product, so
// that every source address of one IPv6 /64 hashes alike, and a few
// thousand SYNs make every lookup walk them all.
func (k *tableKey) hash(s *hashSecret) uint64 {
	if k.meta == keyPacked {
		return k.packedHash(s)
	}
	h := mum(k.ahi^s[0], k.alo^s[1])
	h ^= mum(k.bhi^s[2], k.blo^s[3])
	return mum(h^k.meta^s[4], 0x1d8e4e27c47d124f)
}

// packedHash is hash for a packed key, whose other words are zero.
func (k *tableKey) packedHash(s *hashSecret) uint64 {
	return mum(mum(k.ahi^s[0], k.alo^s[1])^s[4], 0x1d8e4e27c47d124f)
}

// hashSecret holds the words an engine mixes into its connection hashes,
// derived from Config.HashSeed.
type hashSecret [5]uint64

// newHashSecret derives the secret words from seed (splitmix64, so that
// nearby seeds give unrelated words); seed 0 draws a random seed.
func newHashSecret(seed uint64) hashSecret {
	for seed == 0 {
		seed = rand.Uint64()
	}
	var s hashSecret
	for i := range s {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		s[i] = z ^ z>>31
	}
	return s
}

func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// connTable maps keys to connections: open addressing with linear probing
// over a power-of-two array of (hash, connection) slots, at most 3/4 full.
// A slot holds no key: a hash match is confirmed against the connection's
// own key, which the lookup reads anyway. Deletion shifts the following
// slots back (no tombstones), so lookups stay short however many
// connections come and go.
type connTable struct {
	slots []tableSlot
	mask  uint64
	n     int
	limit int // the most connections the table holds: 3/4 of its slots
}

type tableSlot struct {
	hash uint64
	c    *Conn // nil: empty
}

const minTableSlots = 1 << 12

func (t *connTable) init(slots int) {
	t.slots = make([]tableSlot, slots)
	t.mask = uint64(slots - 1)
	t.n = 0
	t.limit = slots / 4 * 3
}

// get returns the connection with key k, whose hash is h, or nil.
func (t *connTable) get(k *tableKey, h uint64) *Conn {
	for i := h; ; i++ {
		s := &t.slots[i&t.mask]
		if s.c == nil || s.hash == h && s.c.conn.key.equal(k) {
			return s.c
		}
	}
}

// full reports whether one more connection would take the table over
// 3/4 full: grow it first.
func (t *connTable) full() bool { return t.n >= t.limit }

// insert adds c, whose key (not in the table) hashes to h, to a table
// that is not full. Without the test and the call of grow it is small
// enough to be inlined.
func (t *connTable) insert(c *Conn, h uint64) {
	i := h & t.mask
	for t.slots[i].c != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i] = tableSlot{hash: h, c: c}
	t.n++
}

// grow doubles the table's slots.
func (t *connTable) grow() {
	old := t.slots
	t.init(2 * len(old))
	for _, s := range old {
		if s.c == nil {
			continue
		}
		i := s.hash & t.mask
		for t.slots[i].c != nil {
			i = (i + 1) & t.mask
		}
		t.slots[i] = s
		t.n++
	}
}

// remove takes c, whose key hashes to h, out of the table.
func (t *connTable) remove(c *Conn, h uint64) {
	i := h & t.mask
	for t.slots[i].c != c {
		if t.slots[i].c == nil {
			return // not in the table
		}
		i = (i + 1) & t.mask
	}
	// Shift back every following slot of the run that may move into the
	// hole: one whose home slot is not between the hole and itself.
	for j := (i + 1) & t.mask; t.slots[j].c != nil; j = (j + 1) & t.mask {
		home := t.slots[j].hash & t.mask
		if (j-home)&t.mask >= (j-i)&t.mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = tableSlot{}
	t.n--
}

// all appends the connections in the table to dst.
func (t *connTable) all(dst []*Conn) []*Conn {
	for _, s := range t.slots {
		if s.c != nil {
			dst = append(dst, s.c)
		}
	}
	return dst
}

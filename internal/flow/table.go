package flow

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// tableKey is a connection's key with its two endpoints in a canonical
// order, so that packets of both directions find the same entry with one
// lookup. Addresses are kept as the two halves of their 16-byte form and
// the ports, protocol and flags packed in one word, so that hashing and
// comparing a key are a few word operations (a map keyed by two
// netip.AddrPort hashed and compared 72 bytes).
type tableKey struct {
	ahi, alo, bhi, blo uint64
	// meta holds a's port (bits 32-47), b's port (16-31), the protocol
	// (8-15), whether the addresses are IPv4 (bit 1; IPv4 and IPv4-mapped
	// IPv6 addresses share their 16-byte form) and oneWay (bit 0).
	meta uint64
}

// makeTableKey returns the key of a packet from src to dst. oneWay marks
// ICMP messages that have no reply type (Zeek's is_one_way): they are not
// matched in the reverse direction, so their endpoints are not reordered.
// Addresses with a zone are told apart by address and port only (decoded
// packets carry no zones).
func makeTableKey(src, dst netip.AddrPort, proto uint8, oneWay bool) tableKey {
	shi, slo := addrWords(src.Addr())
	dhi, dlo := addrWords(dst.Addr())
	sp, dp := src.Port(), dst.Port()
	if !oneWay && (dhi < shi || dhi == shi && (dlo < slo || dlo == slo && dp < sp)) {
		shi, slo, sp, dhi, dlo, dp = dhi, dlo, dp, shi, slo, sp
	}
	meta := uint64(sp)<<32 | uint64(dp)<<16 | uint64(proto)<<8
	if src.Addr().Is4() {
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

// hash mixes the key's words (wyhash's multiply-and-fold).
func (k *tableKey) hash() uint64 {
	h := mum(k.ahi^0xa0761d6478bd642f, k.alo^0xe7037ed1a0b428db)
	h ^= mum(k.bhi^0x8ebc6af09c88c6e3, k.blo^0x589965cc75374cc3)
	return mum(h^k.meta, 0x1d8e4e27c47d124f)
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
}

// get returns the connection with key k, whose hash is h, or nil.
func (t *connTable) get(k *tableKey, h uint64) *Conn {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.c == nil {
			return nil
		}
		if s.hash == h && s.c.conn.key.equal(k) {
			return s.c
		}
	}
}

// insert adds c, whose key (not in the table) hashes to h.
func (t *connTable) insert(c *Conn, h uint64) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	i := h & t.mask
	for t.slots[i].c != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i] = tableSlot{hash: h, c: c}
	t.n++
}

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

package flow

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestConnTable checks the table against a map through random inserts and
// removals, with real hashes and with hashes squeezed into a few values so
// that long probe runs wrap around the array and shift back on removal.
func TestConnTable(t *testing.T) {
	for _, squeeze := range []uint64{0, 7, 1} {
		rng := rand.New(rand.NewPCG(1, squeeze))
		var tab connTable
		tab.init(16)
		want := map[tableKey]*Conn{}
		keys := make([]tableKey, 600)
		for i := range keys {
			a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), uint16(i))
			keys[i] = makeTableKey(a, netip.MustParseAddrPort("10.9.9.9:53"), ProtoUDP, false)
		}
		hash := func(k *tableKey) uint64 {
			h := k.hash()
			if squeeze > 0 {
				h = h%squeeze + 13 // few distinct home slots, near the array's end
			}
			return h
		}
		for step := range 20000 {
			k := keys[rng.IntN(len(keys))]
			h := hash(&k)
			got := tab.get(&k, h)
			if got != want[k] {
				t.Fatalf("squeeze %d, step %d: get = %p, want %p", squeeze, step, got, want[k])
			}
			switch {
			case got == nil:
				c := &Conn{}
				c.conn.key, c.conn.hash = k, h
				tab.insert(c, h)
				want[k] = c
			case rng.IntN(2) == 0:
				tab.remove(got, h)
				delete(want, k)
			}
			if tab.n != len(want) {
				t.Fatalf("squeeze %d, step %d: %d in the table, want %d", squeeze, step, tab.n, len(want))
			}
		}
		for k, c := range want {
			if got := tab.get(&k, hash(&k)); got != c {
				t.Fatalf("squeeze %d: lost %v", squeeze, k)
			}
		}
		if n := len(tab.all(nil)); n != len(want) {
			t.Fatalf("squeeze %d: all() gives %d, want %d", squeeze, n, len(want))
		}
	}
}

// TestTableKey checks that both directions of a flow share a key, that
// one-way ICMP keys do not, and that an IPv4 address and its IPv4-mapped
// IPv6 form are different endpoints, as they are for netip.
func TestTableKey(t *testing.T) {
	ap := netip.MustParseAddrPort
	a, b := ap("10.0.0.1:1234"), ap("10.0.0.2:80")
	if makeTableKey(a, b, ProtoTCP, false) != makeTableKey(b, a, ProtoTCP, false) {
		t.Error("the two directions have different keys")
	}
	if makeTableKey(a, b, ProtoICMP, true) == makeTableKey(b, a, ProtoICMP, true) {
		t.Error("one-way keys match in reverse")
	}
	if makeTableKey(a, b, ProtoTCP, false) == makeTableKey(a, b, ProtoUDP, false) {
		t.Error("protocols share a key")
	}
	if makeTableKey(a, b, ProtoICMP, false) == makeTableKey(a, b, ProtoICMP, true) {
		t.Error("one-way and two-way ICMP share a key")
	}
	m1, m2 := ap("[::ffff:10.0.0.1]:1234"), ap("[::ffff:10.0.0.2]:80")
	if makeTableKey(a, b, ProtoTCP, false) == makeTableKey(m1, m2, ProtoTCP, false) {
		t.Error("IPv4 and IPv4-mapped IPv6 endpoints share a key")
	}
	// Endpoints that differ in the port only are ordered by it.
	c, d := ap("10.0.0.1:80"), ap("10.0.0.1:81")
	if makeTableKey(c, d, ProtoUDP, false) != makeTableKey(d, c, ProtoUDP, false) {
		t.Error("same address, two ports: directions differ")
	}
}

func TestAddrWords(t *testing.T) {
	for _, s := range []string{"0.0.0.0", "10.1.2.3", "255.255.255.255", "::ffff:10.1.2.3", "2001:db8::1", "::", "fe80::1:2:3:4"} {
		a := netip.MustParseAddr(s)
		b := a.As16()
		hi, lo := addrWords(a)
		if netip.AddrFrom16([16]byte{
			byte(hi >> 56), byte(hi >> 48), byte(hi >> 40), byte(hi >> 32), byte(hi >> 24), byte(hi >> 16), byte(hi >> 8), byte(hi),
			byte(lo >> 56), byte(lo >> 48), byte(lo >> 40), byte(lo >> 32), byte(lo >> 24), byte(lo >> 16), byte(lo >> 8), byte(lo),
		}).As16() != b {
			t.Errorf("addrWords(%s) = %x %x, want the halves of %x", s, hi, lo, b)
		}
	}
}

// TestTableKeyEqual holds equal to == on keys that differ in one word, in
// its lowest or its highest bit.
func TestTableKeyEqual(t *testing.T) {
	base := makeTableKey(netip.MustParseAddrPort("[2001:db8::1]:1234"), netip.MustParseAddrPort("[2001:db8::2]:53"), ProtoUDP, false)
	fields := []func(k *tableKey) *uint64{
		func(k *tableKey) *uint64 { return &k.ahi },
		func(k *tableKey) *uint64 { return &k.alo },
		func(k *tableKey) *uint64 { return &k.bhi },
		func(k *tableKey) *uint64 { return &k.blo },
		func(k *tableKey) *uint64 { return &k.meta },
	}
	if !base.equal(&base) {
		t.Fatal("a key differs from itself")
	}
	for i, field := range fields {
		for _, bit := range []uint64{1, 1 << 63} {
			k := base
			*field(&k) ^= bit
			if k.equal(&base) || base.equal(&k) || k == base {
				t.Errorf("word %d, bit %#x flipped: keys still equal", i, bit)
			}
		}
	}
}

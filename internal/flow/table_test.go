package flow

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
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
		secret := newHashSecret(1)
		hash := func(k *tableKey) uint64 {
			h := k.hash(&secret)
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
				if tab.full() {
					tab.grow()
				}
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

// TestTableKeyIPv4 holds makeTableKey's packed keys of two IPv4
// endpoints to the general keys, makeTableKey16's: two pairs of endpoints,
// in either direction and way, have the same packed key exactly when they
// have the same general one. Pairs that are not both IPv4 take the
// general key.
func TestTableKeyIPv4(t *testing.T) {
	ap := netip.MustParseAddrPort
	pairs := []struct{ a, b string }{
		{"10.0.0.1:1234", "10.0.0.2:80"},
		{"10.0.0.2:80", "10.0.0.1:1234"},
		{"10.0.0.1:80", "10.0.0.1:81"},
		{"10.0.0.1:81", "10.0.0.1:80"},
		{"10.0.0.1:80", "10.0.0.1:80"},
		{"10.0.0.1:80", "10.0.0.2:79"},
		{"10.0.0.2:79", "10.0.0.1:80"},
		{"0.0.0.0:0", "255.255.255.255:65535"},
		{"255.255.255.255:65535", "0.0.0.0:0"},
		{"192.168.1.1:53", "[::ffff:192.168.1.2]:53"},
		{"192.168.1.1:53", "[2001:db8::1]:53"},
	}
	type keys struct{ packed, general tableKey }
	var all []keys
	for _, pair := range pairs {
		a, b := ap(pair.a), ap(pair.b)
		for _, proto := range []uint8{ProtoUDP, ProtoICMP} {
			for _, oneWay := range []bool{false, true} {
				k := keys{makeTableKey(a, b, proto, oneWay), makeTableKey16(a, b, proto, oneWay)}
				if packed := k.packed.meta == keyPacked; packed != (a.Addr().Is4() && b.Addr().Is4()) {
					t.Errorf("makeTableKey(%s, %s, oneWay %v): packed %v", a, b, oneWay, packed)
				} else if !packed && k.packed != k.general {
					t.Errorf("makeTableKey(%s, %s, oneWay %v) = %+v, want %+v", a, b, oneWay, k.packed, k.general)
				}
				all = append(all, k)
			}
		}
	}
	for i, x := range all {
		for j, y := range all {
			if (x.packed == y.packed) != (x.general == y.general) {
				t.Errorf("keys %d and %d: packed equal %v, general equal %v", i, j, x.packed == y.packed, x.general == y.general)
			}
		}
	}
}

// TestSetPacketKey holds setPacketKey to makeTableKey of the packet's
// endpoints, and its hash to the key's.
func TestSetPacketKey(t *testing.T) {
	secret := newHashSecret(3)
	for _, pair := range [][2]string{
		{"10.0.0.1:1234", "10.0.0.2:80"},
		{"10.0.0.2:80", "10.0.0.1:1234"},
		{"10.0.0.1:80", "10.0.0.1:80"},
		{"[2001:db8::1]:53", "[2001:db8::2]:5353"},
	} {
		a, b := netip.MustParseAddrPort(pair[0]), netip.MustParseAddrPort(pair[1])
		p := &capture.Packet{Src: a.Addr(), SrcPort: a.Port(), Dst: b.Addr(), DstPort: b.Port()}
		var k tableKey
		h := setPacketKey(&k, p, ProtoTCP, &secret)
		if want := makeTableKey(a, b, ProtoTCP, false); k != want || h != want.hash(&secret) {
			t.Errorf("%s > %s: setPacketKey = %+v, %#x, want %+v, %#x", a, b, k, h, want, want.hash(&secret))
		}
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

// floodKeys returns n TCP keys from distinct addresses of one IPv6 /64,
// whose high half is the word the first product of the unkeyed mix XORs
// it with, to one server: under that mix they all hash alike.
func floodKeys(n int) []tableKey {
	dst := netip.MustParseAddrPort("[ffff::1]:80")
	keys := make([]tableKey, n)
	for i := range keys {
		var a [16]byte
		binary.BigEndian.PutUint64(a[:8], 0xa0761d6478bd642f)
		binary.BigEndian.PutUint64(a[8:], uint64(i)*0x9e3779b97f4a7c15)
		keys[i] = makeTableKey(netip.AddrPortFrom(netip.AddrFrom16(a), 1234), dst, ProtoTCP, false)
	}
	return keys
}

// TestHashFlood checks that keys made to collide under the unkeyed mix
// spread over the table once the engine's secret is mixed in, whatever the
// seed, and that a seed fixes the hashes.
func TestHashFlood(t *testing.T) {
	keys := floodKeys(4096)
	unkeyed := hashSecret{0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3, 0x589965cc75374cc3, 0}
	slots := func(s *hashSecret) int {
		seen := map[uint64]bool{}
		for i := range keys {
			seen[keys[i].hash(s)&0xffff] = true
		}
		return len(seen)
	}
	if n := slots(&unkeyed); n != 1 {
		t.Fatalf("unkeyed mix: the flood keys take %d home slots, want 1 (the attack this test guards against)", n)
	}
	for _, seed := range []uint64{0, 1, 2, 0xa0761d6478bd642f} {
		s := newHashSecret(seed)
		// 4096 random keys over 65536 slots take about 3970 of them.
		if n := slots(&s); n < 3800 {
			t.Errorf("seed %#x: the flood keys take %d of 65536 home slots, want about 3970", seed, n)
		}
	}
	a, b := newHashSecret(7), newHashSecret(7)
	if keys[0].hash(&a) != keys[0].hash(&b) {
		t.Error("seed 7 gives two different hashes of one key")
	}
	if c := newHashSecret(8); keys[0].hash(&a) == keys[0].hash(&c) {
		t.Error("seeds 7 and 8 give the same hash")
	}
}

// TestHashFloodLinear feeds the engine SYNs whose keys collide under the
// unkeyed mix and checks that the table's probes stay short.
func TestHashFloodLinear(t *testing.T) {
	keys := floodKeys(20000)
	var tab connTable
	tab.init(minTableSlots)
	secret := newHashSecret(0)
	conns := make([]Conn, len(keys))
	probes := 0
	for i := range keys {
		h := keys[i].hash(&secret)
		for j := h & tab.mask; tab.slots[j].c != nil; j = (j + 1) & tab.mask {
			probes++
		}
		conns[i].conn.key, conns[i].conn.hash = keys[i], h
		if tab.full() {
			tab.grow()
		}
		tab.insert(&conns[i], h)
	}
	// Linear probing at most 3/4 full averages a few probes per insert; a
	// flood averages thousands.
	if avg := float64(probes) / float64(len(keys)); avg > 4 {
		t.Fatalf("%.1f probes per insert, want at most 4", avg)
	}
}

package parsers

import (
	"net/netip"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
)

func TestParseConnID(t *testing.T) {
	ap := netip.MustParseAddrPort
	tests := []struct {
		id   string
		ok   bool
		want flow.Key
	}{
		{"192.168.0.253-50618-192.168.0.10-69-udp", true, flow.Key{Orig: ap("192.168.0.253:50618"), Resp: ap("192.168.0.10:69"), Proto: flow.ProtoUDP}},
		{"10.0.0.1-1234-10.0.0.2-80-tcp", true, flow.Key{Orig: ap("10.0.0.1:1234"), Resp: ap("10.0.0.2:80"), Proto: flow.ProtoTCP}},
		{"2001:db8::1-5353-ff02::fb-5353-udp", true, flow.Key{Orig: ap("[2001:db8::1]:5353"), Resp: ap("[ff02::fb]:5353"), Proto: flow.ProtoUDP}},
		{"fe80::1-128-fe80::2-0-icmp", true, flow.Key{Orig: ap("[fe80::1]:128"), Resp: ap("[fe80::2]:0"), Proto: flow.ProtoICMPv6}},
		{"10.0.0.1-8-10.0.0.2-0-icmp", true, flow.Key{Orig: ap("10.0.0.1:8"), Resp: ap("10.0.0.2:0"), Proto: flow.ProtoICMP}},
		{"cid1", false, flow.Key{}},
		{"cid1-orig", false, flow.Key{}},
		{"10.0.0.1-1234-10.0.0.2-80-???", false, flow.Key{}},
		{"10.0.0.1-1234-10.0.0.2-80-tcp-orig", false, flow.Key{}},
		{"10.0.0.1-70000-10.0.0.2-80-tcp", false, flow.Key{}},
		{"10.0.0.1-1-10.0.0.x-80-tcp", false, flow.Key{}},
		{"fe80::1%eth0-1-fe80::2-80-tcp", false, flow.Key{}},
		{"10.0.0.1-00080-10.0.0.2-0053-udp", true, flow.Key{Orig: ap("10.0.0.1:80"), Resp: ap("10.0.0.2:53"), Proto: flow.ProtoUDP}},
		{"10.0.0.1-0000080-10.0.0.2-53-udp", true, flow.Key{Orig: ap("10.0.0.1:80"), Resp: ap("10.0.0.2:53"), Proto: flow.ProtoUDP}},
		{"10.0.0.1-65535-10.0.0.2-53-udp", true, flow.Key{Orig: ap("10.0.0.1:65535"), Resp: ap("10.0.0.2:53"), Proto: flow.ProtoUDP}},
		{"10.0.0.1-0-10.0.0.2-53-udp", true, flow.Key{Orig: ap("10.0.0.1:0"), Resp: ap("10.0.0.2:53"), Proto: flow.ProtoUDP}},
		{"10.0.0.1-65536-10.0.0.2-53-udp", false, flow.Key{}},
		{"10.0.0.1-99999-10.0.0.2-53-udp", false, flow.Key{}},
		{"10.0.0.1-123456-10.0.0.2-53-udp", false, flow.Key{}},
		{"10.0.0.1-12a-10.0.0.2-53-udp", false, flow.Key{}},
		{"10.0.0.01-1-10.0.0.2-80-tcp", false, flow.Key{}},
		{"10.0.0.1-1-::ffff:10.0.0.2-80-tcp", true, flow.Key{Orig: ap("10.0.0.1:1"), Resp: ap("[::ffff:10.0.0.2]:80"), Proto: flow.ProtoTCP}},
		{"10.0.0.1--10.0.0.2-80-tcp", false, flow.Key{}},
		{"10.0.0.1-1-10.0.0.2-80-", false, flow.Key{}},
	}
	for _, tt := range tests {
		got, ok := ParseConnID(tt.id)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseConnID(%q) = %v, %v; want %v, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
}

// respCacheIDs returns the ids the respCache tests parse: responder
// parts seen before (in another id, with another originator), parts
// that follow no convention, ids that are no connection's, and more
// responders than a respCache has slots.
func respCacheIDs() []string {
	ids := []string{
		"10.0.0.1-1234-10.0.0.2-80-tcp",
		"10.0.0.3-1234-10.0.0.2-80-tcp",
		"10.0.0.3-1234-10.0.0.2-80-udp",
		"10.0.0.1-8-fe80::2-0-icmp",
		"fe80::1-8-fe80::2-0-icmp", // the same responder part, but ICMPv6
		"10.0.0.1-8-fe80::2-0-icmp",
		"2001:db8::1-5353-ff02::fb-5353-udp",
		"10.0.0.1-1-::ffff:10.0.0.2-80-tcp",
		"10.0.0.1-1-10.0.0.2-80-",
		"10.0.0.1-1-10.0.0.x-80-tcp",
		"10.0.0.1-1-10.0.0.2-80-tcp-orig",
		"10.0.0.1-1-fe80::2%eth0-80-tcp",
		"10.0.0.1--10.0.0.2-80-tcp",
		"fe80::1%eth0-1-fe80::2-80-tcp",
		"x-10.0.0.2-80-tcp",
		"-10.0.0.2-80-tcp",
		"10.0.0.2-80-tcp",
		"::-1-::-2-udp",
		"10.0.0.1-1-",
		"10.0.0.1-1",
		"cid1",
	}
	for i := range 3 * respCacheSize {
		ids = append(ids, "10.0.0.1-1-192.168."+strconv.Itoa(i%7)+"."+strconv.Itoa(i)+"-"+strconv.Itoa(i%5)+"-udp")
	}
	return ids
}

// TestRespCache checks that a respCache parses the ids of respCacheIDs
// as ParseConnID does.
func TestRespCache(t *testing.T) {
	var c respCache
	for range 3 {
		for _, id := range respCacheIDs() {
			got, ok := c.parse(id)
			want, wantOK := ParseConnID(id)
			if got != want || ok != wantOK {
				t.Errorf("respCache.parse(%q) = %v, %v; want %v, %v", id, got, ok, want, wantOK)
			}
		}
	}
}

// TestRespCacheResp checks that parseRespInto parses the responder's part
// of an id, its last three fields, as ParseConnID does, whatever comes
// before it, and leaves Orig zero.
func TestRespCacheResp(t *testing.T) {
	var c respCache
	for range 3 {
		for _, id := range respCacheIDs() {
			var got flow.Key
			ok := c.parseRespInto(&got, id)
			want, wantOK := respOfID(id)
			if got != want || ok != wantOK {
				t.Errorf("respCache.parseRespInto(%q) = %v, %v; want %v, %v", id, got, ok, want, wantOK)
			}
		}
	}
}

// respOfID is what parseRespInto should make of id: ParseConnID's key of
// its last three fields behind an originator of the responder's family,
// without the originator.
func respOfID(id string) (flow.Key, bool) {
	f := strings.Split(id, "-")
	if len(f) < 4 {
		return flow.Key{}, false
	}
	rest := strings.Join(f[len(f)-3:], "-")
	orig := "0.0.0.0-0-"
	if strings.Contains(rest, ":") {
		orig = "::-0-"
	}
	k, ok := ParseConnID(orig + rest)
	k.Orig = netip.AddrPort{}
	return k, ok
}

var uidRE = regexp.MustCompile(`^C[0-9A-Za-z]{2,17}$`)

func TestUIDs(t *testing.T) {
	a := UIDFromID("10.0.0.1-1234-10.0.0.2-80-tcp", 0)
	if !uidRE.MatchString(a) {
		t.Errorf("uid %q does not look like a Zeek uid", a)
	}
	if b := UIDFromID("10.0.0.1-1234-10.0.0.2-80-tcp", 0); b != a {
		t.Errorf("uid not deterministic: %q, %q", a, b)
	}
	if b := UIDFromID("10.0.0.1-1235-10.0.0.2-80-tcp", 0); b == a {
		t.Errorf("different ids give the same uid %q", a)
	}
	if b := UIDFromID("10.0.0.1-1234-10.0.0.2-80-tcp", 1); b == a {
		t.Errorf("different seeds give the same uid %q", a)
	}
	// The uids of replayed logs stay what they were: logs of one batch
	// file compare across versions.
	for id, want := range map[string]string{
		"10.6.169.5-38283-8.8.8.8-53-udp":                                      "C67UQnMwB6Zs1Hf0Sv",
		"2001:db8:1:91e:da5d:3fa3:3e04:50ed-58229-2001:4860:4860::8888-53-udp": "C9dTfLq7Sd6iGIh3W",
	} {
		if got := UIDFromID(id, 0); got != want {
			t.Errorf("UIDFromID(%q, 0) = %q, want %q", id, got, want)
		}
	}
	k := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:80"), Proto: flow.ProtoTCP}
	u1, u2 := UIDFromKey(k, 1, 7), UIDFromKey(k, 2, 7)
	if !uidRE.MatchString(u1) || u1 == u2 || UIDFromKey(k, 1, 7) != u1 {
		t.Errorf("UIDFromKey: %q %q", u1, u2)
	}
	seen := map[string]bool{}
	for i := range 10000 {
		u := UIDFromKey(k, int64(i), 0)
		if seen[u] {
			t.Fatalf("uid collision after %d keys: %s", i, u)
		}
		seen[u] = true
	}
}

// TestUIDFromKeySpread checks that uids of keys differing in one field
// only (an address, a port, the protocol, the start, the seed) do not
// collide.
func TestUIDFromKeySpread(t *testing.T) {
	seen := map[string]flow.Key{}
	add := func(k flow.Key, start int64, seed uint64) {
		u := UIDFromKey(k, start, seed)
		if !uidRE.MatchString(u) {
			t.Fatalf("uid %q does not look like a Zeek uid", u)
		}
		if prev, dup := seen[u]; dup {
			t.Fatalf("uid %s of %v (start %d, seed %d) already given to %v", u, k, start, seed, prev)
		}
		seen[u] = k
	}
	base := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:53"), Proto: flow.ProtoUDP}
	add(base, 0, 0)
	for i := range 1 << 16 {
		k := base
		if i != 1234 {
			k.Orig = netip.AddrPortFrom(k.Orig.Addr(), uint16(i))
			add(k, 0, 0)
		}
		k = base
		k.Resp = netip.AddrPortFrom(netip.AddrFrom4([4]byte{172, 16, byte(i >> 8), byte(i)}), 53)
		add(k, 0, 0)
		k = base
		k.Orig = netip.AddrPortFrom(netip.AddrFrom16([16]byte{0x20, 1, 0xd, 0xb8, 15: byte(i), 14: byte(i >> 8)}), 1234)
		add(k, 0, 0)
		add(base, int64(i+1)*1000, 0)
		add(base, 0, uint64(i+1))
	}
	add(flow.Key{Orig: base.Orig, Resp: base.Resp, Proto: flow.ProtoTCP}, 0, 0)
}

func TestAppendBase62(t *testing.T) {
	ref := func(v uint64) string {
		if v == 0 {
			return "0"
		}
		var s []byte
		for ; v > 0; v /= 62 {
			s = append([]byte{base62Digits[v%62]}, s...)
		}
		return string(s)
	}
	vals := []uint64{0, 1, 61, 62, 63, 62*62 - 1, 62 * 62, 62*62*62 - 1, 62 * 62 * 62, base62Pow5*62 - 1, base62Pow5 * 62, 1<<32 - 1, 1 << 63, 1<<64 - 1}
	for i := range uint64(5000) {
		vals = append(vals, i*i*i*i*7919, i*0x9e3779b97f4a7c15)
	}
	for _, v := range vals {
		if got, want := string(appendBase62([]byte("C"), v)), "C"+ref(v); got != want {
			t.Errorf("appendBase62(%d) = %s, want %s", v, got, want)
		}
	}
}

// TestAppendUID holds appendUID's in-place form to "C" and both words by
// appendBase62, on words around the bounds of the longest form.
func TestAppendUID(t *testing.T) {
	const p10, p5 = base62Pow5 * base62Pow5, base62Pow5
	words := []uint64{0, 1, p10 - 1, p10, p10 + 1, 1<<64 - 1, 0x9e3779b97f4a7c15}
	const p4 = p5 / 62
	lows := []uint64{0, 1, p4 - 1, p4, p4 + 1, p5 - 1, p5, p5 + 1, 1<<32 - 1, 1<<32 | 5, 1<<64 - 1}
	for i := range uint64(3000) {
		words = append(words, i*0x9e3779b97f4a7c15)
		lows = append(lows, i*0xbf58476d1ce4e5b9)
	}
	for _, h1 := range words {
		for j, h2 := range lows {
			if j > 11 && h1%7 != 0 {
				continue
			}
			want := string(appendBase62(appendBase62([]byte("x,C"), h1), h2&0xffffffff))
			if got := string(appendUID([]byte("x,"), h1, h2)); got != want {
				t.Fatalf("appendUID(%d, %d) = %s, want %s", h1, h2, got, want)
			}
		}
	}
}

func BenchmarkUIDFromKey(b *testing.B) {
	k := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:53"), Proto: flow.ProtoUDP}
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		n++
		_ = UIDFromKey(k, n, 0)
	}
}

// TestUIDArena checks that the arena's uids are UIDFromKey's, and that a
// uid never changes however many are made after it, a garbage collection
// in between.
func TestUIDArena(t *testing.T) {
	var a UIDArena
	k := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("[2001:db8::1]:53"), Proto: flow.ProtoUDP}
	const n = 20 * uidChunkSize / maxUIDLen // many chunks
	for i := range n {
		k.Orig = netip.AddrPortFrom(k.Orig.Addr(), uint16(i))
		got := a.FromKey(k, int64(i)*7, 3)
		if i%2 == 1 {
			got = a.FromKeyPtr(&k, int64(i)*7, 3)
		}
		if want := UIDFromKey(k, int64(i)*7, 3); got != want {
			t.Fatalf("uid %d: arena gives %q, UIDFromKey %q", i, got, want)
		}
	}
	held := make([]string, 0, n)
	for i := range n {
		held = append(held, a.FromKey(k, int64(i), 0))
		runtime.GC()
		for j := range i {
			if j%(n/10) == 0 || j == i-1 {
				if want := UIDFromKey(k, int64(j), 0); held[j] != want {
					t.Fatalf("uid %d changed to %q after %d more were made, want %q", j, held[j], i-j, want)
				}
			}
		}
	}
}

func TestUIDArenaAllocs(t *testing.T) {
	var a UIDArena
	k := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:53"), Proto: flow.ProtoUDP}
	var start int64
	// AllocsPerRun rounds down: a chunk every 14 runs counts 0.
	if n := testing.AllocsPerRun(1000, func() { start++; a.FromKey(k, start, 0); a.FromKeyPtr(&k, start, 0) }); n != 0 {
		t.Errorf("%v allocations per uid, want less than 1", n)
	}
}

func BenchmarkUIDArena(b *testing.B) {
	var a UIDArena
	k := flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:53"), Proto: flow.ProtoUDP}
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		n++
		_ = a.FromKey(k, n, 0)
	}
}

func FuzzParseConnID(f *testing.F) {
	for _, s := range []string{"192.168.0.253-50618-192.168.0.10-69-udp", "2001:db8::1-5353-ff02::fb-5353-udp", "a-b-c-d-e", "----"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		k, ok := ParseConnID(id)
		if k4, ok4 := quickConnID(id); ok4 {
			if kp, okp := parseConnIDParts(id); !okp || kp != k4 {
				t.Errorf("%q: the quick path gives %v, the general one %v, %v", id, k4, kp, okp)
			}
		}
		if !ok {
			return
		}
		// What parses must print back the way Zeek's recorder writes it.
		got := k.Orig.Addr().String() + "-" + itoa(k.Orig.Port()) + "-" + k.Resp.Addr().String() + "-" + itoa(k.Resp.Port()) + "-" + protoName(k.Proto)
		if k2, ok2 := ParseConnID(got); !ok2 || k2 != k {
			t.Errorf("ParseConnID(%q) = %v, but its rendering %q parses to %v, %v", id, k, got, k2, ok2)
		}
	})
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }

// TestParseAddrPort checks the quick paths of ParseConnID against what
// they stand for: addrPrefix, where it takes a whole address, against netip.ParseAddr, parsePort against
// strconv.ParseUint(s, 10, 16).
func TestParseAddrPort(t *testing.T) {
	for _, s := range []string{"0.0.0.0", "10.6.169.5", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4.5",
		"01.2.3.4", "1.2.3.00", "1..2.3", ".1.2.3", "1.2.3.", "1.2.3.4a", "", "::1", "::ffff:1.2.3.4",
		"2001:db8::1", "fe80::1%eth0", "1.2.3.-4", "1.2.3.2555", "9.9.9.9", "1.2.3.4.", "1.2.3.40", "1.2.3.400", "0.0.0.00",
		"::", ":::", "::1", "1::", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:", "1:2:3:4:5:6:7:8::", "1:2:3:4:5:6:7::", "::1:2:3:4:5:6:7",
		"::1:2:3:4:5:6:7:8", "1::2:3:4:5:6:7:8", "1:2:3:4:5:6:7::8", "1::2::3", "1:2", "1:", ":1", "12345::", "ABCD:ef01::Ff",
		"2001:4860:4860::8888", "2001:db8:1:91e:da5d:3fa3:3e04:50ed", "1::1.2.3.4", "1::g", "::ffff:102:304"} {
		checkParseAddr(t, s)
	}
	for _, s := range []string{"0", "53", "00053", "65535", "65536", "99999999999999999999", "", "-1", "+1", "1_0", "5a",
		"1", "12", "123", "1234", "12345", "99999", "000000", "0000065535", "0000065536", "0:", "9/"} {
		checkParsePort(t, s)
	}
}

func checkParseAddr(t *testing.T, s string) {
	t.Helper()
	want, err := netip.ParseAddr(s)
	got, n, ok := addrPrefix(s)
	if ok && n == len(s) && (err != nil || got != want) {
		t.Errorf("addrPrefix(%q) = %v, whole; netip.ParseAddr gives %v, %v", s, got, want, err)
	}
	// Followed by the rest of an id, as the address is read in place.
	for _, rest := range []string{"-", "-1234-8.8.8.8-53-udp", "1", ".1", "-1-2001:db8::1-53-udp"} {
		got2, n2, ok2 := addrPrefix(s + rest)
		wantOK := ok && n == len(s) && rest[0] == '-'
		if wantOK && (!ok2 || got2 != got || n2 != n) || ok2 && n2 <= len(s) && (!ok || got2 != got || n2 != n) {
			t.Errorf("addrPrefix(%q) = %v, %d, %v; addrPrefix(%q) = %v, %d, %v", s+rest, got2, n2, ok2, s, got, n, ok)
		}
	}
}

func checkParsePort(t *testing.T, s string) {
	t.Helper()
	want, err := strconv.ParseUint(s, 10, 16)
	if got, ok := parsePort(s); ok != (err == nil) || ok && uint64(got) != want {
		t.Errorf("parsePort(%q) = %v, %v; strconv gives %v, %v", s, got, ok, want, err)
	}
	// Followed by the rest of an id, as a port is read in place.
	for _, s := range []string{s, s + "-8.8.8.8-53-udp"} {
		wantP, wantN, wantOK := slowPortPrefix(s)
		if got, n, ok := portPrefix(s); ok != wantOK || got != wantP || n != wantN {
			t.Errorf("portPrefix(%q) = %v, %d, %v; want %v, %d, %v", s, got, n, ok, wantP, wantN, wantOK)
		}
	}
}

// slowPortPrefix is portPrefix digit by digit.
func slowPortPrefix(s string) (port uint16, n int, ok bool) {
	v := 0
	for ; n < len(s) && '0' <= s[n] && s[n] <= '9'; n++ {
		if v = v*10 + int(s[n]-'0'); v > 0xffff {
			return 0, 0, false
		}
	}
	return uint16(v), n, n > 0
}

func FuzzParseAddrPort(f *testing.F) {
	for _, s := range []string{"10.6.169.5", "01.2.3.4", "::1", "65535", "00053"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkParseAddr(t, s)
		checkParsePort(t, s)
	})
}

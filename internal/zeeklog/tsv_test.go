package zeeklog

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

// TestTSVFastPath writes random records through the TSV fast path and
// through the Writer's value methods, and wants the same bytes.
func TestTSVFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var fast, slow bytes.Buffer
	opts := Options{Now: fixedClock()}
	cf, _ := NewConnLog(&fast, opts)
	cs, _ := NewConnLog(&slow, Options{Now: fixedClock()})
	df, _ := NewDNSLog(&fast, opts)
	ds, _ := NewDNSLog(&slow, Options{Now: fixedClock()})
	hf, _ := NewHTTPLog(&fast, opts)
	hs, _ := NewHTTPLog(&slow, Options{Now: fixedClock()})
	fast.Reset()
	slow.Reset()
	for i := range 3000 {
		c := randConn(rng)
		r := randConnRecord(rng, c)
		must(t, cf.Write(r))
		must(t, cs.write(r))
		d := randDNS(rng)
		df.DNS(c, d)
		ds.write(c, d)
		h := randHTTP(rng)
		hf.HTTP(c, h)
		hs.write(c, h)
		for _, l := range []*Writer{cf.w, cs.w, df.w, ds.w, hf.w, hs.w} {
			must(t, l.Flush())
		}
		sameOutput(t, i, &fast, &slow)
	}
}

// TestDNSKeptColumns writes transactions of few codes, flags and
// connections, whose kept texts (the columns from qclass to Z, the ts
// digits, the addresses) are reused and replaced, through the TSV fast
// path and the value methods.
func TestDNSKeptColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var fast, slow bytes.Buffer
	df, _ := NewDNSLog(&fast, Options{Now: fixedClock()})
	ds, _ := NewDNSLog(&slow, Options{Now: fixedClock()})
	fast.Reset()
	slow.Reset()
	conns := []*parsers.Conn{randConn(rng), randConn(rng), randConn(rng)}
	for i := range 5000 {
		d := randDNS(rng)
		d.TS = 1258532143457078000 + rng.Int64N(3e11)
		d.QClass = []uint16{1, 1, 255, 300}[rng.IntN(4)]
		d.QType = []uint16{1, 1, 28, 33, 300}[rng.IntN(5)]
		d.RCode = []uint16{0, 0, 3, 17, 4000}[rng.IntN(5)]
		d.Z = uint8(rng.IntN(2))
		c := conns[rng.IntN(len(conns))]
		var cc ConnColumns
		for range 1 + rng.IntN(2) {
			df.WriteColumns(&cc, c, d)
			ds.write(c, d)
		}
		must(t, df.Flush())
		must(t, ds.Flush())
		sameOutput(t, i, &fast, &slow)
	}
}

// sameOutput fails when the fast path's output of record i differs from
// the value methods', and empties both for the next record.
func sameOutput(t *testing.T, i int, fast, slow *bytes.Buffer) {
	t.Helper()
	if !bytes.Equal(fast.Bytes(), slow.Bytes()) {
		t.Fatalf("record %d: fast path\n%q\nvalue methods\n%q", i, fast.Bytes(), slow.Bytes())
	}
	fast.Reset()
	slow.Reset()
}

// TestTSVUID holds tsvUID to tsvStrOrUnset on uids of several lengths
// (around the 8-byte words plainString checks) with every byte value at
// every position.
func TestTSVUID(t *testing.T) {
	const base62 = "C4J4Th3PJpwUYZZ6gcXy0aK9q8RtW2eZ"
	for _, s := range []string{"", "-", "(empty)", "C1", "CHhAvVGS1DHFjwGM9", "ClEkJM2Vm5giqnMf4h"} {
		if got, want := string(tsvUID([]byte("x"), s)), string(tsvStrOrUnset([]byte("x"), s)); got != want {
			t.Errorf("tsvUID(%q) = %q, want %q", s, got, want)
		}
	}
	for _, n := range []int{7, 8, 9, 15, 16, 17, 18, 24, 25, 32} {
		for at := range n {
			for c := range 256 {
				u := []byte(base62[:n])
				u[at] = byte(c)
				s := string(u)
				if got, want := string(tsvUID(nil, s)), string(tsvStrOrUnset(nil, s)); got != want {
					t.Fatalf("tsvUID(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}

// TestTSVBytes holds tsvBytes to appendTSVString on strings of several
// lengths (around the 8-byte words it checks) with every byte value at
// every position.
func TestTSVBytes(t *testing.T) {
	const plain = "/index.html?q=GET-example.com"
	for _, n := range []int{0, 1, 2, 6, 7, 8, 9, 15, 16, 17, 24, 29} {
		for at := range max(n, 1) {
			for c := range 256 {
				s := []byte(plain[:n])
				if n > 0 {
					s[at] = byte(c)
				}
				got := string(tsvBytes(nil, s))
				want := string(append(appendTSVString(nil, s, false), separator))
				if got != want {
					t.Fatalf("tsvBytes(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}

func randString(rng *rand.Rand) []byte {
	if rng.IntN(6) == 0 {
		return nil
	}
	pick := []string{"", "-", "(empty)", "GET", "example.com", "a,b", "tab\there", `back\slash`, "ü", "\xff", "C4J4Th3PJpwUYZZ6gc", "x\x00y"}
	return []byte(pick[rng.IntN(len(pick))])
}

// randPrintable returns n random bytes of printable ASCII: answers and
// names of every length, most of them plain.
func randPrintable(rng *rand.Rand, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = byte(0x20 + rng.IntN(0x5f))
	}
	return s
}

func randAddr(rng *rand.Rand) netip.AddrPort {
	port := uint16(rng.IntN(65536))
	switch rng.IntN(4) {
	case 0:
		var a [16]byte
		for i := range a {
			a[i] = byte(rng.IntN(256))
		}
		return netip.AddrPortFrom(netip.AddrFrom16(a), port)
	case 1:
		return netip.AddrPortFrom(netip.MustParseAddr("::ffff:10.1.2.3"), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))}), port)
}

func randConn(rng *rand.Rand) *parsers.Conn {
	c := &parsers.Conn{Kind: parsers.Kind(1 + rng.IntN(2)), UID: string(randString(rng))}
	if rng.IntN(5) > 0 {
		c.Key = flow.Key{Orig: randAddr(rng), Resp: randAddr(rng), Proto: []uint8{1, 6, 17, 58, 99}[rng.IntN(5)]}
	}
	return c
}

func randNS(rng *rand.Rand) int64 {
	switch rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return -rng.Int64N(1e12)
	case 2:
		return rng.Int64N(1e6)
	}
	return rng.Int64()
}

// TestConnMakeUID wants a record whose uid is made as it is written
// (MakeUID) to be written as the one that names the same uid, in both
// formats, with and without columns kept from another record.
func TestConnMakeUID(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, format := range []Format{TSV, JSON} {
		for range 200 {
			c := randConn(rng)
			made := randConnRecord(rng, c)
			made.MakeUID = true
			named := *made
			named.UID, named.MakeUID = parsers.UIDFromKey(made.Key, made.TS, made.UIDSeed), false
			var a, b bytes.Buffer
			la, _ := NewConnLog(&a, Options{Format: format, Now: fixedClock()})
			lb, _ := NewConnLog(&b, Options{Format: format, Now: fixedClock()})
			must(t, la.Write(made))
			must(t, lb.Write(&named))
			must(t, la.Flush())
			must(t, lb.Flush())
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("%v: made uid\n%q\nnamed uid\n%q", format, a.Bytes(), b.Bytes())
			}
		}
	}
}

func randConnRecord(rng *rand.Rand, c *parsers.Conn) *ConnRecord {
	r := &ConnRecord{
		TS: randNS(rng), UID: c.UID, Key: c.Key, Service: []string{"", "http", "dns", "dns,http"}[rng.IntN(4)],
		Duration: randNS(rng), HasDuration: rng.IntN(2) == 0, OrigBytes: rng.Int64N(1 << 40), RespBytes: rng.Int64(),
		HasBytes: rng.IntN(2) == 0, ConnState: []string{"", "SF", "S0", "-"}[rng.IntN(4)], MissedBytes: []int64{0, rng.Int64N(100000)}[rng.IntN(2)],
		History: randString(rng), OrigPkts: rng.Int64N(10), OrigIPBytes: rng.Int64N(1e7), RespPkts: rng.Int64N(1e12), RespIPBytes: rng.Int64N(99999),
		MakeUID: rng.IntN(4) == 0, UIDSeed: rng.Uint64(),
	}
	for range rng.IntN(3) {
		r.TunnelParents = append(r.TunnelParents, string(randString(rng)))
	}
	return r
}

func randDNS(rng *rand.Rand) *dns.Transaction {
	tx := &dns.Transaction{
		TS: randNS(rng), RTT: randNS(rng), HasRTT: rng.IntN(2) == 0, HasQuery: rng.IntN(2) == 0, HasReply: rng.IntN(2) == 0,
		TransID: uint16(rng.IntN(65536)), Query: randString(rng), HasQueryName: rng.IntN(3) > 0,
		QClass: uint16(rng.IntN(300)), QType: uint16(rng.IntN(300)), HasQuestion: rng.IntN(3) > 0,
		RCode: uint16(rng.IntN(30)), AA: rng.IntN(2) == 0, TC: rng.IntN(2) == 0, RD: rng.IntN(2) == 0, RA: rng.IntN(2) == 0,
		Z: uint8(rng.IntN(8)), Rejected: rng.IntN(2) == 0, Opcode: uint8(rng.IntN(20)), NetBIOS: rng.IntN(4) == 0,
	}
	tx.QueryPlain = maybePlain(rng, tx.Query)
	for range rng.IntN(6) {
		s := randString(rng)
		if rng.IntN(2) == 0 {
			s = randPrintable(rng, rng.IntN(40))
		}
		ttl := []uint32{rng.Uint32(), uint32(rng.IntN(1000)), uint32(rng.IntN(100000))}[rng.IntN(3)]
		tx.Answers = append(tx.Answers, dns.Answer{Data: s, TTL: ttl, Plain: maybePlain(rng, s)})
	}
	return tx
}

// maybePlain says, most of the time, whether s is plain as dns.Answer
// defines it (printable ASCII other than the comma), and sometimes that
// it is not known.
func maybePlain(rng *rand.Rand, s []byte) bool {
	if rng.IntN(4) == 0 {
		return false
	}
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

func randHTTP(rng *rand.Rand) *http.Transaction {
	tx := &http.Transaction{
		TS: randNS(rng), Depth: rng.IntN(5), HasRequest: rng.IntN(2) == 0, HasReply: rng.IntN(2) == 0,
		Method: randString(rng), Host: randString(rng), URI: randString(rng), Referrer: randString(rng),
		Version: randString(rng), UserAgent: randString(rng), Origin: randString(rng),
		RequestBodyLen: rng.Int64N(1e9) - 10, ResponseBodyLen: rng.Int64N(1e12),
		StatusCode: rng.IntN(600), StatusMsg: randString(rng), InfoCode: rng.IntN(2) * 100, InfoMsg: randString(rng),
		Username: randString(rng), Password: randString(rng),
	}
	for range rng.IntN(3) {
		tx.Proxied = append(tx.Proxied, randString(rng))
	}
	types := []string{"text/html", "image/png", "application/x-dosexec", "text/plain"}
	for range rng.IntN(3) {
		tx.OrigMIMETypes = append(tx.OrigMIMETypes, types[rng.IntN(len(types))])
	}
	for range rng.IntN(3) {
		tx.RespMIMETypes = append(tx.RespMIMETypes, types[rng.IntN(len(types))])
	}
	return tx
}

// TestDNSNames checks the log's memory of code names against the
// transaction's name methods, and their TSV fields against tsvStr, for
// codes above and below 256, NetBIOS or not, asked in any order.
func TestDNSNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var n dnsNames
	for range 20000 {
		tx := randDNS(rng)
		tx.QClass, tx.QType, tx.RCode = uint16(rng.IntN(600)), uint16(rng.IntN(600)), uint16(rng.IntN(4096))
		tx.Opcode = uint8(rng.IntN(256))
		if rng.IntN(3) == 0 {
			tx.QType = 33
		}
		if got, want := n.classOf(tx).name, tx.QClassName(); got != want {
			t.Fatalf("class %d: %q, want %q", tx.QClass, got, want)
		}
		if got, want := n.typeOf(tx).name, tx.QTypeName(); got != want {
			t.Fatalf("type %d (NetBIOS %v): %q, want %q", tx.QType, tx.NetBIOS, got, want)
		}
		if got, want := n.rcodeOf(tx).name, tx.RCodeName(); got != want {
			t.Fatalf("rcode %d: %q, want %q", tx.RCode, got, want)
		}
		if got, want := n.opcodeOf(tx).name, tx.OpcodeName(); got != want {
			t.Fatalf("opcode %d (NetBIOS %v): %q, want %q", tx.Opcode, tx.NetBIOS, got, want)
		}
		for _, c := range []struct {
			name *codeName
			code uint16
		}{{n.classOf(tx), tx.QClass}, {n.typeOf(tx), tx.QType}, {n.rcodeOf(tx), tx.RCode}, {n.opcodeOf(tx), uint16(tx.Opcode)}} {
			if got, want := string(c.name.appendTSV(nil, c.code)), string(tsvStr(tsvUint(nil, uint64(c.code)), c.name.name)); got != want {
				t.Fatalf("TSV fields of %d %q: %q, want %q", c.code, c.name.name, got, want)
			}
		}
	}
}

// TestConnColumns writes the records of random connections, a few DNS
// and HTTP transactions and conn.log's, with the connection's ConnColumns
// and without, and wants the same bytes.
func TestConnColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var with, without bytes.Buffer
	cw, _ := NewConnLog(&with, Options{Now: fixedClock()})
	co, _ := NewConnLog(&without, Options{Now: fixedClock()})
	dw, _ := NewDNSLog(&with, Options{Now: fixedClock()})
	do, _ := NewDNSLog(&without, Options{Now: fixedClock()})
	hw, _ := NewHTTPLog(&with, Options{Now: fixedClock()})
	ho, _ := NewHTTPLog(&without, Options{Now: fixedClock()})
	var cc ConnColumns
	for i := range 3000 {
		c := randConn(rng)
		r := randConnRecord(rng, c)
		r.MakeUID = false // the columns are of c.UID
		cc.Reset()
		for range rng.IntN(3) {
			d := randDNS(rng)
			if rng.IntN(2) == 0 {
				d.TS = r.TS // as a connection's first query
			}
			dw.WriteColumns(&cc, c, d)
			do.Write(c, d)
		}
		for range rng.IntN(3) {
			h := randHTTP(rng)
			if rng.IntN(2) == 0 {
				h.TS = r.TS
			}
			hw.WriteColumns(&cc, c, h)
			ho.Write(c, h)
		}
		r.Columns = &cc
		must(t, cw.Write(r))
		r.Columns = nil
		must(t, co.Write(r))
		for _, l := range []*Writer{cw.w, co.w, dw.w, do.w, hw.w, ho.w} {
			must(t, l.Flush())
		}
		if !bytes.Equal(with.Bytes(), without.Bytes()) {
			t.Fatalf("connection %d: with columns\n%q\nwithout\n%q", i, with.Bytes(), without.Bytes())
		}
		with.Reset()
		without.Reset()
	}
}

// TestTSVTimePrefixed holds tsvTimePrefixed to tsvTime over a walk of
// close times, which share the seconds' first digits or cross to others,
// and over the edges: unset, negative, other sizes, a carry into the
// seconds.
func TestTSVTimePrefixed(t *testing.T) {
	times := []int64{0, -1, -1500, 1, 999, 5e8, 999999999e9, 999999999999999500, 1e18, 9223372036854775807, -9223372036854775808,
		1258532199999999499, 1258532199999999500, 1258532200000000000, 1258532299999999999}
	rng := rand.New(rand.NewPCG(11, 12))
	ns := int64(1258532143457078123)
	for range 100000 {
		ns += rng.Int64N(600e9) - 300e9
		times = append(times, ns, ns+rng.Int64N(1e6))
	}
	var p secondsPrefix
	for _, ns := range times {
		if got, want := string(tsvTimePrefixed([]byte("x"), ns, &p)), string(tsvTime([]byte("x"), ns)); got != want {
			t.Fatalf("tsvTimePrefixed(%d) = %q, want %q", ns, got, want)
		}
	}
}

// TestConnAddrColumns writes records whose addresses come from a few,
// so that consecutive records share them or not (IPv4, IPv6, IPv4-mapped,
// none), through the TSV fast path, which keeps the last ones, and through
// the Writer's value methods, and wants the same bytes; some records take
// their leading columns from another record, as a DNS connection's do.
func TestConnAddrColumns(t *testing.T) {
	pool := []netip.AddrPort{
		netip.MustParseAddrPort("192.168.1.1:53"), netip.MustParseAddrPort("192.168.1.102:1170"),
		netip.MustParseAddrPort("8.8.8.8:53"), netip.MustParseAddrPort("255.255.255.255:65535"),
		netip.MustParseAddrPort("[2001:db8::1]:80"), netip.MustParseAddrPort("[::ffff:10.0.0.1]:80"), {},
	}
	rng := rand.New(rand.NewPCG(13, 14))
	var fast, slow bytes.Buffer
	cf, _ := NewConnLog(&fast, Options{Now: fixedClock()})
	cs, _ := NewConnLog(&slow, Options{Now: fixedClock()})
	df, _ := NewDNSLog(io.Discard, Options{Now: fixedClock()})
	var cc ConnColumns
	for i := range 5000 {
		c := &parsers.Conn{UID: "CHhAvVGS1DHFjwGM9", Key: flow.Key{Orig: pool[rng.IntN(len(pool))], Resp: pool[rng.IntN(3)], Proto: 17}}
		r := randConnRecord(rng, c)
		if rng.IntN(4) == 0 {
			cc.Reset()
			r.MakeUID = false
			df.WriteColumns(&cc, c, randDNS(rng))
			r.Columns = &cc
		}
		must(t, cf.Write(r))
		must(t, cs.write(r))
		must(t, cf.Flush())
		must(t, cs.Flush())
		sameOutput(t, i, &fast, &slow)
	}
}

// TestTSVInterval holds tsvInterval's way for intervals below a second
// to appendTSVSeconds around its edges and over random ones.
func TestTSVInterval(t *testing.T) {
	ns := []int64{-1e9, -500, -499, -1, 0, 1, 499, 500, 999, 1000, 1499, 1500, 999999499, 999999500, 999999501, 1e9, 1e9 + 1, 1258532143457078123}
	rng := rand.New(rand.NewPCG(15, 16))
	for range 100000 {
		ns = append(ns, rng.Int64N(2e9)-5e8)
	}
	for _, v := range ns {
		if got, want := string(tsvInterval([]byte("x"), v)), "x"+string(appendTSVSeconds(nil, v))+"\t"; got != want {
			t.Fatalf("tsvInterval(%d) = %q, want %q", v, got, want)
		}
	}
}

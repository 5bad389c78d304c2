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
)

func TestIsLocal(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"10.1.2.3", true}, {"11.0.0.1", false},
		{"172.16.0.1", true}, {"172.31.255.255", true}, {"172.15.255.255", false}, {"172.32.0.0", false},
		{"192.168.1.1", true}, {"192.169.0.1", false},
		{"127.0.0.1", true}, {"169.254.1.1", true}, {"169.255.0.1", false},
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"100.63.255.255", false}, {"100.128.0.0", false},
		{"8.8.8.8", false}, {"0.0.0.0", false}, {"255.255.255.255", false},
		{"::ffff:10.0.0.1", true}, {"::ffff:8.8.8.8", false},
		{"fd00::1", true}, {"fe80::1", true}, {"::1", true}, {"2001:db8::1", false},
	}
	for _, tt := range tests {
		if got := IsLocal(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsLocal(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if IsLocal(netip.Addr{}) {
		t.Error("IsLocal of the zero Addr is true; conn.log's address columns start from it as not local")
	}
}

// TestIsLocal4 checks IsLocal's IPv4 shortcut against netip's address
// classes on every first two bytes, with last bytes at the ends of their
// range.
func TestIsLocal4(t *testing.T) {
	for hi := range 1 << 16 {
		for _, lo := range []uint16{0, 1, 0x3fff, 0x4000, 0xffff} {
			b := [4]byte{byte(hi >> 8), byte(hi), byte(lo >> 8), byte(lo)}
			a := netip.AddrFrom4(b)
			want := a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || cgnat.Contains(a)
			if got := isLocal4(b); got != want {
				t.Fatalf("isLocal4(%v) = %v, want %v", a, got, want)
			}
		}
	}
}

// TestStrColumn appends a run of strings, repeated and changing, some too
// long to be kept or needing escapes, to one strColumn, which must render
// each as tsvStrOrUnset does.
func TestStrColumn(t *testing.T) {
	var sc strColumn
	for i, s := range []string{
		"", "", "dns", "dns", "SF", "dns", "S0", "S0", "-", "-", "(empty)",
		"dns,http", "a string longer than the text", "a string longer than the text",
		"tab\there", "tab\there", "", "SF",
	} {
		want := string(tsvStrOrUnset(nil, s))
		if got := string(sc.appendTSV([]byte("x"), s)); got != "x"+want {
			t.Errorf("%d: appendTSV(%q) = %q, want %q", i, s, got, "x"+want)
		}
	}
}

// TestConnCommonUDP writes the records of DNS-like connections, whose
// columns mostly take appendCommonUDP's shape and sometimes leave it in
// one column, with their figures in their flow.Conn and their leading
// columns kept by a dns.log record (whose uid is checked or known to be
// made), and wants the bytes of the value methods.
func TestConnCommonUDP(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var fast, slow bytes.Buffer
	cf, _ := NewConnLog(&fast, Options{Now: fixedClock()})
	cs, _ := NewConnLog(&slow, Options{Now: fixedClock()})
	df, _ := NewDNSLog(io.Discard, Options{Now: fixedClock()})
	fast.Reset()
	slow.Reset()
	servers := []netip.AddrPort{netip.MustParseAddrPort("192.168.1.1:53"), netip.MustParseAddrPort("8.8.8.8:53")}
	clients := []netip.Addr{netip.MustParseAddr("192.168.1.20"), netip.MustParseAddr("10.0.0.7")}
	// Histories with a word of capacity, as the flow engine's, and one
	// without.
	histories := [][]byte{append(make([]byte, 0, 8), "Dd"...), append(make([]byte, 0, 8), "D"...), []byte("Dd")}
	// Every other record's columns know their uid is made (MarkMadeUIDs),
	// as the uids of these are.
	var ccs [2]ConnColumns
	ccs[1].MarkMadeUIDs()
	for i := range 5000 {
		cc := &ccs[i%2]
		odd := func() bool { return rng.IntN(20) == 0 }
		fc := &flow.Conn{
			Key: flow.Key{
				Orig:  netip.AddrPortFrom(clients[rng.IntN(len(clients))], uint16(1024+rng.IntN(64000))),
				Resp:  servers[rng.IntN(len(servers))],
				Proto: flow.ProtoUDP,
			},
			Start:   int64(1_262_304_000e9) + int64(i)*1e7,
			History: histories[rng.IntN(len(histories))],
		}
		fc.Last = fc.Start + 1 + rng.Int64N(1e9-501)
		o, p := &fc.Stats[flow.Orig], &fc.Stats[flow.Resp]
		o.Packets, o.Bytes = 1, rng.Int64N(100)
		p.Packets, p.Bytes = 1, rng.Int64N(1000)
		o.IPBytes, p.IPBytes = o.Bytes+28, min(p.Bytes+28, 999)
		r := &ConnRecord{Service: "dns", Conn: fc}
		switch rng.IntN(12) {
		case 0:
			r.Service = []string{"", "dns,http"}[rng.IntN(2)]
		case 1:
			p.Packets, p.Bytes, p.IPBytes = 0, 0, 0 // S0
		case 2:
			fc.Last = fc.Start + []int64{1e9 - 500, 3e9, -1}[rng.IntN(3)]
		case 3:
			fc.Last = fc.Start
		case 4:
			p.Bytes = 1000 + rng.Int64N(1e6)
		case 5:
			p.IPBytes = 1000
		case 6:
			p.Packets = []int64{12, 999, 1000}[rng.IntN(3)]
		case 7:
			r.TunnelParents = []string{"CxTunnel0000000001"}
		case 8:
			o.Missed = 1
		case 9:
			fc.Key.Proto = flow.ProtoTCP
		}
		c := &parsers.Conn{UID: parsers.UIDFromKey(fc.Key, fc.Start, 1), Key: fc.Key, TS: fc.Start}
		r.UID = c.UID
		cc.Reset()
		if !odd() {
			d := &dns.Transaction{TS: fc.Start}
			if odd() {
				d.TS++ // a query after the connection's first packet
			}
			df.WriteColumns(cc, c, d)
			r.Columns = cc
		}
		must(t, cf.Write(r))
		set := ConnRecord{UID: r.UID, Service: r.Service, TunnelParents: r.TunnelParents, Conn: fc}
		set.setFromConn()
		set.Conn = nil
		must(t, cs.write(&set))
		must(t, cf.Flush())
		must(t, cs.Flush())
		sameOutput(t, i, &fast, &slow)
	}
}

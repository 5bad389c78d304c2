package dns

import (
	"errors"
	"fmt"
	"math/rand"
	"net/netip"
	"testing"
)

// TestZeekAnswers checks the dns.log rendering of every record type Zeek's
// base script knows, against the texts in Zeek's baselines and script.
func TestZeekAnswers(t *testing.T) {
	tests := []struct {
		rr     string
		want   string
		logged Logged
	}{
		{"x.example. 60 IN A 192.0.2.1", "192.0.2.1", LoggedText},
		{"x.example. 60 IN AAAA fe80::200:deff:fead:beef", "fe80::200:deff:fead:beef", LoggedText},
		{"x.example. 60 IN AAAA ::ffff:192.0.2.1", "::ffff:192.0.2.1", LoggedText},
		{"x.example. 60 IN CNAME Www-CMU.Andrew.cmu.edu.", "www-cmu.andrew.cmu.edu", LoggedText},
		{"x.example. 60 IN NS ns1.example.", "ns1.example", LoggedText},
		{"1.2.0.192.in-addr.arpa. 60 IN PTR host.example.", "host.example", LoggedText},
		{"x.example. 60 IN MX 10 mail.example.", "mail.example", LoggedText},
		{"x.example. 60 IN SOA ns.example. admin.example. 1 2 3 4 5", "ns.example", LoggedText},
		{"_sip._tcp.example. 60 IN SRV 1 2 5060 sip.example.", "sip.example", LoggedText},
		{`x.example. 60 IN TXT "v=spf1 -all"`, "TXT 11 v=spf1 -all", LoggedText},
		{`x.example. 60 IN TXT "ab" "cde"`, "TXT 2 ab TXT 3 cde", LoggedText},
		{`x.example. 60 IN TXT "tab\009back\\slash"`, `TXT 14 tab\x09back\x5cslash`, LoggedText},
		{`x.example. 60 IN TXT ""`, "TXT 0 ", LoggedText},
		{`x.example. 60 IN SPF "v=spf1"`, "SPF 6 v=spf1", LoggedText},
		{`x.example. 60 IN NAPTR 100 100 "s" "SIPS+D2T" "" _sips._tcp.example.`, "NAPTR 100 100 s SIPS+D2T _sips._tcp.example", LoggedText},
		{`x.example. 60 IN NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:a@b!" .`, "NAPTR 100 10 u E2U+sip !^.*$!sip:a@b!", LoggedText},
		{`x.example. 60 IN NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:a@b!" next.example.`, "NAPTR 100 10 u E2U+sip !^.*$!sip:a@b! next.example", LoggedText},
		{"x.example. 60 IN RRSIG A 8 2 300 20300101000000 20200101000000 12345 Example. AAECAw==", "RRSIG 1 example", LoggedText},
		{"x.example. 60 IN RRSIG DNSKEY 8 0 300 20300101000000 20200101000000 12345 . AAECAw==", "RRSIG 48 <Root>", LoggedText},
		{"x.example. 60 IN DNSKEY 257 3 15 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "DNSKEY 15", LoggedText},
		{"x.example. 60 IN DS 12345 5 1 0102030405060708090a0b0c0d0e0f1011121314", "DS 5 1", LoggedText},
		{"Dla.Example. 60 IN NSEC next.example. A RRSIG NSEC", "NSEC dla.example next.example", LoggedText},
		{"x.example. 60 IN NSEC3 1 0 10 AABB 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR A RRSIG", "NSEC3", LoggedText},
		{"x.example. 60 IN NSEC3PARAM 1 0 10 AABB", "NSEC3PARAM", LoggedText},
		{"x.example. 60 IN SSHFP 1 1 A6B95F9EBA1104A7272A362E8BFBCBEBD5726DCF", "SSHFP: a6b95f9eba1104a7272a362e8bfbcbebd5726dcf", LoggedText},
		{"x.example. 60 IN LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m", "LOC:  0 22 19", LoggedText},
		{`x.example. 60 IN TYPE11 \# 6 C000020106FF`, "", LoggedEmpty},
		{`x.example. 60 IN TYPE65534 \# 5 0801020000`, "BIND9 signing signal", LoggedText},
		{`x.example. 60 IN HINFO "cpu" "os"`, "", NotLogged},
		{`x.example. 60 IN CAA 0 issue "ca.example"`, "", NotLogged},
		{`x.example. 60 IN SVCB 1 svc.example. alpn=h2`, "", NotLogged},
		{`x.example. 60 IN HTTPS 1 . alpn=h3 ipv4hint=192.0.2.1`, "", NotLogged},
		{"x.example. 60 IN DNAME y.example.", "<unknown type=39>", LoggedText},
		{"x.example. 60 IN TLSA 3 1 1 0102", "<unknown type=52>", LoggedText},
	}
	for _, tt := range tests {
		t.Run(tt.rr, func(t *testing.T) {
			msg := pack(t, 1, "x.example", 1, tt.rr)
			var p Parser
			if _, err := p.Start(msg); err != nil {
				t.Fatal(err)
			}
			rh, err := p.ResourceHeader()
			if err != nil {
				t.Fatal(err)
			}
			got, logged, err := p.AppendZeekAnswer(nil, rh, false, false)
			if err != nil {
				t.Fatalf("AppendZeekAnswer: %v", err)
			}
			if string(got) != tt.want || logged != tt.logged {
				t.Errorf("got %q (%d), want %q (%d)", got, logged, tt.want, tt.logged)
			}
			if _, err := p.ResourceHeader(); !errors.Is(err, ErrSectionDone) {
				t.Errorf("after the record: %v, want ErrSectionDone", err)
			}
		})
	}
}

// appendZeekByDecoders renders the current record as appendZeek does, but
// through the typed decoders for the types whose checks appendZeek makes
// itself.
func appendZeekByDecoders(p *Parser, dst []byte) ([]byte, Logged, error) {
	var n Name
	var err error
	switch p.rdType {
	case TypeNS, TypeCNAME, TypePTR:
		n, err = p.NameData()
	case TypeMX:
		var v MX
		v, err = p.MX()
		n = v.Exchange
	case TypeSRV:
		var v SRV
		v, err = p.SRV()
		n = v.Target
	case TypeSOA:
		var v SOA
		v, err = p.SOA()
		n = v.MName
	case TypeRRSIG:
		var v RRSIG
		if v, err = p.RRSIG(); err != nil {
			return dst, NotLogged, err
		}
		dst = fmt.Appendf(dst, "RRSIG %d ", v.TypeCovered)
		if v.SignerName.IsRoot() {
			return append(dst, "<Root>"...), LoggedText, nil
		}
		return v.SignerName.AppendZeek(dst), LoggedText, nil
	default:
		return p.appendZeek(dst, false, false)
	}
	if err != nil {
		return dst, NotLogged, err
	}
	return n.AppendZeek(dst), LoggedText, nil
}

// checkZeekAnswers checks that the analyzer's rendering of answers, which
// checks the common types itself, renders and fails as the typed decoders
// do.
func checkZeekAnswers(t *testing.T, msg []byte) {
	t.Helper()
	var p, q Parser
	if p.start(msg, new(Header)) != nil || q.start(msg, new(Header)) != nil {
		return
	}
	for {
		err1, err2 := p.nextRR(), q.nextRR()
		if !sameError(err1, err2) {
			t.Fatalf("% x\nrecord: %v vs %v", msg, err1, err2)
		}
		if err1 != nil {
			return
		}
		got, l1, err1 := p.appendZeek([]byte("x"), false, false)
		want, l2, err2 := appendZeekByDecoders(&q, []byte("x"))
		if string(got) != string(want) || l1 != l2 || !sameError(err1, err2) {
			t.Fatalf("% x\n%s record: %q %d %v, through the decoders %q %d %v",
				msg, TypeName(p.rdType), got, l1, err1, want, l2, err2)
		}
		if err1 != nil {
			return
		}
	}
}

func TestZeekAnswersMatchDecoders(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for i := 0; i < 3000; i++ {
		checkZeekAnswers(t, pointerSoup(rng))
	}
	for _, msg := range append(mix(t, 200), typicalReply(t), dnssecReply(t)) {
		checkZeekAnswers(t, msg)
	}
}

// TestAppendIPv4 checks the table rendering of IPv4 addresses against
// netip's for octets of one, two and three digits in every position.
func TestAppendIPv4(t *testing.T) {
	octets := []byte{0, 7, 9, 10, 42, 99, 100, 199, 255}
	for _, a := range octets {
		for _, b := range octets {
			for _, c := range octets {
				for _, d := range octets {
					ip := [4]byte{a, b, c, d}
					want := "x" + netip.AddrFrom4(ip).String()
					if got := string(appendIPv4([]byte("x"), ip[:])); got != want {
						t.Fatalf("appendIPv4(%v) = %q, want %q", ip, got, want)
					}
				}
			}
		}
	}
}

// TestAppendIPv6 checks appendIPv6 against netip.Addr.AppendTo: zero runs
// of every length and place, ties between runs, IPv4-mapped and
// IPv4-compatible addresses, and random ones.
func TestAppendIPv6(t *testing.T) {
	var addrs [][16]byte
	for _, s := range []string{"::", "::1", "1::", "::ffff:192.0.2.1", "::ffff:0:0", "::192.0.2.1", "64:ff9b::192.0.2.1",
		"1:0:0:1:0:0:1:1", "1:0:1:0:0:1:0:0", "0:0:1:0:0:1:0:0", "1:2:3:4:5:6:7:8", "1:0:3:4:5:6:7:8", "fe80::200:deff:fead:beef",
		"2001:db8::", "2001:db8:0:0:1:0:0:1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "0:0:0:0:0:ffff:ffff:ffff", "::fff:1:2"} {
		addrs = append(addrs, netip.MustParseAddr(s).As16())
	}
	r := rand.New(rand.NewSource(1))
	for range 20000 {
		var a [16]byte
		for i := range 8 { // groups zero half the time, to make runs
			if r.Intn(2) == 0 {
				a[2*i], a[2*i+1] = byte(r.Intn(256)), byte(r.Intn(256)>>r.Intn(8))
			}
		}
		addrs = append(addrs, a)
	}
	for _, a := range addrs {
		checkAppendIPv6(t, a)
	}
}

func checkAppendIPv6(t *testing.T, a [16]byte) {
	t.Helper()
	if got, want := string(appendIPv6([]byte("x"), a)), "x"+netip.AddrFrom16(a).String(); got != want {
		t.Fatalf("appendIPv6(%x) = %q, want %q", a, got, want)
	}
}

func FuzzAppendIPv6(f *testing.F) {
	f.Add(netip.MustParseAddr("2001:db8::1").AsSlice())
	f.Add(netip.MustParseAddr("::ffff:10.0.0.1").AsSlice())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 16 {
			checkAppendIPv6(t, [16]byte(b))
		}
	})
}

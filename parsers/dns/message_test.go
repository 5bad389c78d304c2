package dns

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

// hdr is a message header with the given counts.
func hdr(id uint16, flags uint16, qd, an, ns, ar uint16) []byte {
	return []byte{byte(id >> 8), byte(id), byte(flags >> 8), byte(flags),
		byte(qd >> 8), byte(qd), byte(an >> 8), byte(an), byte(ns >> 8), byte(ns), byte(ar >> 8), byte(ar)}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// walk parses a whole message, decoding every record's typed data through
// the Zeek renderer, and returns the first error.
func walk(msg []byte) error {
	var p Parser
	if _, err := p.Start(msg); err != nil {
		return err
	}
	for {
		if _, err := p.Question(); err != nil {
			if errors.Is(err, ErrSectionDone) {
				break
			}
			return err
		}
	}
	for {
		rh, err := p.ResourceHeader()
		if err != nil {
			if errors.Is(err, ErrSectionDone) {
				return nil
			}
			return err
		}
		if _, _, err := p.AppendZeekAnswer(nil, rh, false, false); err != nil {
			return err
		}
	}
}

// chain returns an answer record of unknown type whose data is a root name
// followed by n pointers, each to the one before; the record starts at off.
func chain(off, n int) []byte {
	rd := []byte{0}
	prev := off + 11 // the root byte: after owner (1) + 10 bytes of header
	for i := 0; i < n; i++ {
		rd = append(rd, 0xc0|byte(prev>>8), byte(prev))
		prev = off + 11 + 1 + 2*i
	}
	rr := []byte{0, 0xff, 0x00, 0, 1, 0, 0, 0, 0, byte(len(rd) >> 8), byte(len(rd))}
	return append(rr, rd...)
}

type malformedCase struct {
	name string
	msg  []byte
	want ErrorCode
	off  int
}

// malformedMessages returns messages with one malformation each, the error
// it makes and its offset (-1: not checked).
func malformedMessages() []malformedCase {
	question := []byte{1, 'a', 0, 0, 1, 0, 1}
	a := func(rdlen byte, rd ...byte) []byte {
		return append([]byte{0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, rdlen}, rd...)
	}
	long := []byte{}
	for i := 0; i < 5; i++ {
		long = append(long, 63)
		long = append(long, bytes.Repeat([]byte{'x'}, 63)...)
	}
	long = append(long, 0, 0, 1, 0, 1)
	ch := chain(12+len(question), 130)
	lastPtr := 12 + len(question) + 11 + 1 + 2*129
	return []malformedCase{
		{"short header", hdr(1, 0, 0, 0, 0, 0)[:11], ErrShortHeader, 11},
		{"question missing", hdr(1, 0, 1, 0, 0, 0), ErrTruncated, 12},
		{"question cut in name", cat(hdr(1, 0, 1, 0, 0, 0), []byte{3, 'a', 'b'}), ErrTruncated, 15},
		{"question cut in type", cat(hdr(1, 0, 1, 0, 0, 0), []byte{1, 'a', 0, 0}), ErrTruncated, 16},
		{"pointer to itself", cat(hdr(1, 0, 1, 0, 0, 0), []byte{0xc0, 12, 0, 1, 0, 1}), ErrPointerForward, 12},
		{"pointer forward", cat(hdr(1, 0, 1, 0, 0, 0), []byte{0xc0, 14, 1, 'a', 0, 0, 1, 0, 1}), ErrPointerForward, 12},
		{"pointer loop", cat(hdr(1, 0, 1, 0, 0, 0), []byte{1, 'a', 0xc0, 12, 0, 1, 0, 1}), ErrPointerLoop, 14},
		{"too many pointers", cat(hdr(1, 0x8000, 1, 2, 0, 0), question, ch,
			[]byte{0xc0 | byte(lastPtr>>8), byte(lastPtr), 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4}), ErrTooManyPointers, -1},
		{"name too long", cat(hdr(1, 0, 1, 0, 0, 0), long), ErrNameTooLong, 12 + 3*64},
		{"label type 0x40", cat(hdr(1, 0, 1, 0, 0, 0), []byte{0x41, 0, 0, 1, 0, 1}), ErrBadLabelType, 12},
		{"label type 0x80", cat(hdr(1, 0, 1, 0, 0, 0), []byte{0x80, 0, 0, 1, 0, 1}), ErrBadLabelType, 12},
		{"record header cut", cat(hdr(1, 0x8000, 1, 1, 0, 0), question, []byte{0xc0, 12, 0, 1, 0}), ErrTruncated, -1},
		{"rdata past end", cat(hdr(1, 0x8000, 1, 1, 0, 0), question, a(4, 1, 2, 3)), ErrRDLength, 31},
		{"A with 5 bytes", cat(hdr(1, 0x8000, 1, 1, 0, 0), question, a(5, 1, 2, 3, 4, 5)), ErrRDLength, 35},
		{"A with 3 bytes", cat(hdr(1, 0x8000, 1, 1, 0, 0), question, a(3, 1, 2, 3)), ErrRDLength, 31},
		{"CNAME name overruns rdata", cat(hdr(1, 0x8000, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 2, 1, 'b', 0}), ErrRDLength, 33},
		{"CNAME rdata longer than name", cat(hdr(1, 0x8000, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 4, 1, 'b', 0, 9}), ErrRDLength, 34},
		// As in the corpus trace dns-svcb-rdlength-mismatch.pcap: an SVCB
		// record whose RDLENGTH (2) leaves out its target name.
		{"SVCB rdlength mismatch", cat(hdr(0x1234, 0x8180, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 64, 0, 1, 0, 0, 0, 60, 0, 2, 0, 1, 0}), ErrRDLength, 33},
		{"TXT string past rdata", cat(hdr(1, 0x8000, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 60, 0, 3, 5, 'a', 'b'}), ErrRDLength, 32},
		{"NSEC bitmap length 0", cat(hdr(1, 0x8000, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 47, 0, 1, 0, 0, 0, 60, 0, 3, 0, 0, 0}), ErrRDLength, 33},
		{"RRSIG too short", cat(hdr(1, 0x8000, 1, 1, 0, 0), question,
			[]byte{0xc0, 12, 0, 46, 0, 1, 0, 0, 0, 60, 0, 3, 0, 1, 8}), ErrRDLength, 34},
		{"second record missing", cat(hdr(1, 0x8000, 1, 2, 0, 0), question, a(4, 1, 2, 3, 4)), ErrTruncated, -1},
	}
}

func TestMalformed(t *testing.T) {
	tests := malformedMessages()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := walk(tt.msg)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("walk = %v, want *Error %v", err, tt.want)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want code %v", err, tt.want)
			}
			if tt.off >= 0 && e.Offset != tt.off {
				t.Errorf("offset %d, want %d (%v)", e.Offset, tt.off, err)
			}
			if !strings.Contains(err.Error(), "offset") {
				t.Errorf("message %q does not name the offset", err)
			}
		})
	}
}

func TestNameLimits(t *testing.T) {
	// 255 bytes in wire form is the longest valid name: 3 labels of 63, one
	// of 61, and the root.
	var wire []byte
	for _, n := range []int{63, 63, 63, 61} {
		wire = append(wire, byte(n))
		wire = append(wire, bytes.Repeat([]byte{'a'}, n)...)
	}
	wire = append(wire, 0)
	ok := cat(hdr(1, 0, 1, 0, 0, 0), wire, []byte{0, 1, 0, 1})
	var p Parser
	p.Start(ok)
	q, err := p.Question()
	if err != nil {
		t.Fatalf("255-byte name: %v", err)
	}
	if q.Name.WireLen() != 255 {
		t.Errorf("WireLen = %d", q.Name.WireLen())
	}
	tooLong := cat(hdr(1, 0, 1, 0, 0, 0), wire[:len(wire)-1], []byte{1, 'x', 0, 0, 1, 0, 1})
	p.Start(tooLong)
	if _, err := p.Question(); !errors.Is(err, ErrNameTooLong) {
		t.Errorf("257-byte name: %v, want ErrNameTooLong", err)
	}
}

func TestNameRendering(t *testing.T) {
	tests := []struct {
		wire       []byte
		zeek, text string
	}{
		{[]byte{0}, "", "."},
		{[]byte{3, 'W', 'w', 'W', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 0}, "www.example", "WwW.Example."},
		{[]byte{3, 'a', '.', 'b', 0}, "a.b", `a\.b.`},
		{[]byte{4, 'a', 0, 0xff, '\\', 0}, `a\x00\xff\x5c`, `a\000\255\\.`},
		{[]byte{5, 'a', ' ', '(', ';', '"', 0}, `a (;"`, `a\ \(\;\".`},
	}
	for _, tt := range tests {
		msg := cat(hdr(1, 0, 1, 0, 0, 0), tt.wire, []byte{0, 1, 0, 1})
		var p Parser
		p.Start(msg)
		q, err := p.Question()
		if err != nil {
			t.Fatalf("%q: %v", tt.wire, err)
		}
		if got := string(q.Name.AppendZeek(nil)); got != tt.zeek {
			t.Errorf("%q: AppendZeek = %q, want %q", tt.wire, got, tt.zeek)
		}
		if got := q.Name.String(); got != tt.text {
			t.Errorf("%q: String = %q, want %q", tt.wire, got, tt.text)
		}
		// miekg/dns renders names the same way.
		m := new(mdns.Msg)
		if err := m.Unpack(msg); err != nil {
			t.Fatalf("miekg Unpack: %v", err)
		}
		if m.Question[0].Name != tt.text {
			t.Errorf("%q: miekg renders %q, we %q", tt.wire, m.Question[0].Name, tt.text)
		}
	}
}

func TestTypedData(t *testing.T) {
	m := new(mdns.Msg)
	m.SetQuestion("example.org.", mdns.TypeANY)
	m.Response = true
	rrs := []string{
		"example.org. 300 IN MX 10 mx.example.org.",
		"example.org. 300 IN SOA ns.example.org. hostmaster.example.org. 2024010101 7200 3600 1209600 300",
		"_x._tcp.example.org. 300 IN SRV 1 2 443 t.example.org.",
		"example.org. 300 IN RRSIG MX 13 2 300 20300101000000 20200101000000 4242 example.org. AAECAwQF",
		`example.org. 300 IN CAA 128 issue "letsencrypt.org"`,
		`example.org. 300 IN HINFO "x86" "Linux"`,
		"example.org. 300 IN HTTPS 1 . alpn=h2,h3 port=8443",
	}
	for _, s := range rrs {
		rr, err := mdns.NewRR(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		m.Answer = append(m.Answer, rr)
	}
	m.Answer = append(m.Answer, &mdns.TKEY{
		Hdr:       mdns.RR_Header{Name: "example.org.", Rrtype: mdns.TypeTKEY, Class: mdns.ClassANY},
		Algorithm: "gss-tsig.", Inception: 1700000000, Expiration: 1700003600, Mode: 3,
		KeySize: 3, Key: "010203",
	})
	m.Compress = true
	opt := &mdns.OPT{Hdr: mdns.RR_Header{Name: ".", Rrtype: mdns.TypeOPT}}
	opt.SetUDPSize(1232)
	opt.SetDo()
	m.Rcode = mdns.RcodeBadVers // Pack moves the upper bits into the OPT record
	opt.Option = append(opt.Option,
		&mdns.EDNS0_SUBNET{Code: mdns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(198, 51, 100, 0).To4()},
		&mdns.EDNS0_COOKIE{Code: mdns.EDNS0COOKIE, Cookie: "0102030405060708aabbccddeeff0011"})
	m.Extra = append(m.Extra, opt)
	msg := packMsg(t, m)

	var p Parser
	h, err := p.Start(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !h.Response || h.ANCount != uint16(len(rrs)+1) || h.ARCount != 1 {
		t.Fatalf("header %+v", h)
	}
	next := func(typ uint16) ResourceHeader {
		t.Helper()
		rh, err := p.ResourceHeader()
		if err != nil || rh.Type != typ {
			t.Fatalf("ResourceHeader = %+v, %v; want type %d", rh, err, typ)
		}
		return rh
	}
	next(TypeMX)
	mx, err := p.MX()
	if err != nil || mx.Preference != 10 || mx.Exchange.String() != "mx.example.org." {
		t.Errorf("MX = %+v %v", mx, err)
	}
	next(TypeSOA)
	soa, err := p.SOA()
	if err != nil || soa.RName.String() != "hostmaster.example.org." || soa.Serial != 2024010101 || soa.Minimum != 300 {
		t.Errorf("SOA = %+v %v", soa, err)
	}
	rh := next(TypeSRV)
	srv, err := p.SRV()
	if err != nil || srv.Port != 443 || srv.Target.String() != "t.example.org." || rh.Name.String() != "_x._tcp.example.org." {
		t.Errorf("SRV = %+v %v", srv, err)
	}
	next(TypeRRSIG)
	sig, err := p.RRSIG()
	if err != nil || sig.TypeCovered != TypeMX || sig.Algorithm != 13 || sig.KeyTag != 4242 ||
		sig.SignerName.String() != "example.org." || !bytes.Equal(sig.Signature, []byte{0, 1, 2, 3, 4, 5}) {
		t.Errorf("RRSIG = %+v %v", sig, err)
	}
	next(TypeCAA)
	caa, err := p.CAA()
	if err != nil || caa.Flags != 128 || string(caa.Tag) != "issue" || string(caa.Value) != "letsencrypt.org" {
		t.Errorf("CAA = %+v %v", caa, err)
	}
	next(TypeHINFO)
	hi, err := p.HINFO()
	if err != nil || string(hi.CPU) != "x86" || string(hi.OS) != "Linux" {
		t.Errorf("HINFO = %+v %v", hi, err)
	}
	next(TypeHTTPS)
	sv, err := p.SVCB()
	if err != nil || sv.Priority != 1 || !sv.Target.IsRoot() {
		t.Errorf("HTTPS = %+v %v", sv, err)
	}
	key, val, rest, ok := sv.Params.Next()
	if !ok || key != 1 || string(val) != "\x02h2\x02h3" {
		t.Errorf("first SvcParam = %d %q", key, val)
	}
	if key, _, _, ok := rest.Next(); !ok || key != 3 {
		t.Errorf("second SvcParam = %d", key)
	}
	next(TypeTKEY)
	tk, err := p.TKEY()
	if err != nil || tk.Mode != 3 || tk.Algorithm.String() != "gss-tsig." || !bytes.Equal(tk.Key, []byte{1, 2, 3}) {
		t.Errorf("TKEY = %+v %v", tk, err)
	}
	rh = next(TypeOPT)
	if rh.Section != SectionAdditional {
		t.Errorf("OPT in %v", rh.Section)
	}
	e := rh.EDNS()
	if e.UDPSize != 1232 || !e.DO || e.Version != 0 || e.FullRCode(h) != mdns.RcodeBadVers {
		t.Errorf("EDNS = %+v, full rcode %d", e, e.FullRCode(h))
	}
	o, err := p.OPT()
	if err != nil {
		t.Fatal(err)
	}
	opt1, rest2, ok := o.Options.Next()
	ecs, ok2 := opt1.ClientSubnet()
	if !ok || !ok2 || ecs.Family != 1 || ecs.SourcePrefix != 24 || !bytes.Equal(ecs.Address, []byte{198, 51, 100}) {
		t.Errorf("ECS = %+v %v %v", ecs, ok, ok2)
	}
	opt2, _, ok := rest2.Next()
	client, server, ok2 := opt2.Cookie()
	if !ok || !ok2 || len(client) != 8 || len(server) != 8 || server[0] != 0xaa {
		t.Errorf("cookie = %x %x", client, server)
	}
	if _, err := p.ResourceHeader(); !errors.Is(err, ErrSectionDone) {
		t.Errorf("end: %v", err)
	}
	if _, err := p.MX(); !errors.Is(err, ErrNoRecord) {
		t.Errorf("MX without record: %v", err)
	}
}

func TestWrongTypeAndSkipping(t *testing.T) {
	msg := pack(t, 7, "a.example", 1, "a.example. 5 IN A 192.0.2.7", "a.example. 5 IN A 192.0.2.8")
	var p Parser
	p.Start(msg)
	// ResourceHeader skips the unread question.
	rh, err := p.ResourceHeader()
	if err != nil || rh.Type != TypeA || rh.TTL != 5 {
		t.Fatalf("%+v %v", rh, err)
	}
	if _, err := p.MX(); !errors.Is(err, ErrWrongType) {
		t.Errorf("MX on an A record: %v", err)
	}
	// the unread data of the first record is skipped.
	if _, err := p.ResourceHeader(); err != nil {
		t.Fatal(err)
	}
	a, err := p.A()
	if err != nil || a != [4]byte{192, 0, 2, 8} {
		t.Errorf("A = %v %v", a, err)
	}
}

package dns

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	var m Message
	if err := m.Decode(typicalQuery(t)); err != nil { // leaves entries to be reused
		t.Fatal(err)
	}
	if err := m.Decode(typicalReply(t)); err != nil {
		t.Fatal(err)
	}
	h := m.Header
	if h.ID != 0x1234 || !h.Response || !h.RecursionAvailable || h.QDCount != 1 || h.ANCount != 4 || h.ARCount != 1 {
		t.Errorf("header %+v", h)
	}
	if len(m.Questions) != 1 || m.Questions[0].Name.String() != "www.example.com." ||
		m.Questions[0].Type != TypeA || m.Questions[0].Class != ClassINET {
		t.Fatalf("questions %+v", m.Questions)
	}
	want := []string{
		"answer www.example.com. 5 3600",
		"answer www.example.com.cdn.cloudprovider.net. 5 300",
		"answer e1234.a.cloudprovider.net. 1 20",
		"answer e1234.a.cloudprovider.net. 1 20",
		"additional . 41 0",
	}
	var got []string
	for _, r := range m.Records {
		got = append(got, fmt.Sprintf("%s %s %d %d", r.Section, r.Name, r.Type, r.TTL))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n, err := m.Data(1).NameData(); err != nil || n.String() != "e1234.a.cloudprovider.net." {
		t.Errorf("CNAME data %v %v", n, err)
	}
	if a, err := m.Data(3).A(); err != nil || a != [4]byte{192, 0, 2, 45} {
		t.Errorf("A data %v %v", a, err)
	}
	if _, err := m.Data(3).MX(); !errors.Is(err, ErrWrongType) {
		t.Errorf("MX of an A record: %v", err)
	}
	if e := m.Records[4].EDNS(); e.UDPSize != 1232 {
		t.Errorf("EDNS %+v", e)
	}
	if o, err := m.Data(4).OPT(); err != nil || len(o.Options) != 12 {
		t.Errorf("OPT %+v %v", o, err)
	}
}

// typedWalk walks msg with the pull Parser, calling the typed decoder of
// every record type that has one, and lists the questions and records it
// read, as decodeList lists a Message's.
func typedWalk(p *Parser, msg []byte) (string, error) {
	var sb strings.Builder
	if _, err := p.Start(msg); err != nil {
		return "", err
	}
	for {
		q, err := p.Question()
		if errors.Is(err, ErrSectionDone) {
			break
		}
		if err != nil {
			return sb.String(), err
		}
		fmt.Fprintf(&sb, "Q %d %d %d\n", q.Name.Offset(), q.Type, q.Class)
	}
	for {
		rh, err := p.ResourceHeader()
		if errors.Is(err, ErrSectionDone) {
			return sb.String(), nil
		}
		if err != nil {
			return sb.String(), err
		}
		if err := typedData(p, rh.Type); err != nil {
			return sb.String(), err
		}
		fmt.Fprintf(&sb, "R %d %d %d %d %d %d %d\n", rh.Section, rh.Name.Offset(), rh.Type, rh.Class, rh.TTL, rh.Length, rh.Offset)
	}
}

// typedData decodes the current record with the typed decoder of its type,
// rendering the names it holds.
func typedData(p *Parser, typ uint16) error {
	var err error
	var names []Name
	switch typ {
	case TypeA:
		_, err = p.A()
	case TypeAAAA:
		_, err = p.AAAA()
	case TypeNS, TypeCNAME, TypePTR, TypeDNAME:
		var n Name
		n, err = p.NameData()
		names = append(names, n)
	case TypeMX:
		var v MX
		v, err = p.MX()
		names = append(names, v.Exchange)
	case TypeSOA:
		var v SOA
		v, err = p.SOA()
		names = append(names, v.MName, v.RName)
	case TypeSRV:
		var v SRV
		v, err = p.SRV()
		names = append(names, v.Target)
	case TypeNAPTR:
		var v NAPTR
		v, err = p.NAPTR()
		names = append(names, v.Replacement)
	case TypeTXT, TypeSPF:
		_, err = p.TXT()
	case TypeCAA:
		_, err = p.CAA()
	case TypeHINFO:
		_, err = p.HINFO()
	case TypeLOC:
		_, err = p.LOC()
	case TypeSSHFP:
		_, err = p.SSHFP()
	case TypeDNSKEY:
		_, err = p.DNSKEY()
	case TypeDS:
		_, err = p.DS()
	case TypeRRSIG:
		var v RRSIG
		v, err = p.RRSIG()
		names = append(names, v.SignerName)
	case TypeNSEC:
		var v NSEC
		v, err = p.NSEC()
		names = append(names, v.NextName)
	case TypeNSEC3:
		_, err = p.NSEC3()
	case TypeNSEC3PARAM:
		_, err = p.NSEC3PARAM()
	case TypeTKEY:
		var v TKEY
		v, err = p.TKEY()
		names = append(names, v.Algorithm)
	case TypeTSIG:
		var v TSIG
		v, err = p.TSIG()
		names = append(names, v.Algorithm)
	case TypeSVCB, TypeHTTPS:
		var v SVCB
		v, err = p.SVCB()
		names = append(names, v.Target)
	case TypeWKS:
		_, err = p.WKS()
	case TypeOPT:
		_, err = p.OPT()
	}
	if err == nil {
		for _, n := range names {
			n.AppendText(nil) // a checked name renders without trouble
		}
	}
	return err
}

// decodeList lists what m.Decode found as typedWalk lists it.
func decodeList(m *Message, msg []byte) (string, error) {
	var sb strings.Builder
	err := m.Decode(msg)
	for _, q := range m.Questions {
		fmt.Fprintf(&sb, "Q %d %d %d\n", q.Name.Offset(), q.Type, q.Class)
	}
	for i, r := range m.Records {
		if derr := typedData(m.Data(i), r.Type); derr != nil {
			return "", fmt.Errorf("record %d decoded but its data does not: %v", i, derr)
		}
		fmt.Fprintf(&sb, "R %d %d %d %d %d %d %d\n", r.Section, r.Name.Offset(), r.Type, r.Class, r.TTL, r.Length, r.Offset)
	}
	return sb.String(), err
}

// sameError reports whether two errors are the same *Error (or both nil).
func sameError(a, b error) bool {
	var ea, eb *Error
	if errors.As(a, &ea) != errors.As(b, &eb) {
		return false
	}
	if ea == nil {
		return (a == nil) == (b == nil)
	}
	return *ea == *eb
}

// checkDecodeMatchesPull checks that Message.Decode reads msg as the pull
// Parser with the typed decoders does, with the name cache and without.
func checkDecodeMatchesPull(t *testing.T, msg []byte) {
	t.Helper()
	var p, pu Parser
	pu.uncached = true
	want, werr := typedWalk(&p, msg)
	wantU, werrU := typedWalk(&pu, msg)
	var m, mu Message
	mu.p.uncached = true
	got, gerr := decodeList(&m, msg)
	gotU, gerrU := decodeList(&mu, msg)
	if want != wantU || !sameError(werr, werrU) {
		t.Fatalf("% x\nthe name cache changes the parse:\n%s%v\nwithout it:\n%s%v", msg, want, werr, wantU, werrU)
	}
	if got != want || !sameError(gerr, werr) || gotU != want || !sameError(gerrU, werr) {
		t.Fatalf("% x\nDecode:\n%s%v\npull Parser:\n%s%v", msg, got, gerr, want, werr)
	}
}

func TestDecodeMatchesPull(t *testing.T) {
	for _, msg := range append(mix(t, 400), typicalQuery(t), typicalReply(t), dnssecReply(t)) {
		checkDecodeMatchesPull(t, msg)
	}
	for _, tt := range malformedMessages() {
		checkDecodeMatchesPull(t, tt.msg)
	}
}

// TestNameCache builds messages dense with compression pointers, valid and
// not, and checks that remembering checked names changes nothing.
func TestNameCache(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 3000; i++ {
		checkDecodeMatchesPull(t, pointerSoup(rng))
	}
}

// pointerSoup returns a message of a few questions and records whose names
// are labels and pointers to earlier offsets: mostly to where earlier
// names start (the names the parser remembers), else to where their
// labels start, sometimes anywhere; names run long (up to and past the 255
// bytes a name may have), owners sometimes point to the previous owner in
// long chains (up to and past the bound on pointers), and now and then a
// byte is damaged.
func pointerSoup(rng *rand.Rand) []byte {
	qd, an := 1+rng.Intn(2), rng.Intn(12)
	chain := rng.Intn(4) == 0
	if chain {
		an = 100 + rng.Intn(60)
	}
	msg := hdr(uint16(rng.Intn(1<<16)), 0x8180, uint16(qd), uint16(an), 0, 0)
	var fields, labels []int // where names and their labels start
	long := rng.Intn(3) == 0
	name := func() {
		earlier, earlierLabels := len(fields), len(labels)
		fields = append(fields, len(msg))
		for n := rng.Intn(5); ; n-- {
			if n <= 0 || rng.Intn(6) == 0 {
				var target int
				switch r := rng.Intn(40); {
				case earlier > 0 && r < 20:
					target = fields[rng.Intn(earlier)]
				case earlierLabels > 0 && r < 32:
					target = labels[rng.Intn(earlierLabels)]
				case r == 32:
					target = rng.Intn(len(msg) + 2) // anywhere, even ahead
				default:
					msg = append(msg, 0)
					return
				}
				msg = append(msg, 0xc0|byte(target>>8), byte(target))
				return
			}
			labels = append(labels, len(msg))
			l := 1 + rng.Intn(4)
			if long && rng.Intn(3) == 0 || rng.Intn(40) == 0 {
				l = 40 + rng.Intn(24)
			}
			msg = append(msg, byte(l))
			for range l {
				b := 'a' + byte(rng.Intn(26))
				switch rng.Intn(50) {
				case 0:
					b = 'A' + byte(rng.Intn(26))
				case 1:
					b = []byte{0, '\\', '.', 0x7f, 0xc0, 0xff}[rng.Intn(6)]
				}
				msg = append(msg, b)
			}
		}
	}
	for range qd {
		name()
		msg = append(msg, 0, 1, 0, 1)
	}
	types := []uint16{TypeA, TypeCNAME, TypeNS, TypeMX, TypeSOA, TypeRRSIG, TypeSRV, TypeTXT, 0xff00}
	prevOwner := fields[len(fields)-1]
	for range an {
		if chain && rng.Intn(20) > 0 {
			owner := len(msg)
			msg = append(msg, 0xc0|byte(prevOwner>>8), byte(prevOwner))
			prevOwner = owner
		} else {
			name()
		}
		typ := types[rng.Intn(len(types))]
		msg = append(msg, byte(typ>>8), byte(typ), 0, 1, 0, 0, 0, 60, 0, 0)
		lenAt := len(msg) - 2
		start := len(msg)
		switch typ {
		case TypeA:
			msg = append(msg, 192, 0, 2, 1)
		case TypeMX:
			msg = append(msg, 0, 10)
			name()
		case TypeSRV:
			msg = append(msg, 0, 1, 0, 2, 0, 3)
			name()
		case TypeSOA:
			name()
			name()
			msg = append(msg, make([]byte, 20)...)
		case TypeRRSIG:
			msg = append(msg, 0, 1, 8, 2, 0, 0, 0, 60, 0, 0, 0, 1, 0, 0, 0, 2, 0, 3)
			name()
			msg = append(msg, 1, 2, 3)
		case TypeTXT:
			msg = append(msg, 2, 'h', 'i')
		default:
			name()
		}
		n := len(msg) - start
		if rng.Intn(15*an) == 0 {
			n += rng.Intn(3) - 1
		}
		msg[lenAt], msg[lenAt+1] = byte(n>>8), byte(n)
	}
	if rng.Intn(6) == 0 {
		msg[12+rng.Intn(len(msg)-12)] ^= byte(1 << rng.Intn(8))
	}
	return msg
}

func TestDecodeAllocs(t *testing.T) {
	msgs := append(mix(t, 200), dnssecReply(t))
	var m Message
	for _, msg := range msgs {
		m.Decode(msg)
	}
	n := testing.AllocsPerRun(20, func() {
		for _, msg := range msgs {
			m.Decode(msg)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per round, want 0", n)
	}
}

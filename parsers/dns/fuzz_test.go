package dns

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	mdns "github.com/miekg/dns"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

func addSeeds(f *testing.F) {
	f.Add(typicalQuery(f))
	f.Add(typicalReply(f))
	f.Add(dnssecReply(f))
	for _, m := range mix(f, 40) {
		f.Add(m)
	}
}

// FuzzParse: no input makes the parser or the analyzer panic or loop, a
// message the parser walks without error also renders, Message.Decode reads
// it as the pull Parser does (and both read it the same with the name cache
// and without), the analyzer's rendering of answers checks them as the
// typed decoders do, and feeding it over TCP in two pieces gives what
// feeding it whole gives.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkDecodeMatchesPull(t, msg)
		checkZeekAnswers(t, msg)
		if err := walk(msg); err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(msg) {
				t.Fatalf("error %v is not an *Error within the message", err)
			}
		}
		var r1, r2 recorder
		a1, a2 := New(&r1), New(&r2)
		key := flow.Key{Orig: client, Resp: server, Proto: flow.ProtoTCP}
		cp := a1.Open(&parsers.Conn{Kind: parsers.Block, Key: key})
		cp.Resp().Feed(msg)
		cp.Close()
		framed := frame(msg)
		cp = a2.Open(&parsers.Conn{Kind: parsers.Stream, Key: key})
		cp.Resp().Feed(framed[:len(framed)/2])
		cp.Resp().Feed(framed[len(framed)/2:])
		cp.Close()
		if len(msg) <= 0xffff && len(r1.got) != len(r2.got) {
			t.Fatalf("block gave %d transactions, stream %d", len(r1.got), len(r2.got))
		}
		// Without the name cache, the answers' own paths for runs of
		// address records never apply: the records take the general one.
		var r3 recorder
		a3 := New(&r3)
		cp = a3.Open(&parsers.Conn{Kind: parsers.Block, Key: key})
		cp.(*connState).p.uncached = true
		cp.Resp().Feed(msg)
		cp.Close()
		if got, want := fmt.Sprint(r1.got), fmt.Sprint(r3.got); got != want || a1.Stats() != a3.Stats() {
			t.Fatalf("with the name cache: %s %+v\nwithout: %s %+v", got, a1.Stats(), want, a3.Stats())
		}
		if bad := append(r1.notPlain, r2.notPlain...); len(bad) > 0 {
			t.Fatalf("texts marked plain are not: %q", bad)
		}
	})
}

// FuzzDifferential compares the parser with miekg/dns's Msg.Unpack on
// messages both accept: header fields, the question, the rcode, the record
// counts, and the rendering of addresses and names.
//
// Deliberate differences, excluded by accepting only what both accept:
// miekg/dns follows forward compression pointers (this parser requires
// backward ones, as Zeek does) and accepts some record data this parser
// finds malformed (an A record of 0 bytes, trailing bytes after a name in
// CNAME data); this parser accepts record types miekg/dns does not know and
// trailing bytes after the last section. Addresses are compared as bytes
// because net.IP prints IPv4-mapped IPv6 addresses as IPv4.
func FuzzDifferential(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, msg []byte) {
		if walk(msg) != nil {
			return
		}
		m := new(mdns.Msg)
		if err := m.Unpack(msg); err != nil {
			return
		}
		var p Parser
		h, _ := p.Start(msg)
		if h.ID != m.Id || h.Response != m.Response || int(h.Opcode) != m.Opcode ||
			h.Authoritative != m.Authoritative || h.Truncated != m.Truncated ||
			h.RecursionDesired != m.RecursionDesired || h.RecursionAvailable != m.RecursionAvailable ||
			h.AuthenticData() != m.AuthenticatedData || h.CheckingDisabled() != m.CheckingDisabled ||
			(h.Z&4 != 0) != m.Zero {
			t.Fatalf("header %+v vs miekg %+v", h, m.MsgHdr)
		}
		if int(h.QDCount) != len(m.Question) || int(h.ANCount) != len(m.Answer) ||
			int(h.NSCount) != len(m.Ns) || int(h.ARCount) != len(m.Extra) {
			t.Fatalf("counts %+v vs miekg %d/%d/%d/%d", h, len(m.Question), len(m.Answer), len(m.Ns), len(m.Extra))
		}
		for _, mq := range m.Question {
			q, err := p.Question()
			if err != nil {
				t.Fatal(err)
			}
			if q.Name.String() != mq.Name || q.Type != mq.Qtype || q.Class != mq.Qclass {
				t.Fatalf("question %s %d %d vs miekg %s %d %d", q.Name, q.Type, q.Class, mq.Name, mq.Qtype, mq.Qclass)
			}
		}
		rcode := int(h.RCode)
		all := append(append(append([]mdns.RR(nil), m.Answer...), m.Ns...), m.Extra...)
		for _, mrr := range all {
			rh, err := p.ResourceHeader()
			if err != nil {
				t.Fatal(err)
			}
			mh := mrr.Header()
			if rh.Name.String() != mh.Name || rh.Type != mh.Rrtype {
				t.Fatalf("record %s %d vs miekg %s %d", rh.Name, rh.Type, mh.Name, mh.Rrtype)
			}
			// miekg/dns takes EDNS0 from the last OPT of the additional
			// section only (an OPT elsewhere is not EDNS0).
			if rh.Type == TypeOPT && rh.Section == SectionAdditional {
				rcode = int(rh.EDNS().FullRCode(h))
			}
			compareData(t, &p, rh, mrr)
		}
		if rcode != m.Rcode {
			t.Fatalf("rcode %d vs miekg %d", rcode, m.Rcode)
		}
	})
}

func compareData(t *testing.T, p *Parser, rh ResourceHeader, mrr mdns.RR) {
	t.Helper()
	var got, want string
	switch rr := mrr.(type) {
	case *mdns.A:
		a, err := p.A()
		if err != nil {
			t.Fatal(err)
		}
		want4, _ := netip.AddrFromSlice(rr.A.To4())
		got, want = netip.AddrFrom4(a).String(), want4.String()
	case *mdns.AAAA:
		a, err := p.AAAA()
		if err != nil {
			t.Fatal(err)
		}
		want16, _ := netip.AddrFromSlice(rr.AAAA.To16())
		got, want = netip.AddrFrom16(a).String(), want16.String()
	case *mdns.CNAME:
		n, _ := p.NameData()
		got, want = n.String(), rr.Target
	case *mdns.NS:
		n, _ := p.NameData()
		got, want = n.String(), rr.Ns
	case *mdns.PTR:
		n, _ := p.NameData()
		got, want = n.String(), rr.Ptr
	case *mdns.MX:
		v, _ := p.MX()
		got, want = v.Exchange.String(), rr.Mx
	case *mdns.TXT:
		v, _ := p.TXT()
		var n int
		for s, rest, ok := v.Next(); ok; s, rest, ok = rest.Next() {
			if n >= len(rr.Txt) || len(s) == 0 && rr.Txt[n] != "" {
				t.Fatalf("TXT string %d %q vs miekg %q", n, s, rr.Txt)
			}
			n++
		}
		if n != len(rr.Txt) {
			t.Fatalf("TXT has %d strings, miekg %d", n, len(rr.Txt))
		}
		return
	default:
		return
	}
	if !bytes.Equal([]byte(got), []byte(want)) {
		t.Fatalf("%s data %q vs miekg %q", TypeName(rh.Type), got, want)
	}
}

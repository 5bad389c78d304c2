package dns

import (
	"errors"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	mdns "github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// The benchmarks run five parsers over the same named workloads, one
// message per op, in one run so their ratios can be compared:
//
//   - native: what the Analyzer does per message for dns.log: a block
//     connection is opened, the message is parsed (header, questions,
//     answers decoded and rendered as Zeek renders them; authority and
//     additional sections skipped as Zeek skips them), its transaction is
//     assembled and reported to a sink, and the connection is closed.
//   - native-walk: the Parser alone walking every section, decoding the
//     typed data of every record and rendering every name (the work the
//     peers below do).
//   - miekg: miekg/dns Msg.Unpack into a reused Msg (every section, every
//     record as a Go value, names as strings).
//   - dnsmessage: golang.org/x/net/dns/dnsmessage, a full walk: every
//     question and record header, typed bodies of the types it knows,
//     UnknownResource for the others.
//   - gopacket: gopacket layers.DNS DecodeFromBytes on a reused layer
//     (every section decoded, names copied into the layer's buffer).
//
// Workloads: query (a stub's A query with EDNS0 and a cookie), reply (an A
// answer through a two-step CNAME chain, compressed), dnssec (a DNSKEY
// reply with two keys and two RRSIGs), mix10k (10,000 messages of a
// resolver's traffic, cycled through).

type workload struct {
	name string
	msgs [][]byte
}

func workloads(b *testing.B) []workload {
	return []workload{
		{"query", [][]byte{typicalQuery(b)}},
		{"reply", [][]byte{typicalReply(b)}},
		{"dnssec", [][]byte{dnssecReply(b)}},
		{"mix10k", mix(b, 10000)},
	}
}

type peer struct {
	name string
	// setup returns the per-message function, with its state allocated once.
	setup func(b *testing.B) func(msg []byte) error
}

var peers = []peer{
	{"native", func(b *testing.B) func([]byte) error {
		a := New(discard{})
		c := &parsers.Conn{Kind: parsers.Block, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoUDP}}
		return func(msg []byte) error {
			cp := a.Open(c)
			cp.Resp().Feed(msg)
			cp.Close()
			return nil
		}
	}},
	{"native-walk", func(b *testing.B) func([]byte) error {
		p := new(Parser)
		buf := make([]byte, 0, 1024)
		return func(msg []byte) error { return walkAll(p, msg, buf) }
	}},
	{"miekg", func(b *testing.B) func([]byte) error {
		m := new(mdns.Msg)
		return m.Unpack
	}},
	{"dnsmessage", func(b *testing.B) func([]byte) error {
		p := new(dnsmessage.Parser)
		return func(msg []byte) error { return dnsmessageWalk(p, msg) }
	}},
	{"gopacket", func(b *testing.B) func([]byte) error {
		d := new(layers.DNS)
		return func(msg []byte) error { return d.DecodeFromBytes(msg, gopacket.NilDecodeFeedback) }
	}},
}

func BenchmarkParse(b *testing.B) {
	for _, w := range workloads(b) {
		size := 0
		for _, m := range w.msgs {
			size += len(m)
		}
		for _, pe := range peers {
			b.Run(w.name+"/"+pe.name, func(b *testing.B) {
				parse := pe.setup(b)
				for _, m := range w.msgs { // warm up, and check every peer accepts the workload
					if err := parse(m); err != nil {
						b.Fatalf("%s: %v", pe.name, err)
					}
				}
				b.SetBytes(int64(size / len(w.msgs)))
				b.ReportAllocs()
				b.ResetTimer()
				msgs := w.msgs
				for i := 0; i < b.N; i++ {
					parse(msgs[i%len(msgs)])
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}

// walkAll decodes every part of msg: the native parser's full walk.
func walkAll(p *Parser, msg, buf []byte) error {
	if _, err := p.Start(msg); err != nil {
		return err
	}
	for {
		q, err := p.Question()
		if err != nil {
			if errors.Is(err, ErrSectionDone) {
				break
			}
			return err
		}
		buf = q.Name.AppendText(buf[:0])
	}
	for {
		rh, err := p.ResourceHeader()
		if err != nil {
			if errors.Is(err, ErrSectionDone) {
				return nil
			}
			return err
		}
		buf = rh.Name.AppendText(buf[:0])
		if err := decodeAny(p, rh, buf); err != nil {
			return err
		}
	}
}

// decodeAny decodes the typed data of any record, rendering its names.
func decodeAny(p *Parser, rh ResourceHeader, buf []byte) error {
	switch rh.Type {
	case TypeA:
		_, err := p.A()
		return err
	case TypeAAAA:
		_, err := p.AAAA()
		return err
	case TypeCNAME, TypeNS, TypePTR, TypeDNAME:
		n, err := p.NameData()
		n.AppendText(buf[:0])
		return err
	case TypeMX:
		v, err := p.MX()
		v.Exchange.AppendText(buf[:0])
		return err
	case TypeSOA:
		v, err := p.SOA()
		v.MName.AppendText(buf[:0])
		v.RName.AppendText(buf[:0])
		return err
	case TypeTXT, TypeSPF:
		_, err := p.TXT()
		return err
	case TypeRRSIG:
		v, err := p.RRSIG()
		v.SignerName.AppendText(buf[:0])
		return err
	case TypeDNSKEY:
		_, err := p.DNSKEY()
		return err
	case TypeOPT:
		_, err := p.OPT()
		return err
	}
	_, err := p.RData()
	return err
}

func dnsmessageWalk(p *dnsmessage.Parser, msg []byte) error {
	if _, err := p.Start(msg); err != nil {
		return err
	}
	for {
		_, err := p.Question()
		if err == dnsmessage.ErrSectionDone {
			break
		}
		if err != nil {
			return err
		}
	}
	next := []func() (dnsmessage.ResourceHeader, error){p.AnswerHeader, p.AuthorityHeader, p.AdditionalHeader}
	for _, header := range next {
		for {
			h, err := header()
			if err == dnsmessage.ErrSectionDone {
				break
			}
			if err != nil {
				return err
			}
			switch h.Type {
			case dnsmessage.TypeA:
				_, err = p.AResource()
			case dnsmessage.TypeAAAA:
				_, err = p.AAAAResource()
			case dnsmessage.TypeCNAME:
				_, err = p.CNAMEResource()
			case dnsmessage.TypeNS:
				_, err = p.NSResource()
			case dnsmessage.TypePTR:
				_, err = p.PTRResource()
			case dnsmessage.TypeMX:
				_, err = p.MXResource()
			case dnsmessage.TypeSOA:
				_, err = p.SOAResource()
			case dnsmessage.TypeTXT:
				_, err = p.TXTResource()
			case dnsmessage.TypeSRV:
				_, err = p.SRVResource()
			case dnsmessage.TypeOPT:
				_, err = p.OPTResource()
			default:
				_, err = p.UnknownResource()
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

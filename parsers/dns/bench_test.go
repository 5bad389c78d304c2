package dns

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	mdns "github.com/miekg/dns"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/internal/threadcpu"
)

// The benchmarks come in two tiers, one message per op, all in one run so
// that their ratios can be compared (run them interleaved, -count 1 in a
// loop, on a noisy machine):
//
// BenchmarkParse, "parse": decoding a message the way a full decoder does,
// every section, every record:
//
//   - native: Message.Decode into a reused Message: the header, every
//     question and every resource record header into reused slices,
//     every name checked (labels, compression pointers, length), and the
//     data of every type with a typed decoder checked against its
//     RDLENGTH as that decoder checks it (A, AAAA, CNAME, NS, PTR, DNAME,
//     MX, SOA, SRV, TXT, OPT options, RRSIG, DNSKEY, DS, ... all of them).
//     Names come back as checked references into the message, not as
//     text: that is the parser's output, and text is made only when asked
//     for.
//   - native-pull: the same work through the pull Parser (Start,
//     Question, ResourceHeader and the typed decoders of the common
//     types, each returning its values).
//   - native-text: native, plus every name rendered as text (presentation
//     format, as dig and miekg/dns print it) into a reused buffer: the
//     owner names, and the names in the data of CNAME, NS, PTR, MX, SOA,
//     SRV and RRSIG records; the closest match of what gopacket and
//     dnsmessage copy out.
//   - gopacket: gopacket layers.DNS DecodeFromBytes on a reused layer:
//     every section into reused slices, names decompressed and copied into
//     the layer's reused buffer as dotted text, A/AAAA/CNAME/NS/PTR/MX/SOA/
//     SRV/TXT/OPT data decoded (TXT strings and OPT options into new
//     slices), other types kept as raw bytes.
//   - dnsmessage: golang.org/x/net/dns/dnsmessage, a full walk with a
//     reused Parser: every question and record header (each name
//     decompressed into a 255-byte array), typed bodies of the types it
//     knows (A, AAAA, CNAME, NS, PTR, MX, SOA, TXT, SRV, OPT), the others
//     as UnknownResource.
//   - miekg: miekg/dns Msg.Unpack into a reused Msg: every record as a Go
//     value, names as strings.
//
// The targets of the parse tier are native >= 3x gopacket and >= 18x
// miekg, with no allocation; BenchmarkParseRatio measures those ratios in
// one run, with the peers taking turns (see there).
//
// BenchmarkAnalyze, "analyze": what the Analyzer really costs per message
// for dns.log, in steady state: the header decides the transaction
// (pairing by id), the question name is rendered as Zeek logs it, the
// answers are decoded and rendered (authority and additional sections are
// skipped, as Zeek skips them), and each finished transaction goes to a
// sink that discards it. Queries go to the originator side and replies to
// the responder side.
//
//   - keep: one connection carries every transaction, as between a
//     resolver and its forwarder or on DNS over TCP.
//   - conn: a connection per transaction (open, query, reply, close), as
//     stub resolvers' random source ports make it on UDP.
//
// Workloads: query (a stub's A query with EDNS0 and a cookie), reply (an A
// answer through a two-step CNAME chain, compressed), dnssec (a DNSKEY
// reply with two keys and two RRSIGs), mix10k (10,000 messages of a
// resolver's traffic, queries and their replies in turn, cycled through).
// The analyze tier runs txn (query and then reply), dnssec (its query and
// then the reply) and mix10k.

type workload struct {
	name string
	msgs [][]byte
}

func parseWorkloads(b *testing.B) []workload {
	return []workload{
		{"query", [][]byte{typicalQuery(b)}},
		{"reply", [][]byte{typicalReply(b)}},
		{"dnssec", [][]byte{dnssecReply(b)}},
		{"mix10k", mix(b, 10000)},
	}
}

func analyzeWorkloads(b *testing.B) []workload {
	dr := dnssecReply(b)
	dq := new(mdns.Msg)
	if err := dq.Unpack(dr); err != nil {
		b.Fatal(err)
	}
	dq.Response, dq.RecursionAvailable, dq.AuthenticatedData = false, false, false
	dq.Answer = nil
	dq.Extra = nil
	withOPT(dq, true)
	return []workload{
		{"txn", [][]byte{typicalQuery(b), typicalReply(b)}},
		{"dnssec", [][]byte{packMsg(b, dq), dr}},
		{"mix10k", mix(b, 10000)},
	}
}

type peer struct {
	name string
	// setup returns the per-message function, with its state allocated once.
	setup func(b *testing.B) func(msg []byte) error
}

var parsePeers = []peer{
	{"native", func(b *testing.B) func([]byte) error {
		m := new(Message)
		return m.Decode
	}},
	{"native-pull", func(b *testing.B) func([]byte) error {
		p := new(Parser)
		return func(msg []byte) error { return walkTyped(p, msg, nil) }
	}},
	{"native-text", func(b *testing.B) func([]byte) error {
		m := new(Message)
		buf := make([]byte, 0, 512)
		return func(msg []byte) error { return decodeText(m, msg, &buf) }
	}},
	{"gopacket", func(b *testing.B) func([]byte) error {
		d := new(layers.DNS)
		return func(msg []byte) error { return d.DecodeFromBytes(msg, gopacket.NilDecodeFeedback) }
	}},
	{"dnsmessage", func(b *testing.B) func([]byte) error {
		p := new(dnsmessage.Parser)
		return func(msg []byte) error { return dnsmessageWalk(p, msg) }
	}},
	{"miekg", func(b *testing.B) func([]byte) error {
		m := new(mdns.Msg)
		return m.Unpack
	}},
}

// BenchmarkParse is the parse tier (see above).
func BenchmarkParse(b *testing.B) {
	for _, w := range parseWorkloads(b) {
		for _, pe := range parsePeers {
			b.Run(w.name+"/"+pe.name, func(b *testing.B) {
				parse := pe.setup(b)
				for _, m := range w.msgs { // warm up, and check every peer accepts the workload
					if err := parse(m); err != nil {
						b.Fatalf("%s: %v", pe.name, err)
					}
				}
				runMessages(b, w.msgs, func(m []byte) { parse(m) })
			})
		}
	}
}

// BenchmarkParseRatio measures the parse tier's targets the way a busy
// machine allows: native, gopacket and miekg take turns on batches of the
// workload's messages, each batch timed by the thread's CPU time, and the
// fastest batch of each peer gives its cost per message (reported as
// native-ns, gopacket-ns, miekg-ns) and the ratios gopacket/native and
// miekg/native. Load from other processes slows batches down, never up, so
// the fastest batches are the fairest comparison; taking turns lets drifts
// in load hit all three alike. Each peer's batch starts with its messages
// in the cache. An op is one message through each peer, so B/op and
// allocs/op are gopacket's and miekg's together (BenchmarkParse shows each
// peer's own).
func BenchmarkParseRatio(b *testing.B) {
	const batch = 500
	peers := []string{"native", "gopacket", "miekg"}
	for _, w := range parseWorkloads(b) {
		b.Run(w.name, func(b *testing.B) {
			if _, ok := threadcpu.Now(); !ok {
				b.Skip("the thread's CPU time is not available here")
			}
			var parse []func([]byte) error
			for _, name := range peers {
				for _, pe := range parsePeers {
					if pe.name == name {
						parse = append(parse, pe.setup(b))
					}
				}
			}
			for _, m := range w.msgs {
				for _, fn := range parse {
					fn(m)
				}
			}
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			best := []float64{math.Inf(1), math.Inf(1), math.Inf(1)}
			b.ReportAllocs()
			b.ResetTimer()
			for done, j0 := 0, 0; done < b.N; done += batch {
				n := min(batch, b.N-done)
				for k, fn := range parse {
					warm(w.msgs, j0, n) // the peer before must not have warmed them for this one
					j := j0
					c0, _ := threadcpu.Now()
					for range n {
						fn(w.msgs[j])
						if j++; j == len(w.msgs) {
							j = 0
						}
					}
					c1, _ := threadcpu.Now()
					if n == batch {
						best[k] = min(best[k], float64(c1-c0)/batch)
					}
				}
				j0 = (j0 + n) % len(w.msgs)
			}
			if math.IsInf(best[0], 1) {
				return // b.N too small for a whole batch
			}
			for k, name := range peers {
				b.ReportMetric(best[k], name+"-ns")
			}
			b.ReportMetric(best[1]/best[0], "gopacket/native")
			b.ReportMetric(best[2]/best[0], "miekg/native")
		})
	}
}

// warm reads the n messages of msgs from j on (cycling), so that they are
// in the cache.
func warm(msgs [][]byte, j, n int) {
	var sum byte
	for range n {
		for _, c := range msgs[j] {
			sum += c
		}
		if j++; j == len(msgs) {
			j = 0
		}
	}
	warmSink = sum
}

var warmSink byte

// BenchmarkAnalyze is the analyze tier (see above).
func BenchmarkAnalyze(b *testing.B) {
	conn := &parsers.Conn{Kind: parsers.Block, Key: flow.Key{Orig: client, Resp: server, Proto: flow.ProtoUDP}}
	for _, w := range analyzeWorkloads(b) {
		b.Run(w.name+"/keep", func(b *testing.B) {
			a := New(discard{})
			cp := a.Open(conn)
			feed := func(m []byte) {
				if m[2]&0x80 == 0 {
					cp.Orig().Feed(m)
				} else {
					cp.Resp().Feed(m)
				}
			}
			checkAnalyzer(b, a, w.msgs, feed)
			runMessages(b, w.msgs, feed)
			cp.Close()
		})
		b.Run(w.name+"/conn", func(b *testing.B) {
			a := New(discard{})
			var cp parsers.ConnParser
			feed := func(m []byte) {
				if m[2]&0x80 == 0 {
					if cp != nil {
						cp.Close()
					}
					cp = a.Open(conn)
					cp.Orig().Feed(m)
				} else {
					cp.Resp().Feed(m)
				}
			}
			checkAnalyzer(b, a, w.msgs, feed)
			runMessages(b, w.msgs, feed)
			cp.Close()
		})
	}
}

// checkAnalyzer warms the analyzer up with the workload and checks that
// every message was a well-formed part of a transaction with both sides.
func checkAnalyzer(b *testing.B, a *Analyzer, msgs [][]byte, feed func([]byte)) {
	for _, m := range msgs {
		feed(m)
	}
	st := a.Stats()
	if st.Malformed != 0 || st.Short != 0 || st.Messages != int64(len(msgs)) ||
		st.Transactions-st.Unanswered-st.Unsolicited != int64(len(msgs)/2) {
		b.Fatalf("workload does not pair up: %+v", st)
	}
}

// runMessages times fn over msgs, one message per op, cycling. Besides the
// wall-clock ns/op it reports cpu-ns/msg, the CPU time of the benchmark's
// thread per message, which other processes on a busy machine disturb far
// less.
func runMessages(b *testing.B, msgs [][]byte, fn func([]byte)) {
	size := 0
	for _, m := range msgs {
		size += len(m)
	}
	b.SetBytes(int64(size / len(msgs)))
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, cpuOK := threadcpu.Now()
	b.ResetTimer()
	for i, j := 0, 0; i < b.N; i++ {
		fn(msgs[j])
		if j++; j == len(msgs) {
			j = 0
		}
	}
	b.StopTimer()
	if cpu1, ok := threadcpu.Now(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/msg")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msg/s")
}

// walkTyped decodes every part of msg with the Parser; with text non-nil
// it also renders every name into *text.
func walkTyped(p *Parser, msg []byte, text *[]byte) error {
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
		renderName(text, q.Name)
	}
	for {
		rh, err := p.ResourceHeader()
		if err != nil {
			if errors.Is(err, ErrSectionDone) {
				return nil
			}
			return err
		}
		renderName(text, rh.Name)
		if err := decodeTyped(p, rh, text); err != nil {
			return err
		}
	}
}

// decodeText decodes msg into m and renders every name into *text.
func decodeText(m *Message, msg []byte, text *[]byte) error {
	if err := m.Decode(msg); err != nil {
		return err
	}
	for _, q := range m.Questions {
		renderName(text, q.Name)
	}
	for i, r := range m.Records {
		renderName(text, r.Name)
		var err error
		switch p := m.Data(i); r.Type {
		case TypeCNAME, TypeNS, TypePTR:
			var n Name
			n, err = p.NameData()
			renderName(text, n)
		case TypeMX:
			var v MX
			v, err = p.MX()
			renderName(text, v.Exchange)
		case TypeSOA:
			var v SOA
			v, err = p.SOA()
			renderName(text, v.MName)
			renderName(text, v.RName)
		case TypeSRV:
			var v SRV
			v, err = p.SRV()
			renderName(text, v.Target)
		case TypeRRSIG:
			var v RRSIG
			v, err = p.RRSIG()
			renderName(text, v.SignerName)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func renderName(text *[]byte, n Name) {
	if text != nil {
		*text = n.AppendText((*text)[:0])
	}
}

// decodeTyped decodes the typed data of the current record when its type
// is a common one, and skips it otherwise.
func decodeTyped(p *Parser, rh ResourceHeader, text *[]byte) error {
	switch rh.Type {
	case TypeA:
		_, err := p.A()
		return err
	case TypeAAAA:
		_, err := p.AAAA()
		return err
	case TypeCNAME, TypeNS, TypePTR, TypeDNAME:
		n, err := p.NameData()
		renderName(text, n)
		return err
	case TypeMX:
		v, err := p.MX()
		renderName(text, v.Exchange)
		return err
	case TypeSOA:
		v, err := p.SOA()
		renderName(text, v.MName)
		renderName(text, v.RName)
		return err
	case TypeSRV:
		v, err := p.SRV()
		renderName(text, v.Target)
		return err
	case TypeTXT, TypeSPF:
		_, err := p.TXT()
		return err
	case TypeOPT:
		_, err := p.OPT()
		return err
	case TypeRRSIG:
		v, err := p.RRSIG()
		renderName(text, v.SignerName)
		return err
	case TypeDNSKEY:
		_, err := p.DNSKEY()
		return err
	case TypeDS:
		_, err := p.DS()
		return err
	case TypeNSEC:
		v, err := p.NSEC()
		renderName(text, v.NextName)
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

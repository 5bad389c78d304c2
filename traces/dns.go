package traces

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// DNS exchanges. A client asks a resolver one question over UDP (a stub
// resolver sometimes asks for A and AAAA at once from one socket) and gets
// an answer, NXDOMAIN, SERVFAIL or REFUSED, or nothing. Replies are built
// with miekg/dns and compressed as servers compress them. A reply larger
// than the client's EDNS0 buffer (512 bytes without EDNS0) or the server's
// limit goes out empty with TC set, and the client asks again over TCP on
// port 53. Replies larger than the link MTU are fragmented by the server's
// IP layer.

// dgram is a scheduled UDP datagram.
type dgram struct {
	at   int64
	dir  int
	data []byte
}

// dnsSession is one DNS exchange over UDP, with a TCP retry when the
// reply was truncated.
type dnsSession struct {
	r   rng
	g   *gen
	e   endpoints
	pk  [4]dgram
	n   int
	i   int
	tcp *tcpConn
}

func (s *dnsSession) at() int64 {
	if s.i < s.n {
		return s.pk[s.i].at
	}
	return s.tcp.at()
}

func (s *dnsSession) done() bool { return s.i >= s.n && (s.tcp == nil || s.tcp.done()) }

func (s *dnsSession) step() {
	if s.i >= s.n {
		s.tcp.step()
		return
	}
	p := &s.pk[s.i]
	s.i++
	g := s.g
	b := g.f.udp(&s.e, p.dir, len(p.data))
	copy(b, p.data)
	g.f.finish()
	g.truth.DNSUDPBytes.add(p.dir, len(p.data))
	frag := !s.e.v6 && len(p.data)+28 > impairMTU && s.r.chance(g.cfg.Impair.Fragment)
	g.writeFrame(p.at, p.dir, frag, false)
}

// Outcomes of a DNS exchange.
const (
	dnsAnswer = iota
	dnsNoData
	dnsNXDomain
	dnsServFail
	dnsRefused
	dnsNoReply
)

var dnsQtypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeHTTPS, dns.TypeMX, dns.TypeTXT, dns.TypePTR,
	dns.TypeSRV, dns.TypeSOA, dns.TypeNS, dns.TypeDNSKEY, dns.TypeDS, dns.TypeSVCB, dns.TypeCNAME}
var dnsQtypeWeights = []int{380, 220, 80, 40, 60, 60, 25, 20, 20, 30, 15, 10, 20}

// dnsQuery is what a client asks and how it asks.
type dnsQuery struct {
	name    string
	zone    string
	qtype   uint16
	edns    bool
	bufSize uint16
	do      bool
	cookie  bool
	big     bool // an answer too large for 512 bytes
}

func (g *gen) newDNS(r rng, t int64) session {
	s := &dnsSession{r: r, g: g}
	rr := &s.r
	srv := 1000 + rr.intn(3)
	s.e = g.endpoints(rr, protoUDP, srv, 53)
	g.truth.UDPFlows++
	serverMax := uint16(1232)
	if srv == 1002 {
		serverMax = 4096 // an old resolver that lets replies fragment
	}
	q := s.pickQuery()
	outcome := []int{dnsAnswer, dnsNoData, dnsNXDomain, dnsServFail, dnsRefused, dnsNoReply}[rr.pick([]int{800, 40, 100, 25, 10, 25})]
	rtt := rr.between64(100_000, 40_000_000)
	if rr.pct(30) {
		rtt = rr.between64(20_000_000, 400_000_000) // recursion
	}

	// A stub resolver asks for A and AAAA together.
	pair := q.qtype == dns.TypeA && outcome != dnsNoReply && rr.pct(35)
	qm := s.query(&q)
	s.add(t, dirC, qm)
	if pair {
		q6 := q
		q6.qtype = dns.TypeAAAA
		qm6 := s.query(&q6)
		s.add(t+rr.between64(20_000, 200_000), dirC, qm6)
		s.answer(qm, &q, outcome, serverMax, t+rtt, false)
		s.answer(qm6, &q6, outcome, serverMax, t+rtt+rr.between64(10_000, 3_000_000), false)
		return s
	}
	if outcome == dnsNoReply {
		g.truth.DNSUnanswered++
		return s
	}
	if tc := s.answer(qm, &q, outcome, serverMax, t+rtt, true); tc != nil {
		s.retryTCP(tc, &q, outcome, t+rtt)
	}
	return s
}

// add schedules a datagram carrying m.
func (s *dnsSession) add(at int64, dir int, m *dns.Msg) []byte {
	b := s.pack(m)
	s.pk[s.n] = dgram{at: at, dir: dir, data: b}
	s.n++
	return b
}

// pack packs m and counts it in the truth.
func (s *dnsSession) pack(m *dns.Msg) []byte {
	b, err := m.Pack()
	if err != nil {
		panic("traces: packing a DNS message: " + err.Error())
	}
	t := &s.g.truth
	if m.Response {
		t.DNSResponses++
		t.DNSRcodes[dns.RcodeToString[m.Rcode]]++
	} else {
		t.DNSQueries++
		t.DNSQtypes[dns.TypeToString[m.Question[0].Qtype]]++
	}
	return b
}

// pickQuery chooses a question and how the client asks it.
func (s *dnsSession) pickQuery() dnsQuery {
	r := &s.r
	q := dnsQuery{qtype: dnsQtypes[r.pick(dnsQtypeWeights)]}
	q.zone = dnsZones[r.intn(len(dnsZones))] + "."
	label := dnsLabels[r.intn(len(dnsLabels))]
	switch q.qtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeHTTPS, dns.TypeCNAME:
		if r.pct(30) {
			h := webHosts[r.intn(len(webHosts))]
			q.name = h + "."
			if i := strings.IndexByte(h, '.'); i >= 0 && strings.Count(h, ".") > 1 {
				q.zone = h[i+1:] + "."
			} else {
				q.zone = q.name
			}
		} else {
			q.name = label + "." + q.zone
		}
	case dns.TypeMX, dns.TypeNS, dns.TypeSOA, dns.TypeDNSKEY, dns.TypeDS:
		q.name = q.zone
	case dns.TypeTXT:
		q.name = []string{q.zone, "_dmarc." + q.zone, "selector1._domainkey." + q.zone}[r.intn(3)]
	case dns.TypePTR:
		if r.pct(70) {
			q.name = strconv.Itoa(r.between(1, 254)) + "." + strconv.Itoa(r.intn(256)) + ".51.198.in-addr.arpa."
		} else {
			var b strings.Builder
			for range 16 {
				b.WriteString(strconv.FormatInt(int64(r.intn(16)), 16))
				b.WriteByte('.')
			}
			b.WriteString("0.0.0.0.f.f.0.0.8.b.d.0.1.0.0.2.ip6.arpa.")
			q.name = b.String()
			q.zone = "8.b.d.0.1.0.0.2.ip6.arpa."
			break
		}
		q.zone = "51.198.in-addr.arpa."
	case dns.TypeSRV:
		q.name = []string{"_sip._tcp.", "_xmpp-client._tcp.", "_imaps._tcp.", "_ldap._tcp.dc._msdcs.", "_caldavs._tcp."}[r.intn(5)] + q.zone
	case dns.TypeSVCB:
		q.name = "_dns." + q.zone
	}
	if r.pct(3) {
		// A legacy client without EDNS0 asks for something big: the reply
		// is truncated and the client retries over TCP.
		q.qtype = []uint16{dns.TypeTXT, dns.TypeDNSKEY}[r.intn(2)]
		q.name, q.big = q.zone, true
		return q
	}
	if r.pct(85) {
		q.edns = true
		q.bufSize = 1232
		if r.pct(35) {
			q.bufSize = 4096
		}
		q.do = r.pct(30)
		q.cookie = r.pct(30)
	}
	return q
}

// query builds the query message for q.
func (s *dnsSession) query(q *dnsQuery) *dns.Msg {
	r := &s.r
	m := &dns.Msg{}
	m.Id = uint16(r.u64())
	m.RecursionDesired = true
	m.Question = []dns.Question{{Name: q.name, Qtype: q.qtype, Qclass: dns.ClassINET}}
	if q.edns {
		// A client cookie is 8 bytes (RFC 7873).
		m.Extra = append(m.Extra, s.opt(q, q.bufSize, 8))
	}
	return m
}

// opt is the OPT record of a message of q's session: UDP payload size
// size, q's DO bit, and a cookie of cookieLen random bytes when q sends
// cookies.
func (s *dnsSession) opt(q *dnsQuery, size uint16, cookieLen int) *dns.OPT {
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	o.SetUDPSize(size)
	o.SetDo(q.do)
	if q.cookie {
		c := make([]byte, cookieLen)
		s.r.fill(c)
		o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: hex.EncodeToString(c)})
	}
	return o
}

// answer schedules the reply to qm at time at. When the reply does not fit
// the UDP limit it goes out truncated; answer then returns the full reply
// (for the TCP retry) if retry is set.
func (s *dnsSession) answer(qm *dns.Msg, q *dnsQuery, outcome int, serverMax uint16, at int64, retry bool) *dns.Msg {
	t := &s.g.truth
	m := s.reply(qm, q, outcome)
	limit := 512
	if q.edns {
		limit = int(min(q.bufSize, serverMax))
	}
	full, err := m.Pack()
	if err != nil {
		panic("traces: packing a DNS reply: " + err.Error())
	}
	t.DNSTransactions++
	if len(full) <= limit || !retry {
		if len(full) > limit {
			// Only A/AAAA replies go in pairs; they are small, but cap
			// them anyway rather than send an oversized datagram.
			m.Answer = m.Answer[:min(len(m.Answer), 4)]
			m.Ns, m.Extra = nil, optOnly(m.Extra)
		}
		s.add(at, dirS, m)
		return nil
	}
	tc := m.Copy()
	tc.Truncated = true
	tc.Answer, tc.Ns, tc.Extra = nil, nil, optOnly(m.Extra)
	tc.Compress = true
	s.add(at, dirS, tc)
	t.DNSTruncated++
	return m
}

func optOnly(extra []dns.RR) []dns.RR {
	for _, rr := range extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			return []dns.RR{rr}
		}
	}
	return nil
}

// retryTCP sets up the client's retry over TCP after a truncated reply
// captured at tcAt.
func (s *dnsSession) retryTCP(full *dns.Msg, q *dnsQuery, outcome int, tcAt int64) {
	g := s.g
	r := &s.r
	e := s.e
	e.port[dirC] = g.nextPort(e.host)
	e.ipid[dirC] += uint16(r.between(1, 50))
	qm := s.query(q)
	full.Id = qm.Id
	app := &dnsTCPApp{r: r}
	app.msgs[0] = s.frameTCP(qm)
	app.msgs[1] = s.frameTCP(full)
	g.truth.DNSTCPMessages += 2
	g.truth.DNSTransactions++
	g.truth.TCPConnections++
	s.tcp = &tcpConn{}
	s.tcp.start(g, r, e, app, tcAt+r.between64(1_000_000, 60_000_000))
}

// frameTCP packs m with the two-byte length prefix of DNS over TCP and
// counts it.
func (s *dnsSession) frameTCP(m *dns.Msg) []byte {
	b := s.pack(m)
	out := make([]byte, 2+len(b))
	binary.BigEndian.PutUint16(out, uint16(len(b)))
	copy(out[2:], b)
	return out
}

// dnsTCPApp is one query and its answer over TCP; the client closes.
type dnsTCPApp struct {
	r     *rng
	msgs  [2][]byte
	stage int
	pos   int
}

func (a *dnsTCPApp) next(c *tcpConn) phase {
	a.stage++
	a.pos = 0
	switch a.stage {
	case 1:
		return phase{op: opSend, dir: dirC, delay: a.r.between64(10_000, 200_000)}
	case 2:
		return phase{op: opSend, dir: dirS, delay: a.r.between64(100_000, 30_000_000)}
	}
	return phase{op: opClose, dir: dirC, delay: a.r.between64(10_000, 500_000)}
}

func (a *dnsTCPApp) read(p []byte) (int, bool) {
	m := a.msgs[a.stage-1]
	n := copy(p, m[a.pos:])
	a.pos += n
	return n, a.pos == len(m)
}

func (a *dnsTCPApp) interior() int64 { return 0 }
func (a *dnsTCPApp) lost()           {}

// reply builds the server's reply to qm.
func (s *dnsSession) reply(qm *dns.Msg, q *dnsQuery, outcome int) *dns.Msg {
	r := &s.r
	m := &dns.Msg{}
	m.SetReply(qm)
	m.RecursionAvailable = true
	m.Compress = true
	switch outcome {
	case dnsNXDomain:
		m.Rcode = dns.RcodeNameError
		s.denial(m, q, true)
	case dnsServFail:
		m.Rcode = dns.RcodeServerFailure
	case dnsRefused:
		m.Rcode = dns.RcodeRefused
		m.RecursionAvailable = false
	case dnsNoData:
		s.denial(m, q, false)
	default:
		s.answers(m, q)
		if r.pct(8) {
			for i := 0; i < 2; i++ {
				m.Ns = append(m.Ns, &dns.NS{Hdr: s.hdr(q.zone, dns.TypeNS), Ns: "ns" + strconv.Itoa(i+1) + "." + q.zone})
			}
		}
	}
	if q.edns {
		// The client's 8 cookie bytes and the server's 16 (RFC 7873).
		m.Extra = append(m.Extra, s.opt(q, 1232, 24))
	}
	return m
}

func (s *dnsSession) ttl() uint32 {
	r := &s.r
	return []uint32{60, 300, 300, 3600, 86400, uint32(r.between(1, 7200))}[r.intn(6)]
}

func (s *dnsSession) hdr(name string, t uint16) dns.RR_Header {
	return dns.RR_Header{Name: name, Rrtype: t, Class: dns.ClassINET, Ttl: s.ttl()}
}

func (s *dnsSession) ipv4() net.IP {
	r := &s.r
	n := serverNet[r.intn(3)]
	return net.IPv4(n[0], n[1], n[2], byte(r.between(1, 254))).To4()
}

func (s *dnsSession) ipv6() net.IP {
	r := &s.r
	ip := make(net.IP, 16)
	copy(ip, []byte{0x20, 0x01, 0x0d, 0xb8, 0, 0xff})
	binary.BigEndian.PutUint16(ip[14:], uint16(r.between(1, 0xfff)))
	return ip
}

// answers fills the answer (and additional) sections for q.
func (s *dnsSession) answers(m *dns.Msg, q *dnsQuery) {
	r := &s.r
	name := q.name
	var rrs []dns.RR
	add := func(rr dns.RR) { rrs = append(rrs, rr) }
	switch q.qtype {
	case dns.TypeA, dns.TypeAAAA, dns.TypeCNAME:
		if q.qtype == dns.TypeCNAME || r.pct(30) {
			// A CNAME chain through a CDN.
			hops := r.between(1, 3)
			for i := 0; i < hops; i++ {
				target := word(r) + "-" + strconv.Itoa(r.intn(100)) + "." + []string{"cdn-edge.net.", "edge.cdn-edge.net.", "lb.cloud-provider.example."}[i%3]
				add(&dns.CNAME{Hdr: s.hdr(name, dns.TypeCNAME), Target: target})
				name = target
			}
		}
		if q.qtype == dns.TypeCNAME {
			break
		}
		for i, n := 0, r.between(1, 4); i < n; i++ {
			if q.qtype == dns.TypeA {
				add(&dns.A{Hdr: s.hdr(name, dns.TypeA), A: s.ipv4()})
			} else {
				add(&dns.AAAA{Hdr: s.hdr(name, dns.TypeAAAA), AAAA: s.ipv6()})
			}
		}
	case dns.TypeMX:
		for i, n := 0, r.between(1, 5); i < n; i++ {
			host := "mx" + strconv.Itoa(i+1) + "." + q.zone
			if r.pct(30) {
				host = "aspmx" + strconv.Itoa(i+1) + ".mail-hoster.com."
			}
			add(&dns.MX{Hdr: s.hdr(name, dns.TypeMX), Preference: uint16(10 * (i + 1)), Mx: host})
			m.Extra = append(m.Extra, &dns.A{Hdr: s.hdr(host, dns.TypeA), A: s.ipv4()})
		}
	case dns.TypeTXT:
		n := r.between(1, 4)
		if q.big || r.pct(15) {
			n = r.between(8, 16) // domain verification galore: needs TCP without EDNS0
		}
		for i := 0; i < n; i++ {
			add(&dns.TXT{Hdr: s.hdr(name, dns.TypeTXT), Txt: []string{s.txt()}})
		}
	case dns.TypePTR:
		add(&dns.PTR{Hdr: s.hdr(name, dns.TypePTR), Ptr: "host-" + strconv.Itoa(r.intn(65536)) + ".dyn.isp.example.net."})
	case dns.TypeSRV:
		for i, n := 0, r.between(1, 3); i < n; i++ {
			target := "srv" + strconv.Itoa(i+1) + "." + q.zone
			add(&dns.SRV{Hdr: s.hdr(name, dns.TypeSRV), Priority: uint16(i * 10), Weight: uint16(r.intn(100)),
				Port: []uint16{5060, 5222, 993, 389, 8443}[r.intn(5)], Target: target})
			m.Extra = append(m.Extra, &dns.A{Hdr: s.hdr(target, dns.TypeA), A: s.ipv4()})
		}
	case dns.TypeSOA:
		add(s.soa(q.zone))
	case dns.TypeNS:
		for i, n := 0, r.between(2, 4); i < n; i++ {
			ns := "ns" + strconv.Itoa(i+1) + "." + q.zone
			add(&dns.NS{Hdr: s.hdr(name, dns.TypeNS), Ns: ns})
			m.Extra = append(m.Extra, &dns.A{Hdr: s.hdr(ns, dns.TypeA), A: s.ipv4()})
			if r.pct(50) {
				m.Extra = append(m.Extra, &dns.AAAA{Hdr: s.hdr(ns, dns.TypeAAAA), AAAA: s.ipv6()})
			}
		}
	case dns.TypeHTTPS, dns.TypeSVCB:
		svcb := dns.SVCB{Hdr: s.hdr(name, q.qtype), Priority: 1, Target: "."}
		if q.qtype == dns.TypeSVCB {
			svcb.Target = "dns." + q.zone
			svcb.Value = []dns.SVCBKeyValue{&dns.SVCBAlpn{Alpn: []string{"dot", "doh"}}, &dns.SVCBPort{Port: 853}}
		} else {
			svcb.Value = []dns.SVCBKeyValue{&dns.SVCBAlpn{Alpn: []string{"h3", "h2"}},
				&dns.SVCBIPv4Hint{Hint: []net.IP{s.ipv4(), s.ipv4()}}, &dns.SVCBIPv6Hint{Hint: []net.IP{s.ipv6()}}}
		}
		if q.qtype == dns.TypeSVCB {
			add(&svcb)
		} else {
			add(&dns.HTTPS{SVCB: svcb})
		}
	case dns.TypeDNSKEY:
		for i, n := 0, r.between(2, 3); i < n; i++ {
			flags := uint16(256)
			if i == 0 {
				flags = 257
			}
			add(&dns.DNSKEY{Hdr: s.hdr(name, dns.TypeDNSKEY), Flags: flags, Protocol: 3, Algorithm: dns.ECDSAP256SHA256,
				PublicKey: s.b64(64)})
		}
		if q.big || r.pct(40) { // a zone in a key rollover with an RSA key
			add(&dns.DNSKEY{Hdr: s.hdr(name, dns.TypeDNSKEY), Flags: 256, Protocol: 3, Algorithm: dns.RSASHA256,
				PublicKey: s.b64(260)})
		}
	case dns.TypeDS:
		for i, n := 0, r.between(1, 2); i < n; i++ {
			var d [32]byte
			r.fill(d[:])
			add(&dns.DS{Hdr: s.hdr(name, dns.TypeDS), KeyTag: uint16(r.u64()), Algorithm: dns.ECDSAP256SHA256,
				DigestType: dns.SHA256, Digest: hex.EncodeToString(d[:])})
		}
	}
	m.Answer = rrs
	if q.do {
		m.Answer = s.signSets(m.Answer, q.zone)
	}
}

func (s *dnsSession) txt() string {
	r := &s.r
	switch r.intn(5) {
	case 0:
		return "v=spf1 include:_spf.mail-hoster.com include:spf.example.net ip4:198.51.100.0/24 ~all"
	case 1:
		return "google-site-verification=" + s.b64(32)[:43]
	case 2:
		return "v=DMARC1; p=quarantine; rua=mailto:dmarc@example.com; pct=100"
	case 3:
		return "v=DKIM1; k=rsa; p=" + s.b64(162)
	}
	return "MS=ms" + strconv.Itoa(10000000+r.intn(89999999))
}

func (s *dnsSession) b64(n int) string {
	b := make([]byte, n)
	s.r.fill(b)
	return base64.StdEncoding.EncodeToString(b)
}

func (s *dnsSession) soa(zone string) *dns.SOA {
	r := &s.r
	return &dns.SOA{Hdr: s.hdr(zone, dns.TypeSOA), Ns: "ns1." + zone, Mbox: "hostmaster." + zone,
		Serial: 2024030100 + uint32(r.intn(99)), Refresh: 7200, Retry: 3600, Expire: 1209600, Minttl: 300}
}

// denial fills the authority section of an NXDOMAIN or NODATA reply: the
// zone's SOA and, when the client asked for DNSSEC, NSEC3 (or NSEC)
// records with their signatures.
func (s *dnsSession) denial(m *dns.Msg, q *dnsQuery, nx bool) {
	r := &s.r
	m.Ns = append(m.Ns, s.soa(q.zone))
	if !q.do {
		return
	}
	if r.pct(70) {
		n := 1
		if nx {
			n = r.between(2, 3)
		}
		for i := 0; i < n; i++ {
			var h, next [20]byte
			r.fill(h[:])
			r.fill(next[:])
			owner := strings.ToLower(toBase32Hex(h[:])) + "." + q.zone
			m.Ns = append(m.Ns, &dns.NSEC3{Hdr: s.hdr(owner, dns.TypeNSEC3), Hash: dns.SHA1, Flags: 1, Iterations: 0,
				HashLength: 20, NextDomain: toBase32Hex(next[:]), TypeBitMap: []uint16{dns.TypeA, dns.TypeRRSIG}})
		}
	} else {
		m.Ns = append(m.Ns, &dns.NSEC{Hdr: s.hdr(q.zone, dns.TypeNSEC), NextDomain: "www." + q.zone,
			TypeBitMap: []uint16{dns.TypeA, dns.TypeNS, dns.TypeSOA, dns.TypeMX, dns.TypeTXT, dns.TypeAAAA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeDNSKEY}})
	}
	m.Ns = s.signSets(m.Ns, q.zone)
}

// signSets appends an RRSIG after every RRset of rrs.
func (s *dnsSession) signSets(rrs []dns.RR, zone string) []dns.RR {
	out := make([]dns.RR, 0, len(rrs)*2)
	for i, rr := range rrs {
		out = append(out, rr)
		h := rr.Header()
		if i+1 < len(rrs) && rrs[i+1].Header().Name == h.Name && rrs[i+1].Header().Rrtype == h.Rrtype {
			continue
		}
		inception := uint32(s.g.cfg.StartNS/1e9) - 7*86400
		out = append(out, &dns.RRSIG{Hdr: dns.RR_Header{Name: h.Name, Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: h.Ttl},
			TypeCovered: h.Rrtype, Algorithm: dns.ECDSAP256SHA256, Labels: uint8(dns.CountLabel(h.Name)),
			OrigTtl: h.Ttl, Expiration: inception + 21*86400, Inception: inception, KeyTag: uint16(s.r.u64()),
			SignerName: zone, Signature: s.b64(64)})
	}
	return out
}

func toBase32Hex(b []byte) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUV"
	var out strings.Builder
	var buf uint64
	var n uint
	for _, c := range b {
		buf = buf<<8 | uint64(c)
		n += 8
		for n >= 5 {
			out.WriteByte(alphabet[(buf>>(n-5))&31])
			n -= 5
		}
	}
	if n > 0 {
		out.WriteByte(alphabet[(buf<<(5-n))&31])
	}
	return out.String()
}

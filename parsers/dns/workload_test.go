package dns

import (
	"fmt"
	"math/rand"
	"testing"

	mdns "github.com/miekg/dns"
)

// Named workloads for the benchmarks and seeds for the fuzz targets, all
// built here with miekg/dns (no captured traffic).

func withOPT(m *mdns.Msg, do bool) {
	opt := &mdns.OPT{Hdr: mdns.RR_Header{Name: ".", Rrtype: mdns.TypeOPT}}
	opt.SetUDPSize(1232)
	if do {
		opt.SetDo()
	}
	opt.Option = append(opt.Option, &mdns.EDNS0_COOKIE{Code: mdns.EDNS0COOKIE, Cookie: "24a5ac1b4ac4e2e1"})
	m.Extra = append(m.Extra, opt)
}

func mustRR(tb testing.TB, s string) mdns.RR {
	rr, err := mdns.NewRR(s)
	if err != nil {
		tb.Fatalf("NewRR(%q): %v", s, err)
	}
	return rr
}

// typicalQuery is a stub resolver's A query with EDNS0 and a cookie.
func typicalQuery(tb testing.TB) []byte {
	m := new(mdns.Msg)
	m.SetQuestion("www.example.com.", mdns.TypeA)
	m.Id = 0x1234
	withOPT(m, false)
	return packMsg(tb, m)
}

// typicalReply answers typicalQuery through a CNAME chain into a CDN, with
// name compression.
func typicalReply(tb testing.TB) []byte {
	m := new(mdns.Msg)
	m.SetQuestion("www.example.com.", mdns.TypeA)
	m.Id = 0x1234
	m.Response, m.RecursionAvailable = true, true
	for _, s := range []string{
		"www.example.com. 3600 IN CNAME www.example.com.cdn.cloudprovider.net.",
		"www.example.com.cdn.cloudprovider.net. 300 IN CNAME e1234.a.cloudprovider.net.",
		"e1234.a.cloudprovider.net. 20 IN A 192.0.2.44",
		"e1234.a.cloudprovider.net. 20 IN A 192.0.2.45",
	} {
		m.Answer = append(m.Answer, mustRR(tb, s))
	}
	withOPT(m, false)
	m.Compress = true
	return packMsg(tb, m)
}

// dnssecReply is a validating resolver's DNSKEY reply: keys and signatures.
func dnssecReply(tb testing.TB) []byte {
	m := new(mdns.Msg)
	m.SetQuestion("example.org.", mdns.TypeDNSKEY)
	m.Response, m.RecursionAvailable, m.AuthenticatedData = true, true, true
	key := "AwEAAa" + fmt.Sprintf("%0256x", 7)[:250]
	sig := fmt.Sprintf("%0256x", 9)[:256]
	for _, s := range []string{
		"example.org. 3600 IN DNSKEY 257 3 8 " + key,
		"example.org. 3600 IN DNSKEY 256 3 8 " + key[:120],
		"example.org. 3600 IN RRSIG DNSKEY 8 2 3600 20300101000000 20200101000000 20326 example.org. " + sig,
		"example.org. 3600 IN RRSIG DNSKEY 8 2 3600 20300101000000 20200101000000 31337 example.org. " + sig,
	} {
		m.Answer = append(m.Answer, mustRR(tb, s))
	}
	withOPT(m, true)
	m.Compress = true
	return packMsg(tb, m)
}

// mix returns n messages of a resolver's traffic: queries and replies of
// common types, NXDOMAIN with SOA, CNAME chains, TXT, MX, AAAA and DNSSEC.
func mix(tb testing.TB, n int) [][]byte {
	rng := rand.New(rand.NewSource(42))
	var out [][]byte
	for len(out) < n {
		name := fmt.Sprintf("host%d.zone%d.example.", rng.Intn(1000), rng.Intn(50))
		id := uint16(rng.Intn(65536))
		q := new(mdns.Msg)
		types := []uint16{mdns.TypeA, mdns.TypeA, mdns.TypeA, mdns.TypeAAAA, mdns.TypeAAAA, mdns.TypeMX, mdns.TypeTXT, mdns.TypePTR}
		qt := types[rng.Intn(len(types))]
		q.SetQuestion(name, qt)
		q.Id = id
		if rng.Intn(2) == 0 {
			withOPT(q, rng.Intn(4) == 0)
		}
		out = append(out, packMsg(tb, q))
		r := q.Copy()
		r.Response, r.RecursionAvailable = true, true
		switch k := rng.Intn(10); {
		case k == 0:
			r.Rcode = mdns.RcodeNameError
			r.Ns = append(r.Ns, mustRR(tb, "example. 300 IN SOA ns1.example. hostmaster.example. 2024 7200 3600 1209600 300"))
		default:
			if rng.Intn(3) == 0 {
				target := "edge" + fmt.Sprint(rng.Intn(9)) + ".cdn.example.net."
				r.Answer = append(r.Answer, mustRR(tb, name+" 300 IN CNAME "+target))
				name = target
			}
			for i := 0; i < 1+rng.Intn(3); i++ {
				switch qt {
				case mdns.TypeA:
					r.Answer = append(r.Answer, mustRR(tb, fmt.Sprintf("%s 60 IN A 198.51.100.%d", name, rng.Intn(256))))
				case mdns.TypeAAAA:
					r.Answer = append(r.Answer, mustRR(tb, fmt.Sprintf("%s 60 IN AAAA 2001:db8::%x", name, rng.Intn(65536))))
				case mdns.TypeMX:
					r.Answer = append(r.Answer, mustRR(tb, fmt.Sprintf("%s 60 IN MX %d mx%d.example.", name, 10*i, i)))
				case mdns.TypeTXT:
					r.Answer = append(r.Answer, mustRR(tb, fmt.Sprintf(`%s 60 IN TXT "v=spf1 include:_spf.example.net ~all" "id=%d"`, name, i)))
				case mdns.TypePTR:
					r.Answer = append(r.Answer, mustRR(tb, fmt.Sprintf("%s 60 IN PTR ptr%d.example.", name, i)))
				}
			}
			if k == 1 {
				r.AuthenticatedData = true
				r.Answer = append(r.Answer, mustRR(tb, name+" 60 IN RRSIG A 13 3 60 20300101000000 20200101000000 2371 example. "+fmt.Sprintf("%064x", k)))
			}
		}
		r.Compress = true
		out = append(out, packMsg(tb, r))
	}
	return out[:n]
}

package dns

import (
	"testing"

	mdns "github.com/miekg/dns"
)

// pack builds a wire message with miekg/dns: a reply (when answers are
// given) to a question for qname/qtype, with compression.
func pack(t testing.TB, id uint16, qname string, qtype uint16, answers ...string) []byte {
	t.Helper()
	m := new(mdns.Msg)
	m.Id = id
	m.RecursionDesired = true
	m.Question = []mdns.Question{{Name: mdns.Fqdn(qname), Qtype: qtype, Qclass: mdns.ClassINET}}
	if answers != nil {
		m.Response = true
		m.RecursionAvailable = true
		for _, s := range answers {
			rr, err := mdns.NewRR(s)
			if err != nil {
				t.Fatalf("NewRR(%q): %v", s, err)
			}
			m.Answer = append(m.Answer, rr)
		}
	}
	m.Compress = true
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return b
}

// packMsg packs m, failing the test on error.
func packMsg(t testing.TB, m *mdns.Msg) []byte {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	return b
}

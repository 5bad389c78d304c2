package analyzer

import (
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

// httpSink writes HTTP transactions to http.log and confirms the protocol
// on the current connection when a request was parsed, which is where
// Zeek's HTTP analyzer confirms it.
type httpSink struct{ a *Analyzer }

func (s httpSink) HTTP(c *parsers.Conn, tx *http.Transaction) {
	if tx.HasRequest && s.a.cur != nil {
		s.a.cur.confirm("http")
	}
	s.a.httpLog.HTTP(c, tx)
	s.a.stats.HTTP++
}

// dnsSink writes DNS transactions to dns.log and confirms the protocol on
// the current connection: Zeek's DNS analyzer confirms every message it
// parses.
type dnsSink struct{ a *Analyzer }

func (s dnsSink) DNS(c *parsers.Conn, tx *dns.Transaction) {
	if s.a.cur != nil {
		s.a.cur.confirm("dns")
	}
	s.a.dnsLog.DNS(c, tx)
	s.a.stats.DNS++
}

package dns

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/internal/dnstrace"
)

// logFields are the dns.log columns compared with Zeek's baselines.
var logFields = []string{"trans_id", "rtt", "query", "qclass", "qclass_name", "qtype", "qtype_name",
	"rcode", "rcode_name", "AA", "TC", "RD", "RA", "Z", "answers", "TTLs", "rejected", "opcode", "opcode_name"}

// TestZeekBaselines runs the analyzer over DNS traces of Zeek's test suite
// and compares its transactions with Zeek's dns.log baselines, field by
// field (the timestamp and uid excepted).
func TestZeekBaselines(t *testing.T) {
	corpus := corpustest.CorpusDir(t)
	// checked: Zeek ran without -C, so it dropped packets with a bad IP
	// checksum (dns-txt-multiple.pcap's query has one: Zeek logs the
	// reply alone).
	tests := []struct {
		trace, baseline string
		checked         bool
	}{
		{"dns-two-responses.pcap", "scripts.base.protocols.dns.duplicate-reponses", true},
		{"dns-txt-multiple.pcap", "scripts.base.protocols.dns.multiple-txt-strings", true},
		{"dnssec/ds.pcap", "scripts.base.protocols.dns.ds", false},
		{"dnssec/rrsig.pcap", "scripts.base.protocols.dns.rrsig", false},
		{"dnssec/nsec.pcap", "scripts.base.protocols.dns.nsec", false},
		{"dns/dns_notify2.pcap", "scripts.base.protocols.dns.notify", false},
		{"dns/mdns-no-assoc.pcap", "scripts.base.protocols.dns.mdns-no-assoc", false},
		{"dns/sshfp-trunc.pcap", "scripts.base.protocols.dns.sshfp", false},
		{"dns/dynamic-update.pcap", "scripts.base.protocols.dns.dynamic-update", false},
		{"dns/dns-wks.pcap", "scripts.base.protocols.dns.wks", false},
	}
	for _, tt := range tests {
		t.Run(tt.trace, func(t *testing.T) {
			want := readBaseline(t, filepath.Join(corpus, "baselines", tt.baseline, "dns.log"))
			got := analyzeTrace(t, filepath.Join(corpus, "traces", tt.trace), tt.checked)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("transactions differ from Zeek's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// readBaseline returns the records of a Zeek dns.log projected on
// logFields, sorted.
func readBaseline(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, recs := corpustest.ReadLog(data)
	return corpustest.Project(recs, logFields)
}

type lineSink struct {
	t     *testing.T
	lines []string
}

func (s *lineSink) DNS(c *parsers.Conn, tx *Transaction) {
	if bad := badJoined(tx); bad != "" {
		s.t.Error(bad)
	}
	unset := "-"
	opt := func(ok bool, v string) string {
		if ok {
			return v
		}
		return unset
	}
	b := func(v bool) string {
		if v {
			return "T"
		}
		return "F"
	}
	var ans, ttls []string
	for _, a := range tx.Answers {
		ans = append(ans, strings.ReplaceAll(string(a.Data), ",", `\x2c`))
		ttls = append(ttls, fmt.Sprintf("%d.000000", a.TTL))
	}
	query := string(tx.Query)
	if query == "" {
		query = "(empty)"
	}
	row := []string{
		fmt.Sprint(tx.TransID),
		opt(tx.HasRTT, fmt.Sprintf("%.6f", float64(tx.RTT)/1e9)),
		opt(tx.HasQueryName, query),
		opt(tx.HasQuestion, fmt.Sprint(tx.QClass)), opt(tx.HasQuestion, tx.QClassName()),
		opt(tx.HasQuestion, fmt.Sprint(tx.QType)), opt(tx.HasQuestion, tx.QTypeName()),
		opt(tx.HasReply, fmt.Sprint(tx.RCode)), opt(tx.HasReply, tx.RCodeName()),
		b(tx.AA), b(tx.TC), b(tx.RD), b(tx.RA), fmt.Sprint(tx.Z),
		opt(len(ans) > 0, strings.Join(ans, ",")), opt(len(ttls) > 0, strings.Join(ttls, ",")),
		b(tx.Rejected), fmt.Sprint(tx.Opcode), tx.OpcodeName(),
	}
	s.lines = append(s.lines, strings.Join(row, "\t"))
}

// analyzeTrace runs the DNS datagrams of a capture through the analyzer
// (see dnstrace.Feed) and returns its transactions as rows of logFields,
// sorted.
func analyzeTrace(t *testing.T, path string, checked bool) []string {
	sink := lineSink{t: t}
	dnstrace.Feed(t, path, checked, New(&sink))
	sort.Strings(sink.lines)
	return sink.lines
}

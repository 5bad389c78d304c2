package std

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/internal/dnstrace"
)

// dnsLogFields are the dns.log columns compared: all but ts, uid and the
// 5-tuple, which depend on the capture rather than on the parser.
var dnsLogFields = []string{"proto", "trans_id", "rtt", "query", "qclass", "qclass_name", "qtype", "qtype_name",
	"rcode", "rcode_name", "AA", "TC", "RD", "RA", "Z", "answers", "TTLs", "rejected", "opcode", "opcode_name"}

// readLog returns the records of a Zeek TSV log projected on fields, sorted.
func readLog(data []byte, fields []string) []string {
	_, recs := corpustest.ReadLog(data)
	return corpustest.Project(recs, fields)
}

// dnsTraces are the corpus traces with a Zeek dns.log baseline. checked:
// Zeek ran without -C and dropped packets with a bad IP checksum.
var dnsTraces = []struct {
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

// stdDNSDifferences lists every trace on which the std DNS parser's dns.log
// differs from Zeek's (and so from the native parser, which matches Zeek on
// all of them), with the reason. There is none at present.
var stdDNSDifferences = map[string]string{}

// TestZeekDNSBaselines runs the std and the native DNS analyzers over the
// DNS traces of Zeek's test suite, writes dns.log with zeeklog and compares
// it with Zeek's baselines field by field: native must match, std must
// match except where stdDNSDifferences says why not.
func TestZeekDNSBaselines(t *testing.T) {
	corpus := corpustest.CorpusDir(t)
	for _, tt := range dnsTraces {
		t.Run(tt.trace, func(t *testing.T) {
			base, err := os.ReadFile(filepath.Join(corpus, "baselines", tt.baseline, "dns.log"))
			if err != nil {
				t.Fatal(err)
			}
			want := readLog(base, dnsLogFields)
			path := filepath.Join(corpus, "traces", tt.trace)
			for _, impl := range []string{"native", "std"} {
				got := readLog(dnsLogOf(t, path, tt.checked, impl), dnsLogFields)
				same := strings.Join(got, "\n") == strings.Join(want, "\n")
				reason, known := stdDNSDifferences[tt.trace]
				switch {
				case impl == "native" && !same:
					t.Errorf("native dns.log differs from Zeek's\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				case impl == "std" && !same && !known:
					t.Errorf("std dns.log differs from Zeek's, and the difference is not listed\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				case impl == "std" && same && known:
					t.Errorf("std matches Zeek; remove the listed difference %q", reason)
				}
			}
		})
	}
}

// dnsLogOf runs a capture's DNS datagrams through an analyzer (see
// dnstrace.Feed) and returns the dns.log it writes.
func dnsLogOf(t *testing.T, path string, checked bool, impl string) []byte {
	t.Helper()
	var out bytes.Buffer
	log, err := zeeklog.NewDNSLog(&out, zeeklog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a parsers.Analyzer = NewDNS(log)
	if impl == "native" {
		a = dns.New(log)
	}
	dnstrace.Feed(t, path, checked, a)
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

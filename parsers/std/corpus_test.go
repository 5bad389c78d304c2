package std

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
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

// dnsLogOf runs a capture's DNS datagrams through an analyzer and returns
// the dns.log it writes. Connections are 5-tuples; the originator is the
// first sender unless it sends from a DNS port to another port (Zeek's
// likely_server_ports).
func dnsLogOf(t *testing.T, path string, checked bool, impl string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	log, err := zeeklog.NewDNSLog(&out, zeeklog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var a parsers.Analyzer = NewDNS(log)
	if impl == "native" {
		a = dns.New(log)
	}
	type conn struct {
		c  *parsers.Conn
		cp parsers.ConnParser
	}
	conns := map[flow.Key]*conn{}
	var order []*conn
	server := func(p uint16) bool { return p == 53 || p == 5353 || p == 5355 || p == 137 }
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil || pkt.NetworkLayer() == nil {
			continue
		}
		if ip4, ok := pkt.NetworkLayer().(*layers.IPv4); ok && checked && !ipv4ChecksumOK(ip4.Contents) {
			continue
		}
		sp, dp := uint16(udp.SrcPort), uint16(udp.DstPort)
		if !server(sp) && !server(dp) {
			continue
		}
		nf := pkt.NetworkLayer().NetworkFlow()
		src, _ := netip.AddrFromSlice(nf.Src().Raw())
		dst, _ := netip.AddrFromSlice(nf.Dst().Raw())
		from, to := netip.AddrPortFrom(src.Unmap(), sp), netip.AddrPortFrom(dst.Unmap(), dp)
		key := flow.Key{Orig: from, Resp: to, Proto: flow.ProtoUDP}
		fromResp := false
		if cn, ok := conns[flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}]; ok {
			key, fromResp = cn.c.Key, true
		} else if _, ok := conns[key]; !ok && server(sp) && !server(dp) {
			key, fromResp = flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}, true
		}
		cn := conns[key]
		if cn == nil {
			id := fmt.Sprint(len(order))
			cn = &conn{c: &parsers.Conn{ID: id, UID: "C" + id, Kind: parsers.Block, Key: key}}
			cn.cp = a.Open(cn.c)
			conns[key] = cn
			order = append(order, cn)
		}
		cn.c.TS = ci.Timestamp.UnixNano()
		if fromResp {
			cn.cp.Resp().Feed(udp.Payload)
		} else {
			cn.cp.Orig().Feed(udp.Payload)
		}
	}
	for _, cn := range order {
		cn.cp.Orig().Finish()
		cn.cp.Resp().Finish()
		cn.cp.Close()
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func ipv4ChecksumOK(h []byte) bool {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return sum == 0xffff
}

package dns

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
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

type lineSink struct{ lines []string }

func (s *lineSink) DNS(c *parsers.Conn, tx *Transaction) {
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

// analyzeTrace feeds the UDP datagrams of a capture on Zeek's DNS ports to
// the analyzer, one connection per 5-tuple, the originator being the first
// sender unless it sends from a DNS port to another port (Zeek's
// likely_server_ports).
func analyzeTrace(t *testing.T, path string, checked bool) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var sink lineSink
	a := New(&sink)
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
		role := parsers.Orig
		if cn, ok := conns[flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}]; ok {
			key, role = cn.c.Key, parsers.Resp
		} else if _, ok := conns[key]; !ok && server(sp) && !server(dp) {
			key, role = flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}, parsers.Resp
		}
		cn := conns[key]
		if cn == nil {
			cn = &conn{c: &parsers.Conn{ID: fmt.Sprint(len(order)), Kind: parsers.Block, Key: key}}
			cn.cp = a.Open(cn.c)
			conns[key] = cn
			order = append(order, cn)
		}
		cn.c.TS = ci.Timestamp.UnixNano()
		if role == parsers.Orig {
			cn.cp.Orig().Feed(udp.Payload)
		} else {
			cn.cp.Resp().Feed(udp.Payload)
		}
	}
	for _, cn := range order {
		cn.cp.Close()
	}
	sort.Strings(sink.lines)
	return sink.lines
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

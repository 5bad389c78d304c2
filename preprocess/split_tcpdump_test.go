package preprocess_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// The tcpdump expressions of the default rules.
const (
	tcpdumpHTTP = "tcp port 80"
	tcpdumpDNS  = "udp port 53"
)

// splitDeviation is a corpus trace on which the Splitter deliberately
// differs from tcpdump's "tcp port 80" / "udp port 53": the tcpdump
// expressions that state its semantics for that trace, and why.
type splitDeviation struct {
	http, dns string // "" keeps the default expression
	why       string
}

var splitDeviations = map[string]splitDeviation{
	"http-vlan-0.pcap":                {http: vlans(tcpdumpHTTP), why: "HTTP in 802.1Q VLAN frames"},
	"http-qinq-0.pcap":                {http: vlans(tcpdumpHTTP), why: "HTTP under two VLAN tags (802.1ad QinQ)"},
	"vlan-collisions.pcap":            {http: vlans(tcpdumpHTTP), why: "HTTP with and without VLAN tags"},
	"dns/dns_notify2.pcap":            {dns: vlans(tcpdumpDNS), why: "DNS in VLAN frames"},
	"dns/sshfp-trunc.pcap":            {dns: vlans(tcpdumpDNS), why: "DNS in VLAN frames"},
	"tunnels/gtp/gtp3_false_gtp.pcap": {dns: vlans(tcpdumpDNS), why: "DNS in a VLAN frame"},
	"mpls-in-vlan.pcap": {
		http: "tcp port 80 or (vlan and (tcp port 80 or (mpls and (tcp port 80 or (mpls and tcp port 80)))))",
		why:  "HTTP in VLAN frames, two of them also under one or two MPLS labels",
	},
	"snap-tcp.pcap": {
		// IPv4 in 802.3 frames with LLC/SNAP headers (EtherType 0x0800
		// in the SNAP header at offset 20, IP at 22): libpcap's "tcp"
		// only looks at the Ethernet II type field.
		http: "tcp port 80 or (ether[12:2] <= 1500 and ether[14:4] = 0xaaaa0300 and ether[18:4] = 0x00000800" +
			" and ether[31] = 6 and ether[28:2] & 0x1fff = 0" +
			" and (ether[22 + (ether[22] & 0xf) * 4 : 2] = 80 or ether[24 + (ether[22] & 0xf) * 4 : 2] = 80))",
		why: "HTTP over LLC/SNAP in 802.3 frames",
	},
	"ipv6-hbh-routing0.pcap": {
		// A hop-by-hop header (at 40) and a routing header before UDP:
		// libpcap's "udp" only looks at the fixed header's next header.
		dns: "udp port 53 or (ip6[6] = 0 and ip6[40] = 43 and ip6[40 + (ip6[41] + 1) * 8] = 17" +
			" and (ip6[40 + (ip6[41] + 1) * 8 + (ip6[41 + (ip6[41] + 1) * 8] + 1) * 8 : 2] = 53" +
			" or ip6[42 + (ip6[41] + 1) * 8 + (ip6[41 + (ip6[41] + 1) * 8] + 1) * 8 : 2] = 53))",
		why: "DNS behind IPv6 hop-by-hop and routing headers",
	},
}

// vlans extends a tcpdump expression to packets under one or two VLAN
// tags. Each "vlan" moves libpcap's offsets for the rest of the expression,
// hence the nesting.
func vlans(expr string) string {
	return expr + " or (vlan and (" + expr + " or (vlan and " + expr + ")))"
}

// TestSplitMatchesTcpdump preprocesses every corpus trace that tcpdump
// can read and that has no IP fragments, and requires each pcap file the
// command writes to hold exactly the packets tcpdump writes for the same
// rule: same order, timestamps, lengths and bytes, and the same file
// header (link type, snap length, timestamp resolution).
func TestSplitMatchesTcpdump(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	tcpdump := corpustest.NeedTool(t, "tcpdump")
	listed := map[string]bool{}
	for _, e := range c.Entries {
		listed[e.Trace] = true
	}
	for trace := range splitDeviations {
		if !listed[trace] {
			t.Errorf("splitDeviations lists %s, which the manifest does not", trace)
		}
	}
	for trace := range corpusFailures {
		if !listed[trace] {
			t.Errorf("corpusFailures lists %s, which the manifest does not", trace)
		}
	}
	for _, e := range c.Entries {
		t.Run(e.Trace, func(t *testing.T) {
			if e.Tcpdump == nil {
				t.Skip("tcpdump cannot read this trace (manifest)")
			}
			if e.Has("ip-fragments") {
				t.Skip("has IP fragments: the Splitter keeps non-first fragments, tcpdump drops them")
			}
			input, err := os.ReadFile(e.File(c))
			if err != nil {
				t.Fatal(err)
			}
			res := processBytes(preprocess.DefaultConfig(), e.Trace, input)
			if cause, ok := corpusFailures[e.Trace]; ok {
				if want := e.Trace + ": " + cause; res.err == nil || res.err.Error() != want {
					t.Fatalf("error %v, want %q", res.err, want)
				}
				return
			}
			if res.err != nil {
				t.Fatal(res.err)
			}
			dev, deviates := splitDeviations[e.Trace]
			if deviates {
				t.Logf("deliberate difference from tcpdump: %s", dev.why)
			}
			for _, sub := range []struct {
				name, expr, deviation string
				got                   []byte
			}{
				{"HTTP", tcpdumpHTTP, dev.http, res.httpPcap},
				{"DNS", tcpdumpDNS, dev.dns, res.dnsPcap},
			} {
				expr := sub.expr
				if sub.deviation != "" {
					expr = sub.deviation
				}
				want := runTcpdump(t, tcpdump, input, expr)
				gotF, err := readPcap("our "+sub.name+" sub-trace", sub.got)
				if err != nil {
					t.Fatal(err)
				}
				wantF, err := readPcap("tcpdump's output", want)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffPcap(gotF, wantF); d != "" {
					t.Errorf("%s sub-trace differs from tcpdump '%s': %s", sub.name, expr, d)
				}
				if sub.deviation != "" && len(gotF.frames) == len(runTcpdumpCount(t, tcpdump, input, sub.expr).frames) {
					t.Errorf("%s sub-trace: listed as a deviation, but tcpdump '%s' gives as many packets: remove it from splitDeviations", sub.name, sub.expr)
				}
			}
		})
	}
}

// runTcpdump returns what tcpdump -w writes for the filter expr on input
// (decompressed first: libpcap reads no gzip), with nanosecond timestamps
// when the input has them.
func runTcpdump(t *testing.T, tcpdump string, input []byte, expr string) []byte {
	t.Helper()
	if len(input) > 2 && input[0] == 0x1f && input[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(input))
		if err != nil {
			t.Fatal(err)
		}
		if input, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	hdr, err := readPcapHeader(input)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-r", "-", "-w", "-"}
	if hdr.Nanos {
		args = append(args, "--time-stamp-precision=nano")
	}
	cmd := exec.Command(tcpdump, append(args, expr)...)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tcpdump '%s': %v\n%s", expr, err, stderr.Bytes())
	}
	return out
}

func runTcpdumpCount(t *testing.T, tcpdump string, input []byte, expr string) pcapFile {
	f, err := readPcap("tcpdump's output", runTcpdump(t, tcpdump, input, expr))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

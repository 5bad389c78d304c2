package capture_test

import (
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// corpusOutcome is what reading each corpus trace must give: "" when it is
// read to the end (every packet the manifest counts, each decoded without
// error), or the one-line error that stops it.
var corpusOutcome = map[string]string{
	"chksums/localhost-bad-chksum.pcap":                  "",
	"dce-rpc/mapi.pcap":                                  "",
	"dns-inverse-query.pcap":                             "",
	"dns-svcb-rdlength-mismatch.pcap":                    "",
	"dns-svcb.pcap":                                      "",
	"dns-two-responses.pcap":                             "",
	"dns-txt-multiple.pcap":                              "",
	"dns/dns-corrupt.pcap":                               "",
	"dns/dns-wks.pcap":                                   "",
	"dns/dns_extended_rcode.pcap":                        "",
	"dns/dns_notify2.pcap":                               "",
	"dns/dynamic-update.pcap":                            "",
	"dns/ech.pcap":                                       "",
	"dns/max-compression-depth.pcap":                     "",
	"dns/mdns-no-assoc.pcap":                             "",
	"dns/mdns.pcap":                                      "",
	"dns/naptr.pcap":                                     "",
	"dns/sshfp-trunc.pcap":                               "",
	"dns/tkey.pcap":                                      "",
	"dnssec/ds.pcap":                                     "",
	"dnssec/ed25519.no.pcap":                             "",
	"dnssec/ed448.no.pcap":                               "",
	"dnssec/nsec.pcap":                                   "",
	"dnssec/rrsig.pcap":                                  "",
	"http-qinq-0.pcap":                                   "",
	"http-vlan-0.pcap":                                   "",
	"http/100-continue.pcap":                             "",
	"http/206_example_a.pcap":                            "",
	"http/206_example_b.pcap":                            "",
	"http/206_example_c.pcap":                            "",
	"http/261/variant-03-cl_negative.pcap":               "",
	"http/261/variant-04-te_cl_desync.pcap":              "",
	"http/261/variant-08-leading_zeros.pcap":             "",
	"http/261/variant-10-multi_value_te.pcap":            "",
	"http/concurrent-range-requests.pcap":                "",
	"http/connect-with-header.pcap":                      "",
	"http/content-length-in-request-body.pcap":           "",
	"http/cooper-grill-dvwa.pcapng":                      "",
	"http/ctu-62604-80.pcap":                             "",
	"http/curl_http_09.pcap":                             "",
	"http/deeply-nested-mime.pcap":                       "",
	"http/docker-http-upgrade.pcap":                      "",
	"http/entity_gap.pcap":                               "",
	"http/fake-content-length.pcap":                      "",
	"http/http-09-content-length-confusion.pcap":         "",
	"http/http-11-request-then-cruft.pcap":               "",
	"http/http-filename.pcap":                            "",
	"http/http-inner-transfer-encoding-ossfuzz.pcap":     "",
	"http/http-inner-transfer-encoding-reproducer.pcap":  "",
	"http/http-lower-case-nonstandard-port.pcap":         "",
	"http/http-lower-case.pcap":                          "",
	"http/http-single-conn-22.pcap":                      "",
	"http/http_09.pcap":                                  "",
	"http/http_large_req_8001.pcap":                      "",
	"http/interleaved-http-entity.pcap":                  "",
	"http/invalid-content-ranges.pcap":                   "",
	"http/iso-download.pcap.gz":                          "",
	"http/methods.pcap":                                  "",
	"http/multipart.pcap":                                "",
	"http/no-version.pcap":                               "",
	"http/percent-end-of-line.pcap":                      "",
	"http/pipelined-requests.pcap":                       "",
	"http/proxy.pcap":                                    "",
	"http/smuggle-http-request.pcap":                     "",
	"http/version-mismatch.pcap":                         "",
	"http/websocket.pcap":                                "",
	"http/zeek-image-1080-80-x.pcapng":                   "",
	"http/zeek-image-post-1080-8000-x.pcap":              "",
	"ipv6-hbh-routing0.pcap":                             "",
	"mpls-in-vlan.pcap":                                  "",
	"pcapng-multi-interface.pcapng":                      "",
	"pe/pe_files_timestamp.pcap.gz":                      "",
	"snap-tcp.pcap":                                      "",
	"socks.pcap":                                         "",
	"tcp-http-with-padding.pcap":                         "",
	"tcp/missing-syn.pcap":                               "",
	"tcp/retransmit-timeout.pcapng":                      "",
	"tls/ocsp-empty-responderid.pcap":                    "",
	"tls/ssl-to-http-server.pcap":                        "",
	"tls/tls12-decryption.pcap":                          "",
	"tunnels/Teredo.pcap":                                "",
	"tunnels/ayiya3.pcap":                                "",
	"tunnels/gre-aruba.pcap":                             "",
	"tunnels/gre-over-udp-4754.pcap":                     "",
	"tunnels/gre-pptp.pcap":                              "",
	"tunnels/gre-sample.pcap":                            "",
	"tunnels/gtp/gtp1_gn_normal_incl_fragmentation.pcap": "",
	"tunnels/gtp/gtp2_different_udp_port.pcap":           "",
	"tunnels/gtp/gtp3_false_gtp.pcap":                    "",
	"tunnels/gtp/gtp7_ipv6.pcap":                         "",
	"tunnels/socks.pcap":                                 "",
	"tunnels/vxlan-encapsulated-http.pcap":               "",
	"var-services-std-ports.pcap":                        "",
	"vlan-collisions.pcap":                               "",
	"websocket/oversized-close-frame.pcapng":             "",
	"websocket/wstunnel-http.pcap":                       "",
	"wlanmon.pcap":                                       "",
	"workshop_2011_browse.pcap":                          "",
	"zip/nested.pcap":                                    "",
	"zip/test.pcap":                                      "",
}

func TestCorpusTraces(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	seen := map[string]bool{}
	for _, e := range c.Entries {
		seen[e.Trace] = true
		want, listed := corpusOutcome[e.Trace]
		t.Run(e.Trace, func(t *testing.T) {
			if !listed {
				t.Fatalf("trace is not listed in corpusOutcome; add the outcome it should have")
			}
			n, err := readCorpusTrace(e.File(c))
			if want != "" {
				if err == nil || !strings.HasSuffix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got error %v, want one line ending in %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != e.Capinfos.Packets {
				t.Errorf("read %d packets, capinfos counts %d", n, e.Capinfos.Packets)
			}
		})
	}
	for trace := range corpusOutcome {
		if !seen[trace] {
			t.Errorf("corpusOutcome lists %s, which the manifest does not", trace)
		}
	}
}

// readCorpusTrace reads and decodes every packet of a trace.
func readCorpusTrace(path string) (int, error) {
	r, err := capture.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	d := capture.NewDecoder()
	var p capture.Packet
	for n := 0; ; n++ {
		if err := r.Next(&p); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		if err := d.Decode(&p); err != nil {
			return n, fmt.Errorf("packet %d: %w", n+1, err)
		}
	}
}

// tsharkFields are what TestCorpusDecodeMatchesTshark compares; the first
// occurrence of each is the outermost header's.
var tsharkFields = []string{
	"ip.src", "ip.dst", "ip.len", "ip.proto", "ip.flags.mf", "ip.frag_offset",
	"ipv6.src", "ipv6.dst", "ipv6.plen", "ipv6.fraghdr.offset", "ipv6.fraghdr.more",
	"tcp.srcport", "tcp.dstport", "tcp.len", "udp.srcport", "udp.dstport", "udp.length",
}

// TestCorpusDecodeMatchesTshark decodes every packet of every readable
// corpus trace and compares the outer IP header, the transport ports and
// the payload length with what tshark dissects. The traces are
// concatenated into one pcapng file with mergecap (one interface per
// trace, each with its own link type), so that tshark runs once; reading
// that file also exercises the pcapng reader on mixed link types.
func TestCorpusDecodeMatchesTshark(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mergecap and tshark over the whole corpus")
	}
	c := corpustest.LoadCorpus(t)
	tshark := corpustest.NeedTool(t, "tshark")
	mergecap := corpustest.NeedTool(t, "mergecap")
	var files []string
	for _, e := range c.Entries {
		if corpusOutcome[e.Trace] == "" {
			files = append(files, e.File(c))
		}
	}
	merged := filepath.Join(t.TempDir(), "corpus.pcapng")
	if out, err := exec.Command(mergecap, append([]string{"-a", "-F", "pcapng", "-w", merged}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("mergecap: %v\n%s", err, out)
	}
	lines := tsharkLines(t, tshark, merged)

	r, err := capture.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := capture.NewDecoder()
	var p capture.Packet
	n, bad := 0, 0
	for ; ; n++ {
		if err := r.Next(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if err := d.Decode(&p); err != nil {
			t.Fatalf("frame %d: %v", n+1, err)
		}
		if n >= len(lines) {
			t.Fatalf("tshark printed %d lines, the file has more frames", len(lines))
		}
		if diff := compareTshark(&p, strings.Split(lines[n], "\t")); diff != "" {
			bad++
			if bad <= 20 {
				t.Errorf("frame %d (link type %d): %s\n  tshark: %s", n+1, p.LinkType, diff, lines[n])
			}
		}
	}
	if n != len(lines) {
		t.Errorf("read %d frames, tshark printed %d lines", n, len(lines))
	}
	if bad > 0 {
		t.Errorf("%d of %d frames differ from tshark", bad, n)
	}
	t.Logf("%d frames of %d traces agree with tshark", n, len(files))
}

// tsharkLines runs tshark over the capture at path and returns a line of
// tsharkFields per frame, tab-separated.
func tsharkLines(t *testing.T, tshark, path string) []string {
	t.Helper()
	args := []string{"-r", path, "-T", "fields", "-E", "occurrence=f", "-E", "separator=/t"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// compareTshark returns what differs between p and tshark's fields f (in
// the order of tsharkFields), or "".
func compareTshark(p *capture.Packet, f []string) string {
	get := func(name string) string {
		for i, n := range tsharkFields {
			if n == name && i < len(f) {
				return f[i]
			}
		}
		return ""
	}
	num := func(name string) int {
		v, err := strconv.Atoi(get(name))
		if err != nil {
			return -1
		}
		return v
	}
	var diffs []string
	check := func(what string, got, want any) {
		if fmt.Sprint(got) != fmt.Sprint(want) {
			diffs = append(diffs, fmt.Sprintf("%s %v, tshark %v", what, got, want))
		}
	}
	switch {
	case get("ip.src") == "" && get("ipv6.src") == "":
		check("IP version", p.IPVersion, 0)
		return strings.Join(diffs, "; ")
	case p.IPVersion == 4:
		check("src", p.Src, get("ip.src"))
		check("dst", p.Dst, get("ip.dst"))
		check("IP length", p.IPLen, num("ip.len"))
		check("proto", p.Proto, num("ip.proto"))
		mf := get("ip.flags.mf") == "1" || get("ip.flags.mf") == "True"
		check("fragment", p.Fragment, mf || num("ip.frag_offset") > 0)
	case p.IPVersion == 6:
		check("src", p.Src, get("ipv6.src"))
		check("dst", p.Dst, get("ipv6.dst"))
		check("IP length", p.IPLen, 40+num("ipv6.plen"))
		fragHdr := get("ipv6.fraghdr.offset") != ""
		more := get("ipv6.fraghdr.more") == "1" || get("ipv6.fraghdr.more") == "True"
		check("fragment", p.Fragment, fragHdr && (more || num("ipv6.fraghdr.offset") > 0))
	default:
		check("IP version", p.IPVersion, "an IP packet")
	}
	if p.Fragment {
		return strings.Join(diffs, "; ")
	}
	switch p.Proto {
	case 6:
		check("ports", [2]uint16{p.SrcPort, p.DstPort}, [2]int{num("tcp.srcport"), num("tcp.dstport")})
		if !p.Truncated {
			check("TCP payload", len(p.Payload), num("tcp.len"))
		}
	case 17:
		check("ports", [2]uint16{p.SrcPort, p.DstPort}, [2]int{num("udp.srcport"), num("udp.dstport")})
		if !p.Truncated {
			check("UDP payload", len(p.Payload), num("udp.length")-8)
		}
	}
	return strings.Join(diffs, "; ")
}

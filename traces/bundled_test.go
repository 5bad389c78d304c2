package traces

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The sample traces in this directory, made by "make traces".
var bundled = []string{"http-dns-plain.pcap", "http-dns-impaired.pcap", "http-dns-ipv6-vlan.pcapng"}

func readBundled(t *testing.T, name string) ([]byte, *Truth) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("bundled trace missing (make traces makes it): %v", err)
	}
	truth, err := ReadTruth(name + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	return data, truth
}

// TestBundledReproducible regenerates every bundled trace from the
// configuration in its truth file: the bytes and the truth must be the
// same, or the generator changed and "make traces" must be run (and the
// change of output be intended).
func TestBundledReproducible(t *testing.T) {
	for _, name := range bundled {
		t.Run(name, func(t *testing.T) {
			data, truth := readBundled(t, name)
			var buf bytes.Buffer
			again, err := Generate(&buf, truth.Config)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), data) {
				t.Fatalf("regenerating %s gives different bytes: run make traces if the generator changed on purpose", name)
			}
			want, _ := os.ReadFile(name + ".truth.json")
			got, _ := json.MarshalIndent(again, "", "  ")
			if !bytes.Equal(append(got, '\n'), want) {
				t.Fatalf("regenerating %s gives a different truth file", name)
			}
		})
	}
}

// TestBundledFeatures guards what each sample trace is for.
func TestBundledFeatures(t *testing.T) {
	_, plain := readBundled(t, "http-dns-plain.pcap")
	if plain.Impairments != (ImpairCounts{}) || plain.Gaps != 0 || plain.HTTPInterim == 0 || plain.DNSTruncated == 0 || plain.IPFragments == 0 {
		t.Errorf("the plain trace should have no impairments but 100 Continue, TC replies and fragments: %+v", plain)
	}
	_, imp := readBundled(t, "http-dns-impaired.pcap")
	im := imp.Impairments
	if im.Lost == 0 || im.Reordered == 0 || im.Retransmitted == 0 || im.Duplicated == 0 || im.Fragmented == 0 ||
		imp.HTTPRequestsWithGaps == 0 || imp.HTTPResponsesWithGaps == 0 {
		t.Errorf("the impaired trace should have every impairment and messages with gaps: %+v", imp)
	}
	data, v6 := readBundled(t, "http-dns-ipv6-vlan.pcapng")
	frames := readFrames(t, data, PCAPNG)
	var tagged, ip6, frag6 int
	for _, f := range frames {
		if f.data[12] == 0x81 && f.data[13] == 0x00 {
			tagged++
			if f.data[16] == 0x86 && f.data[17] == 0xdd {
				ip6++
				if f.data[18+6] == protoFrag6 {
					frag6++
				}
			}
		}
	}
	if tagged != len(frames) || ip6 == 0 || frag6 == 0 || v6.DNSTruncated == 0 {
		t.Errorf("the IPv6/VLAN trace should be all VLAN-tagged with IPv6 fragments and TC replies: %d of %d tagged, %d IPv6, %d IPv6 fragments, %d TC",
			tagged, len(frames), ip6, frag6, v6.DNSTruncated)
	}
}

// tshark runs tshark with the settings the expectations assume, whatever
// the user's preferences say: checksum validation on, reassembly of TCP
// streams and HTTP bodies on, out-of-order reassembly off (with it on,
// tshark holds back everything after a lost segment).
func tshark(t *testing.T, args ...string) string {
	t.Helper()
	base := []string{"-n", "-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
		"-o", "tcp.desegment_tcp_streams:TRUE", "-o", "http.desegment_headers:TRUE", "-o", "http.desegment_body:TRUE",
		"-o", "tcp.reassemble_out_of_order:FALSE"}
	out, err := exec.Command("tshark", append(base, args...)...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// expertItem is one line of tshark's "-z expert" table.
type expertItem struct {
	severity, group, protocol, summary string
	count                              int
}

func parseExpert(out string) []expertItem {
	var items []expertItem
	severity := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && strings.HasPrefix(f[1], "("):
			severity = f[0] // Errors, Warns, Notes, Chats
		case len(f) >= 4 && severity != "":
			n, err := strconv.Atoi(f[0])
			if err != nil {
				continue // the column header
			}
			items = append(items, expertItem{severity, f[1], f[2], strings.Join(f[3:], " "), n})
		}
	}
	return items
}

// TestBundledTshark checks the bundled traces with tshark: no malformed
// packets, no bad checksums, and tshark's HTTP and DNS counts equal the
// truth (less the messages that lost bytes, which tshark never completes).
func TestBundledTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed; skipping the tshark checks of the bundled traces")
	}
	for _, name := range bundled {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, truth := readBundled(t, name)
			for _, it := range parseExpert(tshark(t, "-r", name, "-q", "-z", "expert")) {
				bad := it.severity == "Errors" || it.group == "Malformed" || it.group == "Checksum"
				if truth.Impairments == (ImpairCounts{}) && it.severity == "Warns" && it.summary != "Connection reset (RST)" {
					bad = true // a clean trace has nothing to warn about but resets
				}
				if bad {
					t.Errorf("tshark expert info: %d× %s %s %s: %s", it.count, it.severity, it.group, it.protocol, it.summary)
				}
			}
			checkTsharkCounts(t, name, truth)
		})
	}
}

// checkTsharkCounts compares tshark's HTTP and DNS message counts of the
// trace at path with the truth (less the messages that lost bytes, which
// tshark never completes).
func checkTsharkCounts(t *testing.T, path string, truth *Truth) {
	t.Helper()
	// One pass for the four counts: a frame is an http.request frame
	// when it has request methods, and so on. A frame may hold
	// several messages (pipelining), whose values tshark joins with
	// commas.
	got := map[string]int64{}
	out := tshark(t, "-r", path, "-Y", "http.request || http.response || dns",
		"-T", "fields", "-E", "separator=/t", "-e", "http.request.method", "-e", "http.response.code", "-e", "dns.flags.response")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			continue
		}
		if f[0] != "" {
			got["http.request"] += int64(len(strings.Split(f[0], ",")))
		}
		if f[1] != "" {
			got["http.response"] += int64(len(strings.Split(f[1], ",")))
		}
		for _, v := range strings.Split(f[2], ",") {
			switch v {
			case "0", "False":
				got["dns.flags.response == 0"]++
			case "1", "True":
				got["dns.flags.response == 1"]++
			}
		}
	}
	for _, c := range []struct {
		filter string
		want   int64
	}{
		{"http.request", truth.HTTPRequests - truth.HTTPRequestsWithGaps},
		{"http.response", truth.HTTPResponses - truth.HTTPResponsesWithGaps},
		{"dns.flags.response == 0", truth.DNSQueries},
		{"dns.flags.response == 1", truth.DNSResponses},
	} {
		if got[c.filter] != c.want {
			t.Errorf("tshark -Y %q finds %d messages, the truth says %d", c.filter, got[c.filter], c.want)
		}
	}
}

// TestLinksTshark writes the same traffic in every link layer and checks
// with tshark that each file holds no malformed packet and the messages
// the truth counts.
func TestLinksTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed; skipping the tshark checks of the link layers")
	}
	dir := t.TempDir()
	for _, link := range Links {
		t.Run(string(link), func(t *testing.T) {
			t.Parallel()
			cfg := DefaultConfig()
			cfg.Size, cfg.Sessions, cfg.Seed, cfg.Link = 0, 80, 3, link
			cfg.Mix = Mix{HTTP: 1, DNS: 1} // the SSH-like sessions are not SSH to tshark
			path := filepath.Join(dir, string(link)+".pcap")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			truth, err := Generate(f, cfg)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range parseExpert(tshark(t, "-r", path, "-q", "-z", "expert")) {
				if it.severity == "Errors" || it.group == "Malformed" || it.group == "Checksum" {
					t.Errorf("tshark expert info: %d× %s %s %s: %s", it.count, it.severity, it.group, it.protocol, it.summary)
				}
			}
			checkTsharkCounts(t, path, truth)
		})
	}
}

// TestBundledTcpdump checks the per-port packet counts with tcpdump, which
// needs "vlan" to look inside VLAN tags.
func TestBundledTcpdump(t *testing.T) {
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump is not installed; skipping the tcpdump checks of the bundled traces")
	}
	for _, name := range bundled {
		_, truth := readBundled(t, name)
		for _, c := range []struct {
			filter string
			want   int64
		}{
			{"tcp port 80 or (vlan and tcp port 80)", truth.TCPPort80Packets},
			{"udp port 53 or (vlan and udp port 53)", truth.UDPPort53Packets},
		} {
			out, err := exec.Command("tcpdump", "-nn", "-r", name, c.filter).Output()
			if err != nil {
				t.Fatalf("tcpdump -r %s %q: %v", name, c.filter, err)
			}
			if got := int64(bytes.Count(out, []byte("\n"))); got != c.want {
				t.Errorf("%s: tcpdump %q matches %d packets, the truth says %d", name, c.filter, got, c.want)
			}
		}
	}
}

// TestLoopbackSample checks the capture of real traffic that
// scripts/capture-loopback made: every packet decodes, its checksums were
// filled in, and tshark finds nothing malformed in it.
func TestLoopbackSample(t *testing.T) {
	const name = "loopback-sample.pcap"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("%s missing (scripts/capture-loopback makes it): %v", name, err)
	}
	frames := readFrames(t, data, PCAP)
	d := &decoder{t: t, frags: map[string]*fragBuf{}}
	for i, f := range frames {
		if dg, ok := d.frame(i+1, f); ok {
			d.checkTransport(i+1, dg)
		}
	}
	if d.port80 == 0 || d.port53 == 0 {
		t.Fatalf("%s has %d tcp port 80 and %d udp port 53 packets; want both", name, d.port80, d.port53)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed; skipping the tshark check of the loopback sample")
	}
	for _, it := range parseExpert(tshark(t, "-r", name, "-q", "-z", "expert")) {
		if it.severity == "Errors" || it.group == "Malformed" || it.group == "Checksum" {
			t.Errorf("tshark expert info: %d× %s %s %s: %s", it.count, it.severity, it.group, it.protocol, it.summary)
		}
	}
}

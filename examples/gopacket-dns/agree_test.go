package gopacketdns

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/logdiff"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/replay"
)

// tracesDir holds the traces wirebench bundles, made by its trace
// generator: this module lives two levels below wirebench's root.
const tracesDir = "../../traces"

// bundledTraces returns the bundled capture files.
func bundledTraces(t testing.TB) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join(tracesDir, "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range all {
		if filepath.Ext(f) != ".json" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no bundled trace in %s", tracesDir)
	}
	return out
}

// tcpDNS is the sub-trace of DNS over TCP, which the default rules leave
// out (they hold udp port 53, as Spicy's benchmark does): the bundled
// traces retry truncated replies over TCP.
const tcpDNS = "dns-tcp"

// preprocessTrace writes the batch files of trace into a new directory:
// the default sub-traces and DNS over TCP.
func preprocessTrace(t testing.TB, trace string) string {
	t.Helper()
	cfg := preprocess.DefaultConfig()
	cfg.Rules.SubTraces = append(cfg.Rules.SubTraces, preprocess.SubTrace{Name: tcpDNS, Transport: connid.ProtoTCP, Ports: []uint16{53}})
	dir := t.TempDir()
	if _, err := preprocess.Run(context.Background(), cfg, dir, trace); err != nil {
		t.Fatal(err)
	}
	return dir
}

var usageRE = regexp.MustCompile(`(?m)^# user_time=.* transactions=(\d+) `)

// replayLog replays batch with the implementation impl as the replay
// binary does, into a new log directory, and returns it with the
// transaction count of the -U line.
func replayLog(t *testing.T, batch, impl string) (dir, count string) {
	t.Helper()
	dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"--parsers", impl, "-U", "--log-dir", dir, "-F", batch}
	if code := replay.Main("dns-gopacket-parser", dns.Protocol, args, strings.NewReader(""), &stdout, &stderr); code != replay.ExitOK {
		t.Fatalf("%s %v: exit %d\n%s", impl, args, code, stderr.Bytes())
	}
	m := usageRE.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("%s: no -U line in %q", impl, stderr.String())
	}
	return dir, m[1]
}

// TestBundledTraces replays the DNS batch files of every bundled trace,
// UDP and TCP, with native and with gopacket: the same number of
// transactions, and dns.log the same record for record and field by field.
func TestBundledTraces(t *testing.T) {
	for _, trace := range bundledTraces(t) {
		dir := preprocessTrace(t, trace)
		for _, sub := range []string{"dns", tcpDNS} {
			t.Run(filepath.Base(trace)+"/"+sub, func(t *testing.T) {
				batch := filepath.Join(dir, preprocess.BatchFile(sub))
				native, nativeN := replayLog(t, batch, parsers.Native)
				peer, peerN := replayLog(t, batch, Name)
				if nativeN != peerN {
					t.Errorf("%s transactions, native %s", peerN, nativeN)
				}
				a, b := filepath.Join(native, "dns.log"), filepath.Join(peer, "dns.log")
				if _, err := os.Stat(a); err != nil {
					t.Logf("no dns.log: no DNS traffic (%s transactions)", nativeN)
					return
				}
				schema, _ := logdiff.SchemaFor("dns")
				res, err := logdiff.CompareFiles(schema, a, b, logdiff.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d records; %s", res.ARecords, res.Summary())
				if !res.Same() {
					var out strings.Builder
					if err := res.WriteText(&out); err != nil {
						t.Fatal(err)
					}
					t.Errorf("dns.log differs from native's:\n%s", out.String())
				}
			})
		}
	}
}

package fingertest_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/internal/fingertest"
)

// fingerSession is a whole Finger connection to port 79: handshake, the
// query, the reply, and both FINs.
func fingerSession(query, reply string) []byte {
	const c, s, cp, sp = "10.0.0.1", "10.0.0.2", 40000, 79
	ci, si := uint32(100), uint32(500)
	seg := func(from, to string, fp, tp uint16, seq, ack uint32, flags, payload string) []byte {
		ip := capturetest.IPv4(from, to, layers.IPProtocolTCP)
		t := capturetest.TCP(fp, tp, ip)
		t.Seq, t.Ack = seq, ack
		t.SYN, t.ACK, t.PSH, t.FIN = strings.Contains(flags, "S"), strings.Contains(flags, "A"), strings.Contains(flags, "P"), strings.Contains(flags, "F")
		return capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4), ip, t, gopacket.Payload(payload))
	}
	q, r := uint32(len(query)), uint32(len(reply))
	frames := [][]byte{
		seg(c, s, cp, sp, ci, 0, "S", ""),
		seg(s, c, sp, cp, si, ci+1, "SA", ""),
		seg(c, s, cp, sp, ci+1, si+1, "A", ""),
		seg(c, s, cp, sp, ci+1, si+1, "PA", query),
		seg(s, c, sp, cp, si+1, ci+1+q, "PA", reply),
		seg(s, c, sp, cp, si+1+r, ci+1+q, "FA", ""),
		seg(c, s, cp, sp, ci+1+q, si+2+r, "FA", ""),
		seg(s, c, sp, cp, si+2+r, ci+2+q, "A", ""),
	}
	recs := make([]capturetest.Record, len(frames))
	for i, f := range frames {
		recs[i] = capturetest.Record{TS: 1_700_000_000e9 + int64(i)*1e6, Data: f}
	}
	return capturetest.Pcap(capturetest.PcapOptions{LinkType: uint32(capture.LinkTypeEthernet)}, recs...)
}

// TestAnalyzer runs the analyzer over a trace with the third protocol
// alone: it is parsed on its descriptor's port, written to its own log,
// and named as the connection's service in conn.log.
func TestAnalyzer(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "finger.pcap")
	if err := os.WriteFile(trace, fingerSession("alice\r\n", "Login: alice\r\nNo plan.\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var conn, finger bytes.Buffer
	a, err := analyzer.New(analyzer.Config{Protocols: []*parsers.Protocol{fingertest.Protocol}},
		analyzer.Output{Conn: &conn, Logs: map[string]io.Writer{"finger": &finger}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ReadTrace(trace); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got := a.Stats().Records["finger"]; got != 1 {
		t.Errorf("Stats().Records[finger] = %d, want 1", got)
	}
	if !strings.Contains(finger.String(), "\t10.0.0.1\t40000\t10.0.0.2\t79\t\"alice\"\tF\t24\t0\n") {
		t.Errorf("finger.log:\n%s", finger.String())
	}
	if !strings.Contains(conn.String(), "\ttcp\tfinger\t") {
		t.Errorf("conn.log does not name the service finger:\n%s", conn.String())
	}
}

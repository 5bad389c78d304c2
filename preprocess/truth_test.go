package preprocess_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/traces"
)

// The split and the recording of each bundled trace agree with its truth
// file (traces/README.md):
//
//   - spicy-http.pcap holds the tcp_port_80_packets frames, and
//     spicy-dns.pcap the udp_port_53_packets frames, plus the fragments of
//     their datagrams that tcpdump's filter, by which the truth counts
//     them, cannot match: IPv4 fragments after the first, and every IPv6
//     fragment (behind its Fragment header, the ports of the first one are
//     out of tcpdump's sight). The truth looks inside VLAN tags, as the
//     split does.
//   - spicy-http.dat records http_connections connections: each TCP
//     connection to port 80. (The truth has no count of the UDP flows to
//     port 53 alone.)
func TestBundledTracesSplitAsTruthSays(t *testing.T) {
	truths, err := filepath.Glob(filepath.Join("..", "traces", "*.truth.json"))
	if err != nil || len(truths) == 0 {
		t.Fatalf("no truth files in ../traces (%v)", err)
	}
	for _, truthFile := range truths {
		trace := strings.TrimSuffix(truthFile, ".truth.json")
		t.Run(filepath.Base(trace), func(t *testing.T) {
			truth, err := traces.ReadTruth(truthFile)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			sum, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace)
			if err != nil {
				t.Fatal(err)
			}
			for _, sub := range []struct {
				name  string
				s     preprocess.SubTraceSummary
				file  string
				truth int64
			}{
				{"tcp_port_80_packets", *sum.SubTrace("http"), preprocess.PcapFile("http"), truth.TCPPort80Packets},
				{"udp_port_53_packets", *sum.SubTrace("dns"), preprocess.PcapFile("dns"), truth.UDPPort53Packets},
			} {
				packets, beyond := countFrames(t, filepath.Join(dir, sub.file))
				t.Logf("%s: %d frames, %d fragments beyond tcpdump's filter", sub.file, packets, beyond)
				if packets != sub.s.Packets {
					t.Errorf("%s holds %d frames, the summary says %d", sub.file, packets, sub.s.Packets)
				}
				if packets-beyond != sub.truth {
					t.Errorf("%s: %d frames, %d of them fragments tcpdump cannot match: %d, want %s = %d",
						sub.file, packets, beyond, packets-beyond, sub.name, sub.truth)
				}
			}
			if sum.SubTrace("http").Connections != truth.HTTPConnections {
				t.Errorf("%s records %d connections, want http_connections = %d", preprocess.BatchFile("http"), sum.SubTrace("http").Connections, truth.HTTPConnections)
			}
		})
	}
}

// countFrames returns the frames of a capture file, and how many of them
// are IP fragments whose ports tcpdump cannot see: IPv4 fragments other
// than the first, and IPv6 fragments.
func countFrames(t *testing.T, path string) (frames, beyond int64) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := capture.NewDecoder()
	var p capture.Packet
	for {
		err := r.Next(&p)
		if errors.Is(err, io.EOF) {
			return frames, beyond
		}
		if err != nil {
			t.Fatal(err)
		}
		frames++
		if err := d.Decode(&p); err != nil {
			t.Fatalf("%s: frame %d: %v", path, frames, err)
		}
		if p.Fragment && (p.FragOffset > 0 || p.IPVersion == 6) {
			beyond++
		}
	}
}

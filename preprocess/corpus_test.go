package preprocess_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// corpusFailures are the corpus traces that preprocess refuses, with the
// cause its error gives after the file's name. Every other trace must
// preprocess without error.
var corpusFailures = map[string]string{}

// TestRunCorpus preprocesses every corpus trace with the default rules, as
// "run-benchmark preprocess" does, and checks the outcome: the expected
// error, naming the file, with nothing written; or four valid files that
// agree with the summary and with the manifest's packet counts.
func TestRunCorpus(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	listed := map[string]bool{}
	for _, e := range c.Entries {
		listed[e.Trace] = true
	}
	for trace := range corpusFailures {
		if !listed[trace] {
			t.Errorf("corpusFailures lists %s, which the manifest does not", trace)
		}
	}
	for _, e := range c.Entries {
		t.Run(e.Trace, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			path := e.File(c)
			sum, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, path)
			if cause, ok := corpusFailures[e.Trace]; ok {
				if want := path + ": " + cause; err == nil || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("the output directory was created: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Packets != int64(e.Capinfos.Packets) {
				t.Errorf("read %d packets, capinfos counts %d", sum.Packets, e.Capinfos.Packets)
			}
			checkRunOutputs(t, dir, sum)
			// The split itself is compared with tcpdump's output in
			// TestSplitMatchesTcpdump; the counts must agree where the
			// rules mean the same.
			if _, deviates := splitDeviations[e.Trace]; deviates || e.Has("ip-fragments") || e.Tcpdump == nil {
				return
			}
			if sum.SubTrace("http").Packets != int64(e.Tcpdump.TCPPort80) || sum.SubTrace("dns").Packets != int64(e.Tcpdump.UDPPort53) {
				t.Errorf("%d HTTP and %d DNS packets, tcpdump counts %d and %d", sum.SubTrace("http").Packets, sum.SubTrace("dns").Packets, e.Tcpdump.TCPPort80, e.Tcpdump.UDPPort53)
			}
		})
	}
}

// checkRunOutputs reads back the four files of a run and checks them
// against its summary: pcap files with as many packets as it counts, batch
// files that parse to the end with every connection ended, TCP stream
// connections in the HTTP file and UDP block connections in the DNS file,
// holding the data and gaps the summary counts.
func checkRunOutputs(t *testing.T, dir string, sum preprocess.Summary) {
	t.Helper()
	for _, sub := range []struct {
		pcap, batch string
		s           preprocess.SubTraceSummary
		proto, kind string
	}{
		{preprocess.PcapFile("http"), preprocess.BatchFile("http"), *sum.SubTrace("http"), "tcp", "stream"},
		{preprocess.PcapFile("dns"), preprocess.BatchFile("dns"), *sum.SubTrace("dns"), "udp", "block"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, sub.pcap))
		if err != nil {
			t.Fatal(err)
		}
		f, err := readPcap(sub.pcap, data)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(f.frames)) != sub.s.Packets {
			t.Errorf("%s holds %d packets, the summary says %d", sub.pcap, len(f.frames), sub.s.Packets)
		}
		if data, err = os.ReadFile(filepath.Join(dir, sub.batch)); err != nil {
			t.Fatal(err)
		}
		b := mustParseBatch(t, sub.batch, data)
		var bytes, gaps, records int64
		for _, c := range b.conns {
			if c.proto != sub.proto || c.kind.String() != sub.kind {
				t.Errorf("%s: connection %s is a %s connection", sub.batch, c.cid, c.kind)
			}
			for dir := range 2 {
				d, g := c.data(dir)
				bytes += int64(len(d))
				gaps += g
				for _, ch := range c.chunks[dir] {
					if ch.gap == 0 {
						records++
					}
				}
			}
		}
		s := sub.s
		if int64(len(b.conns)) != s.Connections || bytes != s.DataBytes || gaps != s.GapBytes || records != s.DataRecords {
			t.Errorf("%s: %d connections, %d data records of %d bytes, %d gap bytes; the summary says %d, %d, %d, %d",
				sub.batch, len(b.conns), records, bytes, gaps, s.Connections, s.DataRecords, s.DataBytes, s.GapBytes)
		}
	}
}

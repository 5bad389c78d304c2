package analyzer_test

import (
	"bufio"
	"bytes"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/traces"
)

// truthKeys says which truth keys (traces/README.md) give the records of
// each log, as Zeek writes them:
//
//	conn.log  connections: tcp_connections + udp_flows + icmp_flows, one
//	          record per transport conversation
//	http.log  http_requests: one record per request, answered or not
//	          (http_transactions counts only the answered ones), with or
//	          without lost bytes (Zeek resynchronises after a gap and logs
//	          the message; http_requests_with_gaps counts them); 100 Continue
//	          replies (http_interim_responses) add no record
//	dns.log   dns_queries, over UDP and over TCP: one record per query and
//	          its reply (dns_transactions) or per query left unanswered
//	          (dns_unanswered); every reply answers a query
func truthKeys(tr *traces.Truth) map[string]int64 {
	return map[string]int64{
		"conn": tr.Connections,
		"http": tr.HTTPRequests,
		"dns":  tr.DNSQueries,
	}
}

// The analyzer's logs of each bundled trace hold as many records as its
// truth file says, and the methods, statuses, query types and rcodes it
// lists, with the native and with the standard parsers.
func TestBundledTracesMatchTruth(t *testing.T) {
	truths, err := filepath.Glob(filepath.Join("..", "..", "traces", "*.truth.json"))
	if err != nil || len(truths) == 0 {
		t.Fatalf("no truth files in ../../traces (%v)", err)
	}
	for _, truthFile := range truths {
		trace := strings.TrimSuffix(truthFile, ".truth.json")
		tr, err := traces.ReadTruth(truthFile)
		if err != nil {
			t.Fatal(err)
		}
		// The truth adds up as the mapping above assumes.
		if tr.Connections != tr.TCPConnections+tr.UDPFlows+tr.ICMPFlows || tr.DNSQueries != tr.DNSTransactions+tr.DNSUnanswered ||
			tr.DNSResponses != tr.DNSTransactions {
			t.Fatalf("%s: connections %d (tcp %d, udp %d, icmp %d), dns queries %d (answered %d, unanswered %d), responses %d do not add up",
				truthFile, tr.Connections, tr.TCPConnections, tr.UDPFlows, tr.ICMPFlows, tr.DNSQueries, tr.DNSTransactions, tr.DNSUnanswered, tr.DNSResponses)
		}
		want := truthKeys(tr)
		for _, impl := range []string{builtin.Native, builtin.Std} {
			t.Run(filepath.Base(trace)+"/"+impl, func(t *testing.T) {
				logs := map[string]*bytes.Buffer{"conn": {}, "http": {}, "dns": {}}
				a, err := analyzer.New(analyzer.Config{Parsers: impl}, analyzer.Output{Conn: logs["conn"], Logs: map[string]io.Writer{"http": logs["http"], "dns": logs["dns"]}})
				if err != nil {
					t.Fatal(err)
				}
				readErr := a.ReadTrace(trace)
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
				if readErr != nil {
					t.Fatal(readErr)
				}
				// The standard HTTP parsers stop a direction at its first gap
				// (net/http cannot resynchronise; see parsers/std), so on a
				// trace with gaps their http.log misses what follows one.
				checked := []string{"conn", "http", "dns"}
				if impl == builtin.Std && tr.Gaps > 0 {
					checked = []string{"conn", "dns"}
					t.Logf("http.log not compared: the trace has %d gaps, and the standard HTTP parsers stop at a gap", tr.Gaps)
				}
				stats := a.Stats()
				for _, log := range checked {
					got := records(t, logs[log])
					if got != want[log] {
						t.Errorf("%s.log: %d records, want %d", log, got, want[log])
					}
					if reported := map[string]int64{"conn": stats.Conns, "http": stats.Records["http"], "dns": stats.Records["dns"]}[log]; reported != got {
						t.Errorf("%s.log: %d records, Stats says %d", log, got, reported)
					}
				}
				// The records say what the truth says of them: requests per
				// method; responses per status, 100 Continue (info_code)
				// included; queries per type; replies per rcode.
				for _, c := range []struct {
					log     string
					columns []string
					want    map[string]int64
				}{
					{"http", []string{"method"}, tr.HTTPMethods},
					{"http", []string{"status_code", "info_code"}, tr.HTTPStatus},
					{"dns", []string{"qtype_name"}, tr.DNSQtypes},
					{"dns", []string{"rcode_name"}, tr.DNSRcodes},
				} {
					if !slices.Contains(checked, c.log) {
						continue
					}
					if got := tally(t, logs[c.log], c.columns...); !maps.Equal(got, c.want) {
						t.Errorf("%s.log %s: %v, want %v", c.log, strings.Join(c.columns, "+"), got, c.want)
					}
				}
			})
		}
	}
}

// TestGeneratedLinksMatchTruth generates the same traffic in every link
// layer the generator writes (802.11 with and without radiotap, NFLOG,
// PPP, Cisco HDLC, as well as Ethernet) and checks that the analyzer's
// logs hold what the truth says, whatever the link.
func TestGeneratedLinksMatchTruth(t *testing.T) {
	for _, link := range traces.Links {
		t.Run(string(link), func(t *testing.T) {
			cfg := traces.DefaultConfig()
			cfg.Size, cfg.Sessions, cfg.Seed, cfg.Link = 0, 150, 15, link
			var trace bytes.Buffer
			tr, err := traces.Generate(&trace, cfg)
			if err != nil {
				t.Fatal(err)
			}
			logs := map[string]*bytes.Buffer{"conn": {}, "http": {}, "dns": {}}
			a, err := analyzer.New(analyzer.Config{}, analyzer.Output{Conn: logs["conn"], Logs: map[string]io.Writer{"http": logs["http"], "dns": logs["dns"]}})
			if err != nil {
				t.Fatal(err)
			}
			r, err := capture.NewReader(&trace, string(link)+".pcap")
			if err != nil {
				t.Fatal(err)
			}
			readErr := a.Read(r)
			if err := a.Close(); err != nil {
				t.Fatal(err)
			}
			if readErr != nil {
				t.Fatal(readErr)
			}
			if s := a.Stats(); s.DecodeErrors != 0 || s.Packets != tr.Packets {
				t.Errorf("%d of %d packets read, %d decode errors", s.Packets, tr.Packets, s.DecodeErrors)
			}
			for log, want := range truthKeys(tr) {
				if got := records(t, logs[log]); got != want {
					t.Errorf("%s.log: %d records, want %d", log, got, want)
				}
			}
		})
	}
}

// tally counts the values of the named columns of a Zeek TSV log over
// its records, leaving out unset ones ("-").
func tally(t *testing.T, log *bytes.Buffer, columns ...string) map[string]int64 {
	t.Helper()
	counts := map[string]int64{}
	var idx []int
	for _, line := range strings.Split(log.String(), "\n") {
		fields := strings.Split(line, "\t")
		switch {
		case fields[0] == "#fields":
			for _, c := range columns {
				i := slices.Index(fields[1:], c)
				if i < 0 {
					t.Fatalf("no column %s in %q", c, line)
				}
				idx = append(idx, i)
			}
		case line == "" || line[0] == '#':
		case idx == nil:
			t.Fatalf("a record before the #fields line: %q", line)
		default:
			for _, i := range idx {
				if i < len(fields) && fields[i] != "-" {
					counts[fields[i]]++
				}
			}
		}
	}
	return counts
}

// records counts the lines of a Zeek TSV log that are not empty and do
// not start with '#'.
func records(t *testing.T, log *bytes.Buffer) int64 {
	t.Helper()
	var n int64
	sc := bufio.NewScanner(bytes.NewReader(log.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" && line[0] != '#' {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

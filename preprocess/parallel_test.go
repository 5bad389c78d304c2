package preprocess_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// connSet is what "the same batch file" means with workers or shards: the
// same connections (a connection id may come more than once, when a
// 5-tuple is reused), each with the same kind, flows, parsers, and data
// and gaps in each direction in the same order, and every connection
// ended. The order of the connections, and how their records interleave,
// may differ.
func connSet(t *testing.T, name string, file []byte) []string {
	t.Helper()
	f := mustParseBatch(t, name, file)
	var out []string
	for _, c := range f.conns {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s %v %v ended=%v", c.cid, c.kind, c.flows, c.parsers, c.ended)
		for dir, chunks := range c.chunks {
			for _, ch := range chunks {
				fmt.Fprintf(&b, "\n%d %d %q", dir, ch.gap, ch.data)
			}
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}

func sameConns(t *testing.T, what, name string, want, got []byte) {
	t.Helper()
	w, g := connSet(t, name, want), connSet(t, name, got)
	if !slices.Equal(w, g) {
		i := 0
		for i < min(len(w), len(g)) && w[i] == g[i] {
			i++
		}
		first := "(one is a prefix of the other)"
		if i < min(len(w), len(g)) {
			first = fmt.Sprintf("got  %.300s\nwant %.300s", g[i], w[i])
		}
		t.Errorf("%s: %s holds %d connections, want the %d of one worker; first difference:\n%s", what, name, len(g), len(w), first)
	}
}

// preprocessTraces are the bundled traces and, when ../shared/corpus is
// there, Zeek's corpus traces of HTTP and DNS (fragments included).
func preprocessTraces(t *testing.T) []string {
	paths := corpustest.BundledTraces(t)
	c, err := corpustest.FindCorpus()
	if err != nil {
		t.Logf("no corpus traces: %v", err)
		return paths
	}
	for _, e := range c.Entries {
		paths = append(paths, e.File(c))
	}
	return paths
}

// TestWorkersSameOutputs checks that 2, 3 and 7 workers write the pcap
// files of one worker byte for byte and batch files with the same
// connections, and that the summaries agree.
func TestWorkersSameOutputs(t *testing.T) {
	for _, path := range preprocessTraces(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			cfg := preprocess.DefaultConfig()
			one := processBytes(cfg, name, data)
			for _, n := range []int{2, 3, 7} {
				cfg.Workers, cfg.ShardSeed = n, uint64(n)
				got := processBytes(cfg, name, data)
				what := fmt.Sprintf("%d workers", n)
				if (got.err == nil) != (one.err == nil) {
					t.Fatalf("%s: error %v, want %v", what, got.err, one.err)
				}
				if !slices.Equal(got.httpPcap, one.httpPcap) || !slices.Equal(got.dnsPcap, one.dnsPcap) {
					t.Errorf("%s: the pcap files differ from one worker's", what)
				}
				sameConns(t, what, "spicy-http.dat", one.httpDat, got.httpDat)
				sameConns(t, what, "spicy-dns.dat", one.dnsDat, got.dnsDat)
				for i := range one.sum.SubTraces {
					w, g := one.sum.SubTraces[i], got.sum.SubTraces[i]
					if w.Packets != g.Packets || w.Connections != g.Connections || w.DataRecords != g.DataRecords || w.DataBytes != g.DataBytes || w.Gaps != g.Gaps {
						t.Errorf("%s: %s summary %+v, want %+v", what, w.Name, g, w)
					}
				}
			}
		})
	}
}

// TestShardsSameConnections checks that the batch files of 3 shards hold
// together the connections of the whole trace, each once, and their pcap
// files its packets.
func TestShardsSameConnections(t *testing.T) {
	for _, path := range corpustest.BundledTraces(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			whole := processBytes(preprocess.DefaultConfig(), name, data)
			var http, dns []string
			var packets, other int64
			const n = 3
			for k := 1; k <= n; k++ {
				cfg := preprocess.DefaultConfig()
				cfg.Shard, cfg.Shards, cfg.ShardSeed, cfg.Workers = k, n, 99, k
				part := processBytes(cfg, name, data)
				if part.err != nil {
					t.Fatal(part.err)
				}
				if part.sum.Shard != fmt.Sprintf("%d/%d", k, n) {
					t.Errorf("shard %d/%d: the summary says shard %q", k, n, part.sum.Shard)
				}
				var text strings.Builder
				part.sum.WriteText(&text)
				if want := fmt.Sprintf("\nshard %d/%d: ", k, n); !strings.Contains(text.String(), want) || !strings.Contains(text.String(), " of other shards left out\n") {
					t.Errorf("the summary's text lacks %q:\n%s", want, text.String())
				}
				http = append(http, connSet(t, "spicy-http.dat", part.httpDat)...)
				dns = append(dns, connSet(t, "spicy-dns.dat", part.dnsDat)...)
				for _, st := range part.sum.SubTraces {
					packets += st.Packets
				}
				other += part.sum.OtherShards
			}
			slices.Sort(http)
			slices.Sort(dns)
			if w := connSet(t, "spicy-http.dat", whole.httpDat); !slices.Equal(w, http) {
				t.Errorf("the shards' HTTP batch files hold %d connections, want the whole trace's %d", len(http), len(w))
			}
			if w := connSet(t, "spicy-dns.dat", whole.dnsDat); !slices.Equal(w, dns) {
				t.Errorf("the shards' DNS batch files hold %d connections, want the whole trace's %d", len(dns), len(w))
			}
			var want int64
			for _, st := range whole.sum.SubTraces {
				want += st.Packets
			}
			if packets != want || other != (n-1)*whole.sum.Packets {
				t.Errorf("the shards' sub-traces hold %d packets (%d skipped), want %d (%d)", packets, other, want, (n-1)*whole.sum.Packets)
			}
		})
	}
}

func TestShardOutOfRange(t *testing.T) {
	data, err := os.ReadFile(corpustest.BundledTraces(t)[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{0, 4} {
		cfg := preprocess.DefaultConfig()
		cfg.Shard, cfg.Shards = k, 3
		if got := processBytes(cfg, "t.pcap", data); got.err == nil || !strings.Contains(got.err.Error(), "shard") {
			t.Errorf("shard %d of 3: error %v, want one naming the shard", k, got.err)
		}
	}
}

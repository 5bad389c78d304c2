package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/traces"
)

// benchFiles are the batch files of a trace generated as make bench's is
// (its mix, no impairments), 4 MB instead of 100: spicy-http.dat and
// spicy-dns.dat, made once per test binary.
var benchFiles = sync.OnceValues(func() (map[string][]byte, error) {
	dir, err := os.MkdirTemp("", "replay-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := traces.DefaultConfig()
	cfg.Size = 4_000_000
	cfg.MaxBody = 256 << 10
	cfg.Mix = traces.Mix{HTTP: 45, DNS: 1500, TLS: 6, SSH: 2, NTP: 4, ICMP: 3}
	cfg.Impair = traces.Impairments{}
	trace := filepath.Join(dir, "bench.pcap")
	f, err := os.Create(trace)
	if err != nil {
		return nil, err
	}
	if _, err := traces.Generate(f, cfg); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	for _, p := range []string{"http", "dns"} {
		if files[p], err = os.ReadFile(filepath.Join(dir, preprocess.BatchFile(p))); err != nil {
			return nil, err
		}
	}
	return files, nil
})

// countingReplayer returns a Replayer of proto by impl that counts the
// transactions into *n, as the replay binaries do without --log-dir.
func countingReplayer(tb testing.TB, proto *parsers.Protocol, impl string, n *int64) *Replayer {
	tb.Helper()
	rp, err := NewFor(Config{Parsers: impl, MaxConns: proto.ReplayMaxConns, MaxBuffered: 64 << 20}, []*parsers.Protocol{proto}, func(p *parsers.Protocol) any {
		return p.SinkFunc(func(*parsers.Conn, any) { *n++ })
	})
	if err != nil {
		tb.Fatal(err)
	}
	return rp
}

// BenchmarkReplay replays the batch files of benchFiles in-process, as
// dns-parser -U and http-parser -U do (the binaries add their start-up).
//
//	go test -run '^$' -bench Replay -count 6 ./replay
func BenchmarkReplay(b *testing.B) {
	files, err := benchFiles()
	if err != nil {
		b.Fatal(err)
	}
	for _, proto := range []*parsers.Protocol{DNS, HTTP} {
		for _, impl := range impls {
			b.Run(proto.Name+"/"+impl, func(b *testing.B) {
				file := files[proto.Name]
				var n int64
				rp := countingReplayer(b, proto, impl, &n)
				in := bytes.NewReader(file)
				b.SetBytes(int64(len(file)))
				b.ReportAllocs()
				for b.Loop() {
					in.Reset(file)
					if err := rp.Replay(in, "bench"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)/float64(b.N)/b.Elapsed().Seconds()*float64(b.N), "tx/s")
			})
		}
	}
}

// TestReplayAllocs checks that native DNS replay allocates nothing per
// transaction or record: replaying a whole batch file again costs the
// reader's buffers and a share of a chunk of ids per connection (see
// parsers.Dispatcher), well under one allocation per four connections.
func TestReplayAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	files, err := benchFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []*parsers.Protocol{DNS} {
		file := files[proto.Name]
		var n int64
		rp := countingReplayer(t, proto, parsers.Native, &n)
		in := bytes.NewReader(file)
		replay := func() {
			in.Reset(file)
			if err := rp.Replay(in, "bench"); err != nil {
				t.Fatal(err)
			}
		}
		for range 3 { // the free lists fill and the maps grow
			replay()
		}
		n = 0
		conns := rp.Stats().Conns
		replay()
		conns, tx := rp.Stats().Conns-conns, n
		allocs := testing.AllocsPerRun(10, replay)
		t.Logf("%s: %.0f allocations per replay of %d connections, %d transactions", proto.Name, allocs, conns, tx)
		if allocs > float64(conns)/4 {
			t.Errorf("%s: %.0f allocations per replay of %d connections, want at most one per four", proto.Name, allocs, conns)
		}
	}
}

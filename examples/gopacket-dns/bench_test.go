package gopacketdns

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/replay"
)

// BenchmarkReplay replays the DNS batch file of each bundled trace in
// memory, through the replay binaries' code path (replay.NewFor), with
// the native parser and with gopacket, one after the other on the same
// bytes:
//
//	go test -run '^$' -bench Replay -benchmem -count 6 | benchstat -col /impl -
func BenchmarkReplay(b *testing.B) {
	for _, trace := range bundledTraces(b) {
		dir := preprocessTrace(b, trace)
		data, err := os.ReadFile(filepath.Join(dir, preprocess.BatchFile("dns")))
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []string{parsers.Native, Name} {
			b.Run(filepath.Base(trace)+"/impl="+impl, func(b *testing.B) {
				sink := &countSink{}
				rp, err := replay.NewFor(replay.Config{Parsers: impl}, []*parsers.Protocol{dns.Protocol},
					func(*parsers.Protocol) any { return sink })
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := rp.Replay(bytes.NewReader(data), "dns.dat"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(sink.n)/float64(b.N), "tx/op")
			})
		}
	}
}

// BenchmarkExchange is one UDP query and its reply with two answers, on a
// connection of a warmed-up analyzer: the cost of a transaction alone.
func BenchmarkExchange(b *testing.B) {
	q := pack(40, query, "www.example.com", dns.TypeA)
	r := pack(40, answer, "www.example.com", dns.TypeA,
		rr{typ: dns.TypeCNAME, ttl: 300, data: appendName(nil, "edge.example.net")},
		rr{name: "edge.example.net", typ: dns.TypeA, ttl: 60, data: []byte{192, 0, 2, 7}})
	for _, impl := range []struct {
		name string
		new  func(dns.Sink) parsers.Analyzer
	}{{parsers.Native, native}, {Name, peer}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			exchange := exchanger(impl.new(&countSink{}), q, r)
			b.SetBytes(int64(len(q) + len(r)))
			b.ReportAllocs()
			for b.Loop() {
				exchange()
			}
		})
	}
}

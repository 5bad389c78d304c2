package fasthttp

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/replay"
)

// BenchmarkReplay replays the HTTP batch file of each bundled trace in
// memory, through the replay binaries' code path (replay.NewFor), with
// the native parser and with fasthttp, one after the other on the same
// bytes:
//
//	go test -run '^$' -bench Replay -benchmem -count 6 | benchstat -col /impl -
func BenchmarkReplay(b *testing.B) {
	for _, trace := range bundledTraces(b) {
		dir := preprocessTrace(b, trace)
		data, err := os.ReadFile(filepath.Join(dir, preprocess.BatchFile("http")))
		if err != nil {
			b.Fatal(err)
		}
		for _, impl := range []string{parsers.Native, Name} {
			b.Run(filepath.Base(trace)+"/impl="+impl, func(b *testing.B) {
				sink := &countSink{}
				rp, err := replay.NewFor(replay.Config{Parsers: impl}, []*parsers.Protocol{http.Protocol},
					func(*parsers.Protocol) any { return sink })
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				for b.Loop() {
					if err := rp.Replay(bytes.NewReader(data), "http.dat"); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(sink.n)/float64(b.N), "tx/op")
			})
		}
	}
}

// BenchmarkExchange is one keep-alive request and its chunked reply on a
// connection of a warmed-up analyzer: the cost of a transaction alone.
func BenchmarkExchange(b *testing.B) {
	q := []byte("GET /index.html?q=%41 HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n" +
		"Accept: */*\r\nAccept-Encoding: gzip\r\nConnection: keep-alive\r\n\r\n")
	r := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"10\r\n<html>wire</html>\r\n0\r\n\r\n")
	for _, impl := range []struct {
		name string
		new  func(http.Sink) parsers.Analyzer
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

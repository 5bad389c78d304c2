package http

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/parsers"
)

// Microbenchmarks: the native parser against net/http (ReadRequest /
// ReadResponse over a reused bufio.Reader, bodies discarded) and against
// fasthttp's header parser (RequestHeader.Read / ResponseHeader.Read, then
// the body skipped) on the same named workloads, in the same run. Each op
// parses the whole workload; MB/s counts its bytes, msgs/s its messages.
//
//	go test -run '^$' -bench . -benchmem -count 6 ./parsers/http | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest new.txt

// segment is how the native parser is fed: TCP-sized chunks.
const segment = 1460

type workload struct {
	name    string
	replies bool // the data is server-side
	data    []byte
	msgs    int
}

func repeat(n int, parts ...string) []byte {
	var b bytes.Buffer
	for range n {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	return b.Bytes()
}

const browserRequest = "GET /search?q=zeek+http+parser&source=hp&ei=abc123&iflsig=AO6bgOgAAAAA HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate, br, zstd\r\n" +
	"Referer: https://www.example.com/\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: SID=31d4d96e407aad42; lang=en-US; theme=dark; session_token=abcdef0123456789abcdef0123456789\r\n" +
	"Upgrade-Insecure-Requests: 1\r\n" +
	"Sec-Fetch-Dest: document\r\n" +
	"Sec-Fetch-Mode: navigate\r\n" +
	"Sec-Fetch-Site: same-origin\r\n" +
	"Priority: u=0, i\r\n\r\n"

func typicalReply(body int) string {
	return "HTTP/1.1 200 OK\r\n" +
		"Date: Sat, 30 Nov 2026 12:00:00 GMT\r\n" +
		"Server: Apache/2.4.62 (Debian)\r\n" +
		"Last-Modified: Tue, 12 Nov 2026 08:30:00 GMT\r\n" +
		"ETag: \"2aa6-5d0c9e1a3b0c0\"\r\n" +
		"Accept-Ranges: bytes\r\n" +
		"Content-Length: " + strconv.Itoa(body) + "\r\n" +
		"Cache-Control: max-age=3600\r\n" +
		"Content-Type: text/html; charset=UTF-8\r\n\r\n" +
		strings.Repeat("x", body)
}

func chunkedReply(chunks, size int) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\nDate: Sat, 30 Nov 2026 12:00:00 GMT\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
	for range chunks {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", size, strings.Repeat("y", size))
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

var workloads = []workload{
	{name: "small-request", data: repeat(100, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"), msgs: 100},
	{name: "browser-request", data: repeat(100, browserRequest), msgs: 100},
	{name: "pipelined-requests", data: repeat(25,
		"GET /style.css HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Mozilla/5.0\r\nAccept: text/css\r\n\r\n",
		"GET /app.js HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n\r\n",
		"POST /api/v1/items HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"name\":\"item\",\"count\":42}\n",
		"HEAD /favicon.ico HTTP/1.1\r\nHost: example.com\r\n\r\n"), msgs: 100},
	{name: "typical-reply", replies: true, data: repeat(100, typicalReply(1024)), msgs: 100},
	{name: "chunked-reply", replies: true, data: repeat(20, chunkedReply(8, 1024)), msgs: 20},
	{name: "large-body", replies: true, data: repeat(2, typicalReply(4<<20)), msgs: 2},
}

// nativeParse feeds a workload to one connection in TCP-sized chunks.
func nativeParse(a *Analyzer, conn *parsers.Conn, w *workload) {
	cp := a.Open(conn)
	p := cp.Orig()
	if w.replies {
		p = cp.Resp()
	}
	for b := w.data; len(b) > 0; {
		n := min(len(b), segment)
		p.Feed(b[:n])
		b = b[n:]
	}
	p.Finish()
	cp.Close()
}

// netHTTPParse reads every message with net/http and discards the bodies.
func netHTTPParse(br *bufio.Reader, r *bytes.Reader, w *workload) int {
	r.Reset(w.data)
	br.Reset(r)
	n := 0
	get := &nethttp.Request{Method: "GET"}
	for {
		var body io.ReadCloser
		if w.replies {
			resp, err := nethttp.ReadResponse(br, get)
			if err != nil {
				return n
			}
			body = resp.Body
		} else {
			req, err := nethttp.ReadRequest(br)
			if err != nil {
				return n
			}
			body = req.Body
		}
		io.Copy(io.Discard, body)
		body.Close()
		n++
	}
}

// fastHTTPParse reads every header with fasthttp's header parser and skips
// the body it announces.
func fastHTTPParse(br *bufio.Reader, r *bytes.Reader, reqh *fasthttp.RequestHeader, resh *fasthttp.ResponseHeader, w *workload) int {
	r.Reset(w.data)
	br.Reset(r)
	n := 0
	for {
		var cl int
		if w.replies {
			resh.Reset()
			if err := resh.Read(br); err != nil {
				return n
			}
			cl = resh.ContentLength()
		} else {
			reqh.Reset()
			if err := reqh.Read(br); err != nil {
				return n
			}
			cl = reqh.ContentLength()
			if reqh.IsHead() || reqh.IsGet() {
				cl = max(cl, 0)
			}
		}
		switch {
		case cl > 0:
			if _, err := br.Discard(cl); err != nil {
				return n
			}
		case cl == -1:
			if !skipChunked(br) {
				return n
			}
		}
		n++
	}
}

// skipChunked skips a chunked body, trailers included.
func skipChunked(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 64)
		if err != nil {
			return false
		}
		if size == 0 {
			for {
				l, err := br.ReadSlice('\n')
				if err != nil {
					return false
				}
				if len(bytes.TrimSpace(l)) == 0 {
					return true
				}
			}
		}
		if _, err := br.Discard(int(size) + 2); err != nil {
			return false
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for i := range workloads {
		w := &workloads[i]
		b.Run(w.name, func(b *testing.B) {
			b.Run("native", func(b *testing.B) {
				sink := &countSink{}
				a := New(sink)
				conn := &parsers.Conn{ID: "bench", Kind: parsers.Stream}
				for range 3 {
					nativeParse(a, conn, w) // warm-up: free lists and buffers
				}
				before := sink.n
				nativeParse(a, conn, w)
				if got := sink.n - before; got != w.msgs {
					b.Fatalf("native reported %d transactions, want %d", got, w.msgs)
				}
				b.SetBytes(int64(len(w.data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					nativeParse(a, conn, w)
				}
				b.ReportMetric(float64(w.msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
			b.Run("net-http", func(b *testing.B) {
				br := bufio.NewReaderSize(nil, 4096)
				r := bytes.NewReader(nil)
				if n := netHTTPParse(br, r, w); n != w.msgs {
					b.Fatalf("net/http read %d messages, want %d", n, w.msgs)
				}
				b.SetBytes(int64(len(w.data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					netHTTPParse(br, r, w)
				}
				b.ReportMetric(float64(w.msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
			b.Run("fasthttp", func(b *testing.B) {
				br := bufio.NewReaderSize(nil, 4096)
				r := bytes.NewReader(nil)
				var reqh fasthttp.RequestHeader
				var resh fasthttp.ResponseHeader
				if n := fastHTTPParse(br, r, &reqh, &resh, w); n != w.msgs {
					b.Fatalf("fasthttp read %d messages, want %d", n, w.msgs)
				}
				b.SetBytes(int64(len(w.data)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					fastHTTPParse(br, r, &reqh, &resh, w)
				}
				b.ReportMetric(float64(w.msgs)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		})
	}
}

// BenchmarkCeiling measures what no parser can beat on this machine: copying
// the workload's bytes, and finding its line ends with bytes.IndexByte.
func BenchmarkCeiling(b *testing.B) {
	w := &workloads[1] // browser-request
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(w.data))
		b.SetBytes(int64(len(w.data)))
		for range b.N {
			copy(dst, w.data)
		}
	})
	b.Run("indexbyte-lines", func(b *testing.B) {
		b.SetBytes(int64(len(w.data)))
		n := 0
		for range b.N {
			for d := w.data; ; {
				i := bytes.IndexByte(d, '\n')
				if i < 0 {
					break
				}
				n++
				d = d[i+1:]
			}
		}
		if n == 0 {
			b.Fatal("no lines")
		}
	})
}

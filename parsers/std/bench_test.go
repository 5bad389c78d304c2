package std

import (
	"bufio"
	"bytes"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

type countSink struct{ n int }

func (s *countSink) HTTP(*parsers.Conn, *http.Transaction) { s.n++ }
func (s *countSink) DNS(*parsers.Conn, *dns.Transaction)   { s.n++ }

const browserRequest = "GET /projects/calendar/images/header-sunbird.png HTTP/1.1\r\n" +
	"Host: www.mozilla.org\r\n" +
	"User-Agent: Mozilla/5.0 (Windows; U; Windows NT 5.1; en-US; rv:1.9.1.5) Gecko/20091102 Firefox/3.5.5\r\n" +
	"Accept: image/png,image/*;q=0.8,*/*;q=0.5\r\n" +
	"Accept-Language: en-us,en;q=0.5\r\n" +
	"Accept-Encoding: gzip,deflate\r\n" +
	"Accept-Charset: ISO-8859-1,utf-8;q=0.7,*;q=0.7\r\n" +
	"Keep-Alive: 300\r\n" +
	"Connection: keep-alive\r\n" +
	"Referer: http://www.mozilla.org/projects/calendar/calendar.css\r\n\r\n"

// bridgeWorkloads are the request streams of BenchmarkBridge.
func bridgeWorkloads() map[string][]byte {
	body := strings.Repeat("x", 1<<20)
	return map[string][]byte{
		"pipelined-100": []byte(strings.Repeat(browserRequest, 100)),
		"body-1MB":      []byte("POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body),
	}
}

// reparser is the alternative bridge from Feed to net/http: buffer what is
// not consumed and retry ReadRequest (and the body) after every chunk.
type reparser struct {
	buf []byte
	n   int
}

func (r *reparser) Feed(b []byte) {
	r.buf = append(r.buf, b...)
	for len(r.buf) > 0 {
		rd := bytes.NewReader(r.buf)
		br := bufio.NewReader(rd)
		req, err := nethttp.ReadRequest(br)
		if err == nil {
			_, err = io.Copy(io.Discard, req.Body)
		}
		if err != nil {
			return // incomplete: wait for more (a real parser would tell errors apart)
		}
		r.n++
		used := len(r.buf) - rd.Len() - br.Buffered()
		r.buf = r.buf[used:]
	}
}

// BenchmarkBridge compares the two ways of feeding pushed chunks to
// net/http, on 1460-byte chunks (a TCP segment). Medians of 5 runs on a
// shared 2-core machine (go test -bench Bridge -count 5; the runs are noisy,
// the ratios are not):
//
//	pipelined-100: goroutine 1.5 ms, reparse 4.3 ms (reparse re-reads the
//	               pending request and allocates a bufio.Reader per try)
//	body-1MB:      goroutine 0.7 ms (1.5 GB/s), reparse 65 ms (16 MB/s):
//	               reparse is quadratic in the number of chunks
//
// so the analyzer uses a goroutine per direction.
func BenchmarkBridge(b *testing.B) {
	for name, data := range bridgeWorkloads() {
		b.Run(name+"/goroutine", func(b *testing.B) {
			sink := &countSink{}
			a := NewHTTP(sink)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				cp := a.Open(&parsers.Conn{Kind: parsers.Stream})
				feedSegments(cp.Orig(), data)
				cp.Close()
			}
		})
		b.Run(name+"/reparse", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := &reparser{}
				feedSegments(r, data)
			}
		})
	}
}

func feedSegments(p interface{ Feed([]byte) }, data []byte) {
	for len(data) > 0 {
		n := min(1460, len(data))
		p.Feed(data[:n])
		data = data[n:]
	}
}

// BenchmarkHTTP measures the std HTTP analyzer on a browser-like exchange:
// 10 requests and their replies per connection, in 1460-byte segments.
func BenchmarkHTTP(b *testing.B) {
	reply := "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 2000\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("p", 2000)
	req := []byte(strings.Repeat(browserRequest, 10))
	resp := []byte(strings.Repeat(reply, 10))
	sink := &countSink{}
	a := NewHTTP(sink)
	b.SetBytes(int64(len(req) + len(resp)))
	b.ReportAllocs()
	for b.Loop() {
		cp := a.Open(&parsers.Conn{Kind: parsers.Stream})
		feedSegments(cp.Orig(), req)
		feedSegments(cp.Resp(), resp)
		cp.Close()
	}
	b.ReportMetric(float64(sink.n)/b.Elapsed().Seconds(), "tx/s")
}

// BenchmarkDNS measures the std DNS analyzer on query/reply pairs over UDP.
func BenchmarkDNS(b *testing.B) {
	q := query(1, "www.example.com.", mdns.TypeA)
	r := reply(q, 0,
		&mdns.CNAME{Hdr: mdns.RR_Header{Name: "www.example.com.", Rrtype: mdns.TypeCNAME, Class: 1, Ttl: 300}, Target: "web.example.net."},
		&mdns.A{Hdr: mdns.RR_Header{Name: "web.example.net.", Rrtype: mdns.TypeA, Class: 1, Ttl: 60}, A: []byte{192, 0, 2, 1}})
	qb, _ := q.Pack()
	rb, _ := r.Pack()
	sink := &countSink{}
	a := NewDNS(sink)
	cp := a.Open(&parsers.Conn{Kind: parsers.Block})
	b.SetBytes(int64(len(qb) + len(rb)))
	b.ReportAllocs()
	for b.Loop() {
		cp.Orig().Feed(qb)
		cp.Resp().Feed(rb)
	}
	b.ReportMetric(float64(sink.n)/b.Elapsed().Seconds(), "tx/s")
}

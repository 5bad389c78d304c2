package fasthttp

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// collect is an http.Sink keeping every transaction as one line of text,
// with the fields the peer fills (not the MIME types).
type collect struct{ lines []string }

func (c *collect) HTTP(_ *parsers.Conn, tx *http.Transaction) {
	q := func(b []byte) string {
		if b == nil {
			return "-"
		}
		return fmt.Sprintf("%q", b)
	}
	var proxied []string
	for _, p := range tx.Proxied {
		proxied = append(proxied, string(p))
	}
	c.lines = append(c.lines, fmt.Sprintf("depth=%d req=%t rep=%t method=%s host=%s uri=%s referrer=%s version=%s ua=%s origin=%s "+
		"reqlen=%d resplen=%d status=%d %s info=%d %s user=%s proxied=%q",
		tx.Depth, tx.HasRequest, tx.HasReply, q(tx.Method), q(tx.Host), q(tx.URI), q(tx.Referrer), q(tx.Version), q(tx.UserAgent), q(tx.Origin),
		tx.RequestBodyLen, tx.ResponseBodyLen, tx.StatusCode, q(tx.StatusMsg), tx.InfoCode, q(tx.InfoMsg), q(tx.Username), proxied))
}

var (
	native = func(s http.Sink) parsers.Analyzer { return http.New(s) }
	peer   = func(s http.Sink) parsers.Analyzer { return New(s) }
)

// chunk is a piece of one direction of a test connection: data, or a gap
// of gap bytes.
type chunk struct {
	resp bool
	data string
	gap  int
}

// run feeds a connection's chunks to an analyzer impl makes, each chunk's
// data cut into pieces of at most piece bytes, and returns the
// transactions. Each side finishes, then the connection closes.
func run(impl func(http.Sink) parsers.Analyzer, piece int, chunks []chunk) []string {
	sink := &collect{}
	cp := impl(sink).Open(&parsers.Conn{ID: "test", Kind: parsers.Stream})
	for _, c := range chunks {
		p := cp.Orig()
		if c.resp {
			p = cp.Resp()
		}
		if c.gap > 0 {
			p.Gap(c.gap)
			continue
		}
		for b := []byte(c.data); len(b) > 0; {
			n := min(piece, len(b))
			p.Feed(b[:n])
			b = b[n:]
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	return sink.lines
}

func req(s string) chunk  { return chunk{data: s} }
func resp(s string) chunk { return chunk{resp: true, data: s} }

func gzipped(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func zlibbed(s string) string {
	var b bytes.Buffer
	w := zlib.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

var (
	text    = strings.Repeat("wirebench compares parsers on real traffic. ", 300)
	gzText  = gzipped(text)
	zlbText = zlibbed(text)
)

const get = "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"

// exchanges are connections on which fasthttp must give native's
// transactions: the framings of bodies, the pairing of requests and
// replies, the fields of http.log the headers give.
var exchanges = []struct {
	name   string
	chunks []chunk
}{
	{"content-length-keep-alive", []chunk{
		req("GET /index.html HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: curl/8.5.0\r\nReferer: http://example.com/\r\nOrigin: http://example.com\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"),
		req("POST /form HTTP/1.1\r\nHost: www.example.com\r\nContent-Length: 7\r\n\r\na=1&b=2"),
		resp("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"),
	}},
	{"chunked-with-extensions-and-trailers", []chunk{
		req("POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nwire\r\n5\r\nbench\r\n0\r\nX-Trailer: 1\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n"),
	}},
	{"gzip-and-deflate", []chunk{
		req(get),
		resp(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", len(gzText), gzText)),
		req(get),
		resp(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(zlbText), zlbText)),
		req(get),
		resp("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 10\r\n\r\nnot gzip!!"),
	}},
	{"head-204-304", []chunk{
		req("HEAD /big HTTP/1.1\r\nHost: h\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"),
		req(get),
		resp("HTTP/1.1 204 No Content\r\n\r\n"),
		req(get),
		resp("HTTP/1.1 304 Not Modified\r\nContent-Length: 50\r\n\r\n"),
		req(get),
		resp("HTTP/1.1 404\r\nContent-Length: 2\r\n\r\nno"),
	}},
	{"100-continue", []chunk{
		req("PUT /file HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n"),
		resp("HTTP/1.1 100 Continue\r\n\r\n"),
		req("data"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
	}},
	{"pipelining", []chunk{
		req(get + get + "GET /c HTTP/1.1\r\nHost: example.com\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nbb"),
	}},
	{"reply-without-request", []chunk{
		resp("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc"),
	}},
	{"until-close-lines", []chunk{
		req("GET /old HTTP/1.0\r\n\r\n"),
		resp("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nline one\r\nline two\nline three\rlast"),
	}},
	{"until-close-line-end", []chunk{
		req("GET /old HTTP/1.0\r\n\r\n"),
		resp("HTTP/1.0 200 OK\r\n\r\n\r\n\n\r\rend\r\n"),
	}},
	{"credentials-proxies-escapes", []chunk{
		req("GET /a%20b%zz%%41?q=%41 HTTP/1.1\r\nHost: h:8080\r\nAuthorization: Basic dXNlcjpwYXNz\r\nVia: 1.1 proxy\r\nX-Forwarded-For: 192.0.2.1\r\nVia: 1.1 proxy\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
		req("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic bm9jb2xvbg==\r\n\r\n"),
		req("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"),
	}},
	{"connect-tunnel", []chunk{
		req("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
		resp("HTTP/1.1 200 Connection established\r\n\r\n"),
		req("\x16\x03\x01 tls bytes"),
		resp("\x16\x03\x03 more tls"),
	}},
	{"upgrade", []chunk{
		req("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"),
		resp("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n"),
		resp("\x81\x05hello"),
	}},
	{"gap-in-body", []chunk{
		req(get),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"),
		{resp: true, gap: 80},
		resp("0123456789"),
		req(get),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"),
	}},
	{"gap-in-head-resync", []chunk{
		req("GET /first HTTP/1.1\r\nHost: h\r\nUser-"),
		{gap: 30},
		req("Agent: lost\r\n\r\nGET /second HTTP/1.1\r\nHost: h\r\n\r\n"),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
	}},
	{"leading-line-ends", []chunk{
		req("\r\n" + get),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\r\n"),
		req(get),
		resp("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
	}},
	{"unanswered-at-close", []chunk{
		req(get + "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nonly5"),
	}},
}

// TestAgreesWithNative checks every exchange fed whole and in pieces of
// every size from 1 to 64 bytes: fasthttp gives native's transactions.
func TestAgreesWithNative(t *testing.T) {
	for _, ex := range exchanges {
		t.Run(ex.name, func(t *testing.T) {
			for _, piece := range append([]int{1 << 30}, seq(1, 64)...) {
				want := run(native, piece, ex.chunks)
				if got := run(peer, piece, ex.chunks); !slices.Equal(got, want) {
					t.Fatalf("in pieces of %d bytes:\n got %s\nwant %s", piece, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
				}
			}
		})
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i <= to; i++ {
		s = append(s, i)
	}
	return s
}

// TestWhereFasthttpDiffers pins the differences the README explains:
// fasthttp refuses what Zeek, and the native parser, read.
func TestWhereFasthttpDiffers(t *testing.T) {
	for _, tt := range []struct {
		name   string
		chunks []chunk
		want   []string // the peer's transactions
	}{
		{"http/1.1-without-host", []chunk{
			req("GET /nohost HTTP/1.1\r\n\r\n"),
			resp("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
		}, []string{`depth=1 req=false rep=true method=- host=- uri=- referrer=- version="1.1" ua=- origin=- reqlen=0 resplen=0 status=400 "Bad Request" info=0 - user=- proxied=[]`}},
		{"http/0.9", []chunk{
			req("GET /\r\n"),
			resp("<html>old</html>"),
		}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := run(peer, 1<<30, tt.chunks); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if got := run(native, 1<<30, tt.chunks); slices.Equal(got, tt.want) {
				t.Errorf("native gives the same, the difference is gone: %q", got)
			}
		})
	}
}

// TestNoAllocs checks that a keep-alive exchange, once the analyzer warmed
// up, costs no allocation per connection: fasthttp's headers, the
// bufio.Reader and the records are reused.
func TestNoAllocs(t *testing.T) {
	exchange := exchanger(New(&countSink{}),
		[]byte("GET /a?b=%41 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test\r\n\r\n"),
		[]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
	exchange()
	if n := testing.AllocsPerRun(100, exchange); n != 0 {
		t.Errorf("%.1f allocations per connection, want 0", n)
	}
}

// exchanger returns a function that opens a connection of a, feeds it the
// request q and the reply r, and closes it.
func exchanger(a parsers.Analyzer, q, r []byte) func() {
	c := &parsers.Conn{ID: "exchange", Kind: parsers.Stream}
	return func() {
		cp := a.Open(c)
		cp.Orig().Feed(q)
		cp.Resp().Feed(r)
		cp.Orig().Finish()
		cp.Resp().Finish()
		cp.Close()
	}
}

// countSink counts transactions.
type countSink struct{ n int }

func (s *countSink) HTTP(*parsers.Conn, *http.Transaction) { s.n++ }

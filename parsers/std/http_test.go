package std

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	nethttp "net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// httpRec is a transaction copied out of the sink call; nil slices print
// as "-" so that unset and empty fields differ.
type httpRec struct {
	TS                              int64
	Depth                           int
	HasRequest, HasReply            bool
	Method, Host, URI, Ref, Ver, UA string
	Origin                          string
	ReqLen, RespLen                 int64
	Code                            int
	Msg                             string
	InfoCode                        int
	InfoMsg, User, Pass             string
	Proxied                         string
}

func str(b []byte) string {
	if b == nil {
		return "-"
	}
	return string(b)
}

func proxiedString(p [][]byte) string {
	if len(p) == 0 {
		return "-"
	}
	return string(bytes.Join(p, []byte(",")))
}

type httpSink struct{ recs []httpRec }

func (s *httpSink) HTTP(c *parsers.Conn, tx *http.Transaction) {
	s.recs = append(s.recs, httpRec{
		tx.TS, tx.Depth, tx.HasRequest, tx.HasReply,
		str(tx.Method), str(tx.Host), str(tx.URI), str(tx.Referrer), str(tx.Version), str(tx.UserAgent),
		str(tx.Origin), tx.RequestBodyLen, tx.ResponseBodyLen, tx.StatusCode, str(tx.StatusMsg),
		tx.InfoCode, str(tx.InfoMsg), str(tx.Username), str(tx.Password), proxiedString(tx.Proxied),
	})
}

// exchange is the input of one connection: the two directions' data, fed
// in the order given (o: originator, r: responder).
type exchange []struct {
	side byte
	data string
}

// runHTTP feeds an exchange to a new connection, each message split into
// chunks of at most chunk bytes (0: whole), and returns the transactions.
func runHTTP(t *testing.T, ex exchange, chunk int) ([]httpRec, HTTPStats) {
	t.Helper()
	return runHTTPSized(t, ex, func() int {
		if chunk <= 0 {
			return 1 << 30
		}
		return chunk
	})
}

// runHTTPSized is runHTTP with chunks of the sizes next returns.
func runHTTPSized(t *testing.T, ex exchange, next func() int) ([]httpRec, HTTPStats) {
	t.Helper()
	sink := &httpSink{}
	a := NewHTTP(sink)
	c := &parsers.Conn{ID: "c", Kind: parsers.Stream}
	cp := a.Open(c)
	for i, m := range ex {
		p := cp.Orig()
		if m.side == 'r' {
			p = cp.Resp()
		}
		c.TS = int64(i + 1)
		if m.side == 'g' {
			cp.Orig().Gap(10)
			continue
		}
		feedSized(p, []byte(m.data), next)
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	return sink.recs, a.Stats()
}

// feedSized feeds data in chunks whose sizes next returns (at least 1).
func feedSized(p parsers.Parser, data []byte, next func() int) {
	for len(data) > 0 {
		n := min(max(next(), 1), len(data))
		// A fresh copy, overwritten after Feed, catches parsers that keep
		// the chunk.
		b := append([]byte(nil), data[:n]...)
		p.Feed(b)
		for i := range b {
			b[i] = '#'
		}
		data = data[n:]
	}
}

// runNative feeds an exchange to the native parser, whole, for the
// comparisons of TestHTTP.
func runNative(ex exchange) []httpRec {
	sink := &httpSink{}
	cp := http.New(sink).Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
	for _, m := range ex {
		switch m.side {
		case 'o':
			cp.Orig().Feed([]byte(m.data))
		case 'r':
			cp.Resp().Feed([]byte(m.data))
		case 'g':
			cp.Orig().Gap(10)
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	for i := range sink.recs {
		sink.recs[i].TS = 0 // the native parser stamps with the time of the line's end
	}
	return sink.recs
}

// Compressed bodies for TestHTTP: 10000 bytes of text, compressed whole,
// cut short, and followed by corrupt data (an invalid block type).
var (
	plainBody = strings.Repeat("the quick brown fox jumps over the lazy dog\n", 250)[:10000]
	gzipBody  = compress(func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }, plainBody)
	zlibBody  = compress(func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }, plainBody)
	rawBody   = compress(func(w io.Writer) io.WriteCloser { z, _ := flate.NewWriter(w, 5); return z }, plainBody)
	cutBody   = gzipBody[:len(gzipBody)/2]
	badBody   = corrupt(plainBody)
)

func compress(mk func(io.Writer) io.WriteCloser, s string) string {
	var b bytes.Buffer
	w := mk(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// corrupt returns a gzip stream of s flushed (not ended), then a deflate
// block of the reserved type 3.
func corrupt(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Flush()
	return b.String() + "\x07garbage"
}

func withLength(head, body string) string {
	return head + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func chunked(head, body string) string {
	return head + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
}

// httpCase is an exchange and the transactions the std parser reports.
type httpCase struct {
	name string
	ex   exchange
	want []httpRec
	// native is why the native parser, which follows Zeek, gives other
	// records; empty: it must give the same, but for TS.
	native string
}

// httpCases are the cases of TestHTTP and TestChunkingInvariance.
func httpCases() []httpCase {
	bigPost := withLength("POST /big HTTP/1.1\r\nHost: h\r\n", strings.Repeat("x", dpdSizeLimit))
	// A request of 10152 bytes, which with its 38-byte reply and a 10-byte
	// line after it makes 10200.
	nearBody := strings.Repeat("x", 10152-54)
	nearLimit := withLength("POST /big HTTP/1.1\r\nHost: h\r\n", nearBody)
	return []httpCase{{
		name: "get",
		ex: exchange{
			{'o', "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: curl/8.0\r\nReferer: http://a/\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "example.com:8080", "/index.html?q=1", "http://a/", "1.1", "curl/8.0", "-", 0, 5, 200, "OK", 0, "-", "-", "-", "-"}},
	}, {
		name: "pipelined, chunked, HEAD",
		ex: exchange{
			{'o', "GET /a HTTP/1.1\r\nHost: h\r\n\r\nHEAD /b HTTP/1.1\r\nHost: h\r\n\r\nPOST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwxyz\r\n0\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"},
			{'r', "HTTP/1.0 404 Not Found\r\nContent-Length: 3\r\n\r\nabc"},
		},
		want: []httpRec{
			{1, 1, true, true, "GET", "h", "/a", "-", "1.1", "-", "-", 0, 4, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 2, true, true, "HEAD", "h", "/b", "-", "1.1", "-", "-", 0, 0, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 3, true, true, "POST", "h", "/c", "-", "1.0", "-", "-", 5, 3, 404, "Not Found", 0, "-", "-", "-", "-"},
		},
	}, {
		name: "100-continue",
		ex: exchange{
			{'o', "POST /up HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"},
			{'r', "HTTP/1.1 100 Continue\r\n\r\n"},
			{'o', "data"},
			{'r', "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, true, "POST", "h", "/up", "-", "1.1", "-", "-", 4, 0, 201, "Created", 100, "Continue", "-", "-", "-"}},
	}, {
		name: "unanswered request, reported at close",
		ex: exchange{
			{'o', "GET /zeek.html HTTP/1.1\r\nHost: localhost\r\nOrigin: \r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, false, "GET", "localhost", "/zeek.html", "-", "-", "-", "", 0, 0, 0, "-", 0, "-", "-", "-", "-"}},
	}, {
		name: "reply without request",
		ex: exchange{
			{'r', "HTTP/1.0 400 Bad Request\r\nContent-Length: 2\r\n\r\nno"},
		},
		want: []httpRec{{1, 1, false, true, "-", "-", "-", "-", "1.0", "-", "-", 0, 2, 400, "Bad Request", 0, "-", "-", "-", "-"}},
	}, {
		// 2^64+5 must not wrap to 5 and let the request after the five X
		// through: net/http refuses the length, and the direction stops.
		name: "content-length above 2^63",
		ex: exchange{
			{'o', "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551621\r\n\r\nXXXXXGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"},
		},
		want:   []httpRec{},
		native: "net/http refuses a Content-Length above 2^63; the native parser reads it as the rest of the connection",
	}, {
		name: "basic auth, username only",
		ex: exchange{
			{'o', "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic dXNlcjpzZWNyZXQ=\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nProxy-Authorization: basic bm9jb2xvbg==\r\n\r\n"},
		},
		want: []httpRec{
			{1, 1, true, false, "GET", "h", "/", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "user", "-", "-"},
			{1, 2, true, false, "GET", "h", "/", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "<problem-decoding> (basic bm9jb2xvbg==)", "-", "-"},
		},
	}, {
		name: "body until close",
		ex: exchange{
			{'o', "GET / HTTP/1.0\r\n\r\n"},
			{'r', "HTTP/1.0 200 OK\r\n\r\nuntil the end"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "-", "/", "-", "1.0", "-", "-", 0, 13, 200, "OK", 0, "-", "-", "-", "-"}},
		native: "Zeek reads a body without framing as lines and counts two bytes for every line end, " +
			"the missing one at the close too (15)",
	}, {
		name: "CONNECT stops parsing",
		ex: exchange{
			{'o', "CONNECT secure.example:443 HTTP/1.1\r\nHost: secure.example:443\r\n\r\n"},
			{'r', "HTTP/1.1 200 Connection established\r\n\r\n"},
			{'o', "\x16\x03\x01 tls bytes"},
			{'r', "\x16\x03\x03 tls bytes"},
		},
		want: []httpRec{{1, 1, true, true, "CONNECT", "secure.example:443", "secure.example:443", "-", "1.1", "-", "-", 0, 0, 200, "Connection established", 0, "-", "-", "-", "-"}},
	}, {
		name: "a malformed header stops the direction, keeping what came before",
		ex: exchange{
			{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /x HTTP/1.1\r\nBad Header\r\n\r\n"},
			{'r', "HTTP/1.1 204 No Content\r\n\r\n"},
		},
		want:   []httpRec{{1, 1, true, true, "GET", "h", "/ok", "-", "1.1", "-", "-", 0, 0, 204, "No Content", 0, "-", "-", "-", "-"}},
		native: "net/http rejects the header line without a colon; Zeek skips it and logs GET /x",
	}, {
		name: "a gap stops the direction",
		ex: exchange{
			{'o', "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"},
			{'g', ""},
			{'o', "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"},
		},
		want:   []httpRec{{1, 1, true, false, "GET", "h", "/1", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"}},
		native: "the native parser resynchronises after a gap by default",
	}, {
		name: "a bad request line removes a confirmed connection",
		ex: exchange{
			{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
			{'o', "T / HTTP\r\n\r\n"},
			{'r', "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "h", "/ok", "-", "1.1", "-", "-", 0, 0, 200, "OK", 0, "-", "-", "-", "-"}},
	}, {
		name: "a bad status line removes a confirmed connection",
		ex: exchange{
			{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\nXTTP/1.1 200 OK\r\n\r\n"},
			{'o', "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "h", "/ok", "-", "1.1", "-", "-", 0, 0, 200, "OK", 0, "-", "-", "-", "-"}},
	}, {
		name: "a violation before confirmation stops one direction",
		ex: exchange{
			{'o', "\x16\x03\x01\x02\x00 client hello\r\n"},
			{'r', "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{{2, 1, false, true, "-", "-", "-", "-", "1.1", "-", "-", 0, 0, 400, "Bad Request", 0, "-", "-", "-", "-"}},
	}, {
		name: "a violation after 10 KiB stops one direction",
		ex: exchange{
			{'o', bigPost},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
			{'o', "T / HTTP\r\n\r\n"},
			{'r', "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{
			{1, 1, true, true, "POST", "h", "/big", "-", "1.1", "-", "-", dpdSizeLimit, 0, 200, "OK", 0, "-", "-", "-", "-"},
			{4, 2, false, true, "-", "-", "-", "-", "1.1", "-", "-", 0, 0, 400, "Bad Request", 0, "-", "-", "-", "-"},
		},
	}, {
		// The bad line ends 10200 bytes into the connection; what follows
		// it in the same chunk does not count.
		name: "a violation within 10 KiB, more bytes after it",
		ex: exchange{
			{'o', nearLimit},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
			{'o', "T / HTTP\r\n" + strings.Repeat("x", 400)},
			{'r', "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{
			{1, 1, true, true, "POST", "h", "/big", "-", "1.1", "-", "-", int64(len(nearBody)), 0, 200, "OK", 0, "-", "-", "-", "-"},
		},
	}, {
		name: "host is the Host header, also with an absolute target",
		ex: exchange{
			{'o', "GET http://a.example/x HTTP/1.1\r\nHost: b.example\r\n\r\n" +
				"GET /empty HTTP/1.1\r\nHost:\r\n\r\n" +
				"GET http://c.example/ HTTP/1.1\r\n\r\n" +
				"GET /folded HTTP/1.1\r\nhost: d.example\r\n  :8080\r\nX: y\r\n\r\n" +
				"CONNECT e.example:443 HTTP/1.1\r\n\r\n"},
		},
		want: []httpRec{
			{1, 1, true, false, "GET", "b.example", "http://a.example/x", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"},
			{1, 2, true, false, "GET", "", "/empty", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"},
			{1, 3, true, false, "GET", "-", "http://c.example/", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"},
			{1, 4, true, false, "GET", "d.example :8080", "/folded", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"},
			{1, 5, true, false, "CONNECT", "-", "e.example:443", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-", "-"},
		},
		native: "Zeek keeps the folded line's spaces",
	}, {
		name: "proxy headers, a status line without reason, switching protocols",
		ex: exchange{
			{'o', "GET http://h/ HTTP/1.1\r\nHost: h\r\nVia: 1.1 proxy\r\nProxy-Connection: Keep-Alive\r\nVia: 1.1 proxy\r\n\r\n" +
				"GET /chat HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"},
			{'r', "HTTP/1.1 204\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"},
		},
		want: []httpRec{
			{1, 1, true, true, "GET", "h", "http://h/", "-", "1.1", "-", "-", 0, 0, 204, "<empty>", 0, "-", "-", "-", "VIA -> 1.1 proxy,PROXY-CONNECTION -> Keep-Alive"},
			{1, 2, true, true, "GET", "h", "/chat", "-", "1.1", "-", "-", 0, 0, 101, "Switching Protocols", 101, "Switching Protocols", "-", "-", "-"},
		},
	}, {
		name: "compressed bodies count their decompressed length",
		ex: exchange{
			{'o', withLength("POST /gz HTTP/1.1\r\nHost: h\r\nContent-Encoding: gzip\r\n", gzipBody) +
				"GET /zlib HTTP/1.1\r\nHost: h\r\n\r\nGET /raw HTTP/1.1\r\nHost: h\r\n\r\n" +
				"GET /cut HTTP/1.1\r\nHost: h\r\n\r\nGET /bad HTTP/1.1\r\nHost: h\r\n\r\n" +
				"HEAD /head HTTP/1.1\r\nHost: h\r\n\r\nGET /plain HTTP/1.1\r\nHost: h\r\n\r\n"},
			{'r', withLength("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n", gzipBody+"trailing bytes") +
				chunked("HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\n", zlibBody) +
				withLength("HTTP/1.1 200 OK\r\nContent-Encoding: x-gzip, identity\r\n", rawBody) +
				withLength("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n", cutBody) +
				withLength("HTTP/1.1 200 OK\r\nContent-Encoding: GZIP\r\n", badBody) +
				"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 99\r\n\r\n" +
				withLength("HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n", gzipBody)},
		},
		want: []httpRec{
			{1, 1, true, true, "POST", "h", "/gz", "-", "1.1", "-", "-", 10000, 10000, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 2, true, true, "GET", "h", "/zlib", "-", "1.1", "-", "-", 0, 10000, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 3, true, true, "GET", "h", "/raw", "-", "1.1", "-", "-", 0, 10000, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 4, true, true, "GET", "h", "/cut", "-", "1.1", "-", "-", 0, int64(inflatedPrefix(cutBody)), 200, "OK", 0, "-", "-", "-", "-"},
			{1, 5, true, true, "GET", "h", "/bad", "-", "1.1", "-", "-", 0, 8192, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 6, true, true, "HEAD", "h", "/head", "-", "1.1", "-", "-", 0, 0, 200, "OK", 0, "-", "-", "-", "-"},
			{1, 7, true, true, "GET", "h", "/plain", "-", "1.1", "-", "-", 0, int64(len(gzipBody)), 200, "OK", 0, "-", "-", "-", "-"},
		},
	}}
}

func TestHTTP(t *testing.T) {
	for _, tt := range httpCases() {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runHTTP(t, tt.ex, 0)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("transactions:\n%+v\nwant\n%+v", got, tt.want)
			}
			want := append([]httpRec(nil), tt.want...)
			for i := range want {
				want[i].TS = 0
			}
			native := runNative(tt.ex)
			same := fmt.Sprint(native) == fmt.Sprint(want)
			switch {
			case !same && tt.native == "":
				t.Errorf("the native parser disagrees:\n%+v", native)
			case same && tt.native != "":
				t.Errorf("the native parser agrees; remove the reason %q", tt.native)
			}
		})
	}
}

func TestHTTPStats(t *testing.T) {
	// net/http rejects the HTTP/0.9 request line after a confirmed
	// exchange: a violation, which removes the connection before the
	// reply.
	_, st := runHTTP(t, exchange{
		{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /0.9\r\n"},
		{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	}, 0)
	want := HTTPStats{Requests: 1, Transactions: 1, Errors: 1, Violations: 1, Removed: 1}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	// A malformed header is no violation: the reply is still parsed.
	_, st = runHTTP(t, exchange{
		{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /x HTTP/1.1\r\nBad Header\r\n\r\n"},
		{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	}, 0)
	want = HTTPStats{Requests: 1, Replies: 1, Transactions: 1, Errors: 1}
	if st != want {
		t.Errorf("malformed header: stats = %+v, want %+v", st, want)
	}
	_, st = runHTTP(t, exchange{{'o', "GET / HTTP/1.1\r\nX: " + strings.Repeat("a", 2*MaxHeaderBytes) + "\r\n\r\n"}}, 0)
	if st.HeaderLimit != 1 || st.Requests != 0 {
		t.Errorf("oversized header: stats = %+v", st)
	}
}

func TestHTTPPendingLimit(t *testing.T) {
	req := "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
	recs, st := runHTTP(t, exchange{{'o', strings.Repeat(req, MaxPending+5)}}, 0)
	if len(recs) != MaxPending+5 || st.PendingLimit != 1 {
		t.Errorf("%d transactions, stats %+v; want %d and one PendingLimit", len(recs), st, MaxPending+5)
	}
	for i, r := range recs {
		if r.Depth != i+1 {
			t.Fatalf("transaction %d has depth %d", i, r.Depth)
		}
	}
}

func FuzzHTTP(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\n\r\n"), []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint8(3))
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n"), []byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"), uint8(1))
	f.Fuzz(func(t *testing.T, req, resp []byte, chunk uint8) {
		ex := exchange{{'o', string(req)}, {'r', string(resp)}}
		whole, _ := runHTTP(t, ex, 0)
		parts, _ := runHTTP(t, ex, int(chunk)+1)
		if fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Errorf("whole and chunked input disagree:\n%+v\n%+v", whole, parts)
		}
	})
}

// inflatedPrefix returns how many bytes Go's gzip reader gets out of a
// truncated gzip stream.
func inflatedPrefix(s string) int {
	zr, err := gzip.NewReader(strings.NewReader(s))
	if err != nil {
		return 0
	}
	n, _ := io.Copy(io.Discard, zr)
	return int(n)
}

// TestStartLineError pins startLineMessages to net/http's errors: a start
// line it rejects is a violation, a header or framing it rejects is not.
func TestStartLineError(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		resp bool
		want bool
	}{
		{"GET /0.9\r\n\r\n", false, true},
		{"G@T / HTTP/1.1\r\n\r\n", false, true},
		{"T / HTTP\r\n\r\n", false, true},
		{"XTTP/1.1 200 OK\r\n\r\n", true, true},
		{"HTTP/1.1 2x0 OK\r\n\r\n", true, true},
		{"HTTP/1.1\r\n\r\n", true, true},
		{"GET / HTTP/1.1\r\nBad Header\r\n\r\n", false, false},
		{"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", false, false},
		{"GET /% HTTP/1.1\r\n\r\n", false, false},
		{"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", true, false},
	} {
		br := bufio.NewReader(strings.NewReader(tt.msg))
		var err error
		if tt.resp {
			_, err = nethttp.ReadResponse(br, nil)
		} else {
			_, err = nethttp.ReadRequest(br)
		}
		if err == nil {
			t.Errorf("%q: net/http accepts it", tt.msg)
			continue
		}
		if got := startLineError(err); got != tt.want {
			t.Errorf("%q: startLineError(%q) = %v, want %v", tt.msg, err, got, tt.want)
		}
	}
}

// mimeSink keeps each transaction's MIME types.
type mimeSink struct{ got []string }

func (s *mimeSink) HTTP(_ *parsers.Conn, tx *http.Transaction) {
	s.got = append(s.got, fmt.Sprintf("%q %q", tx.OrigMIMETypes, tx.RespMIMETypes))
}

// mimeTypes runs an exchange through an analyzer and returns the MIME
// types of its transactions.
func mimeTypes(a parsers.Analyzer, s *mimeSink, ex exchange, chunk int) []string {
	cp := a.Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
	for _, m := range ex {
		switch m.side {
		case 'o':
			feedSized(cp.Orig(), []byte(m.data), func() int { return chunk })
		case 'r':
			feedSized(cp.Resp(), []byte(m.data), func() int { return chunk })
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	return s.got
}

// TestHTTPMIMETypes: the standard parser sniffs bodies as the native one
// does (decompressed, multipart bodies left to their parts, a body read
// until close with CR LF line ends), on bodies of their own and on every
// exchange of TestHTTP both parse alike.
func TestHTTPMIMETypes(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<!DOCTYPE html><html>" + strings.Repeat("text ", 2000)))
	zw.Close()
	cases := []struct {
		name string
		ex   exchange
		want []string
	}{
		{"png and json", exchange{{'o', "POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n[1, 2, 3]"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n\x89PNG\r\n\x1a\n\x00\x00\x00\r"}},
			[]string{`["text/json"] ["image/png"]`}},
		{"gzip", exchange{{'o', "GET / HTTP/1.1\r\n\r\n"},
			{'r', fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s", gz.Len(), gz.String())}},
			[]string{`[] ["text/html"]`}},
		{"multipart", exchange{{'o', "GET / HTTP/1.1\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Type: multipart/mixed; boundary=b\r\nContent-Length: 30\r\n\r\n--b\r\n\r\nGIF89a\x01\x00\r\n--b--\r\n"}},
			[]string{`[] ["image/gif"]`}},
		{"message", exchange{{'o', "POST / HTTP/1.1\r\nContent-Type: message/rfc822\r\nContent-Length: 56\r\n\r\n" +
			"MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nGIF89a\x01\x00\r\n"}, {'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"}},
			[]string{`["image/gif"] []`}},
		{"until close", exchange{{'o', "GET / HTTP/1.1\r\n\r\n"}, {'r', "HTTP/1.0 200 OK\r\n\r\n{}\n"}},
			[]string{`[] ["text/json"]`}},
	}
	for _, tt := range httpCases() {
		if tt.native == "" {
			cases = append(cases, struct {
				name string
				ex   exchange
				want []string
			}{tt.name, tt.ex, nil})
		}
	}
	for _, tt := range cases {
		for _, chunk := range []int{3, 1 << 20} {
			s := &mimeSink{}
			std := mimeTypes(NewHTTP(s), s, tt.ex, chunk)
			n := &mimeSink{}
			native := mimeTypes(http.New(n), n, tt.ex, chunk)
			if fmt.Sprint(std) != fmt.Sprint(native) {
				t.Errorf("%s (chunks of %d): std %q, native %q", tt.name, chunk, std, native)
			}
			if tt.want != nil && fmt.Sprint(std) != fmt.Sprint(tt.want) {
				t.Errorf("%s (chunks of %d): %q, want %q", tt.name, chunk, std, tt.want)
			}
		}
	}
}

// TestHTTPMIMETypesInterleaved: a body read in pieces keeps its first
// bytes while other connections' bodies are read in between.
func TestHTTPMIMETypesInterleaved(t *testing.T) {
	s := &mimeSink{}
	a := NewHTTP(s)
	ca := a.Open(&parsers.Conn{ID: "a", Kind: parsers.Stream})
	cb := a.Open(&parsers.Conn{ID: "b", Kind: parsers.Stream})
	get := []byte("GET / HTTP/1.1\r\n\r\n")
	ca.Orig().Feed(get)
	cb.Orig().Feed(get)
	ca.Resp().Feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nGIF8"))
	cb.Resp().Feed([]byte("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n\x89PNG\r\n\x1a\n\x00\x00\x00\r"))
	ca.Resp().Feed([]byte("9a\x01\x00\x01\x00\x00\x00"))
	for _, c := range []parsers.ConnParser{ca, cb} {
		c.Orig().Finish()
		c.Resp().Finish()
		c.Close()
	}
	want := []string{`[] ["image/png"]`, `[] ["image/gif"]`}
	if fmt.Sprint(s.got) != fmt.Sprint(want) {
		t.Errorf("%q, want %q", s.got, want)
	}
}

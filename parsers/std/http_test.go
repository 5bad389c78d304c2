package std

import (
	"fmt"
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
}

func str(b []byte) string {
	if b == nil {
		return "-"
	}
	return string(b)
}

type httpSink struct{ recs []httpRec }

func (s *httpSink) HTTP(c *parsers.Conn, tx *http.Transaction) {
	s.recs = append(s.recs, httpRec{
		tx.TS, tx.Depth, tx.HasRequest, tx.HasReply,
		str(tx.Method), str(tx.Host), str(tx.URI), str(tx.Referrer), str(tx.Version), str(tx.UserAgent),
		str(tx.Origin), tx.RequestBodyLen, tx.ResponseBodyLen, tx.StatusCode, str(tx.StatusMsg),
		tx.InfoCode, str(tx.InfoMsg), str(tx.Username), str(tx.Password),
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
		feedChunks(p, []byte(m.data), chunk)
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
	return sink.recs, a.Stats()
}

func feedChunks(p parsers.Parser, data []byte, chunk int) {
	if chunk <= 0 {
		chunk = len(data)
	}
	for len(data) > 0 {
		n := min(chunk, len(data))
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

func TestHTTP(t *testing.T) {
	tests := []struct {
		name string
		ex   exchange
		want []httpRec
	}{{
		name: "get",
		ex: exchange{
			{'o', "GET /index.html?q=1 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: curl/8.0\r\nReferer: http://a/\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "example.com:8080", "/index.html?q=1", "http://a/", "1.1", "curl/8.0", "-", 0, 5, 200, "OK", 0, "-", "-", "-"}},
	}, {
		name: "pipelined, chunked, HEAD",
		ex: exchange{
			{'o', "GET /a HTTP/1.1\r\nHost: h\r\n\r\nHEAD /b HTTP/1.1\r\nHost: h\r\n\r\nPOST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: x\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nwxyz\r\n0\r\n\r\n"},
			{'r', "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"},
			{'r', "HTTP/1.0 404 Not Found\r\nContent-Length: 3\r\n\r\nabc"},
		},
		want: []httpRec{
			{1, 1, true, true, "GET", "h", "/a", "-", "1.1", "-", "-", 0, 4, 200, "OK", 0, "-", "-", "-"},
			{1, 2, true, true, "HEAD", "h", "/b", "-", "1.1", "-", "-", 0, 0, 200, "OK", 0, "-", "-", "-"},
			{1, 3, true, true, "POST", "h", "/c", "-", "1.0", "-", "-", 5, 3, 404, "Not Found", 0, "-", "-", "-"},
		},
	}, {
		name: "100-continue",
		ex: exchange{
			{'o', "POST /up HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"},
			{'r', "HTTP/1.1 100 Continue\r\n\r\n"},
			{'o', "data"},
			{'r', "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, true, "POST", "h", "/up", "-", "1.1", "-", "-", 4, 0, 201, "Created", 100, "Continue", "-", "-"}},
	}, {
		name: "unanswered request, reported at close",
		ex: exchange{
			{'o', "GET /zeek.html HTTP/1.1\r\nHost: localhost\r\nOrigin: \r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, false, "GET", "localhost", "/zeek.html", "-", "-", "-", "", 0, 0, 0, "-", 0, "-", "-", "-"}},
	}, {
		name: "reply without request",
		ex: exchange{
			{'r', "HTTP/1.0 400 Bad Request\r\nContent-Length: 2\r\n\r\nno"},
		},
		want: []httpRec{{1, 1, false, true, "-", "-", "-", "-", "1.0", "-", "-", 0, 2, 400, "Bad Request", 0, "-", "-", "-"}},
	}, {
		name: "basic auth, username only",
		ex: exchange{
			{'o', "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Basic dXNlcjpzZWNyZXQ=\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\nProxy-Authorization: basic bm9jb2xvbg==\r\n\r\n"},
		},
		want: []httpRec{
			{1, 1, true, false, "GET", "h", "/", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "user", "-"},
			{1, 2, true, false, "GET", "h", "/", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "<problem-decoding> (basic bm9jb2xvbg==)", "-"},
		},
	}, {
		name: "body until close",
		ex: exchange{
			{'o', "GET / HTTP/1.0\r\n\r\n"},
			{'r', "HTTP/1.0 200 OK\r\n\r\nuntil the end"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "-", "/", "-", "1.0", "-", "-", 0, 13, 200, "OK", 0, "-", "-", "-"}},
	}, {
		name: "CONNECT stops parsing",
		ex: exchange{
			{'o', "CONNECT secure.example:443 HTTP/1.1\r\nHost: secure.example:443\r\n\r\n"},
			{'r', "HTTP/1.1 200 Connection established\r\n\r\n"},
			{'o', "\x16\x03\x01 tls bytes"},
			{'r', "\x16\x03\x03 tls bytes"},
		},
		want: []httpRec{{1, 1, true, true, "CONNECT", "secure.example:443", "secure.example:443", "-", "1.1", "-", "-", 0, 0, 200, "Connection established", 0, "-", "-", "-"}},
	}, {
		name: "malformed request keeps what came before",
		ex: exchange{
			{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nthis is not http\r\n\r\n"},
			{'r', "HTTP/1.1 204 No Content\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, true, "GET", "h", "/ok", "-", "1.1", "-", "-", 0, 0, 204, "No Content", 0, "-", "-", "-"}},
	}, {
		name: "a gap stops the direction",
		ex: exchange{
			{'o', "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n"},
			{'g', ""},
			{'o', "GET /2 HTTP/1.1\r\nHost: h\r\n\r\n"},
		},
		want: []httpRec{{1, 1, true, false, "GET", "h", "/1", "-", "-", "-", "-", 0, 0, 0, "-", 0, "-", "-", "-"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := runHTTP(t, tt.ex, 0)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("transactions:\n%+v\nwant\n%+v", got, tt.want)
			}
			// Feeding in chunks of any size gives the same transactions,
			// except for the timestamps (a message's first byte may come
			// with another chunk).
			for _, chunk := range []int{1, 2, 3, 7, 64} {
				got, _ := runHTTP(t, tt.ex, chunk)
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("chunks of %d:\n%+v\nwant\n%+v", chunk, got, tt.want)
				}
			}
		})
	}
}

func TestHTTPStats(t *testing.T) {
	_, st := runHTTP(t, exchange{
		{'o', "GET /ok HTTP/1.1\r\nHost: h\r\n\r\nGET /0.9\r\n"},
		{'r', "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	}, 0)
	want := HTTPStats{Requests: 1, Replies: 1, Transactions: 1, Errors: 1}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
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

func TestUnescapeURI(t *testing.T) {
	for in, want := range map[string]string{
		"/plain":           "/plain",
		"/a%20b%3d%22x":    "/a b=\"x",
		"/%":               "/%",
		"/%5":              "/%5",
		"/%zz":             "/%zz",
		"/%%41":            "/A",
		"/%00%FF":          "/\x00\xff",
		"http://h/%7euser": "http://h/~user",
	} {
		if got := string(unescapeURI(in)); got != want {
			t.Errorf("unescapeURI(%q) = %q, want %q", in, got, want)
		}
	}
}

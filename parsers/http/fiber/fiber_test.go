package fiber

import (
	"fmt"
	"strings"
	"testing"
)

// workload is a client stream mixing small and browser-like requests, a
// body with Content-Length and a chunked one.
var workload = []byte(strings.Repeat(
	"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"+
		"GET /search?q=fiber HTTP/1.1\r\nHost: www.example.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n"+
		"Accept: text/html,application/xhtml+xml\r\nAccept-Language: en-US,en;q=0.5\r\nCookie: a=1; b=2\r\n\r\n"+
		"POST /form HTTP/1.1\r\nHost: example.com\r\nContent-Length: 11\r\n\r\nhello world"+
		"POST /up HTTP/1.1\r\nHost: example.com\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nT: v\r\n\r\n",
	25))

const workloadRequests = 4 * 25

// styles makes a parser of each suspension style.
var styles = []struct {
	name string
	make func(emit func(*Request)) Parser
}{
	{"statemachine", func(e func(*Request)) Parser { return NewStateMachine(e) }},
	{"goroutine", func(e func(*Request)) Parser { return NewGoroutine(e) }},
	{"coroutine", func(e func(*Request)) Parser { return NewCoroutine(e) }},
}

// parseAll feeds data in chunks of size bytes and returns the requests,
// rendered, and the error.
func parseAll(newParser func(func(*Request)) Parser, data []byte, size int) ([]string, error) {
	var out []string
	p := newParser(func(r *Request) {
		out = append(out, fmt.Sprintf("%s %s %s host=%s body=%d", r.Method, r.URI, r.Version, r.Host, r.BodyLen))
	})
	for len(data) > 0 {
		n := min(size, len(data))
		p.Feed(data[:n])
		data = data[n:]
	}
	return out, p.Close()
}

// TestStylesAgree checks that the three parsers report the same requests
// and errors, whatever the chunk size.
func TestStylesAgree(t *testing.T) {
	inputs := map[string][]byte{
		"workload":      workload,
		"truncated":     workload[:len(workload)-7],
		"bad line":      []byte("GET / HTTP/1.1\r\n\r\nBADLINE\r\n\r\nGET /x HTTP/1.1\r\n\r\n"),
		"bad length":    []byte("POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"),
		"lf only":       []byte("GET /a HTTP/1.0\nHost: h\n\nGET /b HTTP/1.0\n\n"),
		"empty":         nil,
		"blank lines":   []byte("\r\n\r\nGET / HTTP/1.1\r\n\r\n"),
		"too long line": []byte("GET /" + strings.Repeat("a", 9000) + " HTTP/1.1\r\n\r\n"),
	}
	for name, data := range inputs {
		for _, size := range []int{1, 2, 3, 7, 64, 1460, len(data) + 1} {
			want, wantErr := parseAll(styles[0].make, data, size)
			if name == "workload" && (len(want) != workloadRequests || wantErr != nil) {
				t.Fatalf("%s: state machine parsed %d requests (error %v), want %d", name, len(want), wantErr, workloadRequests)
			}
			for _, st := range styles[1:] {
				got, err := parseAll(st.make, data, size)
				if strings.Join(got, "\n") != strings.Join(want, "\n") || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%s, chunks of %d: %s reports\n%q (error %v)\nstate machine reports\n%q (error %v)",
						name, size, st.name, got, err, want, wantErr)
				}
			}
		}
	}
}

// BenchmarkSuspend measures each suspension style on the workload fed in
// chunks of 1, 64 and 1460 bytes. One op is one connection (parser
// creation included); ns/chunk and ns/request divide the time accordingly.
func BenchmarkSuspend(b *testing.B) {
	for _, size := range []int{1, 64, 1460} {
		chunks := (len(workload) + size - 1) / size
		for _, st := range styles {
			b.Run(fmt.Sprintf("chunk=%d/%s", size, st.name), func(b *testing.B) {
				n := 0
				emit := func(*Request) { n++ }
				b.SetBytes(int64(len(workload)))
				b.ReportAllocs()
				for range b.N {
					p := st.make(emit)
					for data := workload; len(data) > 0; {
						k := min(size, len(data))
						p.Feed(data[:k])
						data = data[k:]
					}
					if err := p.Close(); err != nil {
						b.Fatal(err)
					}
				}
				if n != workloadRequests*b.N {
					b.Fatalf("%d requests, want %d", n, workloadRequests*b.N)
				}
				ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				b.ReportMetric(ns/float64(chunks), "ns/chunk")
				b.ReportMetric(ns/workloadRequests, "ns/request")
			})
		}
	}
}

package http

import (
	"bufio"
	"bytes"
	"io"
	"math"
	nethttp "net/http"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/internal/threadcpu"
)

// Microbenchmarks: the native parser against net/http and fasthttp's header
// parser on the named workloads of workload_test.go, in the same run. Each
// side reads every message of the workload, and does this work:
//
//   - native: the Analyzer, fed the stream in TCP-sized chunks (1460 bytes)
//     through Open, Feed, Finish and Close: start lines and headers split as
//     Zeek splits them, the framing of every body decided and the body
//     skipped (only its length counted), the fields of http.log extracted
//     and copied into the connection's pending record (the URI with its
//     %-escapes decoded, host, user agent, referrer, origin, user name
//     from Basic authentication, and the method unless it is GET, POST or
//     HEAD, which all records share), Zeek's pairing of requests and
//     replies, and a Transaction reported to a Sink (that reads a few
//     fields) for every record: at the end of a reply, or at Close for
//     requests without one.
//     It does not look at headers http.log does not need beyond their name.
//   - fasthttp: RequestHeader.Read or ResponseHeader.Read on a reused
//     header over a reused bufio.Reader (4 KiB), which parses every header
//     into the header's structure (copying every name and value, normalising
//     the names' case), then the body skipped with bufio.Reader.Discard
//     (chunked bodies by reading each chunk-size line).
//   - net-http: http.ReadRequest or http.ReadResponse over a reused
//     bufio.Reader, every header into a new http.Header map, the body read
//     to its end into io.Discard.
//
// So the native parser copies less than fasthttp (the fields of one log
// line, not every header) but does more per message (Zeek's record
// keeping, a report per transaction) and reads the stream as Zeek does
// (lone CR or LF line ends, folded lines, any method, HTTP/0.9).
//
// BenchmarkParse times each side alone with the wall clock; it reports
// MB/s, msgs/s, the thread's CPU time per message (cpu-ns/msg) and the
// allocations of that side. BenchmarkParseRatio measures the targets on a
// busy machine: the three sides take turns (see there).
//
//	go test -run '^$' -bench 'ParseRatio' -count 6 ./parsers/http | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest new.txt

// segment is how the native parser is fed: TCP-sized chunks.
const segment = 1460

// peer is one side of the comparison; setup returns its parse function,
// with its state allocated once, which reads every message of a workload
// and returns how many it read.
type peer struct {
	name  string
	setup func() func(w *workload) int
}

var peers = []peer{
	{"native", func() func(*workload) int {
		sink := &countSink{}
		a := New(sink)
		conn := &parsers.Conn{ID: "bench", Kind: parsers.Stream}
		return func(w *workload) int {
			before := sink.n
			for _, data := range w.conns {
				nativeParse(a, conn, data, w.replies)
			}
			return sink.n - before
		}
	}},
	{"fasthttp", func() func(*workload) int {
		br := bufio.NewReaderSize(nil, 4096)
		r := bytes.NewReader(nil)
		var reqh fasthttp.RequestHeader
		var resh fasthttp.ResponseHeader
		return func(w *workload) int {
			n := 0
			for _, data := range w.conns {
				r.Reset(data)
				br.Reset(r)
				n += fastHTTPParse(br, &reqh, &resh, w.replies)
			}
			return n
		}
	}},
	{"net-http", func() func(*workload) int {
		br := bufio.NewReaderSize(nil, 4096)
		r := bytes.NewReader(nil)
		return func(w *workload) int {
			n := 0
			for _, data := range w.conns {
				r.Reset(data)
				br.Reset(r)
				n += netHTTPParse(br, w.replies)
			}
			return n
		}
	}},
}

// nativeParse feeds one connection's data to a new connection of a in
// TCP-sized chunks.
func nativeParse(a *Analyzer, conn *parsers.Conn, data []byte, replies bool) {
	cp := a.Open(conn)
	p := cp.Orig()
	if replies {
		p = cp.Resp()
	}
	for b := data; len(b) > 0; {
		n := min(len(b), segment)
		p.Feed(b[:n])
		b = b[n:]
	}
	p.Finish()
	cp.Close()
}

// netHTTPParse reads every message with net/http and discards the bodies.
func netHTTPParse(br *bufio.Reader, replies bool) int {
	n := 0
	get := &nethttp.Request{Method: "GET"}
	for {
		var body io.ReadCloser
		if replies {
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
func fastHTTPParse(br *bufio.Reader, reqh *fasthttp.RequestHeader, resh *fasthttp.ResponseHeader, replies bool) int {
	n := 0
	for {
		var cl int
		if replies {
			resh.Reset()
			if err := resh.Read(br); err != nil {
				return n
			}
			cl = resh.ContentLength()
			if code := resh.StatusCode(); code < 200 || code == 204 || code == 304 {
				cl = 0
			}
		} else {
			reqh.Reset()
			if err := reqh.Read(br); err != nil {
				return n
			}
			cl = reqh.ContentLength() // -2: none, no body
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

// skipChunked skips a chunked body, trailers included, without allocating.
func skipChunked(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		size, digits := 0, 0
		for _, c := range line {
			var d int
			switch {
			case c >= '0' && c <= '9':
				d = int(c - '0')
			case c >= 'a' && c <= 'f':
				d = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				d = int(c-'A') + 10
			default:
				d = -1
			}
			if d < 0 {
				break
			}
			size, digits = size<<4|d, digits+1
		}
		if digits == 0 {
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
		if _, err := br.Discard(size + 2); err != nil {
			return false
		}
	}
}

// BenchmarkParse times each side alone on each workload.
func BenchmarkParse(b *testing.B) {
	for i := range workloads {
		w := &workloads[i]
		for _, pe := range peers {
			b.Run(w.name+"/"+pe.name, func(b *testing.B) {
				parse := pe.setup()
				for range 3 { // warm up: free lists and buffers
					if n := parse(w); n != w.msgs {
						b.Fatalf("%s read %d messages, want %d", pe.name, n, w.msgs)
					}
				}
				b.SetBytes(int64(w.size))
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu0, cpuOK := threadcpu.Now()
				b.ResetTimer()
				for range b.N {
					parse(w)
				}
				b.StopTimer()
				msgs := float64(w.msgs) * float64(b.N)
				if cpu1, ok := threadcpu.Now(); ok && cpuOK {
					b.ReportMetric(float64(cpu1-cpu0)/msgs, "cpu-ns/msg")
				}
				b.ReportMetric(msgs/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// BenchmarkParseRatio measures the targets the way a busy machine allows:
// native, fasthttp and net/http take turns on the same workload, each turn
// parsing it as many times as make the fastest side work for about
// turnTime, timed by the thread's CPU time and started with the workload
// in the cache. It reports each side's median cost per message over the
// turns (native-ns, fasthttp-ns, net-http-ns) and the median, over the
// rounds, of the ratios of the turns of one round (fasthttp/native,
// net-http/native: how many times faster native is). Taking turns lets
// drifts in load hit all three alike; medians shrug off the turns that
// other processes disturbed, and the thread's clock now and then counting
// too little (seen on virtual machines), which a minimum would pick. B/op
// and allocs/op are the three sides' together (BenchmarkParse shows each
// side's own).
func BenchmarkParseRatio(b *testing.B) {
	const turnTime = 200 * time.Microsecond
	for i := range workloads {
		w := &workloads[i]
		b.Run(w.name, func(b *testing.B) {
			if _, ok := threadcpu.Now(); !ok {
				b.Skip("the thread's CPU time is not available here")
			}
			parse := make([]func(*workload) int, len(peers))
			fastest := time.Duration(math.MaxInt64)
			for k, pe := range peers {
				parse[k] = pe.setup()
				for range 3 {
					t0 := time.Now()
					if n := parse[k](w); n != w.msgs {
						b.Fatalf("%s read %d messages, want %d", pe.name, n, w.msgs)
					}
					fastest = min(fastest, time.Since(t0))
				}
			}
			reps := int(turnTime/max(fastest, 1)) + 1
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cost := make([][]float64, len(peers)) // per message, for each turn
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for k, fn := range parse {
					runtime.GC() // no collection of net/http's garbage runs into the next turn
					warm(w)
					c0, _ := threadcpu.Now()
					for range reps {
						fn(w)
					}
					c1, _ := threadcpu.Now()
					cost[k] = append(cost[k], float64(c1-c0)/float64(reps*w.msgs))
				}
			}
			b.StopTimer()
			for k, pe := range peers {
				b.ReportMetric(median(cost[k]), pe.name+"-ns")
			}
			for k := 1; k < len(peers); k++ {
				ratios := make([]float64, len(cost[0]))
				for j := range ratios {
					ratios[j] = cost[k][j] / cost[0][j]
				}
				b.ReportMetric(median(ratios), peers[k].name+"/native")
			}
		})
	}
}

func median(x []float64) float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	n := len(x)
	if n%2 == 1 {
		return x[n/2]
	}
	return (x[n/2-1] + x[n/2]) / 2
}

// warm reads every byte of the workload, so that it is in the cache (as far
// as it fits) whichever side parsed it last.
func warm(w *workload) {
	var sum byte
	for _, c := range w.conns {
		for _, x := range c {
			sum += x
		}
	}
	warmSink = sum
}

var warmSink byte

// BenchmarkCeiling measures what no parser can beat on this machine: copying
// the workload's bytes, and finding its line ends with bytes.IndexByte.
func BenchmarkCeiling(b *testing.B) {
	i := slices.IndexFunc(workloads, func(w workload) bool { return w.name == "browser-request" })
	data := workloads[i].conns[0]
	b.Run("copy", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(int64(len(data)))
		for range b.N {
			copy(dst, data)
		}
	})
	b.Run("indexbyte-lines", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		n := 0
		for range b.N {
			for d := data; ; {
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

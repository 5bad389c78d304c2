package http

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// mimeSink keeps each transaction's MIME types.
type mimeSink struct{ orig, resp [][]string }

func (s *mimeSink) HTTP(_ *parsers.Conn, tx *Transaction) {
	s.orig = append(s.orig, append([]string(nil), tx.OrigMIMETypes...))
	s.resp = append(s.resp, append([]string(nil), tx.RespMIMETypes...))
}

// feedSplit feeds a conversation, each direction's data in pieces of at
// most chunk bytes.
func feedSplit(a *Analyzer, chunk int, reqs, reps string) {
	cp := a.Open(&parsers.Conn{ID: "c", Kind: parsers.Stream})
	for _, d := range []struct {
		p    parsers.Parser
		data string
	}{{cp.Orig(), reqs}, {cp.Resp(), reps}} {
		for b := []byte(d.data); len(b) > 0; {
			n := min(len(b), chunk)
			d.p.Feed(b[:n])
			b = b[n:]
		}
	}
	cp.Orig().Finish()
	cp.Resp().Finish()
	cp.Close()
}

func reply(headers, body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s", headers, len(body), body)
}

func TestSniffMIMETypes(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00", 40)
	html := "<!DOCTYPE html>\n<html><body>" + strings.Repeat("words ", 2000) + "</body></html>"
	gzHTML := string(compressed(t, "gzip", 6, []byte(html)))
	rawPNG := string(compressed(t, "raw", 1, []byte(png)))
	get := "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
	tests := []struct {
		name       string
		reqs, reps string
		orig, resp [][]string
	}{
		{"png", get, reply("", png), [][]string{nil}, [][]string{{"image/png"}}},
		{"html over 4 KiB", get, reply("", html), [][]string{nil}, [][]string{{"text/html"}}},
		{"gzip html", get, reply("Content-Encoding: gzip\r\n", gzHTML), [][]string{nil}, [][]string{{"text/html"}}},
		{"deflate png", get, reply("Content-Encoding: deflate\r\n", rawPNG), [][]string{nil}, [][]string{{"image/png"}}},
		{"no body", get, "HTTP/1.1 304 Not Modified\r\n\r\n", [][]string{nil}, [][]string{nil}},
		{"no signature matches", get, reply("", "\x00\x9f\x13"), [][]string{nil}, [][]string{nil}},
		{"request body", "POST /api HTTP/1.1\r\nHost: h\r\nContent-Length: 13\r\n\r\n{\"a\": [1, 2]}", reply("", "ok"),
			[][]string{{"text/json"}}, [][]string{nil}},
		{"chunked", get, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nGIF8\r\n6\r\n9a\x01\x00\x01\x00\r\n0\r\n\r\n",
			[][]string{nil}, [][]string{{"image/gif"}}},
		{"two transactions", get + get, reply("", png) + reply("", "plain words, more than ten"),
			[][]string{nil, nil}, [][]string{{"image/png"}, {"text/plain"}}},
		{"until close, read as lines", get, "HTTP/1.0 200 OK\r\n\r\n  \n<html>\n<body>x</body>\n",
			[][]string{nil}, [][]string{{"text/html"}}},
		{"lone LFs reach the file as CR LF", get, "HTTP/1.0 200 OK\r\n\r\n{}\n", [][]string{nil}, [][]string{{"text/json"}}},
		{"multipart: each part a file", get, reply("Content-Type: multipart/mixed; boundary=b\r\n",
			"--b\r\nContent-Type: image/png\r\n\r\n"+png+"\r\n--b\r\n\r\nsome words of text\r\n--b--\r\n"),
			[][]string{nil}, [][]string{{"image/png", "text/plain"}}},
		{"message: the inner entity's body", "POST / HTTP/1.1\r\nContent-Type: message/rfc822\r\nContent-Length: 56\r\n\r\n" +
			"MIME-Version: 1.0\r\nContent-Type: text/plain\r\n\r\nGIF89a\x01\x00\r\n", reply("", "ok"),
			[][]string{{"image/gif"}}, [][]string{nil}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 1460, 1 << 20} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, chunk), func(t *testing.T) {
				s := &mimeSink{}
				feedSplit(New(s), chunk, tt.reqs, tt.reps)
				if !reflect.DeepEqual(s.orig, tt.orig) || !reflect.DeepEqual(s.resp, tt.resp) {
					t.Errorf("orig %q resp %q, want %q %q", s.orig, s.resp, tt.orig, tt.resp)
				}
			})
		}
	}
}

func TestSniffOff(t *testing.T) {
	s := &mimeSink{}
	feedSplit(New(s, WithMIMESniffing(false)), 1<<20, "GET / HTTP/1.1\r\n\r\n", reply("", "GIF89a"))
	if len(s.resp) != 1 || s.resp[0] != nil {
		t.Errorf("resp %q, want no types", s.resp)
	}
}

// TestSniffGaps: a gap inside a body ends its sniffing with the bytes
// before it (Zeek's File::Gap); a gap before its first byte leaves none.
func TestSniffGaps(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
	for _, tt := range []struct {
		name string
		evs  []event
		want []string
	}{
		{"gap after the magic", conv(req("GET / HTTP/1.1\r\n\r\n"), rep(head+"GIF89a"), repGap(94), bothFin()), []string{"image/gif"}},
		{"gap before the magic", conv(req("GET / HTTP/1.1\r\n\r\n"), rep(head+"G"), repGap(3), rep("89a"+strings.Repeat("x", 93)), bothFin()), nil},
	} {
		s := &mimeSink{}
		a := New(s)
		runOn(a, tt.evs)
		if len(s.resp) != 1 || !reflect.DeepEqual(s.resp[0], tt.want) {
			t.Errorf("%s: resp %q, want %q", tt.name, s.resp, tt.want)
		}
	}
}

// TestSniffBudget: with the buffers' budget spent, a body split across
// deliveries is sniffed from its first one alone.
func TestSniffBudget(t *testing.T) {
	s := &mimeSink{}
	a := New(s, WithSniffBudget(0))
	feedSplit(a, 40, "GET / HTTP/1.1\r\n\r\n", reply("", "GIF89a"+strings.Repeat("\x00", 100)))
	if a.Stats().SniffBudget != 1 {
		t.Errorf("stats %+v", a.Stats())
	}
}

// TestSniffWholeBodyInPlace: a body whose Content-Length ends it in its
// first delivery is matched where it lies, without a buffer: with none to
// lend, it still gets its type and the budget's counter stays at zero.
func TestSniffWholeBodyInPlace(t *testing.T) {
	for _, chunk := range []int{1 << 20, 39} {
		s := &mimeSink{}
		a := New(s, WithSniffBudget(0))
		body := "GIF89a" + strings.Repeat("\x00", 10)
		// In 39-byte pieces, the body arrives whole in the second, the
		// first holding the head.
		feedSplit(a, chunk, "GET / HTTP/1.1\r\n\r\n", fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(body), body))
		if len(s.resp) != 1 || !reflect.DeepEqual(s.resp[0], []string{"image/gif"}) || a.Stats().SniffBudget != 0 {
			t.Errorf("pieces of %d: resp %q, stats %+v", chunk, s.resp, a.Stats())
		}
	}
}

// TestAppendLines holds appendLines to a byte-at-a-time reading of the
// lines, on pieces of CRs, LFs and other bytes, into buffers of every
// room left.
func TestAppendLines(t *testing.T) {
	byByte := func(buf, data []byte) []byte {
		for i := 0; i < len(data) && len(buf) < cap(buf); i++ {
			switch c := data[i]; c {
			case '\r':
				if i+1 < len(data) && data[i+1] == '\n' {
					i++
				}
				fallthrough
			case '\n':
				buf = append(buf, "\r\n"[:min(2, cap(buf)-len(buf))]...)
			default:
				buf = append(buf, c)
			}
		}
		return buf
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		data := make([]byte, r.IntN(40))
		for i := range data {
			data[i] = "\r\nab"[r.IntN(4)]
		}
		size := r.IntN(50) + 1
		fill := r.IntN(size + 1)
		want := byByte(make([]byte, fill, size), data)
		got := appendLines(make([]byte, fill, size), data)
		if !bytes.Equal(got, want) || cap(got) != size {
			t.Fatalf("%q into %d of %d: %q (cap %d), want %q", data, fill, size, got, cap(got), want)
		}
	}
}

// TestInflaterCapture holds the inflater's captured output to the
// standard library's decompression, on streams of every wrapper, level
// and piece size.
func TestInflaterCapture(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var pool tablePool
	for i := range 300 {
		data := sample(rng, rng.IntN(9000))
		if i%5 == 0 {
			data = bytes.Repeat(data[:min(len(data), 7)], 2000)
		}
		method := []string{"gzip", "zlib", "raw"}[i%3]
		z := compressed(t, method, []int{0, 1, 6, 9}[i%4], data)
		var f inflater
		f.start(&pool)
		out := make([]byte, 4096)
		f.capture = out
		piece := 1 + rng.IntN(2000)
		for p := z; len(p) > 0; p = p[min(piece, len(p)):] {
			f.write(p[:min(piece, len(p))])
		}
		f.flush()
		want := data[:min(len(data), 4096)]
		if got := out[:min(f.total, 4096)]; !bytes.Equal(got, want) {
			t.Fatalf("stream %d (%s, %d bytes): captured %d bytes, differing from the data", i, method, len(data), len(got))
		}
	}
}

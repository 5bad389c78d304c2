package http

import (
	"math/rand/v2"
	"testing"
)

// classifyByName is classify written plainly: every name compared with
// equalFold.
func classifyByName(name []byte) uint8 {
	for _, h := range []struct {
		name string
		kind uint8
	}{
		{"via", hdrProxy}, {"host", hdrHost}, {"origin", hdrOrigin}, {"referer", hdrReferer},
		{"upgrade", hdrUpgrade}, {"forwarded", hdrProxy}, {"client-ip", hdrProxy},
		{"user-agent", hdrUserAgent}, {"connection", hdrConnection}, {"content-type", hdrContentType},
		{"content-range", hdrContentRange}, {"authorization", hdrAuthorization},
		{"content-length", hdrContentLength}, {"x-forwarded-for", hdrProxy},
		{"content-encoding", hdrContentEncoding}, {"x-forwarded-from", hdrProxy},
		{"xroxy-connection", hdrProxy}, {"proxy-connection", hdrProxy},
		{"transfer-encoding", hdrTransferEncoding}, {"proxy-authorization", hdrAuthorization},
	} {
		if equalFold(name, h.name) {
			return h.kind
		}
	}
	return hdrOther
}

// TestClassify checks classify against classifyByName on the known names
// in random case, with each byte changed in turn, and on common other names.
func TestClassify(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"Accept", "Date", "Server", "ETag", "Cookie", "Set-Cookie", "Accept-Language",
		"Accept-Encoding", "Cache-Control", "Last-Modified", "Keep-Alive", "X-Requested-With",
		"If-Modified-Since", "Sec-Fetch-Dest", "Access-Control-Allow-Origin", "", "a", "HOST ", "Hos",
		"Content-Lengths", "Content-Lengt", "X-Forwarded-For-Real-IP-Address-Of-The-Client"}
	for _, h := range []string{"via", "host", "origin", "referer", "upgrade", "forwarded", "client-ip",
		"user-agent", "connection", "content-type", "content-range", "authorization", "content-length",
		"x-forwarded-for", "content-encoding", "x-forwarded-from", "xroxy-connection", "proxy-connection",
		"transfer-encoding", "proxy-authorization"} {
		names = append(names, h)
		for range 20 {
			b := []byte(h)
			for i := range b {
				if rng.IntN(2) == 0 && b[i] >= 'a' && b[i] <= 'z' {
					b[i] -= 'a' - 'A'
				}
			}
			names = append(names, string(b))
			m := append([]byte(nil), b...)
			m[rng.IntN(len(m))] = byte(0x21 + rng.IntN(0x7e-0x21))
			names = append(names, string(m))
		}
		for i := range h {
			for _, c := range []byte{'-' - 0x20, h[i] ^ 0x20, h[i] ^ 0x01, '_', '@', '`'} {
				b := []byte(h)
				b[i] = c
				names = append(names, string(b))
			}
		}
	}
	for _, n := range names {
		if got, want := classify([]byte(n)), classifyByName([]byte(n)); got != want {
			t.Errorf("classify(%q) = %d, want %d", n, got, want)
		}
		if len(n) > 0 && !mayBeKnown(n[0], len(n)) && classify([]byte(n)) != hdrOther {
			t.Errorf("mayBeKnown(%q) = false, but classify knows it", n)
		}
	}
}

// randomValue makes header values from the bytes that matter to MIME
// tokens, numbers and comments.
func randomValue(rng *rand.Rand) []byte {
	alphabet := []byte("0123456789-+mMtTaApPlLiIeE/;=\"( )\t,xX")
	b := make([]byte, rng.IntN(24))
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return b
}

// TestContentLengthShortcut checks contentLength's shortcut against the
// long way, contentLengthToken.
func TestContentLengthShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	values := [][]byte{[]byte("0"), []byte("1024"), []byte("12a"), []byte("-5"), []byte("99999999999999999999"),
		[]byte("9223372036854775808"), []byte(" 12"), []byte("(c) 12"), []byte("12 13")}
	for range 100000 {
		values = append(values, randomValue(rng))
	}
	for _, v := range values {
		n, ok := contentLength(v)
		wn, wok := contentLengthToken(v)
		if n != wn || ok != wok {
			t.Fatalf("contentLength(%q) = %d, %v; want %d, %v", v, n, ok, wn, wok)
		}
	}
}

// TestContentTypeShortcut checks parseContentType's shortcut against
// parseContentTypeFull.
func TestContentTypeShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	values := [][]byte{[]byte("text/html; charset=UTF-8"), []byte("multipart/form-data; boundary=x"),
		[]byte("Message/rfc822"), []byte("(c) multipart/mixed; boundary=y"), []byte("text"), []byte("/x")}
	for range 100000 {
		values = append(values, randomValue(rng))
	}
	for _, v := range values {
		for _, cur := range []uint8{typeOther, typeMultipart, typeMessage} {
			var b1, b2 []byte
			var h1, h2 bool
			got := parseContentType(v, cur, &b1, &h1)
			want := parseContentTypeFull(v, cur, &b2, &h2)
			if got != want || string(b1) != string(b2) || h1 != h2 {
				t.Fatalf("parseContentType(%q, %d) = %d %q %v; want %d %q %v", v, cur, got, b1, h1, want, b2, h2)
			}
		}
	}
}

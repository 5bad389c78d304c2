package http

import (
	"math/rand/v2"
	"testing"
)

// TestRequestLineShortcut checks splitRequestLine, with uriCharsLong for
// long URIs the shortcut of requestLine, against
// parseRequestLineFull: same method, URI, version and persistence for
// every line the shortcut takes.
func TestRequestLineShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	lines := []string{"GET / HTTP/1.1", "POST /a?b=c HTTP/1.0", "GET  / HTTP/1.1", "GET /a b HTTP/1.1",
		"GET /a|b HTTP/1.1", "GET /ahttp/x HTTP/1.1", "GET HTTP/1.1", " GET / HTTP/1.1", "GET / http/1.1",
		"GET /\tHTTP/1.1", "G(T / HTTP/1.1", "GET /%41 HTTP/1.1"}
	alphabet := []byte("/?&=%|\"<>{}\t ()aZ09HTP.1")
	for range 200000 {
		u := make([]byte, rng.IntN([]int{12, 40}[rng.IntN(2)]))
		for i := range u {
			if rng.IntN(8) == 0 {
				u[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				u[i] = 'a' + byte(rng.IntN(26))
			}
		}
		method := []string{"GET", "POST", "G(T", "", "get", "M-SEARCH"}[rng.IntN(6)]
		sep := []string{" ", " ", " ", "  ", "\t", ""}[rng.IntN(6)]
		v := []string{" HTTP/1.1", " HTTP/1.0", "HTTP/1.1", " HTTP/2.0", "  HTTP/1.1"}[rng.IntN(5)]
		lines = append(lines, method+sep+string(u)+v)
	}
	taken := 0
	for _, l := range lines {
		m, u, v, ok := splitRequestLine([]byte(l))
		if !ok || len(u) >= 16 && !uriCharsLong(u) {
			continue
		}
		taken++
		c := newConnState(New(&countSink{}))
		wm, wu, wok := c.parseRequestLineFull([]byte(l))
		if !wok || string(m) != string(wm) || string(u) != string(wu) || v != c.reqVersion {
			t.Fatalf("splitRequestLine(%q) = %q %q %v; parseRequestLineFull: %q %q %v %v", l, m, u, v, wm, wu, c.reqVersion, wok)
		}
	}
	if taken < 10000 {
		t.Errorf("the shortcut took %d of %d lines; the test needs more", taken, len(lines))
	}
}

// TestStatusLineShortcut checks splitStatusLine, the shortcut of
// parseStatusLine, against parseStatusLineFull.
func TestStatusLineShortcut(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	lines := []string{"HTTP/1.1 200 OK", "HTTP/1.0 404 Not Found", "HTTP/1.1 200", "HTTP/1.1 200 ", "HTTP/1.1 200  OK",
		"HTTP/1.1 200\tOK", "HTTP/1.1 200OK", "HTTP/1.1  200 OK", "http/1.1 200 OK", "HTTP/1.1 2x0 OK", "HTTP/2.0 200 OK"}
	for range 200000 {
		b := []byte("HTTP/1.1 200 OK")
		for range 1 + rng.IntN(3) {
			const alphabet = " \t0123456789Ox"
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
		}
		b = b[:8+rng.IntN(8)]
		lines = append(lines, string(b))
	}
	taken := 0
	for _, l := range lines {
		code, reason, v, ok := splitStatusLine([]byte(l))
		if !ok {
			continue
		}
		taken++
		c := newConnState(New(&countSink{}))
		wcode, wreason, wok := c.parseStatusLineFull([]byte(l))
		if !wok || code != wcode || string(reason) != string(wreason) || (reason == nil) != (wreason == nil) || v != c.replyVersion {
			t.Fatalf("splitStatusLine(%q) = %d %q %v; parseStatusLineFull: %d %q %v %v", l, code, reason, v, wcode, wreason, c.replyVersion, wok)
		}
	}
	if taken < 10000 {
		t.Errorf("the shortcut took %d of %d lines; the test needs more", taken, len(lines))
	}
}

package zeeklog

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The renderers in append.go are fast versions of the plain ones below,
// which say what Zeek writes byte by byte; the tests hold them to it.

func refTSVString(s string, inVec bool) string {
	if len(s) == 0 {
		return emptyField
	}
	var b []byte
	start := 0
	if s == unsetField || s == emptyField {
		b = appendHexEscape(b, s[0])
		start = 1
	}
	for i := start; i < len(s); {
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				b = appendHexEscape(b, c)
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		}
		if c < 0x20 || c == 0x7f || c == '\\' || (inVec && c == setSeparator) {
			b = appendHexEscape(b, c)
		} else {
			b = append(b, c)
		}
		i++
	}
	return string(b)
}

func refTSVText(s string, inVec bool) string {
	if len(s) == 0 {
		return emptyField
	}
	var b []byte
	start := 0
	if s == unsetField || s == emptyField {
		b = appendHexEscape(b, s[0])
		start = 1
	}
	for _, c := range []byte(s[start:]) {
		if c < 0x20 || c == 0x7f || (inVec && c == setSeparator) {
			b = appendHexEscape(b, c)
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func refJSONString(s string) string {
	b := []byte{'"'}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20 || c == 0x7f:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		case c >= 0x80:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size <= 1 {
				b = append(b, '\\', '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
				i++
				continue
			}
			b = append(b, s[i:i+size]...)
			i += size
			continue
		default:
			b = append(b, c)
		}
		i++
	}
	return string(append(b, '"'))
}

// checkStringRenderers compares every string renderer with its reference
// on s.
func checkStringRenderers(t *testing.T, s string) {
	t.Helper()
	for _, inVec := range []bool{false, true} {
		if got, want := string(appendTSVString([]byte("x"), s, inVec)), "x"+refTSVString(s, inVec); got != want {
			t.Errorf("appendTSVString(%q, vec=%v) = %q, want %q", s, inVec, got, want)
		}
		if got, want := string(appendTSVString(nil, []byte(s), inVec)), refTSVString(s, inVec); got != want {
			t.Errorf("appendTSVString([]byte %q, vec=%v) = %q, want %q", s, inVec, got, want)
		}
		if got, want := string(appendTSVText(nil, []byte(s), inVec)), refTSVText(s, inVec); got != want {
			t.Errorf("appendTSVText(%q, vec=%v) = %q, want %q", s, inVec, got, want)
		}
	}
	if got, want := string(appendJSONString(nil, s)), refJSONString(s); got != want {
		t.Errorf("appendJSONString(%q) = %q, want %q", s, got, want)
	}
}

func TestStringRenderers(t *testing.T) {
	for _, s := range []string{
		"", "-", "(empty)", "(empty", "--", "plain", "a\tb", "a,b", `back\slash`, "\x00\x1f\x7f",
		"utf8 ü €", "bad \xff\xc3", "cut \xe2\x82", `quote"`, "ü-", "-ü", "\xf0\x9f\x98\x80 emoji",
		"ends in \xc3", "\xed\xa0\x80 surrogate", "(empty)x", "x(empty)",
	} {
		checkStringRenderers(t, s)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab,-\\\"\t\n\x00\x7f\x80\xbf\xc3\xa9\xe2\x82\xac\xf0\x9f\xff(empty)")
	for range 40000 {
		// Runs of plain bytes with now and then one to escape, so that
		// the eight-bytes-at-once tests meet them at every position.
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(8) == 0 {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			} else {
				b[i] = byte(' ' + rng.IntN(95))
			}
		}
		checkStringRenderers(t, string(b))
	}
	for c := range 256 {
		for at := range 17 {
			b := []byte(strings.Repeat("x", 17))
			b[at] = byte(c)
			checkStringRenderers(t, string(b))
		}
	}
}

func TestAppendUint(t *testing.T) {
	vals := []uint64{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1009, 9999, 10000, 10099, 65535, 99999, 100000, 1 << 32, math.MaxInt64, math.MaxUint64,
		1e9 - 1, 1e9, 1e9 + 1, 1e9 + 99999, 1e9 + 100000, 1258584561, 9999999999, 1e10}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range vals {
		if got, want := string(appendUint([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Errorf("appendUint(%d) = %s, want %s", v, got, want)
		}
		if got, want := string(appendUintTab([]byte("x"), v)), "x"+strconv.FormatUint(v, 10)+"\t"; got != want {
			t.Errorf("appendUintTab(%d) = %q, want %q", v, got, want)
		}
		if got, want := string(appendInt(nil, int64(v))), strconv.FormatInt(int64(v), 10); got != want {
			t.Errorf("appendInt(%d) = %s, want %s", int64(v), got, want)
		}
	}
	if got := string(appendInt(nil, math.MinInt64)); got != "-9223372036854775808" {
		t.Errorf("appendInt(MinInt64) = %s", got)
	}
}

func TestAppendAddr(t *testing.T) {
	addrs := []netip.Addr{
		netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("255.255.255.255"), netip.MustParseAddr("10.1.99.100"),
		netip.MustParseAddr("::ffff:1.2.3.4"), netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("fe80::1%eth0"),
	}
	for o := range 256 {
		addrs = append(addrs, netip.AddrFrom4([4]byte{byte(o), byte(255 - o), byte(o / 3), 7}))
	}
	for _, a := range addrs {
		if got, want := string(appendAddr([]byte("x"), a)), "x"+a.String(); got != want {
			t.Errorf("appendAddr(%v) = %s, want %s", a, got, want)
		}
		// A full buffer (a new array) and one with room (written in place).
		for _, b := range [][]byte{[]byte("x"), append(make([]byte, 0, 64), 'x')} {
			if got, want := string(tsvAddr(b, a)), "x"+a.String()+"\t"; got != want {
				t.Errorf("tsvAddr(%v) = %q, want %q", a, got, want)
			}
		}
	}
	if got := string(tsvAddr(nil, netip.Addr{})); got != "-\t" {
		t.Errorf("tsvAddr(zero Addr) = %q, want unset", got)
	}
}

func TestAppendMicros(t *testing.T) {
	for _, f := range []uint64{0, 1, 9, 10, 99, 100, 12345, 99999, 100000, 999999} {
		want := "." + strconv.FormatUint(f+1e6, 10)[1:]
		if got := string(appendMicros(nil, f)); got != want {
			t.Errorf("appendMicros(%d) = %s, want %s", f, got, want)
		}
	}
}

// TestPlainWord checks the eight-bytes-at-once test against its
// definition for every pair of byte values at every pair of neighbouring
// positions (where carries and borrows cross) in an otherwise plain word.
func TestPlainWord(t *testing.T) {
	plain := func(b byte) bool { return b >= 0x20 && b <= 0x7e && b != setSeparator }
	for at := range 7 {
		for x := range 256 {
			for y := range 256 {
				w := []byte("abcdefgh")
				w[at], w[at+1] = byte(x), byte(y)
				want := plain(byte(x)) && plain(byte(y))
				if got := plainWord(binary.LittleEndian.Uint64(w), setSeparator); got != want {
					t.Fatalf("plainWord(%q) = %v, want %v", w, got, want)
				}
			}
		}
	}
}

// TestPutMicrosTab holds putMicrosTab to appendMicros for every
// microsecond fraction.
func TestPutMicrosTab(t *testing.T) {
	var d [7]byte
	for frac := range uint64(1e6) {
		putMicrosTab(d[:], frac)
		want := string(appendMicros(nil, frac)[1:]) + "\t"
		if string(d[:]) != want {
			t.Fatalf("putMicrosTab(%d) = %q, want %q", frac, d[:], want)
		}
	}
}

// TestPutShort holds putShort to copy for strings of every length it
// takes.
func TestPutShort(t *testing.T) {
	src := []byte("0123456789abcdefXYZ")
	for l := 2; l <= 16; l++ {
		var w [24]byte
		putShort(&w, src[:l:l])
		if string(w[:l]) != string(src[:l]) {
			t.Errorf("putShort of %d bytes stored %q, want %q", l, w[:l], src[:l])
		}
	}
}

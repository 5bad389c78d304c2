package filemagic

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// goRegexp writes n in Go's syntax, as the reference matcher of the tests.
func goRegexp(n *node) string {
	switch n.op {
	case opEmpty:
		return "(?:)"
	case opSet:
		var b strings.Builder
		b.WriteString("[")
		for c := 0; c < 256; c++ {
			if n.set.has(byte(c)) {
				fmt.Fprintf(&b, `\x{%02x}`, c)
			}
		}
		b.WriteString("]")
		return b.String()
	case opCat:
		var b strings.Builder
		for _, s := range n.subs {
			b.WriteString(goRegexp(s))
		}
		return "(?:" + b.String() + ")"
	case opAlt:
		var parts []string
		for _, s := range n.subs {
			parts = append(parts, goRegexp(s))
		}
		return "(?:" + strings.Join(parts, "|") + ")"
	case opBOL:
		return `\A`
	case opEOL:
		return `\z`
	}
	sub := goRegexp(n.subs[0])
	var out strings.Builder
	// Go caps counted repetitions at 1000: spell longer ones out.
	for range n.min {
		out.WriteString(sub)
	}
	if n.max < 0 {
		return out.String() + sub + "*"
	}
	for range n.max - n.min {
		out.WriteString("(?:" + sub)
	}
	for range n.max - n.min {
		out.WriteString(")?")
	}
	return "(?:" + out.String() + ")"
}

// reference sniffs with Go's regexp package, one signature after the other.
type reference struct {
	sigs []Signature
	res  []*regexp.Regexp
}

func newReference(t testing.TB, p *Program) *reference {
	r := &reference{sigs: p.sigs}
	for _, s := range p.sigs {
		n, err := parse(s.Pattern)
		if err != nil {
			t.Fatal(err)
		}
		re, err := regexp.Compile(`\A` + goRegexp(n))
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		r.res = append(r.res, re)
	}
	return r
}

func (r *reference) sniff(bof []byte) (string, bool) {
	if len(bof) > BOFSize {
		bof = bof[:BOFSize]
	}
	if len(bof) == 0 {
		return "", false
	}
	// Go's regexp matches UTF-8: give it each byte as the rune of its value.
	runes := make([]rune, len(bof))
	for i, c := range bof {
		runes[i] = rune(c)
	}
	text := string(runes)
	for i, re := range r.res { // sigs are sorted best first
		if re.MatchString(text) {
			return r.sigs[i].MIME, true
		}
	}
	return "", false
}

func TestZeekCompiles(t *testing.T) {
	p := Zeek()
	if len(p.sigs) < 300 {
		t.Fatalf("%d signatures", len(p.sigs))
	}
	seen := map[string]bool{}
	for _, s := range p.sigs {
		if seen[s.Name] {
			t.Errorf("signature %s twice", s.Name)
		}
		seen[s.Name] = true
	}
	t.Logf("%d signatures: %d matched together, %d at an offset, %d searched", len(p.sigs),
		len(p.sigs)-len(p.offsets)-len(p.searches), len(p.offsets), len(p.searches))
}

var sniffTests = []struct {
	name string
	bof  string
	want string // "" for no match
}{
	{"png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
	{"gif", "GIF89a\x01\x00\x01\x00", "image/gif"},
	{"jpeg", "\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"},
	{"html doctype", "<!DOCTYPE html>\n<html><head>", "text/html"},
	{"html lower case, after blanks", "  \r\n<html><body>hello</body></html>", "text/html"},
	{"html behind a comment", "<!-- generated -->\n<head><title>x</title>", "text/html"},
	{"plain text", "body { color: red; }\n", "text/plain"},
	{"nine printable bytes are not text", "abcdefghi", ""},
	{"json object", `{"a": [1, 2]}`, "text/json"},
	{"json array", `[1, 2, 3]`, "text/json"},
	{"empty json, to the end", "{}\n", "text/json"},
	{"empty json, more after", "{} x", ""},
	{"xml declaration beats xhtml", "<?xml version=\"1.0\"?>\n<!DOCTYPE html>", "application/xml"},
	{"pdf", "%PDF-1.4\n%\xe2\xe3\xcf\xd3", "application/pdf"},
	{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00", "application/x-gzip"},
	{"zip", "PK\x03\x04\x0a\x00\x00\x00", "application/zip"},
	{"windows executable", "MZ\x90\x00\x03\x00\x00\x00", "application/x-dosexec"},
	{"flash", "CWS\x0a\x00\x00", "application/x-shockwave-flash"},
	{"php after text", "hello <?php echo 1; ?>", "text/x-php"},
	{"php after a question", "why? <? no <?php echo 1; ?>", "text/x-php"},
	{"pixmap after text", "# by gimp\nPx P3 P310  20\n255\n", "image/x-portable-pixmap"},
	{"bitmap after a pixmap's P", "# P3 P110  20\n", "image/x-portable-bitmap"},
	{"diff", "x\n--- a\n+++ b\n@@ -1 +1 @@", "text/x-diff"},
	{"diff after dashes", "a-b -- --- a\n+++ b\n@@", "text/x-diff"},
	{"shell script", "#!/bin/sh\necho hi\n", "text/x-shellscript"},
	{"ms access at offset 4", "\x00\x01\x00\x00Standard Jet DB\x00", "application/x-msaccess"},
	{"pgp key at offset 2", "\r\n---BEGIN PGP PUBLIC KEY BLOCK-", "application/pgp-keys"},
	{"tar header", "notes.txt" + strings.Repeat("\x00", 91) + "0000644\x000001750\x000001750\x00" +
		"00000000012\x0014261734615\x00013525\x00 0", "application/x-tar"},
	{"tar's name, not its digits", strings.Repeat("x", 100) + "0000644 0001750", "text/plain"},
	{"ocsp request at 11", "0123456789a\x06\x05\x2b\x0e\x03\x02\x1a", "application/ocsp-request"},
	{"ocsp request at 19", "0123456789abcdefghi\x06\x05\x2b\x0e\x03\x02\x1a", "application/ocsp-request"},
	{"ocsp request at 20 is too far", "0123456789abcdefghij\x06\x05\x2b\x0e\x03\x02\x1a", "text/plain"},
	{"binary noise", "\x00\x9f\x13\x07\xee", ""},
	{"one byte", "<", ""},
}

func TestSniff(t *testing.T) {
	m := NewMatcher(Zeek())
	ref := newReference(t, Zeek())
	for _, tt := range sniffTests {
		got, ok := m.Sniff([]byte(tt.bof))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("%s: Sniff(%q) = %q, %v; want %q", tt.name, tt.bof, got, ok, tt.want)
		}
		if r, _ := ref.sniff([]byte(tt.bof)); r != tt.want {
			t.Errorf("%s: the reference says %q, the test %q", tt.name, r, tt.want)
		}
	}
}

// TestSniffOffsets: a signature beyond the first bytes needs the bytes up
// to it, and BOFSize bounds what is matched.
func TestSniffOffsets(t *testing.T) {
	m := NewMatcher(Zeek())
	doc := bytes.Repeat([]byte{0xfe}, 2080)
	doc = append(doc, "Microsoft Word 6.0 Document"...)
	if got, _ := m.Sniff(doc); got != "application/msword" {
		t.Errorf("word 6 at 2080: %q", got)
	}
	hdf := append(bytes.Repeat([]byte{0xfe}, 4096), "\x89HDF\r\n\x1a\n"...)
	if got, ok := m.Sniff(hdf); ok {
		t.Errorf("a signature past BOFSize matched: %q", got)
	}
}

// TestSniffMatchesReference sniffs random inputs made of pieces of the
// signatures' own literals, with the automata and with Go's regexp.
func TestSniffMatchesReference(t *testing.T) {
	p := Zeek()
	m := NewMatcher(p)
	ref := newReference(t, p)
	pieces := []string{"<", "<!--", "-->", "<?xml ", "?>", "<html", "<!DOCTYPE html", " ", "\n", "\r\n",
		"{", "}", "[", "]", `"a"`, ":", ",", "1", "true", "PK\x03\x04", "\x14\x00", "META-INF/MANIFEST.MF",
		"MZ", "\x7fELF", "\x01", "\x00", "\xff", "#!", "/bin/", "sh", "<?php", "--- ", "+++ ", "@@", "P1", "12 ",
		"ftyp", "isom", "RIFF", "WEBP", "\x1a\x45\xdf\xa3", "B\x82", "webm", "GIF8", "\x89PNG", "abcdefghij"}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 4000 {
		var b []byte
		for range rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		if i%7 == 0 {
			b = append(b, bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(3000))...)
		}
		got, _ := m.Sniff(b)
		want, _ := ref.sniff(b)
		if got != want {
			t.Fatalf("Sniff(%q) = %q, the reference %q", b, got, want)
		}
	}
}

// TestSearchScans: the literals after ".*" are looked for by their rarest
// byte, and the ones found by the same byte share a pass.
func TestSearchScans(t *testing.T) {
	p := Zeek()
	got := map[string]string{}
	for _, sc := range p.scans {
		var lits []string
		for _, id := range sc.ids {
			lits = append(lits, string(p.searches[id].lit))
		}
		got[fmt.Sprintf("%q@%d", sc.key, sc.keyAt)] = strings.Join(lits, " ")
	}
	want := map[string]string{`'-'@0`: "--- ", `'P'@0`: "P1 P2 P3", `'?'@1`: "<?php"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("scans %v, want %v", got, want)
	}
}

// TestOffsetSignatures: signatures that keep most inputs alive for many
// bytes are matched apart, each only where the byte it needs is there.
func TestOffsetSignatures(t *testing.T) {
	p := Zeek()
	byName := map[string]offsetSig{}
	for _, o := range p.offsets {
		byName[p.sigs[o.rank].Name] = o
	}
	var nul byteSet
	nul.add(0)
	for _, tt := range []struct {
		name                   string
		skip, skipMax, guardAt int
		guard                  *byteSet // nil: every byte
	}{
		{"file-tar", 0, 0, 107, &nul}, // 100 printable bytes, 7 digits, a NUL
		{"file-ocsp-request", 11, 19, 11, nil},
		{"file-zoo", 20, 20, 20, &byteSet{0, 0, 0, 1 << (0xdc - 192)}},
	} {
		o, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s is matched in the shared automaton", tt.name)
			continue
		}
		guard := tt.guard
		if guard == nil {
			guard = new(byteSet)
			guard.negate()
		}
		if o.skip != tt.skip || o.skipMax != tt.skipMax || o.guardAt != tt.guardAt || o.guard != *guard {
			t.Errorf("%s: skip %d-%d, guard at %d %x; want %d-%d, %d %x", tt.name,
				o.skip, o.skipMax, o.guardAt, o.guard, tt.skip, tt.skipMax, tt.guardAt, *guard)
		}
	}
}

// TestManyOffsetSignatures: more offset signatures than a word of
// guardIndex's bit sets holds.
func TestManyOffsetSignatures(t *testing.T) {
	var sigs []Signature
	for i := range 150 {
		sigs = append(sigs, Signature{fmt.Sprint("sig", i), fmt.Sprintf("x/%d", i), 200 - i,
			fmt.Sprintf(`^.{%d}\x%02x(A|B)`, 16+i%7, 0x80+i%50)})
	}
	p, err := New(sigs)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.offsets) != len(sigs) || p.guards.words != 3 {
		t.Fatalf("%d offset signatures in %d words", len(p.offsets), p.guards.words)
	}
	m := NewMatcher(p)
	ref := newReference(t, p)
	rng := rand.New(rand.NewPCG(5, 6))
	matched := 0
	for range 3000 {
		b := make([]byte, 16+rng.IntN(10))
		for i := range b {
			b[i] = []byte{'A', 'B', 0x80 + byte(rng.IntN(50))}[rng.IntN(3)]
		}
		got, ok := m.Sniff(b)
		if want, _ := ref.sniff(b); got != want {
			t.Fatalf("Sniff(%q) = %q, the reference %q", b, got, want)
		}
		if ok {
			matched++
		}
	}
	if matched < 100 {
		t.Errorf("%d of 3000 inputs matched: the test tries too few", matched)
	}
}

func TestSniffAllocs(t *testing.T) {
	m := NewMatcher(Zeek())
	var inputs [][]byte
	for _, tt := range sniffTests {
		inputs = append(inputs, []byte(tt.bof))
	}
	for _, in := range inputs { // warm the automata
		m.Sniff(in)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, in := range inputs {
			m.Sniff(in)
		}
	}); n != 0 {
		t.Errorf("%v allocations per round of %d inputs, want 0", n, len(inputs))
	}
}

func FuzzSniff(f *testing.F) {
	for _, tt := range sniffTests {
		f.Add([]byte(tt.bof))
	}
	p := Zeek()
	m := NewMatcher(p)
	ref := newReference(f, p)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _ := m.Sniff(b)
		if want, _ := ref.sniff(b); got != want {
			t.Errorf("Sniff(%q) = %q, the reference %q", b, got, want)
		}
	})
}

// benchBodies are typical first bytes of HTTP bodies.
var benchBodies = []struct {
	name string
	data []byte
}{
	{"html", []byte("<!DOCTYPE html>\n<html><head><title>x</title></head><body>" + strings.Repeat("text ", 1000))},
	{"css", []byte(strings.Repeat("body { color: red; margin: 0 auto; }\n", 120))},
	{"jpeg", append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{0x55, 0xaa, 0x0a}, 1400)...)},
	{"minified-js", []byte(strings.Repeat("function f(a,b){return a+b};var x=f(1,2);", 100))},
	// One line of JSON keeps file-ini's section name open to the end.
	{"json", []byte("[" + strings.Repeat(`{"id":1326,"name":"flow gallery","tags":["a","b"]},`, 80) + "{}]")},
}

// BenchmarkSniffCold is the start of a short process, such as a replay
// binary: a fresh Matcher sniffing each of the typical bodies once, which
// builds the automata's states they reach.
func BenchmarkSniffCold(b *testing.B) {
	p := Zeek()
	b.ReportAllocs()
	for b.Loop() {
		m := NewMatcher(p)
		for _, bm := range benchBodies {
			m.Sniff(bm.data)
		}
	}
}

func BenchmarkSniff(b *testing.B) {
	for _, bm := range benchBodies {
		b.Run(bm.name, func(b *testing.B) {
			m := NewMatcher(Zeek())
			m.Sniff(bm.data)
			b.ReportAllocs()
			b.SetBytes(int64(min(len(bm.data), BOFSize)))
			for b.Loop() {
				m.Sniff(bm.data)
			}
		})
	}
}

// TestSkipLoop checks skipLoop at run lengths around its blocks of eight.
func TestSkipLoop(t *testing.T) {
	var row [256]int16
	const loop = int16(5)
	row['a'] = loop
	row['b'] = loop
	tests := []struct {
		data string
		i    int
		want int
	}{
		{"x", 0, 0},
		{"xy", 0, 0},
		{"xa", 0, 1},
		{"xab", 0, 2},
		{"xabababa", 0, 7},
		{"xabababab", 0, 8},
		{"xababababa", 0, 9},
		{"xababababyab", 0, 8},
		{"xabacabababababab", 0, 3},
		{"xaaaaaaaaaaaaaaaaaay", 0, 18},
		{"aaxaaa", 2, 5},
		{"aaxaaa", 5, 5},
	}
	for _, tt := range tests {
		if got := skipLoop(&row, loop, []byte(tt.data), tt.i); got != tt.want {
			t.Errorf("skipLoop(%q, %d) = %d, want %d", tt.data, tt.i, got, tt.want)
		}
	}
}

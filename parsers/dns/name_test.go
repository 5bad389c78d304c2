package dns

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestAppendZeekMatchesLabelByLabel renders random names, compressed and
// not, of printable and other bytes, with AppendZeek's fast path and with
// the label-by-label rendering it must agree with.
func TestAppendZeekMatchesLabelByLabel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_",
		"aZ09-_ .,\\\x7f\x00\x1f\x80\xff",
	}
	label := func(alpha string) []byte {
		n := 1 + rng.IntN(20)
		if rng.IntN(8) == 0 {
			n = 63
		}
		l := []byte{byte(n)}
		for range n {
			l = append(l, alpha[rng.IntN(len(alpha))])
		}
		return l
	}
	for i := range 20000 {
		alpha := alphabets[i%len(alphabets)]
		msg := make([]byte, HeaderLen)
		var offs []int
		for range 1 + rng.IntN(4) { // names that later ones may point to
			offs = append(offs, len(msg))
			for range rng.IntN(4) {
				msg = append(msg, label(alpha)...)
			}
			if len(offs) > 1 && rng.IntN(2) == 0 {
				ptr := offs[rng.IntN(len(offs)-1)]
				msg = append(msg, 0xc0|byte(ptr>>8), byte(ptr))
			} else {
				msg = append(msg, 0)
			}
		}
		dst := []byte("prefix")
		if rng.IntN(2) == 0 {
			dst = nil
		}
		for _, off := range offs {
			n := Name{msg: msg, off: off}
			got := string(n.AppendZeek(dst))
			want := string(n.appendZeekSlow(dst))
			if got != want {
				t.Fatalf("name at %d of %q: AppendZeek = %q, want %q", off, msg, got, want)
			}
		}
	}
}

// TestAppendZeekTruncated renders names cut off inside a label, whose
// rendering stops where their bytes end.
func TestAppendZeekTruncated(t *testing.T) {
	msg := []byte{3, 'W', 'w', 'w', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0}
	for cut := range len(msg) + 1 {
		n := Name{msg: msg[:cut]}
		if got, want := string(n.AppendZeek(nil)), string(n.appendZeekSlow(nil)); got != want {
			t.Errorf("cut at %d: AppendZeek = %q, want %q", cut, got, want)
		}
	}
}

// TestQuestionZeek reads random questions, plain and not, compressed,
// malformed and cut short, with questionZeek and with the two passes it
// stands for, question and appendZeekPlain: the renderings, the errors
// and the parser's state after them must agree.
func TestQuestionZeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const alpha = "abcXYZ09-_,\\\x00\x7f\xc0\x40"
	for i := range 50000 {
		msg := make([]byte, HeaderLen, 64)
		msg[5] = byte(1 + rng.IntN(2)) // questions
		for range 1 + rng.IntN(2) {
			for range rng.IntN(5) {
				n := 1 + rng.IntN(12)
				switch rng.IntN(16) {
				case 0:
					n = 63 + rng.IntN(2)
				case 1:
					n = 0xc0 | rng.IntN(2)
				}
				msg = append(msg, byte(n))
				for range min(n&0x3f, 12) {
					msg = append(msg, alpha[rng.IntN(len(alpha))])
				}
			}
			if rng.IntN(8) == 0 {
				msg = append(msg, 0xc0, byte(rng.IntN(len(msg))))
			} else {
				msg = append(msg, 0)
			}
			msg = append(msg, 0, 1, 0, 1)
		}
		if i%3 == 0 {
			msg = msg[:rng.IntN(len(msg)+1)]
		}
		var p1, p2 Parser
		p1.start(msg, new(Header))
		p2.start(msg, new(Header))
		dst := []byte("x")
		for q := 0; q < 2; q++ {
			tx := Transaction{buf: dst, QueryPlain: true, QType: 7, QClass: 7}
			err := p1.questionZeek(&tx)
			got, plain, typ, class := tx.buf, tx.QueryPlain, tx.QType, tx.QClass
			want, wantPlain, wantTyp, wantClass := dst, true, uint16(7), uint16(7) // tx as it was
			name, typ2, class2, wantErr := p2.question()
			if wantErr == nil {
				wantTyp, wantClass = typ2, class2
			}
			if wantErr == nil {
				want, wantPlain = Name{msg: msg, off: name}.appendZeekPlain(dst)
			}
			if string(got) != string(want) || plain != wantPlain || typ != wantTyp || class != wantClass ||
				(err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() ||
				p1.off != p2.off || p1.section != p2.section || p1.left != p2.left || p1.names != p2.names {
				t.Fatalf("message %q, question %d: questionZeek = %q %v %d %d %v, want %q %v %d %d %v",
					msg, q, got, plain, typ, class, err, want, wantPlain, wantTyp, wantClass, wantErr)
			}
			if err != nil {
				break
			}
			dst = got
		}
	}
}

// TestAppendZeekBytesEveryByte renders strings of every length up to 20
// with each byte value at each position, without folding: the word at a
// time test must escape exactly what the byte by byte rendering does.
func TestAppendZeekBytesEveryByte(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for pos := range n {
			for c := range 256 {
				b := []byte("Text, with ~ and |"[:min(n, 18)] + "xy"[:max(n-18, 0)])
				b[pos] = byte(c)
				got := string(appendZeekBytes([]byte("x"), b, false))
				want := string(appendZeekSlow([]byte("x"), b, &zeekKeep))
				if got != want {
					t.Fatalf("appendZeekBytes(%q) = %q, want %q", b, got, want)
				}
			}
		}
	}
}

// TestAppendCheckedName checks and renders random names, plain and not,
// compressed (pointers to earlier names, into them, forward and into
// themselves), malformed and cut short by a limit, in one pass with
// appendCheckedName and with the two it stands for, skipNameLimit and
// appendZeekPlain: where both pass, the renderings, their plainness, the
// ends and the names remembered must agree; where the one pass gives up,
// dst must be as it was.
func TestAppendCheckedName(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const alpha = "abcXYZ09-_,\\\x00\x7f"
	for i := range 50000 {
		msg := make([]byte, HeaderLen, 96)
		var offs []int
		for range 1 + rng.IntN(4) {
			offs = append(offs, len(msg))
			for range rng.IntN(4) {
				n := 1 + rng.IntN(10)
				if rng.IntN(16) == 0 {
					n = 0x40 | rng.IntN(0x80) // a bad label type
				}
				msg = append(msg, byte(n))
				for range min(n, 10) {
					c := alpha[rng.IntN(3)]
					if i%2 == 0 {
						c = alpha[rng.IntN(len(alpha))]
					}
					msg = append(msg, c)
				}
			}
			if rng.IntN(2) == 0 {
				ptr := offs[rng.IntN(len(offs))] + rng.IntN(3)
				if rng.IntN(8) == 0 {
					ptr = rng.IntN(len(msg) + 8)
				}
				msg = append(msg, 0xc0|byte(ptr>>8), byte(ptr))
			} else {
				msg = append(msg, 0)
			}
		}
		var p1, p2 Parser
		p1.start(msg, new(Header))
		p2.start(msg, new(Header))
		dst := []byte("x")
		for _, off := range offs {
			limit := len(msg)
			if rng.IntN(4) == 0 {
				limit = off + rng.IntN(len(msg)-off+1)
			}
			got, end, plain, ok := p1.appendCheckedName(dst, off, limit)
			wantEnd, err := p2.skipNameLimit(off, limit, SectionAnswer)
			if !ok {
				if string(got) != string(dst) {
					t.Fatalf("message %q, name at %d: gave up with %q, want %q", msg, off, got, dst)
				}
				if _, err1 := p1.skipNameLimit(off, limit, SectionAnswer); !sameError(err1, err) {
					t.Fatalf("message %q, name at %d: after giving up %v, want %v", msg, off, err1, err)
				}
			} else {
				want, wantPlain := Name{msg: msg, off: off}.appendZeekPlain(dst)
				if err != nil || string(got) != string(want) || plain != wantPlain || end != wantEnd {
					t.Fatalf("message %q, name at %d, limit %d: appendCheckedName = %q %v %d, want %q %v %d %v",
						msg, off, limit, got, plain, end, want, wantPlain, wantEnd, err)
				}
			}
			if p1.names != p2.names && !(ok && off < len(msg) && msg[off] >= 0xc0) {
				t.Fatalf("message %q, name at %d: names remembered %v, want %v", msg, off, p1.names, p2.names)
			}
			p1.names = p2.names
		}
	}
}

// TestPlainNameRoot checks names at the bounds plainNameRoot takes or
// leaves to walkName: where it takes one, walkName must accept it with the
// same end and, once the questions remember it, remember the same; it
// leaves to walkName compressed names and the names walkName refuses.
func TestPlainNameRoot(t *testing.T) {
	label := func(n int) []byte { return append([]byte{byte(n)}, make([]byte, n)...) }
	name := func(labels ...int) []byte {
		var b []byte
		for _, n := range labels {
			b = append(b, label(n)...)
		}
		return append(b, 0)
	}
	tests := []struct {
		name     string
		wire     []byte
		ok, walk bool // whether plainNameRoot and walkName accept it
	}{
		{"root", []byte{0}, true, true},
		{"plain", []byte("\x03www\x07example\x03com\x00"), true, true},
		{"longest label", name(63), true, true},
		{"longest name", name(63, 63, 63, 61), true, true}, // 255 bytes
		{"name too long", name(63, 63, 63, 62), false, false},
		{"bad label type", append([]byte{0x40}, name(63)[1:]...), false, false},
		{"extended label type", []byte{0x80, 0}, false, false},
		{"bad label type before the root", append(append([]byte{0x40}, bytes.Repeat([]byte{'a'}, 0x40)...), 0), false, false},
		{"too long before the root", append(name(63, 63, 63, 62)[:255], 0), false, false},
		{"compressed", []byte{3, 'w', 'w', 'w', 0xc0, 0}, false, true}, // to the header's zero byte
		{"forward pointer", []byte{3, 'w', 'w', 'w', 0xc0, HeaderLen + 4}, false, false},
		{"truncated label", []byte{3, 'w', 'w'}, false, false},
		{"no root", []byte{3, 'w', 'w', 'w'}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := append(make([]byte, HeaderLen), tt.wire...)
			var p1, p2 Parser
			p1.start(msg, new(Header))
			p2.start(msg, new(Header))
			root, wire, ok := p1.plainNameRoot(HeaderLen)
			if ok {
				p1.remember(HeaderLen, root, wire, 0)
			}
			end := root + 1
			wantEnd, err := p2.walkName(HeaderLen, len(msg), SectionQuestion)
			if ok != tt.ok || (err == nil) != tt.walk {
				t.Fatalf("plainNameRoot ok = %v, walkName error %v; want %v, %v", ok, err, tt.ok, tt.walk)
			}
			if ok && (end != wantEnd || p1.names != p2.names) {
				t.Fatalf("plainNameRoot end %d %v, walkName = %d %v", end, p1.names, wantEnd, p2.names)
			}
		})
	}
}

// TestAppendDotted renders runs of labels whose length bytes are printable
// or not, plain or not as bytes: they become dots whatever they are, and
// only the labels' own bytes decide whether the rendering is plain.
func TestAppendDotted(t *testing.T) {
	long := func(c byte, n int) string { return string(bytes.Repeat([]byte{c}, n)) }
	tests := []struct {
		labels string
		want   string
		ok     bool
	}{
		{"\x01a", "a", true},
		{"\x03WwW\x07Example\x03COM", "www.example.com", true},
		{"\x2c" + long('X', 44) + "\x01b", long('x', 44) + ".b", true}, // length byte ','
		{"\x3f" + long('y', 63), long('y', 63), true},                  // length byte '?'
		{"\x01a\x20" + long('z', 32), "a." + long('z', 32), true},      // length byte ' '
		{"\x02a,\x01b", "", false},
		{"\x01a\x02b\\", "", false},
		{"\x01\x00", "", false},
		{"\x01a\x01\x7f", "", false},
		{"\x01\xe9", "", false},
	}
	for _, tt := range tests {
		dst := make([]byte, 1, 1+maxNameWire)
		got, ok := appendDotted(dst, []byte(tt.labels), &zeekFoldPlain)
		if ok != tt.ok || string(got[1:]) != tt.want {
			t.Errorf("appendDotted(%q) = %q %v, want %q %v", tt.labels, got[1:], ok, tt.want, tt.ok)
		}
	}
}

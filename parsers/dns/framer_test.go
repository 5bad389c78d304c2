package dns_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wirebench/wirebench/parsers/dns"
)

// tcpStream frames msgs as DNS over TCP does.
func tcpStream(msgs ...string) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, byte(len(m)>>8), byte(len(m)))
		b = append(b, m...)
	}
	return b
}

// collect feeds chunks to f and returns the messages it framed.
func collect(f *dns.Framer, chunks ...[]byte) []string {
	var got []string
	for _, c := range chunks {
		for msg, rest := f.Next(c); msg != nil; msg, rest = f.Next(rest) {
			got = append(got, string(msg))
		}
	}
	return got
}

func TestFramerSplits(t *testing.T) {
	msgs := []string{"first", "", "a longer third message", "x"}
	stream := tcpStream(msgs...)
	want := fmt.Sprint(msgs)
	// Every way of cutting the stream in two, and one byte at a time.
	for i := 0; i <= len(stream); i++ {
		var f dns.Framer
		if got := fmt.Sprint(collect(&f, stream[:i], stream[i:])); got != want {
			t.Errorf("cut at %d: got %s, want %s", i, got, want)
		}
		if p := f.Partial(); p != nil {
			t.Errorf("cut at %d: Partial = %q after whole messages", i, p)
		}
	}
	var f dns.Framer
	var chunks [][]byte
	for i := range stream {
		chunks = append(chunks, stream[i:i+1])
	}
	if got := fmt.Sprint(collect(&f, chunks...)); got != want {
		t.Errorf("a byte at a time: got %s, want %s", got, want)
	}
}

func TestFramerGaps(t *testing.T) {
	stream := tcpStream("first", "second", "third")
	tests := []struct {
		name    string
		before  int   // bytes fed before the gaps
		gaps    []int // gaps one after the other, then the rest of the stream
		effects []dns.GapEffect
		want    string // every message framed
		lost    bool
	}{
		{"inside a message", 4, []int{2}, []dns.GapEffect{dns.GapResynced}, "[second third]", false},
		{"the end of a message", 4, []int{3}, []dns.GapEffect{dns.GapResynced}, "[second third]", false},
		{"past a message's end", 4, []int{4}, []dns.GapEffect{dns.GapLost}, "[]", true},
		{"at a message boundary", 7, []int{1}, []dns.GapEffect{dns.GapLost}, "[first]", true},
		{"inside a length", 1, []int{1}, []dns.GapEffect{dns.GapLost}, "[]", true},
		{"twice in one message", 3, []int{1, 1}, []dns.GapEffect{dns.GapResynced, dns.GapSkipped}, "[second third]", false},
		{"twice, the second to its end", 3, []int{1, 3}, []dns.GapEffect{dns.GapResynced, dns.GapResynced}, "[second third]", false},
		{"after the framing was lost", 7, []int{1, 1}, []dns.GapEffect{dns.GapLost, dns.GapNone}, "[first]", true},
		{"empty", 4, []int{0}, []dns.GapEffect{dns.GapNone}, "[first second third]", false},
	}
	for _, tt := range tests {
		var f dns.Framer
		got := collect(&f, stream[:tt.before])
		at := tt.before
		for i, n := range tt.gaps {
			if e := f.Gap(n); e != tt.effects[i] {
				t.Errorf("%s: gap %d = %d, want %d", tt.name, i, e, tt.effects[i])
			}
			at += n
		}
		got = append(got, collect(&f, stream[at:])...)
		if fmt.Sprint(got) != tt.want || f.Lost() != tt.lost {
			t.Errorf("%s: framed %v, lost %v; want %s, lost %v", tt.name, got, f.Lost(), tt.want, tt.lost)
		}
	}
}

func TestFramerPartialAndReset(t *testing.T) {
	var f dns.Framer
	stream := tcpStream("whole", "cut short")
	collect(&f, stream[:len(stream)-3])
	if p := f.Partial(); !bytes.Equal(p, []byte("cut sh")) {
		t.Errorf("Partial = %q, want %q", p, "cut sh")
	}
	if p := f.Partial(); p != nil {
		t.Errorf("second Partial = %q, want nil", p)
	}
	f.Gap(1)
	if !f.Lost() {
		t.Fatal("a gap at a message boundary did not lose the framing")
	}
	held := f.Held()
	f.Reset(held)
	if f.Lost() || f.Held() != held {
		t.Errorf("Reset(%d): lost %v, held %d; want a fresh Framer keeping its buffer", held, f.Lost(), f.Held())
	}
	f.Reset(0)
	if f.Held() != 0 {
		t.Errorf("Reset(0) kept %d bytes", f.Held())
	}
	if got := fmt.Sprint(collect(&f, stream)); got != "[whole cut short]" {
		t.Errorf("after Reset: framed %s", got)
	}
}

func TestFramerNoAllocs(t *testing.T) {
	stream := tcpStream("first", "second", "third")
	var f dns.Framer
	collect(&f, stream[:3], stream[3:]) // grows the buffer once
	allocs := testing.AllocsPerRun(100, func() {
		for _, c := range [][]byte{stream[:3], stream[3:9], stream[9:]} {
			for msg, rest := f.Next(c); msg != nil; msg, rest = f.Next(rest) {
			}
		}
	})
	if allocs != 0 {
		t.Errorf("framing a split stream allocates %.0f times, want 0", allocs)
	}
}

// A parser of DNS over TCP frames each direction's stream with a Framer
// and parses every message it returns.
func ExampleFramer() {
	var f dns.Framer
	stream := tcpStream("query one", "query two")
	// The stream arrives in two chunks cut inside the second message.
	for _, chunk := range [][]byte{stream[:14], stream[14:]} {
		for msg, rest := f.Next(chunk); msg != nil; msg, rest = f.Next(rest) {
			fmt.Printf("%q\n", msg)
		}
	}
	// Output:
	// "query one"
	// "query two"
}

// FuzzFramer checks that framing does not depend on where the stream is
// cut, and that gaps never make the Framer return more than the stream
// holds.
func FuzzFramer(f *testing.F) {
	f.Add(tcpStream("first", "second"), 3, 0)
	f.Add([]byte{0xff, 0xff, 1, 2}, 1, 2)
	f.Fuzz(func(t *testing.T, stream []byte, cut, gap int) {
		cut = min(max(cut, 0), len(stream))
		var whole, split dns.Framer
		want := fmt.Sprint(collect(&whole, stream))
		if got := fmt.Sprint(collect(&split, stream[:cut], stream[cut:])); got != want {
			t.Fatalf("cut at %d: framed %s, whole %s", cut, got, want)
		}
		var gapped dns.Framer
		msgs := collect(&gapped, stream[:cut])
		gapped.Gap(gap)
		skipped := min(max(gap, 0), len(stream)-cut)
		msgs = append(msgs, collect(&gapped, stream[cut+skipped:])...)
		n := 0
		for _, m := range msgs {
			n += 2 + len(m)
		}
		if n > len(stream)-skipped {
			t.Fatalf("after a gap of %d at %d: framed %d bytes of %d", gap, cut, n, len(stream)-skipped)
		}
	})
}

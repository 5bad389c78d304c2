package filemagic

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeyHits: keyHits finds every key byte from the offset on, once, on
// every length and offset, in as many calls as out needs.
func TestKeyHits(t *testing.T) {
	if !haveKeyHits {
		t.Skip("no assembly for keyHits here")
	}
	keys := [maxFused]byte{'-', 'P', '?'}
	rng := rand.New(rand.NewPCG(1, 2))
	var out [keyHitsMax]uint16
	for range 3000 {
		b := make([]byte, keyBlock+rng.IntN(400))
		density := 1 + rng.IntN(8) // a key every density bytes on average
		for i := range b {
			if rng.IntN(density) == 0 {
				b[i] = keys[rng.IntN(len(keys))]
			} else {
				b[i] = byte(rng.IntN(256))
			}
		}
		from := rng.IntN(len(b) + 1)
		var want, got []int
		for i := from; i < len(b); i++ {
			if bytes.IndexByte(keys[:], b[i]) >= 0 {
				want = append(want, i)
			}
		}
		for off := from; off < len(b); {
			n, next := keyHits(b, off, &keys, &out)
			if next <= off || next > len(b) || n > keyHitsMax {
				t.Fatalf("keyHits(%d bytes, from %d) = %d, %d", len(b), off, n, next)
			}
			for _, h := range out[:n] {
				got = append(got, int(h))
			}
			off = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d bytes from %d: hits %v, want %v", len(b), from, got, want)
		}
	}
}

// TestScanFused: the scans in one pass find what they find one after the
// other, on data shorter than keyBlock (shortKeyHits) too.
func TestScanFused(t *testing.T) {
	p := Zeek()
	m := NewMatcher(p)
	if !m.fused {
		t.Skip("the scans are not fused here")
	}
	pieces := []string{"--- ", "-", "+++ ", "\n", "@@", "P1", "P2", "P3", "P", "12 ", " 34", "<?php", "<?", "?", "x", "\x00"}
	rng := rand.New(rand.NewPCG(7, 8))
	matched := 0
	for range 5000 {
		var b []byte
		short := rng.IntN(4) == 0
		for short && rng.IntN(4) != 0 || !short && (len(b) < keyBlock || rng.IntN(8) != 0) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		b = b[:min(len(b), BOFSize)]
		if short {
			b = b[:min(len(b), keyBlock-1)]
		}
		if len(b) == 0 {
			continue
		}
		bound := []int32{noRank, p.scans[0].best + 1, 0}[rng.IntN(3)]
		want := bound
		for i := range p.scans {
			if sc := &p.scans[i]; sc.best < want {
				want = m.scan(sc, b, want)
			}
		}
		if got := m.scanFused(b, bound); got != want {
			t.Fatalf("scanFused(%q, %d) = %d, the scans %d", b, bound, got, want)
		}
		if want != bound {
			matched++
		}
	}
	if matched < 100 {
		t.Errorf("%d of 5000 inputs matched: the test tries too few", matched)
	}
}

// TestFirstKey: crossing a loop by the bytes that leave it (firstKey of
// loopExits) ends where skipLoop does.
func TestFirstKey(t *testing.T) {
	if !haveKeyHits {
		t.Skip("no assembly for firstKey here")
	}
	const loop = int16(7)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		var row [256]int16
		for b := range row {
			row[b] = loop
		}
		var out []byte
		for range 1 + rng.IntN(maxFused) {
			if c := byte(rng.IntN(256)); c != 'x' {
				row[c] = int16(rng.IntN(3)) - 1 // not built, dead, or a state
				out = append(out, c)
			}
		}
		if len(out) == 0 {
			continue
		}
		exits, n := loopExits(&row, loop)
		if int(n) > len(out) || n == 0 {
			t.Fatalf("loopExits found %d exits of %q", n, out)
		}
		b := make([]byte, keyBlock+rng.IntN(300))
		for i := range b {
			if rng.IntN(40) == 0 {
				b[i] = out[rng.IntN(len(out))]
			} else {
				if b[i] = byte(rng.IntN(256)); row[b[i]] != loop {
					b[i] = 'x'
				}
			}
		}
		i := rng.IntN(len(b))
		if got, want := firstKey(b, i+1, &exits)-1, skipLoop(&row, loop, b, i); got != want {
			t.Fatalf("firstKey(%q, %d) = %d, skipLoop %d", b, i+1, got+1, want)
		}
	}
}

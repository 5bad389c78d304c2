package flow

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSegTree checks the treap against a sorted slice through random
// inserts of disjoint segments, lookups and removals of the first.
func TestSegTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var a segArena
	var tr segTree
	var want []uint64 // offsets of the segments, sorted
	used := map[uint64]bool{}
	for step := range 50000 {
		switch {
		case rng.IntN(3) > 0 || tr.empty():
			seq := 2 * rng.Uint64N(20000) // one byte each, at even offsets: disjoint
			if used[seq] {
				continue
			}
			used[seq] = true
			a.insert(&tr, segment{seq: seq, data: []byte{byte(seq)}})
			i, _ := slices.BinarySearch(want, seq)
			want = slices.Insert(want, i, seq)
		default:
			sg := a.popFirst(&tr)
			if sg.seq != want[0] || sg.data[0] != byte(sg.seq) {
				t.Fatalf("step %d: popFirst = %d, want %d", step, sg.seq, want[0])
			}
			delete(used, want[0])
			want = want[1:]
		}
		if int(tr.n) != len(want) {
			t.Fatalf("step %d: %d segments, want %d", step, tr.n, len(want))
		}
		if len(want) > 0 {
			if got := a.first(&tr).seq; got != want[0] {
				t.Fatalf("step %d: first = %d, want %d", step, got, want[0])
			}
			q := rng.Uint64N(40002)
			i, _ := slices.BinarySearch(want, q) // first offset >= q: ends after q
			got := a.endingAfter(&tr, q)
			switch {
			case i == len(want) && got != nil:
				t.Fatalf("step %d: endingAfter(%d) = %d, want none", step, q, got.seq)
			case i < len(want) && (got == nil || got.seq != want[i]):
				t.Fatalf("step %d: endingAfter(%d) = %v, want %d", step, q, got, want[i])
			}
		}
	}
}

package parsers

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIDTable runs random adds, overwrites, lookups and removals against
// a map, long enough for the table to grow and to be rebuilt without its
// tombstones many times.
func TestIDTable(t *testing.T) {
	var tab idTable[int]
	tab.init()
	model := map[string]int{}
	r := rand.New(rand.NewPCG(1, 2))
	key := func() string { return fmt.Sprintf("10.0.0.%d-%d-udp", r.IntN(4), r.IntN(3000)) }
	for step := range 300_000 {
		k := key()
		h := tab.hash([]byte(k))
		if h != tab.hashString(k) {
			t.Fatalf("hash and hashString differ for %q", k)
		}
		switch r.IntN(3) {
		case 0:
			tab.set(h, k, step)
			model[k] = step
		case 1:
			i, ok := tab.find(h, []byte(k))
			if _, want := model[k]; ok != want {
				t.Fatalf("step %d: find(%q) = %v, want %v", step, k, ok, want)
			}
			if ok {
				tab.removeAt(i)
				delete(model, k)
			}
		default:
			v, ok := tab.get(h, []byte(k))
			if want, wantOK := model[k]; ok != wantOK || v != want {
				t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", step, k, v, ok, want, wantOK)
			}
		}
		if tab.live != len(model) || tab.used > len(tab.slots)*3/4 {
			t.Fatalf("step %d: %d live, %d used of %d slots; the model holds %d", step, tab.live, tab.used, len(tab.slots), len(model))
		}
	}
	if len(tab.slots) > 16*1024 {
		t.Errorf("%d slots for at most 12000 ids", len(tab.slots))
	}
}

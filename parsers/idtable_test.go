package parsers

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestIDTable runs random adds (by set or addAt), overwrites, lookups and
// removals against a map, long enough for the table to grow and for
// removals to shift back runs that wrap around its end many times.
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
			// Half the adds go as the Dispatcher's @begin-conn does:
			// grow if full, find, then addAt the empty slot.
			if tab.full() && step%2 == 0 {
				tab.grow()
			}
			if i, ok := tab.find(h, []byte(k)); !ok && !tab.full() && step%2 == 0 {
				tab.addAt(i, h, k, step)
			} else {
				tab.set(h, k, step)
			}
			model[k] = step
		case 1:
			i, ok := tab.find(h, []byte(k))
			if _, want := model[k]; ok != want {
				t.Fatalf("step %d: find(%q) = %v, want %v", step, k, ok, want)
			}
			if ok {
				if j, found := tab.findValue(h, model[k]); !found || j != i {
					t.Fatalf("step %d: findValue(%q, %d) = %d, %v; find gives %d", step, k, model[k], j, found, i)
				}
				tab.removeAt(i)
				delete(model, k)
			}
		default:
			v, ok := tab.get(h, []byte(k))
			if want, wantOK := model[k]; ok != wantOK || v != want {
				t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", step, k, v, ok, want, wantOK)
			}
		}
		if tab.live != len(model) || tab.live > len(tab.slots)*3/4 {
			t.Fatalf("step %d: %d live of %d slots; the model holds %d", step, tab.live, len(tab.slots), len(model))
		}
	}
	if len(tab.slots) > 16*1024 {
		t.Errorf("%d slots for at most 12000 ids", len(tab.slots))
	}
}

// TestIDTableSteady checks that a table holding about the same number of
// ids while they come and go keeps its slots: removals leave no
// tombstones to rebuild the table for.
func TestIDTableSteady(t *testing.T) {
	var tab idTable[int]
	tab.init()
	keys := make([]string, 100_000)
	for i := range keys {
		keys[i] = fmt.Sprintf("10.1.%d.%d-53-udp", i/256, i%256)
	}
	const open = 40
	for i, k := range keys {
		tab.set(tab.hashString(k), k, i)
		if i < open {
			continue
		}
		if i == open {
			slots := &tab.slots[0]
			defer func() {
				if &tab.slots[0] != slots {
					t.Errorf("the table was rebuilt while at most %d ids were open", open+1)
				}
			}()
		}
		old := keys[i-open]
		j, ok := tab.find(tab.hashString(old), []byte(old))
		if !ok {
			t.Fatalf("id %q lost", old)
		}
		tab.removeAt(j)
	}
	if tab.live != open {
		t.Errorf("%d live, want %d", tab.live, open)
	}
}

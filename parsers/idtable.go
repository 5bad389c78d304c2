package parsers

import (
	"hash/maphash"
	"unsafe"
)

// idTable maps the ids of a Dispatcher's open flows or connections to
// their state. It is a hash table with open addressing that lets its user
// keep an id's hash: the dispatcher hashes a record's id once, whether it
// then looks it up, adds it or both, and removes an id with the hash it
// kept when it added it, where a map would hash it again for every
// operation. Its hash is seeded at random (hash/maphash), so ids made to
// collide cannot be made in advance; lookups stay short on any input.
//
// A removal shifts the ids after it back into the gap (linear probing
// without tombstones), so the table only grows to hold the most ids open
// at once: a replay that opens and ends connections for ever neither
// rebuilds it nor leaves old tables to the garbage collector, and lookups
// probe only live ids.
//
// The zero value is not usable: call init first.
type idTable[V comparable] struct {
	seed  maphash.Seed
	slots []idSlot[V]
	live  int // slots holding an id
}

type idSlot[V comparable] struct {
	// hash is the id's hash with its top bit set; an empty slot's is 0.
	hash uint64
	key  string
	val  V
}

const (
	emptySlot   = 0
	liveHashBit = 1 << 63
	minIDSlots  = 64
)

// full reports whether one more id would fill the table past its
// maximum load, 3/8. A new id's search, and a removal's shifting, walk
// slots up to the next empty one: some eight at three quarters full, as
// hash tables often are, under two at three eighths. A replay adds and
// removes an id for every connection, and a slot takes some 40 bytes.
func (t *idTable[V]) full() bool { return (t.live+1)*8 > len(t.slots)*3 }

func (t *idTable[V]) init() {
	t.seed = maphash.MakeSeed()
	t.slots = make([]idSlot[V], minIDSlots)
}

// hash returns the hash of id the other methods take.
func (t *idTable[V]) hash(id []byte) uint64 { return maphash.Bytes(t.seed, id) | liveHashBit }

// hashString is hash for an id held as a string.
func (t *idTable[V]) hashString(id string) uint64 { return maphash.String(t.seed, id) | liveHashBit }

// find returns the slot of id, whose hash is h, and whether id is there;
// when it is not, the slot is the empty one where set would add it.
func (t *idTable[V]) find(h uint64, id []byte) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.hash == h && s.key == string(id) {
			return int(i), true
		}
		if s.hash == emptySlot {
			return int(i), false
		}
	}
}

// findValue returns the slot of the id whose hash is h and value v, and
// whether there is one: how a connection finds its own ids to remove
// them, comparing a word where find compares the id.
func (t *idTable[V]) findValue(h uint64, v V) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.hash == h && s.val == v {
			return int(i), true
		}
		if s.hash == emptySlot {
			return int(i), false
		}
	}
}

// get returns the value of id, whose hash is h.
func (t *idTable[V]) get(h uint64, id []byte) (V, bool) {
	if i, ok := t.find(h, id); ok {
		return t.slots[i].val, true
	}
	var zero V
	return zero, false
}

// set maps id, whose hash is h, to v; key is id as a string the table
// keeps until the id is removed or set again.
func (t *idTable[V]) set(h uint64, key string, v V) {
	i, ok := t.find(h, bytesOf(key))
	if !ok && t.full() {
		t.grow()
		i, _ = t.find(h, bytesOf(key))
	}
	if !ok {
		t.live++
	}
	t.slots[i] = idSlot[V]{hash: h, key: key, val: v}
}

// addAt adds id, whose hash is h, as key with value v, in slot i: the
// empty slot find returned for it, with no id added or removed since
// (a removal may move the empty slot). The table must not be full: the
// caller grows it, if so, before the find. That keeps addAt short enough
// to be inlined in the Dispatcher's per-connection work.
func (t *idTable[V]) addAt(i int, h uint64, key string, v V) {
	t.live++
	t.slots[i] = idSlot[V]{hash: h, key: key, val: v}
}

// removeAt removes the id in slot i (found by find), then moves back
// each id of the run after it that the gap cuts off from its home slot,
// so that every id stays reachable from its home without tombstones.
func (t *idTable[V]) removeAt(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].hash != emptySlot; j = (j + 1) & mask {
		// The id in j may fill the gap at i if its home slot is not
		// in the cyclic range (i, j].
		home := int(t.slots[j].hash) & mask
		if (j-home)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = idSlot[V]{}
	t.live--
}

// grow doubles the table.
func (t *idTable[V]) grow() {
	old := t.slots
	t.slots = make([]idSlot[V], 2*len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.hash == emptySlot {
			continue
		}
		i := s.hash & mask
		for t.slots[i].hash != emptySlot {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// bytesOf returns the bytes of s, which must not be written.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

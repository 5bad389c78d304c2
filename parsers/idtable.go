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
// The zero value is not usable: call init first.
type idTable[V any] struct {
	seed  maphash.Seed
	slots []idSlot[V]
	live  int // slots holding an id
	used  int // slots holding an id or a tombstone
}

type idSlot[V any] struct {
	// hash is the id's hash with its top bit set; emptySlot and
	// tombstone (an id removed) have it clear.
	hash uint64
	key  string
	val  V
}

const (
	emptySlot   = 0
	tombstone   = 1
	liveHashBit = 1 << 63
	minIDSlots  = 64
)

func (t *idTable[V]) init() {
	t.seed = maphash.MakeSeed()
	t.slots = make([]idSlot[V], minIDSlots)
}

// hash returns the hash of id the other methods take.
func (t *idTable[V]) hash(id []byte) uint64 { return maphash.Bytes(t.seed, id) | liveHashBit }

// hashString is hash for an id held as a string.
func (t *idTable[V]) hashString(id string) uint64 { return maphash.String(t.seed, id) | liveHashBit }

// find returns the slot of id, whose hash is h, and whether id is there;
// when it is not, the slot is where set would add it.
func (t *idTable[V]) find(h uint64, id []byte) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	free := -1
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		switch {
		case s.hash == h && s.key == string(id):
			return int(i), true
		case s.hash == emptySlot:
			if free < 0 {
				free = int(i)
			}
			return free, false
		case s.hash == tombstone && free < 0:
			free = int(i)
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
// keeps.
func (t *idTable[V]) set(h uint64, key string, v V) {
	i, ok := t.find(h, bytesOf(key))
	if ok {
		t.slots[i].val = v
		return
	}
	if t.slots[i].hash == emptySlot {
		if t.used+1 > len(t.slots)*3/4 {
			t.rehash()
			i, _ = t.find(h, bytesOf(key))
		}
		t.used++
	}
	t.slots[i] = idSlot[V]{hash: h, key: key, val: v}
	t.live++
}

// removeAt removes the id in slot i (found by find).
func (t *idTable[V]) removeAt(i int) {
	t.slots[i] = idSlot[V]{hash: tombstone}
	t.live--
}

// rehash makes room: a table twice the size when at least half of the
// used slots hold ids, else one of the same size without the tombstones.
func (t *idTable[V]) rehash() {
	n := len(t.slots)
	if t.live >= t.used/2 {
		n *= 2
	}
	old := t.slots
	t.slots = make([]idSlot[V], n)
	t.used = t.live
	mask := uint64(n - 1)
	for _, s := range old {
		if s.hash&liveHashBit == 0 {
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

//go:build !amd64 || purego

package filemagic

// haveKeyHits says keyHits may run: here it may not, and the searches'
// scans take a pass each.
const haveKeyHits = false

func keyHits(b []byte, from int, keys *[maxFused]byte, out *[keyHitsMax]uint16) (n, next int) {
	panic("filemagic: keyHits without assembly")
}

func firstKey(b []byte, from int, keys *[maxFused]byte) int {
	panic("filemagic: firstKey without assembly")
}

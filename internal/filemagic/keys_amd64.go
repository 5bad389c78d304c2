//go:build !purego

package filemagic

import "golang.org/x/sys/cpu"

// haveKeyHits says keyHits may run: it uses AVX2 and BMI1.
var haveKeyHits = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// keyHits writes to out the offsets in b, from from on, of the bytes that
// are one of keys, and returns how many it wrote and the offset to go on
// from (len(b) once it has read all). It reads b 64 bytes at a time
// while 64 are left, then 32, the last 32 for the rest, and returns after
// a block when out may not hold the hits of another 64 bytes. b must hold at least keyBlock bytes and at
// most 1<<16.
//
//go:noescape
func keyHits(b []byte, from int, keys *[maxFused]byte, out *[keyHitsMax]uint16) (n, next int)

// firstKey returns the offset in b, from from on, of the first byte that
// is one of keys, or len(b). b must hold at least keyBlock bytes.
//
//go:noescape
func firstKey(b []byte, from int, keys *[maxFused]byte) int

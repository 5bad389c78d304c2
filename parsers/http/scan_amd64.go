//go:build !purego

package http

import "golang.org/x/sys/cpu"

// useAVX2 says the AVX2 code may run; scanHeadAVX2 uses BMI1 too.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// usePOPCNT says lineEndsAVX2 may run: it counts with POPCNT.
var usePOPCNT = useAVX2 && cpu.X86.HasPOPCNT

// scanHead is scanHeadGeneric in assembly: 32 bytes at a time with AVX2,
// 16 with SSE2.
func scanHead(b []byte, out *[scanLines]uint64, maxLine int) int {
	b = b[:min(len(b), maxScan)]
	switch {
	case len(b) >= 32 && useAVX2:
		return scanHeadAVX2(b, out, maxLine)
	case len(b) >= 16:
		return scanHeadSSE2(b, out, maxLine)
	}
	return scanHeadGeneric(b, out, maxLine)
}

//go:noescape
func scanHeadSSE2(b []byte, out *[scanLines]uint64, maxLine int) (n int)

//go:noescape
func scanHeadAVX2(b []byte, out *[scanLines]uint64, maxLine int) (n int)

// lineEnds is lineEndsGeneric in assembly with AVX2, one pass over b
// where the generic code makes up to three.
func lineEnds(b []byte) int {
	if len(b) >= 32 && usePOPCNT {
		return lineEndsAVX2(b)
	}
	return lineEndsGeneric(b)
}

//go:noescape
func lineEndsAVX2(b []byte) (n int)

// uriCharsLong is uriCharsGeneric for b of 16 bytes or more, in assembly
// with AVX2.
func uriCharsLong(b []byte) bool {
	if useAVX2 {
		return uriCharsAVX2(b)
	}
	return uriCharsGeneric(b)
}

//go:noescape
func uriCharsAVX2(b []byte) bool

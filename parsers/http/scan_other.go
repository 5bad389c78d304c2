//go:build !amd64 || purego

package http

func scanHead(b []byte, out *[scanLines]uint64, maxLine int) int {
	return scanHeadGeneric(b[:min(len(b), maxScan)], out, maxLine)
}

// useAVX2 is false: scanHeadAVX2 is never called.
const useAVX2 = false

func scanHeadAVX2(b []byte, out *[scanLines]uint64, maxLine int) int {
	return scanHead(b, out, maxLine)
}

func uriCharsLong(b []byte) bool { return uriCharsGeneric(b) }

func lineEnds(b []byte) int { return lineEndsGeneric(b) }

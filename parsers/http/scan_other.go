//go:build !amd64 || purego

package http

func scanHead(b []byte, out *[scanLines]uint64, maxLine int) int {
	return scanHeadGeneric(b[:min(len(b), maxScan)], out, maxLine)
}

func uriCharsLong(b []byte) bool { return uriCharsGeneric(b) }

func lineEnds(b []byte) int { return lineEndsGeneric(b) }

//go:build !purego

package http

// scanLine is scanLineGeneric in SSE2 assembly, 16 bytes at a time.
//
//go:noescape
func scanLine(b []byte) (lf, cr, name int)

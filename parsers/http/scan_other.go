//go:build !amd64 || purego

package http

func scanLine(b []byte) (lf, cr, name int) { return scanLineGeneric(b) }

//go:build !unix

package runner

func kernel() string { return "" }

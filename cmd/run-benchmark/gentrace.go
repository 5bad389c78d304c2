package main

import (
	"errors"
	"io"
)

func runGenTrace(g *globals, args []string, stdout, stderr io.Writer) error {
	return errors.New("not yet built")
}

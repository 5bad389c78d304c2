package main

import (
	"errors"
	"io"
)

func runRun(g *globals, args []string, stdout, stderr io.Writer) error {
	return errors.New("not yet built")
}

package main

import (
	"errors"
	"io"
)

func runBuild(g *globals, args []string, stdout, stderr io.Writer) error {
	return errors.New("not yet built")
}

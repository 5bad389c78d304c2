package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/internal/runner"
)

// variantsFileFlag adds --variants-file to a command's flags.
func variantsFileFlag(fs *pflag.FlagSet) *string {
	return fs.String("variants-file", "", "read more variants from the TOML `FILE` (default: WORK/"+runner.VariantsFileName+
		" when it exists; \"none\": the built-in variants only); see \"Benchmark your own parser\" in the README")
}

// loadVariantsFile reads the variants file flag names, or the work
// directory's when flag is empty and it exists; nil when there is none.
// It says on stderr which file it read when the user did not name it.
func loadVariantsFile(flag, workDir string, stderr io.Writer) (*runner.VariantsFile, error) {
	switch flag {
	case "none":
		return nil, nil
	case "":
		path := filepath.Join(workDir, runner.VariantsFileName)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		f, err := runner.ReadVariantsFile(path)
		if err == nil {
			fmt.Fprintf(stderr, "note: reading the variants in %s (--variants-file none: the built-in ones only)\n", path)
		}
		return f, err
	}
	return runner.ReadVariantsFile(flag)
}

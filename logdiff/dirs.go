package logdiff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LogFile returns the file of log name ("http") in dir: NAME.log (TSV,
// zeek-cut or JSON lines, told apart by their content), else NAME.json,
// else NAME.log.cut; "" when there is none.
func LogFile(dir, name string) (string, error) {
	for _, base := range []string{name + ".log", name + ".json", name + ".log.cut"} {
		p := filepath.Join(dir, base)
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.Mode().IsRegular():
			return p, nil
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return "", err
		}
	}
	return "", nil
}

// SchemaOfFile returns the schema of the log in file path, from the first
// part of its base name: http.log, http.json, http.log.cut and
// http.2026-12-01.log are http.log.
func SchemaOfFile(path string) (Schema, bool) {
	name, _, _ := strings.Cut(filepath.Base(path), ".")
	return SchemaFor(name)
}

// CompareFiles compares the log in file b with the reference log in file
// a, with schema s.
func CompareFiles(s Schema, a, b string, opt Options) (*Result, error) {
	fa, err := os.Open(a)
	if err != nil {
		return nil, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return nil, err
	}
	defer fb.Close()
	return Compare(s, NewReader(fa, a), NewReader(fb, b), opt)
}

// CompareDirs compares the logs of [Schemas] in directory b with those in
// the reference directory a (files found by [LogFile]). A log in one
// directory only is compared with an empty log: its records are all
// missing or all extra. Logs in neither are left out.
func CompareDirs(a, b string, opt Options) ([]*Result, error) {
	for _, dir := range []string{a, b} {
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: not a directory", dir)
		}
	}
	var results []*Result
	for _, s := range Schemas() {
		fa, err := LogFile(a, s.Log)
		if err != nil {
			return nil, err
		}
		fb, err := LogFile(b, s.Log)
		if err != nil {
			return nil, err
		}
		if fa == "" && fb == "" {
			continue
		}
		res, err := compareOptional(s, fa, fb, filepath.Join(a, s.Log+".log"), filepath.Join(b, s.Log+".log"), opt)
		if err != nil {
			return nil, err
		}
		results = append(results, res)
	}
	return results, nil
}

// compareOptional is CompareFiles where a file may be "" (absent): it
// reads as an empty log named after want.
func compareOptional(s Schema, a, b, wantA, wantB string, opt Options) (*Result, error) {
	open := func(path, want string) (*Reader, io.Closer, error) {
		if path == "" {
			return NewReader(bytes.NewReader(nil), want+" (absent)"), io.NopCloser(nil), nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, err
		}
		return NewReader(f, path), f, nil
	}
	ra, ca, err := open(a, wantA)
	if err != nil {
		return nil, err
	}
	defer ca.Close()
	rb, cb, err := open(b, wantB)
	if err != nil {
		return nil, err
	}
	defer cb.Close()
	return Compare(s, ra, rb, opt)
}

package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ModulePath is the module path of the wirebench source tree.
const ModulePath = "github.com/wirebench/wirebench"

// ErrNoSource is returned by FindSource when no candidate directory lies in
// a wirebench source tree.
var ErrNoSource = errors.New("wirebench source tree not found")

// FindSource returns the root of the wirebench source tree: the first
// directory, walking up from each start directory in turn, that holds a
// go.mod declaring ModulePath. Empty start directories are skipped.
func FindSource(starts ...string) (string, error) {
	for _, start := range starts {
		if start == "" {
			continue
		}
		dir, err := filepath.Abs(start)
		if err != nil {
			continue
		}
		for {
			if isSourceRoot(dir) {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("%w above %s (give it with -b SRC)", ErrNoSource, strings.Join(nonEmpty(starts), ", "))
}

// CheckSource reports whether dir is the root of a wirebench source tree,
// with an error saying what is wrong when it is not.
func CheckSource(dir string) error {
	mod, err := goModDirective(filepath.Join(dir, "go.mod"), "module")
	if err != nil {
		return fmt.Errorf("%s is not a wirebench source tree: %w", dir, err)
	}
	if mod != ModulePath {
		return fmt.Errorf("%s is not a wirebench source tree: its go.mod declares module %q, not %q", dir, mod, ModulePath)
	}
	return nil
}

func isSourceRoot(dir string) bool {
	mod, err := goModDirective(filepath.Join(dir, "go.mod"), "module")
	return err == nil && mod == ModulePath
}

// goModDirective returns the argument of the first name directive of a
// go.mod file: the module path for "module", the Go version for "go".
func goModDirective(gomod, name string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if i := strings.Index(rest, "//"); i >= 0 {
			rest = strings.TrimSpace(rest[:i])
		}
		if unq, err := strconv.Unquote(rest); err == nil {
			rest = unq
		}
		return rest, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no %s line", gomod, name)
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SourceFile is a file of the source tree and its modification time.
type SourceFile struct {
	Path    string
	ModTime time.Time
}

// NewestSource returns the most recently modified file under the source
// tree src that goes into a binary: non-test .go files, go.mod and go.sum;
// and withPGO, the newest counting PGO profiles (default.pgo) too, which
// only go into binaries built with PGO. It skips hidden directories,
// testdata, other modules (directories with a go.mod of their own) and
// the usual output directories (bin, benchmark).
func NewestSource(src string) (newest, withPGO SourceFile, err error) {
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != src && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "bin" || name == "benchmark" || isFile(filepath.Join(path, "go.mod"))) {
				// A directory with a go.mod of its own (examples/*) is
				// another module, not part of the binaries.
				return filepath.SkipDir
			}
			return nil
		}
		if !buildInput(name) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := SourceFile{Path: path, ModTime: info.ModTime()}
		if f.ModTime.After(withPGO.ModTime) {
			withPGO = f
		}
		if name != "default.pgo" && f.ModTime.After(newest.ModTime) {
			newest = f
		}
		return nil
	})
	if err != nil {
		return SourceFile{}, SourceFile{}, fmt.Errorf("scanning source tree: %w", err)
	}
	if newest.Path == "" {
		return SourceFile{}, SourceFile{}, fmt.Errorf("no Go source files under %s", src)
	}
	return newest, withPGO, nil
}

func buildInput(name string) bool {
	switch {
	case name == "go.mod", name == "go.sum", name == "default.pgo":
		return true
	case strings.HasSuffix(name, "_test.go"):
		return false
	default:
		return strings.HasSuffix(name, ".go")
	}
}

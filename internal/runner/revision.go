package runner

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SourceRevision is the git commit of a source tree and whether the tree
// had changes not committed.
type SourceRevision struct {
	Commit string `json:"commit"` // the full hash of HEAD
	Dirty  bool   `json:"dirty"`  // tracked files differ from HEAD, or untracked files exist
}

func (r SourceRevision) String() string {
	s := r.Commit
	if len(s) > 12 {
		s = s[:12]
	}
	if r.Dirty {
		s += "-dirty"
	}
	return s
}

// ReadRevision returns the revision of the git work tree at dir.
func ReadRevision(ctx context.Context, dir string) (SourceRevision, error) {
	head, err := git(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		return SourceRevision{}, err
	}
	status, err := git(ctx, dir, "status", "--porcelain")
	if err != nil {
		return SourceRevision{}, err
	}
	return SourceRevision{Commit: strings.TrimSpace(head), Dirty: strings.TrimSpace(status) != ""}, nil
}

// git runs a git command in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// ExportRevision writes the files of the git revision rev (a commit, tag
// or branch) of the repository at repo into dir, as "git archive" gives
// them, and returns the commit rev names. dir must exist; the
// repository is not changed.
func ExportRevision(ctx context.Context, repo, rev, dir string) (string, error) {
	commit, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("%q is neither a source directory nor a commit of the git repository at %s", rev, repo)
	}
	commit = strings.TrimSpace(commit)
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", commit)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("git archive: %w", err)
	}
	xerr := untar(out, dir)
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return "", fmt.Errorf("git archive %s in %s: %v: %s", commit, repo, err, strings.TrimSpace(stderr.String()))
	}
	if xerr != nil {
		return "", fmt.Errorf("extracting %s of %s: %w", commit, repo, xerr)
	}
	return commit, nil
}

// untar extracts the regular files, directories and symbolic links of a
// tar stream into dir, refusing paths that leave it.
func untar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			if h.Typeflag == tar.TypeXGlobalHeader {
				continue
			}
			return fmt.Errorf("%q lies outside the tree", h.Name)
		}
		path := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeTarFile(path, tr, h.FileInfo().Mode().Perm())
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, path)
		}
		if err != nil {
			return err
		}
	}
}

func writeTarFile(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

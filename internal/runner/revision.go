package runner

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
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

package follow

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"quire/words/refusal"
)

// Clone makes the folder dir a clone of the remote at url, as git clone
// --single-branch --no-tags --origin origin makes one: one branch (branch,
// or the remote's default branch when it is empty), fetched by one narrow
// refspec into refs/remotes/origin/<branch>, checked out. The clone is
// made in a hidden folder beside dir, checked and prepared there (prepare:
// the vault's format, its .quire/), and renamed to dir only once whole, so
// a refusal or a failure leaves nothing at dir, and an existing dir that
// is empty is replaced. A dir that exists and is not empty is refused. It
// answers dir's absolute path and the branch cloned.
func Clone(ctx context.Context, url, dir, branch string, prepare func(tmp, branch string) error) (string, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	if fi, err := os.Stat(abs); err == nil {
		if !fi.IsDir() {
			return "", "", refusal.New(refusal.Conflict, "%s exists and is not a folder: quire clone makes the vault in a new or empty folder", abs)
		}
		if !emptyDir(abs) {
			return "", "", refusal.New(refusal.Conflict, "%s exists and is not empty: quire clone makes the vault in a new or empty folder", abs)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", "", err
	}
	if branch == "" {
		if branch, err = defaultBranch(ctx, url); err != nil {
			return "", "", err
		}
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".clone-")
	if err != nil {
		return "", "", err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if _, err := git(ctx, "", "clone", "--quiet", "--single-branch", "--no-tags", "--origin", "origin", "--branch", branch, "--", url, tmp); err != nil {
		return "", "", refusal.New(refusal.Unavailable, "cannot clone %s: %v", Redacted(url), err)
	}
	if err := ignoreDerived(ctx, tmp); err != nil {
		return "", "", err
	}
	if err := prepare(tmp, branch); err != nil {
		return "", "", err
	}
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	os.Remove(abs) // empty, or absent
	if err := os.Rename(tmp, abs); err != nil {
		return "", "", err
	}
	done = true
	return abs, branch, nil
}

// defaultBranch is the branch a clone of url takes: the one the remote's
// HEAD names when the remote has it, else main when it has main, else its
// only branch. A remote with no branch, or with several and no default
// among them, is refused, saying what to do.
func defaultBranch(ctx context.Context, url string) (string, error) {
	out, err := git(ctx, "", "ls-remote", "--symref", "--", url, "HEAD", "refs/heads/*")
	if err != nil {
		return "", refusal.New(refusal.Unavailable, "cannot reach %s: %v", Redacted(url), err)
	}
	var head string
	branches := map[string]bool{}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if ref, ok := strings.CutPrefix(line, "ref: "); ok {
			if target, name, ok := strings.Cut(ref, "\t"); ok && name == "HEAD" {
				head = strings.TrimPrefix(target, "refs/heads/")
			}
			continue
		}
		if _, ref, ok := strings.Cut(line, "\t"); ok {
			if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
				branches[b] = true
				names = append(names, b)
			}
		}
	}
	switch {
	case len(names) == 0:
		return "", refusal.New(refusal.NotFound, "%s is not a quire vault: it has no branch (nothing was pushed to it yet: quire serve --push pushes a vault to it)", Redacted(url))
	case head != "" && branches[head]:
		return head, nil
	case branches["main"]:
		return "main", nil
	case len(names) == 1:
		return names[0], nil
	}
	return "", refusal.At(refusal.InvalidInput, "/branch", "%s has the branches %s and names none of them its default: say which with --branch", Redacted(url), strings.Join(names, ", "))
}

// ignoreDerived makes sure git ignores .quire/, the derived state, in the
// clone: a vault's .gitignore says so (quire init writes it), and a clone
// whose tree does not gets it in .git/info/exclude, which is not
// committed, so nothing derived is ever committed or shown by git status.
func ignoreDerived(ctx context.Context, tmp string) error {
	_, err := git(ctx, tmp, "check-ignore", "-q", ".quire/history")
	if err == nil {
		return nil
	}
	if exitOf(err) != 1 {
		return err
	}
	p := filepath.Join(tmp, ".git", "info", "exclude")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n# quire's derived state, never committed\n.quire/\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

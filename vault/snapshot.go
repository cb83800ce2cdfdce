package vault

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"quire/internal/gitcmd"
	"quire/vault/git/object"
)

// A Snapshot is the vault's files as one commit holds them, read straight
// from the object store: what a page rendered as of a commit reads in
// place of the work tree. It never touches the work tree, the index or the
// branch.
type Snapshot struct {
	Commit Hash
	Meta   CommitMeta
	h      *History
	trees  map[string][]byte // a folder's raw tree, by its path ("" the root)
}

// ErrNoCommit says a revision names no commit of the vault.
var ErrNoCommit = errors.New("no such commit")

// ResolveCommit finds the commit a revision names: a full id (read from the
// object store alone), or an abbreviated id or a ref name (asked of git,
// as git rev-parse reads them). A revision that names no commit answers an
// error that wraps ErrNoCommit.
func (v *Vault) ResolveCommit(ctx context.Context, rev string) (Hash, error) {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, " \t\n") {
		return ZeroHash, fmt.Errorf("%q: %w", rev, ErrNoCommit)
	}
	if id, err := object.ParseHash(rev); err == nil && len(rev) == 40 {
		if _, err := v.ReadCommit(id); err != nil {
			return ZeroHash, fmt.Errorf("%s: %w", rev, ErrNoCommit)
		}
		return id, nil
	}
	out, err := gitcmd.Run(ctx, v.root, nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil {
		var ge *gitcmd.Error
		if errors.As(err, &ge) {
			return ZeroHash, fmt.Errorf("%s: %w", rev, ErrNoCommit)
		}
		return ZeroHash, err
	}
	id, err := object.ParseHash(strings.TrimSpace(out))
	if err != nil {
		return ZeroHash, fmt.Errorf("%s: %w", rev, ErrNoCommit)
	}
	return id, nil
}

// Snapshot opens the files of a commit. Close it when done.
func (v *Vault) Snapshot(id Hash) (*Snapshot, error) {
	meta, err := v.ReadCommit(id)
	if err != nil {
		return nil, err
	}
	h := v.History()
	tree, _, err := h.Commit(id)
	if err != nil {
		h.Close()
		return nil, err
	}
	root, err := h.Tree(tree)
	if err != nil {
		h.Close()
		return nil, err
	}
	return &Snapshot{Commit: id, Meta: meta, h: h, trees: map[string][]byte{"": root}}, nil
}

// Close lets go of the object store.
func (s *Snapshot) Close() error { return s.h.Close() }

// tree reads the raw tree of a folder of the commit; nil when there is none.
func (s *Snapshot) tree(dir string) ([]byte, error) {
	if t, ok := s.trees[dir]; ok {
		return t, nil
	}
	parent, err := s.tree(dirOf(dir))
	if err != nil || parent == nil {
		return nil, err
	}
	e, ok, err := TreeFind(parent, path.Base(dir))
	var t []byte
	if err == nil && ok && e.Dir {
		t, err = s.h.Tree(e.Hash)
	}
	if err != nil {
		return nil, err
	}
	s.trees[dir] = t
	return t, nil
}

// dirOf is the folder of a path, "" for the root.
func dirOf(rel string) string {
	if d := path.Dir(rel); d != "." {
		return d
	}
	return ""
}

// Blob answers the blob id of a file of the commit; ok is false when the
// commit has no such file.
func (s *Snapshot) Blob(rel string) (id Hash, ok bool, err error) {
	t, err := s.tree(dirOf(rel))
	if err != nil || t == nil {
		return ZeroHash, false, err
	}
	e, ok, err := TreeFind(t, path.Base(rel))
	if err != nil || !ok || e.Dir {
		return ZeroHash, false, err
	}
	return e.Hash, true, nil
}

// ReadFile reads a file as the commit holds it; ok is false when the commit
// has no such file.
func (s *Snapshot) ReadFile(rel string) (data []byte, ok bool, err error) {
	id, ok, err := s.Blob(rel)
	if err != nil || !ok {
		return nil, false, err
	}
	data, err = s.h.Blob(id)
	return data, err == nil, err
}

// Entries reads the index as the commit holds it, in the order every reader
// reads it (Less); lines that are not index lines are passed over, as
// Entries passes them over.
func (s *Snapshot) Entries() ([]Entry, error) {
	data, _, err := s.ReadFile(IndexFile)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, line := range strings.Split(string(CommittedLines(data)), "\n") {
		if line == "" {
			continue
		}
		if e, bad := parseEntry([]byte(line)); bad == "" {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return Less(&out[i], &out[j]) })
	return out, nil
}

// maxSavedWalk bounds the commits SavedIn walks back from HEAD.
const maxSavedWalk = 20000

// SavedIn finds the commit that put the blob at rel: walking back from HEAD
// along first parents, the oldest commit of the run of commits that hold
// that blob there, the run nearest HEAD. It answers the zero hash when no
// commit within maxSavedWalk does.
func (v *Vault) SavedIn(rel string, blob Hash) (Hash, error) {
	id, err := v.head()
	if err != nil || id.IsZero() {
		return ZeroHash, err
	}
	h := v.History()
	defer h.Close()
	found := ZeroHash
	for n := 0; !id.IsZero() && n < maxSavedWalk; n++ {
		tree, parents, err := h.Commit(id)
		if err != nil {
			return ZeroHash, err
		}
		s := &Snapshot{Commit: id, h: h, trees: map[string][]byte{}}
		if s.trees[""], err = h.Tree(tree); err != nil {
			return ZeroHash, err
		}
		b, ok, err := s.Blob(rel)
		if err != nil {
			return ZeroHash, err
		}
		if ok && b == blob {
			found = id
		} else if !found.IsZero() {
			break
		}
		if len(parents) == 0 {
			break
		}
		id = parents[0]
	}
	return found, nil
}

package walk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"quire/vault/git/object"
	"quire/vault/git/pack"
)

// History reads objects for one walk over the history: through its own
// reader of the packs (vault/git/pack), which keeps what a walk reads next, and
// through go-git's storage for what that reader does not know. Close it
// after the walk.
type History struct {
	gitDir string
	packs  *pack.Reader
	st     *filesystem.Storage
	// Reads counts the objects read from the store.
	Reads int
}

// Open starts a walk over the history of the repository whose .git folder
// is gitDir.
func Open(gitDir string) *History {
	return &History{gitDir: gitDir, packs: pack.NewReader(filepath.Join(gitDir, "objects"))}
}

// Deltas is the count of deltas the walk's reader of packs applied.
func (h *History) Deltas() int { return h.packs.Deltas() }

// Close lets go of the pack files.
func (h *History) Close() error {
	h.packs.Close()
	if h.st != nil {
		return h.st.Close()
	}
	return nil
}

// read returns the content of an object of the given type.
func (h *History) read(t object.Type, id object.Hash) ([]byte, error) {
	typ, data, err := h.packs.Object(id)
	if errors.Is(err, pack.ErrNotFound) {
		data, err = h.fromGoGit(t, id)
	} else if err == nil && typ != t {
		err = fmt.Errorf("it is not a %s", t)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s: %w", t, id, err)
	}
	h.Reads++
	return data, nil
}

func (h *History) fromGoGit(t object.Type, id object.Hash) ([]byte, error) {
	if h.st == nil {
		h.st = filesystem.NewStorage(osfs.New(h.gitDir), cache.NewObjectLRU(16<<20))
	}
	o, err := h.st.EncodedObject(plumbing.ObjectType(t), plumbing.Hash(id))
	if err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Commit reads a commit's tree and parents.
func (h *History) Commit(id object.Hash) (tree object.Hash, parents []object.Hash, err error) {
	data, err := h.read(object.Commit, id)
	if err != nil {
		return tree, nil, err
	}
	// The header is "tree <hex>\n", then "parent <hex>\n" lines, then the
	// rest, which a walk does not need.
	tree, parents, err = object.ParseCommit(data)
	if err != nil {
		return tree, parents, fmt.Errorf("reading commit %s: %w", id, err)
	}
	return tree, parents, nil
}

// CommitData reads a commit's raw content: its header lines, a blank line
// and its message.
func (h *History) CommitData(id object.Hash) ([]byte, error) {
	return h.read(object.Commit, id)
}

// Tree reads a tree's raw content (entries of "<mode> <name>\0<20-byte
// id>", in git's order); the zero id is the empty tree.
func (h *History) Tree(id object.Hash) ([]byte, error) {
	if id.IsZero() {
		return nil, nil
	}
	return h.read(object.Tree, id)
}

// Blob reads a blob; the zero id is an empty file.
func (h *History) Blob(id object.Hash) ([]byte, error) {
	if id.IsZero() {
		return nil, nil
	}
	return h.read(object.Blob, id)
}

// Entry is one entry of a raw tree.
type Entry struct {
	Name string
	Dir  bool
	Hash object.Hash
}

// entryAt parses the entry of a raw tree that starts at pos, and returns it
// and where the next begins.
func entryAt(raw []byte, pos int) (Entry, int, error) {
	sp := bytes.IndexByte(raw[pos:], ' ')
	if sp < 0 {
		return Entry{}, 0, errors.New("a tree entry without a mode")
	}
	nul := bytes.IndexByte(raw[pos+sp:], 0)
	if nul < 0 || pos+sp+nul+21 > len(raw) {
		return Entry{}, 0, errors.New("a tree entry cut short")
	}
	var e Entry
	e.Dir = string(raw[pos:pos+sp]) == "40000"
	e.Name = string(raw[pos+sp+1 : pos+sp+nul])
	next := pos + sp + nul + 1
	copy(e.Hash[:], raw[next:next+20])
	return e, next + 20, nil
}

// skipEntry is where the entry at pos ends, without reading it.
func skipEntry(raw []byte, pos int) int {
	nul := bytes.IndexByte(raw[pos:], 0)
	if nul < 0 {
		return len(raw)
	}
	return min(pos+nul+21, len(raw))
}

// TreeEntries lists a raw tree's entries.
func TreeEntries(raw []byte) ([]Entry, error) {
	var out []Entry
	for pos := 0; pos < len(raw); {
		e, next, err := entryAt(raw, pos)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		pos = next
	}
	return out, nil
}

// TreeFind finds the entry of a raw tree by name.
func TreeFind(raw []byte, name string) (Entry, bool, error) {
	for pos := 0; pos < len(raw); {
		e, next, err := entryAt(raw, pos)
		if err != nil {
			return e, false, err
		}
		if e.Name == name {
			return e, true, nil
		}
		pos = next
	}
	return Entry{}, false, nil
}

// DiffTrees calls fn, in git's order, for every entry that differs between
// two raw trees: old is nil for an entry added, new nil for one removed.
// It does not decode the two trees whole: the bytes both share at their
// start and at their end (everything but the entries a commit changed) are
// found by comparing memory, and only the entries between are read.
func DiffTrees(a, b []byte, fn func(old, new *Entry) error) error {
	p := commonPrefix(a, b)
	s := commonSuffix(a, b)
	// The last entry start at or before p: the entries before it are the
	// same in both, at the same offsets.
	pos := 0
	for pos < len(a) {
		next := skipEntry(a, pos)
		if next > p {
			break
		}
		pos = next
	}
	pa, pb := pos, pos
	var ea, eb Entry
	haveA, haveB := false, false
	for {
		// The rest is the same in both when what is left of each is as long
		// and lies within the common end.
		if !haveA && !haveB && len(a)-pa == len(b)-pb && len(a)-pa <= s {
			return nil
		}
		var err error
		if !haveA && pa < len(a) {
			if ea, pa, err = entryAt(a, pa); err != nil {
				return err
			}
			haveA = true
		}
		if !haveB && pb < len(b) {
			if eb, pb, err = entryAt(b, pb); err != nil {
				return err
			}
			haveB = true
		}
		switch {
		case !haveA && !haveB:
			return nil
		case haveA && haveB && ea.Name == eb.Name:
			haveA, haveB = false, false
			if ea.Hash != eb.Hash || ea.Dir != eb.Dir {
				if err := fn(&ea, &eb); err != nil {
					return err
				}
			}
		case !haveB || (haveA && gitLess(ea, eb)):
			haveA = false
			if err := fn(&ea, nil); err != nil {
				return err
			}
		default:
			haveB = false
			if err := fn(nil, &eb); err != nil {
				return err
			}
		}
	}
}

// gitLess orders entries as git does, a folder as if its name ended in "/".
func gitLess(a, b Entry) bool {
	an, bn := a.Name, b.Name
	if a.Dir {
		an += "/"
	}
	if b.Dir {
		bn += "/"
	}
	return an < bn
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+512 <= n && bytes.Equal(a[i:i+512], b[i:i+512]) {
		i += 512
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+512 <= n && bytes.Equal(a[len(a)-i-512:len(a)-i], b[len(b)-i-512:len(b)-i]) {
		i += 512
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

package vault

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"quire/internal/fsys"
	"quire/vault/git/index"
	"quire/vault/git/object"
)

// Keep says what a file quire commits must keep of what HEAD holds of it.
type Keep int

const (
	// Free: anything (a file quire rewrites, such as run.state.json, or
	// one it replaces, such as an artifact).
	Free Keep = iota
	// Prefix: an append-only file (run.jsonl, thread.md, events.jsonl):
	// HEAD's complete lines are a byte prefix of the file.
	Prefix
	// Whole: a file written once (a run's definition.md): HEAD's content,
	// byte for byte.
	Whole
)

// A HandEdit is a file whose committed part differs from HEAD's: a person
// (or a program other than quire) changed what was committed. Line is the
// first line (from 1) where they differ.
type HandEdit struct {
	Path string
	Keep Keep
	Line int
	// Head is HEAD's content of the file.
	Head []byte
}

func (e *HandEdit) Error() string {
	return fmt.Sprintf("%s: line %d differs from the commit (HEAD); %s", e.Path, e.Line, e.rule())
}

func (e *HandEdit) rule() string {
	if e.Keep == Whole {
		return "the file is written once and never changed"
	}
	return "the file is append-only: its committed lines never change"
}

// SetGuard names, for every file the vault commits, what it must keep of
// HEAD's version (nil: nothing). A commit that would record a file whose
// committed part differs from HEAD's fails with a *HandEdit and changes
// nothing; Kept checks the same before a write. Set it before the vault is
// used.
func (v *Vault) SetGuard(g func(rel string) Keep) { v.guard = g }

// Kept checks the files at or below the given paths that the guard claims
// against HEAD, and answers the first whose committed part differs as a
// *HandEdit; a symbolic link in a folder given is refused as conflict,
// naming it (its commit could not take it). The caller holds the lock.
func (v *Vault) Kept(paths []string) error {
	if v.guard == nil {
		return nil
	}
	if v.checked == nil {
		v.checked = map[string]bool{}
	}
	for _, p := range paths {
		abs := v.Abs(p)
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			if err := v.keepsGone(p); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			if keep := v.guard(p); keep != Free && fi.Mode().IsRegular() {
				if err := v.keepsFile(p, abs, keep); err != nil {
					return err
				}
			}
			continue
		}
		// A folder (a run's): no symbolic link anywhere in it, which its
		// commit could not take (a link git carried in with a pull refuses
		// this folder's writes, never another's), and the files the guard
		// claims against HEAD.
		err = filepath.WalkDir(abs, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			r, _ := filepath.Rel(v.root, fp)
			rel := filepath.ToSlash(r)
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				return linkRefusal(rel)
			case d.IsDir():
				return nil
			}
			if keep := v.guard(rel); keep != Free && d.Type().IsRegular() {
				return v.keepsFile(rel, fp, keep)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// keepsGone checks that a file gone from the work tree kept nothing
// committed that the guard claims.
func (v *Vault) keepsGone(rel string) error {
	if v.guard == nil {
		return nil
	}
	if keep := v.guard(rel); keep != Free {
		return v.keeps(rel, keep, nil, false)
	}
	return nil
}

// keepsFile checks one file for Kept. A file whose stat is the one
// .git/index records with HEAD's blob is HEAD's, unread; one checked, it
// is marked so that this write's commit does not check it again (the lock
// is held between).
func (v *Vault) keepsFile(rel, abs string, keep Keep) error {
	fi, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if v.gitIdx.load() == nil {
		if e, ok := v.gitIdx.get(rel); ok && v.gitIdx.cleanEntry(e, fsys.StampOf(fi)) {
			if id, held, err := v.headEntry(rel); err == nil && held && e.Hash == id {
				v.checked[rel] = true
				return nil
			}
		}
	}
	data, err := fsys.ReadFile(abs)
	if err != nil {
		return err
	}
	if err := v.keeps(rel, keep, data, true); err != nil {
		return err
	}
	v.checked[rel] = true
	return nil
}

// HandEdits lists every file the guard claims whose committed part differs
// from HEAD's, for quire check and quire janitor. Files whose stat is the
// one .git/index records for them are as quire committed them and are not
// read. The caller holds the lock.
func (v *Vault) HandEdits() ([]*HandEdit, error) { return v.HandEditsFrom(nil) }

// HandEditsFrom is HandEdits leaving out the run folders u does (nil:
// none).
func (v *Vault) HandEditsFrom(u *Unchanged) ([]*HandEdit, error) {
	if err := v.flushCommits(); err != nil {
		return nil, err
	}
	if v.guard == nil {
		return nil, nil
	}
	if err := v.gitIdx.load(); err != nil {
		return nil, err
	}
	// The names the guard claims first (the index's entries are read in
	// place, each valid only while it is walked).
	type claimed struct {
		name string
		keep Keep
	}
	var names []claimed
	v.gitIdx.eachFrom(u, false, func(e *index.Entry) bool {
		if keep := v.guard(e.Name); keep != Free {
			names = append(names, claimed{strings.Clone(e.Name), keep})
		}
		return true
	})
	var out []*HandEdit
	for _, c := range names {
		e, keep := &index.Entry{Name: c.name}, c.keep
		abs := v.Abs(e.Name)
		fi, err := os.Lstat(abs)
		var data []byte
		exists := err == nil
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		case !fi.Mode().IsRegular():
			continue // a link or folder in its place: quire check reports those
		case v.gitIdx.clean(e.Name, fi):
			continue
		default:
			if data, err = fsys.ReadFile(abs); err != nil {
				return nil, err
			}
		}
		err = v.keeps(e.Name, keep, data, exists)
		var he *HandEdit
		if errors.As(err, &he) {
			out = append(out, he)
		} else if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// keeps checks data, the file at rel (exists false: gone), against HEAD.
func (v *Vault) keeps(rel string, keep Keep, data []byte, exists bool) error {
	id, ok, err := v.headEntry(rel)
	if err != nil || !ok {
		return err // HEAD holds no such file: nothing committed to keep
	}
	if n, known := v.committedSize(rel, id); exists && known {
		// HEAD's content is the file's first n bytes exactly when they
		// hash, as a blob of n bytes, to HEAD's id: no blob read.
		switch {
		case keep == Prefix && int64(len(data)) >= n && hashObject("blob", data[:n]) == id:
			return nil
		case keep == Whole && int64(len(data)) == n && hashObject("blob", data) == id:
			return nil
		}
	}
	head, err := v.objs.readBlob(id)
	if err != nil {
		return err
	}
	line := 1
	switch {
	case exists && keep == Prefix:
		if line = KeptLines(head, data); line == 0 {
			v.remember(rel, id, len(CommittedLines(head)) == len(head), int64(len(head)))
			return nil
		}
	case exists:
		if bytes.Equal(data, head) {
			v.remember(rel, id, true, int64(len(head)))
			return nil
		}
		line = FirstDifferentLine(head, data)
	}
	return &HandEdit{Path: rel, Keep: keep, Line: line, Head: head}
}

// CommittedLines is what a version of an append-only file commits: its
// complete lines. A torn last line (a write cut short) was never a
// committed line.
func CommittedLines(data []byte) []byte { return data[:bytes.LastIndexByte(data, '\n')+1] }

// KeptLines is the rule of an append-only file (Prefix), for the guard of
// a write and for quire check --history's proof of each commit alike: a
// later version cur keeps an earlier one old when old's complete lines
// (CommittedLines) are a byte prefix of cur. KeptLines answers 0 when cur
// keeps them, else the first line (from 1) where cur differs from them.
func KeptLines(old, cur []byte) int {
	committed := CommittedLines(old)
	if bytes.HasPrefix(cur, committed) {
		return 0
	}
	return FirstDifferentLine(committed, cur)
}

// committedSize is the size of the blob id committed at rel, when it is
// known without reading it: from the last check or commit of the file, or
// from .git/index when its entry records that blob (a regular file's
// entry records the size of the blob it was staged as).
func (v *Vault) committedSize(rel string, id Hash) (int64, bool) {
	if k, hit := v.kept[rel]; hit && k.hash == id {
		return k.size, true
	}
	if v.gitIdx.load() != nil {
		return 0, false
	}
	if e, ok := v.gitIdx.get(rel); ok && e.Hash == id {
		return int64(e.Size), true
	}
	return 0, false
}

type keptBlob struct {
	hash Hash
	size int64
}

// remember keeps a blob's size for the next check of its file, which then
// hashes the file's first size bytes instead of reading the blob. Only a
// blob whose every line is complete is kept (its whole content is then
// the committed part). The map is bounded: past 4,096 files it starts over.
func (v *Vault) remember(rel string, id Hash, whole bool, size int64) {
	if !whole {
		return
	}
	if v.kept == nil || len(v.kept) >= 4096 {
		v.kept = map[string]keptBlob{}
	}
	v.kept[rel] = keptBlob{hash: id, size: size}
}

// headEntry is the blob HEAD records at rel.
func (v *Vault) headEntry(rel string) (Hash, bool, error) {
	parent, err := v.tip()
	if err != nil || parent.IsZero() {
		return ZeroHash, false, err
	}
	tree := v.lastTree
	if parent != v.lastCommit || tree.IsZero() {
		if tree, err = v.objs.readCommitTree(parent); err != nil {
			return ZeroHash, false, err
		}
	}
	parts := strings.Split(rel, "/")
	for i, name := range parts {
		e, found, err := v.objs.findEntry(tree, name)
		if err != nil {
			return ZeroHash, false, err
		}
		if found && (i < len(parts)-1) == (e.Mode == object.Dir) {
			tree = e.Hash
		} else {
			return ZeroHash, false, nil
		}
	}
	return tree, true, nil
}

// FirstDifferentLine is the first line (from 1) at which b differs from a.
func FirstDifferentLine(a, b []byte) int {
	line := 1
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return line
		}
		if a[i] == '\n' {
			line++
		}
	}
	return line
}

// RestoreCommitted puts back what HEAD holds of a hand-edited file: the
// committed part, then (for an append-only file) the lines of the edited
// copy past as many lines as HEAD holds, which were appended after it. The
// edited copy is kept whole in .quire/quarantine/; RestoreCommitted answers
// its path in the vault. The caller holds the lock.
func (v *Vault) RestoreCommitted(he *HandEdit) (string, error) {
	if err := v.flushCommits(); err != nil {
		return "", err
	}
	abs, err := v.Join(he.Path)
	if err != nil {
		return "", err
	}
	edited, err := fsys.ReadFile(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	restored := he.Head
	if he.Keep == Prefix {
		committed := CommittedLines(he.Head)
		n := bytes.Count(committed, []byte{'\n'})
		rest := edited
		for i := 0; i < n && len(rest) > 0; i++ {
			j := bytes.IndexByte(rest, '\n')
			if j < 0 {
				rest = nil
				break
			}
			rest = rest[j+1:]
		}
		restored = append(append([]byte(nil), committed...), rest...)
	}
	kept := ""
	if edited != nil {
		dst := path.Join(QuarantineDir, he.Path+"."+time.Now().UTC().Format("20060102T150405.000000000Z")+".edited")
		if err := os.MkdirAll(filepath.Dir(v.Abs(dst)), 0o755); err != nil {
			return "", err
		}
		if err := WriteAtomic(v.Abs(dst), edited); err != nil {
			return "", err
		}
		kept = dst
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	return kept, WriteAtomic(abs, restored)
}

// Unchanged reports whether the file rel holds what HEAD holds at rel
// (absent from both counts): a file that differs was changed since the
// last commit, by quire or by a person.
func (v *Vault) Unchanged(rel string) (bool, error) {
	abs, err := v.Join(rel)
	if err != nil {
		return false, err
	}
	id, inHead, err := v.headEntry(rel)
	if err != nil {
		return false, err
	}
	data, err := fsys.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return !inHead, nil
	}
	if err != nil {
		return false, err
	}
	return inHead && hashObject("blob", data) == id, nil
}

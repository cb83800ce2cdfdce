package vault

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/vault/git/object"
)

// Signature names who made a commit and when.
type Signature struct {
	Name  string
	Email string
	When  time.Time
}

func (s Signature) git() string {
	email := s.Email
	if email == "" {
		email = sanitizeIdent(s.Name) + "@quire.invalid"
	}
	_, off := s.When.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", sanitizeIdent(s.Name), sanitizeIdent(email), s.When.Unix(), sign, off/3600, off%3600/60)
}

// sanitizeIdent keeps a name or email from breaking the commit header.
func sanitizeIdent(s string) string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '<', '>', '\n', '\r', 0:
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if s == "" {
		return "unknown"
	}
	return s
}

// change is one file's new content in a commit; a zero hash removes it.
type change struct {
	hash Hash
	mode object.Mode
}

// commitPaths records the working copy of the given paths (files or
// folders, relative to the root) in a new commit on the branch, writing only
// what changed, on the last commit of its group (group.go), whose end
// moves the branch. It must be called with the vault's lock held. It
// returns the zero hash when nothing changed.
//
// On any error the index kept in memory (which collect has already moved
// on) is dropped, so the next commit reads .git/index as it is on disk, and
// .git/index is never written ahead of HEAD.
func (v *Vault) commitPaths(paths []string, author Signature, msg string) (id Hash, err error) {
	g := v.grp
	defer func() {
		if err != nil {
			v.commitFailed = true
			v.gitIdx.stat = fileStamp{}
			v.lastCommit, v.lastTree = ZeroHash, ZeroHash
		}
	}()
	// git's index.lock, and the branch's lock from the first commit on,
	// are held for the whole group, as git commit holds them for its
	// commit: a person's git command and quire never commit at once, and
	// a commit refused for another program's lock has changed nothing.
	// The group's end writes the index and moves the branch.
	if g.index == nil {
		if g.index, err = v.takeGitLock(v.gitIdx.path + ".lock"); err != nil {
			return ZeroHash, err
		}
	}
	if err := v.gitIdx.load(); err != nil {
		return ZeroHash, err
	}
	// The tree the index made before this commit's changes: when it is
	// the parent's, the index makes the new commit's tree after them
	// (the same changes go to both), which its cache-tree then says.
	made, empty := v.gitIdx.cacheTree, v.gitIdx.len() == 0
	changes := map[string]change{}
	for _, p := range paths {
		if err := v.collect(p, changes); err != nil {
			return ZeroHash, err
		}
	}
	parent, err := v.tip()
	if err != nil {
		return ZeroHash, err
	}
	if !g.based {
		g.base, g.based = parent, true
	}
	var root Hash
	switch {
	case parent.IsZero():
	case parent == v.lastCommit:
		root = v.lastTree // the commit this process made last
	default:
		if root, err = v.objs.readCommitTree(parent); err != nil {
			return ZeroHash, err
		}
	}
	newRoot, err := v.applyChanges(root, changes)
	if err != nil {
		return ZeroHash, err
	}
	if !root.IsZero() && made == root || root.IsZero() && empty {
		v.gitIdx.cacheTree = newRoot
	}
	// The index may carry new stat data even when nothing differs from
	// the last commit: the group's end writes it.
	g.dirty = true
	if newRoot == root && !parent.IsZero() {
		return ZeroHash, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tree %s\n", newRoot)
	if !parent.IsZero() {
		fmt.Fprintf(&b, "parent %s\n", parent)
	}
	committer := author
	fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s\n", author.git(), committer.git(), strings.TrimRight(msg, "\n"))
	if g.ref == nil {
		if g.ref, err = v.lockBranch(g.base); err != nil {
			return ZeroHash, err
		}
	}
	id, err = v.objs.write("commit", []byte(b.String()))
	if err != nil {
		return ZeroHash, err
	}
	g.tip = id
	g.reflog = append(g.reflog, reflogLine(parent, id, author, firstLine(msg)))
	v.lastCommit, v.lastTree = id, newRoot
	v.commits++
	return id, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// collect hashes the files at or below rel that differ from .git/index and
// records them (and files gone from the disk) in changes.
func (v *Vault) collect(rel string, changes map[string]change) error {
	abs := filepath.Join(v.root, filepath.FromSlash(rel))
	fi, err := os.Lstat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		for _, name := range append(v.gitIdx.under(rel), rel) {
			if err := v.keepsGone(name); err != nil {
				return err
			}
			if v.gitIdx.has(name) {
				changes[name] = change{}
				v.gitIdx.remove(name)
			}
		}
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		seen := map[string]bool{}
		err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			r, _ := filepath.Rel(v.root, p)
			r = filepath.ToSlash(r)
			seen[r] = true
			return v.collectFile(r, p, changes)
		})
		if err != nil {
			return err
		}
		for _, name := range v.gitIdx.under(rel) {
			if !seen[name] {
				if err := v.keepsGone(name); err != nil {
					return err
				}
				changes[name] = change{}
				v.gitIdx.remove(name)
			}
		}
		return nil
	default:
		return v.collectFile(rel, abs, changes)
	}
}

func (v *Vault) collectFile(rel, abs string, changes map[string]change) error {
	fi, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("vault: %s is not a regular file", rel)
	}
	if strings.HasPrefix(path.Base(rel), ".") && strings.Contains(path.Base(rel), ".tmp") {
		return nil // a temporary file of WriteAtomic in flight
	}
	if v.gitIdx.clean(rel, fi) {
		return nil
	}
	data, err := fsys.ReadFile(abs)
	if err != nil {
		return err
	}
	// Never commit a file whose committed part differs from HEAD's.
	keep := Free
	if v.guard != nil {
		keep = v.guard(rel)
	}
	if keep != Free && !v.checked[rel] {
		if err := v.keeps(rel, keep, data, true); err != nil {
			return err
		}
	}
	h := hashObject("blob", data)
	mode := object.Regular
	if fi.Mode()&0o111 != 0 {
		mode = object.Executable
	}
	e, staged := v.gitIdx.get(rel)
	if staged && e.Hash == h && e.Mode == mode {
		v.gitIdx.set(rel, h, fi)
		return nil
	}
	if err := v.objs.writeAs(h, object.Blob, data); err != nil {
		return err
	}
	if keep == Prefix && staged {
		v.objs.knowAppended(*e, h, data)
	}
	v.gitIdx.set(rel, h, fi)
	changes[rel] = change{hash: h, mode: mode}
	if keep != Free {
		v.remember(rel, h, len(data) == 0 || data[len(data)-1] == '\n', int64(len(data)))
	}
	return nil
}

// applyChanges rebuilds the trees along the changed paths, keeping every
// other entry's hash from the parent, and returns the new root tree.
func (v *Vault) applyChanges(root Hash, changes map[string]change) (Hash, error) {
	if len(changes) == 0 && !root.IsZero() {
		return root, nil
	}
	return v.rebuild(root, "", changes)
}

func (v *Vault) rebuild(tree Hash, prefix string, changes map[string]change) (Hash, error) {
	// Split the changes into files here and folders below.
	here := map[string]change{}
	below := map[string]map[string]change{}
	for p, c := range changes {
		rest := strings.TrimPrefix(p, prefix)
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			dir := rest[:i]
			if below[dir] == nil {
				below[dir] = map[string]change{}
			}
			below[dir][p] = c
		} else {
			here[rest] = c
		}
	}
	if id, ok, err := v.rebuildKept(tree, prefix, here, below); ok || err != nil {
		return id, err
	}
	var entries []treeEntry
	if !tree.IsZero() {
		old, err := v.objs.readTree(tree)
		if err != nil {
			return ZeroHash, err
		}
		entries = append(entries, old...)
	}
	// Where each name is: a map when many names change here, a search by
	// halves when a few do (a boundary changes one entry of playbook-runs/,
	// 100,000 entries at 100,000 runs, where making the map took 15 ms).
	var pos map[string]int
	if len(here)+len(below) > 16 {
		pos = make(map[string]int, len(entries))
		for i, e := range entries {
			pos[e.Name] = i
		}
	}
	find := func(name string) (int, bool) {
		if pos != nil {
			i, ok := pos[name]
			return i, ok
		}
		return object.FindEntry(entries, name)
	}
	// The tree reshaped (an entry added, removed, a mode changed) is
	// sorted again before it is written.
	reshaped := tree.IsZero()
	set := func(i int, e treeEntry) {
		if entries[i].Mode != e.Mode {
			reshaped = true
		}
		entries[i] = e
	}
	add := func(e treeEntry) {
		if pos != nil {
			pos[e.Name] = len(entries)
		}
		entries = append(entries, e)
		reshaped = true
	}
	removed := map[string]bool{}
	for name, c := range here {
		i, ok := find(name)
		switch {
		case c.hash.IsZero():
			if ok {
				removed[name] = true
			}
		case ok:
			set(i, treeEntry{Name: name, Mode: c.mode, Hash: c.hash})
		default:
			add(treeEntry{Name: name, Mode: c.mode, Hash: c.hash})
		}
	}
	dirs := make([]string, 0, len(below))
	for d := range below {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		var sub Hash
		i, ok := find(dir)
		if ok && entries[i].Mode == object.Dir {
			sub = entries[i].Hash
		}
		nh, err := v.rebuild(sub, prefix+dir+"/", below[dir])
		if err != nil {
			return ZeroHash, err
		}
		switch {
		case nh.IsZero():
			if ok {
				removed[dir] = true
			}
		case ok:
			set(i, treeEntry{Name: dir, Mode: object.Dir, Hash: nh})
		default:
			add(treeEntry{Name: dir, Mode: object.Dir, Hash: nh})
		}
	}
	if len(removed) > 0 {
		reshaped = true
		kept := entries[:0]
		for _, e := range entries {
			if !removed[e.Name] {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if len(entries) == 0 {
		return ZeroHash, nil // an empty folder is no tree
	}
	return v.objs.writeTree(entries, reshaped)
}

// rebuildKept is rebuild of a large kept tree (bigtree.go): read in its
// kept bytes, its entries neither copied nor decoded (at 100,000 runs
// playbook-runs/ is 100,000 entries, 4 MB a boundary copied). Entries
// given new hashes of the same modes are written over in place
// (patchKept); an entry added, removed or made a folder or a file
// reshapes the tree from its bytes (reshapeKept). ok false, when the tree
// is not kept, sends the caller the whole way.
func (v *Vault) rebuildKept(tree Hash, prefix string, here map[string]change, below map[string]map[string]change) (id Hash, ok bool, err error) {
	if tree.IsZero() {
		return ZeroHash, false, nil
	}
	var set []hashAt
	var same, edits []treeEdit // same: set's, for a reshape
	// edit records e (a zero hash: gone) under its name, whose entry in
	// the tree is at i when found, of mode mode.
	edit := func(e treeEntry, i int, mode object.Mode, found bool) {
		switch {
		case found && !e.Hash.IsZero() && mode == e.Mode:
			set = append(set, hashAt{i, e.Hash})
			same = append(same, treeEdit{at: i, found: true, e: e})
		case found && !e.Hash.IsZero() && (mode == object.Dir) == (e.Mode == object.Dir):
			edits = append(edits, treeEdit{at: i, found: true, e: e})
		case found:
			// Gone, or a file made a folder or a folder a file, which
			// sorts elsewhere ("name/"): removed, and added where it goes.
			edits = append(edits, treeEdit{at: i, found: true, e: treeEntry{Name: e.Name}})
			if !e.Hash.IsZero() {
				edits = append(edits, treeEdit{e: e})
			}
		case !e.Hash.IsZero():
			edits = append(edits, treeEdit{e: e})
		}
	}
	for name, c := range here {
		i, mode, _, found, kept := v.objs.kept.entry(tree, name)
		if !kept {
			return ZeroHash, false, nil
		}
		edit(treeEntry{Name: name, Mode: c.mode, Hash: c.hash}, i, mode, found)
	}
	for _, dir := range slices.Sorted(maps.Keys(below)) {
		i, mode, sub, found, kept := v.objs.kept.entry(tree, dir)
		if !kept {
			return ZeroHash, false, nil
		}
		if !found || mode != object.Dir {
			sub = ZeroHash
		}
		nh, err := v.rebuild(sub, prefix+dir+"/", below[dir])
		if err != nil {
			return ZeroHash, true, err
		}
		edit(treeEntry{Name: dir, Mode: object.Dir, Hash: nh}, i, mode, found)
	}
	switch {
	case len(edits) == 0 && len(set) == 0:
		return tree, true, nil // nothing it holds changed (a file gone that it never had)
	case len(edits) == 0:
		return v.objs.patchKept(tree, set)
	}
	return v.objs.reshapeKept(tree, append(edits, same...))
}

// head returns the commit the branch points at, zero before the first.
func (v *Vault) head() (Hash, error) {
	data, err := fsys.ReadFile(filepath.Join(v.gitDir, filepath.FromSlash(v.branch)))
	if err == nil {
		h, err := object.ParseHash(strings.TrimSpace(string(data)))
		if err != nil {
			return ZeroHash, fmt.Errorf("vault: %s does not hold a commit id", v.branch)
		}
		return h, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, err
	}
	// Look in packed-refs.
	f, err := fsys.Open(filepath.Join(v.gitDir, "packed-refs"))
	if errors.Is(err, fs.ErrNotExist) {
		return ZeroHash, nil
	}
	if err != nil {
		return ZeroHash, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ref, ok := strings.Cut(line, " "); ok && ref == v.branch && object.IsHash(h) {
			return object.ParseHash(h)
		}
	}
	return ZeroHash, sc.Err()
}

// reflogLine is the reflog's line of a commit id made on old.
func reflogLine(old, id Hash, who Signature, msg string) string {
	return fmt.Sprintf("%s %s %s\tcommit: %s\n", old, id, who.git(), strings.ReplaceAll(msg, "\n", " "))
}

// lockBranch takes the branch's lock with git's lockfile protocol: it
// creates <ref>.lock exclusively and checks that the branch still points
// at old. The group holds it to its end, when moveBranch moves it.
func (v *Vault) lockBranch(old Hash) (*os.File, error) {
	ref := filepath.Join(v.gitDir, filepath.FromSlash(v.branch))
	if !v.refDirs {
		logPath := filepath.Join(v.gitDir, "logs", filepath.FromSlash(v.branch))
		for _, d := range []string{filepath.Dir(ref), filepath.Dir(logPath)} {
			crashpoint.Hit()
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		v.refDirs = true
	}
	f, err := v.takeGitLock(ref + ".lock")
	if err != nil {
		return nil, err
	}
	if err := v.branchAt(old); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// branchAt says whether the branch still points at old.
func (v *Vault) branchAt(old Hash) error {
	cur, err := v.head()
	if err == nil && cur != old {
		err = fmt.Errorf("vault: %s moved from %s to %s during the commit", v.branch, old, cur)
	}
	return err
}

// moveBranch points the branch at id through its lock f (lockBranch):
// it checks the branch still points at old, writes id, renames the lock
// over the ref, and appends the reflog's lines (one for each commit from
// old to id). The lock is gone after it, whatever it answers.
func (v *Vault) moveBranch(f *os.File, old, id Hash, reflog []string) error {
	lock := f.Name()
	ref := strings.TrimSuffix(lock, ".lock")
	err := v.branchAt(old)
	if err == nil {
		crashpoint.Hit()
		_, err = f.WriteString(id.String() + "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		crashpoint.Hit()
		err = os.Rename(lock, ref)
	}
	if err != nil {
		os.Remove(lock)
		return err
	}
	crashpoint.Hit()
	lf, err := fsys.OpenFile(filepath.Join(v.gitDir, "logs", filepath.FromSlash(v.branch)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer lf.Close()
	_, err = lf.WriteString(strings.Join(reflog, ""))
	return err
}

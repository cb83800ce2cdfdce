package vault

import (
	"bytes"
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

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/internal/sidebyside"
	"quire/vault/git/index"
	"quire/vault/git/object"
)

// ownedTop are the top-level names of the paths quire writes and commits.
// .git/index is kept true to HEAD for these; whatever a person stages
// elsewhere is left alone.
var ownedTop = map[string]bool{
	".gitignore": true, AttributesFile: true, ConfigFile: true, "vault": true, RunsDir: true,
	"playbooks": true, "projects": true, "org": true,
}

// Owned reports whether rel (slash-separated) is a path quire keeps.
func Owned(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return ownedTop[top]
}

// The index stamp, .quire/index-stamp, says which HEAD .git/index was last
// made true to, and the stat of the index quire then wrote: "<commit> <size>
// <mtime in ns> <inode>". Opening a vault compares it with the branch and
// the index's stat (a file read, a ref read and a stat); only when they
// differ (a crash between the branch's move and the index's, a git command,
// a vault without a stamp) is the index compared with HEAD's tree, entry by
// entry, and repaired.
const stampFile = "index-stamp"

func (v *Vault) stampPath() string { return filepath.Join(v.root, QuireDir, stampFile) }

func (v *Vault) stampFor(head Hash) ([]byte, error) {
	fi, err := os.Stat(v.gitIdx.path)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, "%s %d %d %d\n", head, fi.Size(), fi.ModTime().UnixNano(), inodeOf(fi)), nil
}

// writeStamp records that .git/index is true to head as it stands.
func (v *Vault) writeStamp(head Hash) error {
	data, err := v.stampFor(head)
	if err != nil {
		return err
	}
	crashpoint.Hit()
	return os.WriteFile(v.stampPath(), data, 0o644)
}

// indexInStep reports whether the stamp still holds.
func (v *Vault) indexInStep() bool {
	stamp, err := fsys.ReadFile(v.stampPath())
	if err != nil {
		return false
	}
	head, err := v.head()
	if err != nil {
		return false
	}
	now, err := v.stampFor(head)
	return err == nil && bytes.Equal(stamp, now)
}

// errDeferred stops the repair at open when a writer left its journal: the
// next writer, with the ledger's part of the recovery, does it all.
var errDeferred = errors.New("vault: left to the next writer")

// checkIndexOnOpen repairs .git/index when its stamp no longer holds. It
// never fails the open: what it cannot do now, the next writer does.
func (v *Vault) checkIndexOnOpen() {
	if v.indexInStep() {
		return
	}
	if v.gitOperation() != nil {
		return // git's own operation is in the middle: its index is the person's
	}
	if _, detached := v.Detached(); detached || v.ReadOnly() {
		return // nothing can be set right here; reads answer from the files
	}
	v.opening = true
	err := v.Locked(func() error {
		if v.indexInStep() {
			return nil
		}
		fixed, err := v.repairIndex()
		if len(fixed) > 0 {
			v.logf("set %d entries of .git/index to HEAD's, which disagreed with it (%s)", len(fixed), sample(fixed))
		}
		return err
	})
	v.opening = false
	if err != nil && !errors.Is(err, errDeferred) {
		v.logf("could not compare .git/index with HEAD: %v", err)
	}
}

// headFiles lists the files of HEAD's tree: path → hash and mode.
func (v *Vault) headFiles() (Hash, map[string]change, error) {
	head, err := v.head()
	if err != nil || head.IsZero() {
		return head, nil, err
	}
	tree, err := v.objs.readCommitTree(head)
	if err != nil {
		return head, nil, fmt.Errorf("vault: reading the commit %s of %s: %w", head, v.branch, err)
	}
	files := map[string]change{}
	var walk func(Hash, string) error
	walk = func(t Hash, prefix string) error {
		entries, err := v.objs.readTree(t)
		if err != nil {
			return err
		}
		for _, e := range entries {
			switch e.Mode {
			case object.Dir:
				if err := walk(e.Hash, prefix+e.Name+"/"); err != nil {
					return err
				}
			case object.Submodule:
			default:
				files[prefix+e.Name] = change{hash: e.Hash, mode: e.Mode}
			}
		}
		return nil
	}
	return head, files, walk(tree, "")
}

// repairIndex makes .git/index agree with HEAD for the paths quire owns: an
// entry HEAD lacks goes, one that differs takes HEAD's blob, one missing is
// added. Such entries carry no stat, so git and quire read their files again
// and see whether the work tree differs. An index that cannot be read is
// rebuilt from HEAD whole. It writes the stamp, and returns the paths it
// set. The caller holds the lock.
func (v *Vault) repairIndex() ([]string, error) {
	var fixed []string
	if err := v.gitIdx.loadVerified(); err != nil {
		v.gitIdx.clear()
		fixed = append(fixed, ".git/index (unreadable: "+err.Error()+"; rebuilt from HEAD)")
	}
	head, err := v.head()
	if err != nil || head.IsZero() {
		return fixed, err
	}
	var entries []*index.Entry // the index's, once read whole
	if len(fixed) == 0 {
		entries = v.gitIdx.all()
		// Most of a large index agrees with HEAD: compare the trees the
		// index would make with HEAD's, folder by folder, and read only the
		// files of the folders that differ.
		tree, err := v.objs.readCommitTree(head)
		if err != nil {
			return nil, err
		}
		if v.gitIdx.cacheTree == tree {
			// git wrote the index (a commit, a checkout), or quire, with
			// its cache-tree valid and equal to HEAD's tree: the whole
			// index makes HEAD's tree, as git itself trusts when it
			// commits. A `quire call` after a git commit need not hash
			// every folder.
			return nil, v.writeStamp(head)
		}
		if h, ok := treeOf(entries, ""); ok && h == tree && !v.gitIdx.conflicted {
			// The whole index makes HEAD's tree, and its file does not
			// say so (an index quire wrote before it wrote cache-trees,
			// or one git invalidated): written again with its
			// cache-tree, once, so that git status and the next repair
			// need not read every tree.
			v.gitIdx.cacheTree = tree
			if err := v.gitIdx.write(v); err != nil {
				return nil, err
			}
			return nil, v.writeStamp(head)
		}
		differ, err := v.indexDiffers(tree, "", entries)
		if err != nil {
			return nil, err
		}
		if !differ {
			return nil, v.writeStamp(head)
		}
	}
	_, want, err := v.headFiles()
	if err != nil {
		return nil, err
	}
	x := v.gitIdx
	// What git cached of the index is not kept past a repair: git makes
	// its cache-tree, its untracked cache and its monitor's cache again.
	x.cacheTree, x.fsmn = ZeroHash, nil
	x.dropUntracked()
	if entries == nil {
		entries = x.all()
	}
	for _, e := range entries {
		if !Owned(e.Name) {
			continue
		}
		w, ok := want[e.Name]
		switch {
		case !ok:
			fixed = append(fixed, e.Name)
			x.remove(e.Name)
		case w.hash != e.Hash || w.mode != e.Mode:
			fixed = append(fixed, e.Name)
			x.setEntry(&index.Entry{Name: e.Name, Hash: w.hash, Mode: w.mode})
		}
	}
	for name, w := range want {
		if !x.has(name) && Owned(name) {
			x.setEntry(&index.Entry{Name: name, Hash: w.hash, Mode: w.mode})
			fixed = append(fixed, name)
		}
	}
	if len(fixed) > 0 {
		if err := x.write(v); err != nil {
			return nil, err
		}
	}
	sort.Strings(fixed)
	return fixed, v.writeStamp(head)
}

// indexDiffers reports whether the index's entries under prefix (sorted,
// all of them under it) differ from the tree for quire's paths: a folder
// whose tree, made from the index, hashes as HEAD's is not read.
func (v *Vault) indexDiffers(tree Hash, prefix string, entries []*index.Entry) (bool, error) {
	have, err := v.objs.readTree(tree)
	if err != nil {
		return false, err
	}
	seen := 0
	for _, te := range have {
		name := prefix + te.Name
		if prefix == "" && !ownedTop[te.Name] {
			continue
		}
		if te.Mode != object.Dir {
			i := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= name })
			if i == len(entries) || entries[i].Name != name || entries[i].Hash != te.Hash || entries[i].Mode != te.Mode {
				return true, nil
			}
			seen++
			continue
		}
		sub := under(entries, name+"/")
		seen += len(sub)
		if h, ok := treeOf(sub, name+"/"); ok && h == te.Hash {
			continue
		}
		if d, err := v.indexDiffers(te.Hash, name+"/", sub); d || err != nil {
			return d, err
		}
	}
	owned := 0
	for _, e := range entries {
		if Owned(e.Name) {
			owned++
		}
	}
	return owned != seen, nil // an entry HEAD lacks
}

// under is the run of sorted entries whose names begin with prefix.
func under(entries []*index.Entry, prefix string) []*index.Entry {
	i := sort.Search(len(entries), func(i int) bool { return entries[i].Name >= prefix })
	j := i
	for j < len(entries) && strings.HasPrefix(entries[j].Name, prefix) {
		j++
	}
	return entries[i:j]
}

// treeOf is the id of the tree the entries (all under prefix, sorted) make,
// computed without writing anything; false for what no tree holds.
func treeOf(entries []*index.Entry, prefix string) (Hash, bool) {
	var tes []treeEntry
	for i := 0; i < len(entries); {
		rest := entries[i].Name[len(prefix):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			dir := rest[:j]
			sub := under(entries[i:], prefix+dir+"/")
			h, ok := treeOf(sub, prefix+dir+"/")
			if !ok {
				return h, false
			}
			tes = append(tes, treeEntry{Name: dir, Mode: object.Dir, Hash: h})
			i += len(sub)
			continue
		}
		tes = append(tes, treeEntry{Name: rest, Mode: entries[i].Mode, Hash: entries[i].Hash})
		i++
	}
	if len(tes) == 0 {
		return ZeroHash, false
	}
	object.SortTree(tes)
	return object.Sum(object.Tree, object.AppendTree(nil, tes)), true
}

// Finding is one thing wrong with the vault's git state or work tree, as
// quire check reports it.
type Finding struct {
	Path    string
	Message string
}

// InspectGit reports git's lock files left in .git, a HEAD whose commit or
// trees cannot be read, and a .git/index that cannot be read or disagrees
// with HEAD for quire's paths. The caller holds the lock (LockedRead).
func (v *Vault) InspectGit() []Finding {
	out := v.InspectGitState()
	return append(out, v.inspectHead()...)
}

// InspectGitState is the part of InspectGit that reads no object and not
// .git/index: the commits of this process not made the branch's, a
// detached HEAD, git's lock files and a writer's journal (a few stats).
// quire check runs it even when it answers the rest from its record.
func (v *Vault) InspectGitState() []Finding {
	var out []Finding
	if err := v.flushCommits(); err != nil {
		out = append(out, Finding{".git", "the commits of this write could not be made the branch's: " + err.Error()})
	}
	if at, ok := v.Detached(); ok && v.gitOperation() == nil {
		out = append(out, Finding{".git/HEAD", detachedWords(at)})
	}
	for _, lock := range v.gitLocks() {
		out = append(out, Finding{".git/" + lock, "git's lock file is left here: every commit fails while it stands. " +
			"If a quire writer left it, the next write or quire janitor removes it; if no git command is running, delete it"})
	}
	if pids, ok := v.Journaled(); ok && !v.locked {
		out = append(out, Finding{QuireDir + "/" + journalFile, "a writer (pid " + pids + ") stopped in the middle of a write; the next write or quire janitor finishes what it left"})
	}
	return out
}

// inspectHead is the part of InspectGit that reads HEAD's trees and
// .git/index.
func (v *Vault) inspectHead() []Finding {
	var out []Finding
	_, want, err := v.headFiles()
	if err != nil {
		out = append(out, Finding{".git/" + v.branch, "HEAD's commit or tree cannot be read: " + err.Error() + "; quire cannot commit until a person restores the objects (git fsck names them; a clone of the vault has them)"})
		return out
	}
	for name, w := range want {
		out = append(out, v.blobFindings(name, w)...)
	}
	if err := v.gitIdx.loadVerified(); err != nil {
		out = append(out, Finding{".git/index", "cannot be read (" + err.Error() + "); quire janitor rebuilds it from HEAD"})
		return out
	}
	return append(out, indexFindings(v.indexAgainst(want))...)
}

// indexAgainst lists the paths quire owns where .git/index (loaded)
// and HEAD's files want differ.
func (v *Vault) indexAgainst(want map[string]change) []string {
	var differ []string
	inIndex := map[string]bool{}
	for _, e := range v.gitIdx.all() {
		inIndex[e.Name] = true
		if !Owned(e.Name) {
			continue
		}
		if w, ok := want[e.Name]; !ok || w.hash != e.Hash || w.mode != e.Mode {
			differ = append(differ, e.Name)
		}
	}
	for name := range want {
		if !inIndex[name] && Owned(name) {
			differ = append(differ, name)
		}
	}
	sort.Strings(differ)
	return differ
}

// indexFindings is what InspectGit says of the paths where .git/index
// and HEAD differ.
func indexFindings(differ []string) []Finding {
	if len(differ) == 0 {
		return nil
	}
	return []Finding{{".git/index", fmt.Sprintf("disagrees with HEAD for %d paths (%s): a plain git commit would record that; quire janitor sets them to HEAD's", len(differ), sample(differ))}}
}

// gitLocks lists the lock files of git's that stand in .git: the index's,
// the branch's, HEAD's and packed-refs'.
func (v *Vault) gitLocks() []string {
	var out []string
	for _, name := range []string{"index.lock", v.branch + ".lock", "HEAD.lock", "packed-refs.lock"} {
		if _, err := os.Lstat(filepath.Join(v.gitDir, filepath.FromSlash(name))); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// RepairGit repairs what InspectGit finds that needs no person: git locks
// a dead quire writer left (the journal says so; others are left) and an
// index that cannot be read or disagrees with HEAD. The caller holds the
// lock (Locked, which has already finished a dead writer's journal).
func (v *Vault) RepairGit() ([]string, error) {
	if err := v.flushCommits(); err != nil {
		return nil, err
	}
	if _, _, err := v.headFiles(); err != nil {
		return nil, nil // a person's work: InspectGit says so
	}
	v.gitIdx.stat = fileStamp{}
	fixed, err := v.repairIndex()
	if err != nil || len(fixed) == 0 {
		return nil, err
	}
	return []string{fmt.Sprintf("set %d entries of .git/index to HEAD's (%s)", len(fixed), sample(fixed))}, nil
}

// Change is a path of the work tree that differs from .git/index.
type Change struct {
	Path string
	// Kind is "modified", "untracked", "deleted", "symlink" (a symbolic
	// link, never followed), "temp" (a temporary file of a write that never
	// finished) or "staging" (a folder .new-* of one).
	Kind string
}

// Status walks the paths quire owns and lists what differs from .git/index,
// as git status would, without reading a file whose stat matches its entry.
// It changes nothing but the index's stat data in memory. The caller holds
// the lock.
func (v *Vault) Status() ([]Change, error) { return v.StatusFrom(nil) }

// StatusFrom is Status leaving out the run folders u does (nil: none).
// The run folders it walks are walked side by side (statusOfFolders).
func (v *Vault) StatusFrom(u *Unchanged) ([]Change, error) { return v.StatusStamped(u, nil) }

// Stamped is an entry of a run folder as a caller lstat'ed it, by its
// name below the folder ("" for the folder itself).
type Stamped struct {
	Name string
	S    fsys.Stamp
}

// FolderStamps answers a run folder's entries as the caller stamped them
// under the lock the status is taken under: the folder first, then every
// entry below it as a walk of each folder's sorted names visits them. An
// entry stamped with no times (an artifact, whose content no check
// reads) is lstat'ed again. False: none, and the folder is walked.
type FolderStamps func(name string) ([]Stamped, bool)

// StatusStamped is StatusFrom taking the run folders' entries from stamps
// where it answers them, rather than listing the folders and lstat'ing
// each file again: quire check --full stamps every file of the vault
// before it asks the status (a listing of 200,000 folders and 500,000
// lstats spared at 100,000 runs).
func (v *Vault) StatusStamped(u *Unchanged, stamps FolderStamps) ([]Change, error) {
	if err := v.flushCommits(); err != nil {
		return nil, err
	}
	if err := v.gitIdx.load(); err != nil {
		return nil, err
	}
	tops, err := os.ReadDir(v.root)
	if err != nil {
		return nil, err
	}
	var rest statusPart
	var folders []string
	visit := v.statusVisit(&rest, u, &folders)
	for _, top := range tops {
		if !ownedTop[top.Name()] {
			continue
		}
		roots := []string{filepath.Join(v.root, top.Name())}
		if top.Name() == RunsDir && u != nil && u.held {
			// The names u looks at, not a listing of playbook-runs/.
			roots = roots[:0]
			for _, name := range slices.Sorted(maps.Keys(u.look)) {
				if name == "." || !filepath.IsLocal(name) || strings.ContainsAny(name, "/"+string(filepath.Separator)) {
					continue // no entry of playbook-runs/ is named so
				}
				p := filepath.Join(v.root, RunsDir, name)
				if _, err := os.Lstat(p); err == nil {
					roots = append(roots, p)
				}
			}
		}
		for _, root := range roots {
			if err := filepath.WalkDir(root, visit); err != nil {
				return nil, err
			}
		}
	}
	parts, err := v.statusOfFolders(folders, u, stamps)
	if err != nil {
		return nil, err
	}
	parts = append(parts, rest)
	n := 0
	for _, p := range parts {
		n += len(p.seen)
	}
	var out []Change
	seen := make(map[string]bool, n)
	for _, p := range parts {
		out = append(out, p.changes...)
		for _, name := range p.seen {
			seen[name] = true
		}
	}
	v.gitIdx.eachFrom(u, false, func(e *index.Entry) bool {
		if Owned(e.Name) && !seen[e.Name] {
			if _, err := os.Lstat(v.Abs(e.Name)); errors.Is(err, fs.ErrNotExist) {
				out = append(out, Change{strings.Clone(e.Name), "deleted"})
			}
		}
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// statusPart is what a walk of part of the work tree found: its changes,
// and the files it saw (in .git/index or not).
type statusPart struct {
	changes []Change
	seen    []string
}

// statusVisit is the visit of StatusFrom's walks, which puts what it
// finds in part. With folders, it walks no run folder but adds its path
// to folders, for statusOfFolders.
func (v *Vault) statusVisit(part *statusPart, u *Unchanged, folders *[]string) fs.WalkDirFunc {
	return func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(v.root, p)
		r = filepath.ToSlash(r)
		name := d.Name()
		if part.byKind(r, name, d.Type()&fs.ModeSymlink != 0, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if path.Dir(r) == RunsDir {
				if u.skips(name) {
					return filepath.SkipDir
				}
				if folders != nil {
					*folders = append(*folders, p)
					return filepath.SkipDir
				}
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		return v.statusOfFile(part, r, p, fsys.StampOf(fi))
	}
}

// byKind puts in part what the status says of the entry r (named name)
// by its kind and name alone: a symbolic link, a staging folder (not
// walked into), a temporary file. It answers whether that is all; a
// folder or a file to compare with .git/index is the caller's.
func (part *statusPart) byKind(r, name string, symlink, dir bool) bool {
	kind := ""
	switch {
	case symlink:
		kind = "symlink"
	case dir && strings.HasPrefix(name, ".new-"):
		kind = "staging"
	case !dir && isTemp(name):
		kind = "temp"
	default:
		return false
	}
	part.changes = append(part.changes, Change{r, kind})
	return true
}

// statusOfFile puts in part what the file r (at p, stamped st) is
// against .git/index: untracked, modified, or nothing when its stamp is
// the entry's (cleanEntry) or its content and mode are.
func (v *Vault) statusOfFile(part *statusPart, r, p string, st fsys.Stamp) error {
	part.seen = append(part.seen, r)
	e, ok := v.gitIdx.get(r)
	if !ok {
		part.changes = append(part.changes, Change{r, "untracked"})
		return nil
	}
	if !st.IsRegular() || v.gitIdx.cleanEntry(e, st) {
		return nil
	}
	data, err := fsys.ReadFile(p)
	if err != nil {
		return err
	}
	m := object.Regular
	if st.Mode&0o111 != 0 {
		m = object.Executable
	}
	if e.Hash != hashObject("blob", data) || e.Mode != m {
		part.changes = append(part.changes, Change{r, "modified"})
	}
	return nil
}

// statusOfStamped is the walk of one run folder (rel, at abs) from the
// stamps of its entries (FolderStamps): what statusVisit would find.
func (v *Vault) statusOfStamped(part *statusPart, rel, abs string, entries []Stamped) error {
	skip := "" // below a staging folder
	for _, e := range entries[1:] {
		if skip != "" && strings.HasPrefix(e.Name, skip) {
			continue
		}
		r := rel + "/" + e.Name
		st := e.S
		if part.byKind(r, path.Base(e.Name), st.IsSymlink(), st.IsDir()) {
			if st.IsDir() {
				skip = e.Name + "/"
			}
			continue
		}
		if st.IsDir() {
			continue
		}
		p := filepath.Join(abs, filepath.FromSlash(e.Name))
		if st.MTime == 0 && st.CTime == 0 {
			// Stamped by its kind alone (an artifact): its stat taken now.
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // gone since: the index's walk says deleted
			}
			if err != nil {
				return err
			}
			st = fsys.StampOf(fi)
		}
		if err := v.statusOfFile(part, r, p, st); err != nil {
			return err
		}
	}
	return nil
}

// statusOfFolders walks the run folders at the paths given, on as many
// cores as there are (up to 4): a check of the whole vault walks 100,000
// of them at 100,000 runs, each a listing and a stat of each file. The
// walks only read .git/index (loaded by the caller); the first error in
// the folders' order is answered.
func (v *Vault) statusOfFolders(folders []string, u *Unchanged, stamps FolderStamps) ([]statusPart, error) {
	parts := make([]statusPart, len(folders))
	errs := make([]error, len(folders))
	sidebyside.Each(len(folders), func(i int) {
		if stamps != nil {
			name := filepath.Base(folders[i])
			if entries, ok := stamps(name); ok && len(entries) > 0 && entries[0].S.IsDir() {
				errs[i] = v.statusOfStamped(&parts[i], RunsDir+"/"+name, folders[i], entries)
				return
			}
		}
		errs[i] = filepath.WalkDir(folders[i], v.statusVisit(&parts[i], u, nil))
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// isTemp reports whether a file's name is a temporary file of WriteAtomic:
// ".<name>.tmp<random>".
func isTemp(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp")
}

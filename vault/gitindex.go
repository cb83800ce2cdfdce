package vault

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/vault/git/index"
	"quire/vault/git/object"
)

// gitIndex is .git/index, kept decoded between commits. Before each use its
// file's stat is compared with the one it was read at, and it is read again
// when another program changed it. It is written as version 2 (3 when an
// entry has an extended flag), or 4 when it was 4 (splitindex.go's
// encode), under git's lockfile protocol: index.lock, then rename;
// whole, or split as git's core.splitIndex writes it (splitindex.go). The
// file's format is vault/git/index's.
//
// Three of git's extensions are kept, so that a person's git status in a
// large vault reads neither every folder nor every tree nor every file's
// stat where a monitor is set (issue 28; docs/vault-format.md,
// "Commits"):
//   - the cache-tree (TREE), written whenever the tree the whole index
//     makes is known (cacheTree): the root and the folders at the top,
//     each valid, which git status trusts instead of reading HEAD's trees
//     (1.1 s at 100,000 runs without it, 11 ms with it);
//   - git's untracked cache (UNTR), kept as git wrote it, less what git
//     itself forgets when its index takes or drops an entry
//     (forgetFolders): without it, the next git status reads every folder
//     again (18 s at 100,000 runs);
//   - git's file system monitor cache (FSMN, core.fsmonitor), with every
//     entry quire sets marked as changed: without it, the next git status
//     asks the monitor for every file it ever saw (Watchman's hook took
//     100 s at 100,000 runs) and stats them all.
//
// The others (REUC, EOIE, IEOT) are not kept: git makes them again.
type gitIndex struct {
	path    string
	entries []*index.Entry // sorted by name
	// conflicted: entries holds a conflict's stages (a merge stopped); the
	// index is then git's alone, never written back.
	conflicted bool
	stat       fileStamp
	buf        []byte // the last index written, its room kept for the next
	// cacheTree is the tree the whole index makes, when known: as the
	// cache-tree's root says (git's or quire's), or as quire's last commit
	// made it from an index that made its parent's tree (commitPaths);
	// zero when not known.
	cacheTree Hash
	// treeDirs answers the folders of a tree (their names and trees), for
	// the cache-tree written; nil writes none.
	treeDirs func(tree Hash) ([]index.TreeNode, error)
	// untr is the untracked cache's body as read or last written (nil:
	// none), and untrDec it decoded, once an entry added or removed made
	// part of it stale; untrOut is the room of the last one encoded.
	untr     []byte
	untrDec  *index.Untracked
	untrOut  []byte
	untrGone bool // untrDec holds what untr does not
	// fsmn is the head of git's file system monitor extension as read
	// (nil: none); each entry's FSMonitorValid its bit, false for every
	// entry quire sets.
	fsmn []byte
	// base is the shared index of a split index, as read or last written
	// (entries it holds unchanged are the same pointers as in entries),
	// and baseID its id; nil when the index on disk is whole.
	base   []*index.Entry
	baseID Hash
	cfg    splitConfig
	// version is the version of the index read (0: none on disk); v4 says
	// the one written is version 4 (encode).
	version uint32
	v4      bool
}

type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func stampOf(fi fs.FileInfo) fileStamp {
	s := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	s.ino = fsys.Inode(fi)
	return s
}

// load reads the index when its stat changed since it was last read or
// written, without checking its checksum, as git reads it (index.Decode).
func (x *gitIndex) load() error { return x.loadWith(false) }

// loadVerified reads the index again whatever its stat, its checksum and
// its shared index's checked: for quire check and quire janitor.
func (x *gitIndex) loadVerified() error {
	x.stat, x.base, x.baseID = fileStamp{}, nil, ZeroHash
	return x.loadWith(true)
}

func (x *gitIndex) loadWith(verify bool) error {
	fi, err := os.Stat(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		x.entries, x.base, x.baseID = nil, nil, ZeroHash
		x.cacheTree = ZeroHash
		x.untr, x.untrDec, x.untrGone, x.fsmn = nil, nil, false, nil
		x.stat = fileStamp{}
		x.version = 0
		return nil
	}
	if err != nil {
		return err
	}
	if st := stampOf(fi); st == x.stat && x.stat.size != 0 {
		return nil
	}
	data, err := os.ReadFile(x.path)
	if err != nil {
		return err
	}
	d, err := index.Decode(data, verify, func(id Hash) ([]*index.Entry, error) {
		return x.sharedEntries(id, verify)
	})
	if err != nil {
		return fmt.Errorf("vault: reading .git/index: %w", err)
	}
	// A conflict's stages are kept as git wrote them: the vault refuses
	// every write while they are there (gitop.go) and never writes this
	// index back.
	x.conflicted = false
	for _, e := range d.Entries {
		if e.Stage != 0 {
			x.conflicted = true
			break
		}
	}
	x.entries, x.base, x.baseID = d.Entries, d.Shared, d.SharedID
	x.cacheTree = d.CacheTree
	x.untr, x.untrDec, x.untrGone, x.fsmn = d.Untracked, nil, false, d.FSMonitor
	x.version = d.Version
	x.stat = stampOf(fi)
	return nil
}

// sharedEntries reads the shared index id, or answers the one held when it
// is the same: after a git command rewrote a split index, only its own
// small file is read again.
func (x *gitIndex) sharedEntries(id Hash, verify bool) ([]*index.Entry, error) {
	if x.base != nil && id == x.baseID {
		return x.base, nil
	}
	data, err := os.ReadFile(x.sharedPath(id.String()))
	if err != nil {
		return nil, err
	}
	return index.DecodeShared(id, data, verify)
}

// sharedPath is the file of the shared index id, beside .git/index.
func (x *gitIndex) sharedPath(id string) string {
	return filepath.Join(filepath.Dir(x.path), "sharedindex."+id)
}

func (x *gitIndex) find(name string) (int, bool) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].Name >= name })
	return i, i < len(x.entries) && x.entries[i].Name == name
}

// clean reports whether the file at name is as the index recorded it, by
// its stat alone, as git decides: same size, modification and change
// times to the nanosecond and inode, and modified before the index was written (an
// entry as new as the index itself is "racy" and is read again).
func (x *gitIndex) clean(name string, fi fs.FileInfo) bool {
	i, ok := x.find(name)
	if !ok {
		return false
	}
	e := x.entries[i]
	if int64(e.Size) != fi.Size() || !e.ModifiedAt.Equal(fi.ModTime()) || !fi.ModTime().Before(x.stat.mtime) {
		return false
	}
	if fi.Mode()&0o111 != 0 != (e.Mode == object.Executable) {
		return false
	}
	st, ok := fsys.Stat(fi)
	if !ok || e.Inode != uint32(st.Ino) {
		return false
	}
	// The change time too, as git's core.trustctime: a write that puts the
	// size and the modification time back (touch -r) cannot put it back.
	return e.CreatedAt.IsZero() || e.CreatedAt.Equal(st.Ctime)
}

// set records name with its hash and the stat it was hashed from.
func (x *gitIndex) set(name string, h Hash, fi fs.FileInfo) {
	e := &index.Entry{Name: name, Hash: h, Mode: object.Regular, ModifiedAt: fi.ModTime(), Size: uint32(fi.Size())}
	if fi.Mode()&0o111 != 0 {
		e.Mode = object.Executable
	}
	if st, ok := fsys.Stat(fi); ok {
		e.CreatedAt = st.Ctime
		e.Dev, e.Inode = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.UID, st.GID
	}
	x.cacheTree = ZeroHash
	i, ok := x.find(name)
	if ok {
		x.entries[i] = e
		return
	}
	x.forgetFolders(name)
	x.entries = append(x.entries, nil)
	copy(x.entries[i+1:], x.entries[i:])
	x.entries[i] = e
}

func (x *gitIndex) remove(name string) {
	if i, ok := x.find(name); ok {
		x.cacheTree = ZeroHash
		x.entries = append(x.entries[:i], x.entries[i+1:]...)
		x.forgetFolders(name)
	}
}

// forgetFolders makes the untracked cache forget what it holds of the
// folders whose untracked files an entry added (called before it is
// added) or removed (after) may change, as git does when its index takes
// or drops an entry (dir.c, untracked_cache_invalidate_path): the entry's
// folder, whose stat says nothing of the index; and, up from it, the
// parent of each folder that had no entry before the entry came or has
// none once it is gone: git lists such a folder in its parent as untracked
// ("bar/"), so the parent's list changes too. git forgets every folder up
// to the root whenever it lists untracked folders (the `dir_flags` git
// status writes); quire stops where nothing above can change, so that a
// file quire adds to a run's folder does not make git status read again
// playbook-runs/, the folder of every run.
func (x *gitIndex) forgetFolders(name string) {
	if x.untr == nil {
		return
	}
	if x.untrDec == nil {
		u, err := index.DecodeUntracked(x.untr)
		if err != nil {
			x.untr = nil // git builds it again
			return
		}
		x.untrDec = u
	}
	x.untrGone = true
	dir := path.Dir(name)
	for {
		if dir == "." {
			x.untrDec.Invalidate("")
			return
		}
		x.untrDec.Invalidate(dir)
		if x.holds(dir) {
			return
		}
		dir = path.Dir(dir)
	}
}

// holds reports whether an entry lies below the folder dir.
func (x *gitIndex) holds(dir string) bool {
	prefix := dir + "/"
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].Name >= prefix })
	return i < len(x.entries) && strings.HasPrefix(x.entries[i].Name, prefix)
}

// extensions are the extensions of the index to write, in pieces: the
// cache-tree when the tree the index makes is known, and the untracked
// cache when git left one, unless core.untrackedCache is false (git then
// removes it too).
//
// The untracked cache is most of what a boundary writes once a person ran
// git status in a large vault (14 MB at 100,000 runs, in the split
// index's own file, as git writes it): the price of a git status that
// does not read every folder again.
func (x *gitIndex) extensions(cfg splitConfig) [][]byte {
	var ext [][]byte
	if !x.cacheTree.IsZero() && x.treeDirs != nil && len(x.entries) > 0 {
		if dirs, err := x.treeDirs(x.cacheTree); err == nil {
			for i := range dirs {
				dirs[i].Count = x.countUnder(dirs[i].Name)
			}
			ext = append(ext, index.AppendExtension(nil, "TREE", index.AppendCacheTree(nil, x.cacheTree, len(x.entries), dirs)))
		}
	}
	if cfg.noUntracked {
		x.untr, x.untrDec, x.untrGone = nil, nil, false
	}
	if x.untr != nil {
		if x.untrGone {
			x.untrOut = x.untrDec.Append(x.untrOut[:0])
			x.untr, x.untrGone = x.untrOut, false
			// untrDec's bytes are the file's, never untrOut's: the next
			// change encodes from it again.
		}
		ext = append(ext, index.ExtensionHeader(nil, "UNTR", len(x.untr)), x.untr)
	}
	if x.fsmn != nil {
		// Each entry as the monitor last said, and every entry quire
		// set not valid: git stats those, and asks the monitor for the
		// rest since its token (which covers quire's writes too).
		ext = append(ext, index.AppendExtension(nil, "FSMN", index.AppendFSMonitor(nil, x.fsmn, x.entries)))
	}
	return ext
}

// countUnder is the count of entries below the folder dir.
func (x *gitIndex) countUnder(dir string) int {
	prefix := dir + "/"
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].Name >= prefix })
	j := sort.Search(len(x.entries), func(j int) bool { return x.entries[j].Name >= dir+"0" }) // '0' follows '/'
	return j - i
}

// under lists the names of the entries at or below the folder dir.
func (x *gitIndex) under(dir string) []string {
	prefix := dir + "/"
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].Name >= prefix })
	var names []string
	for ; i < len(x.entries) && len(x.entries[i].Name) >= len(prefix) && x.entries[i].Name[:len(prefix)] == prefix; i++ {
		names = append(names, x.entries[i].Name)
	}
	return names
}

// write takes git's index.lock and writes the index through it.
func (x *gitIndex) write(v *Vault) error {
	f, err := v.takeGitLock(x.path + ".lock")
	if err != nil {
		return err
	}
	return x.writeLocked(f)
}

// writeLocked encodes the index into f, the index.lock the caller took
// (whole, or split with a new shared index written first when one is due),
// and renames it into place. On error the lock is removed.
func (x *gitIndex) writeLocked(f *os.File) error {
	lock := f.Name()
	if x.conflicted {
		f.Close()
		os.Remove(lock)
		return errors.New("vault: .git/index holds a conflict's stages; quire writes it only once git's merge is resolved")
	}
	if err := x.encode(); err != nil {
		f.Close()
		os.Remove(lock)
		return err
	}
	buf := x.buf
	crashpoint.Hit()
	if _, err := f.Write(buf); err != nil {
		f.Close()
		os.Remove(lock)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(lock)
		return err
	}
	crashpoint.Hit()
	if err := os.Rename(lock, x.path); err != nil {
		os.Remove(lock)
		return err
	}
	fi, err := os.Stat(x.path)
	if err != nil {
		return err
	}
	x.stat = stampOf(fi)
	return nil
}

// indexPath is .git/index of a repository.
func indexPath(gitDir string) string { return filepath.Join(gitDir, "index") }

// IndexDigest is the SHA-256 of what .git/index says of each path: its
// name, mode, blob, stage and flags, not the stat data a git status
// refreshes. Two indexes of one digest stage the same files, so quire
// check, finding .git/index rewritten (a person's git status writes it)
// but its digest the recorded one, needs to read nothing more of it. The
// caller holds the lock.
func (v *Vault) IndexDigest() ([32]byte, error) {
	var sum [32]byte
	if err := v.gitIdx.load(); err != nil {
		return sum, err
	}
	h := sha256.New()
	var b []byte
	for _, e := range v.gitIdx.entries {
		b = append(b[:0], e.Name...)
		b = append(b, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(e.Mode))
		b = append(b, e.Hash[:]...)
		var flags byte
		if e.SkipWorktree {
			flags |= 1
		}
		if e.IntentToAdd {
			flags |= 2
		}
		b = append(b, e.Stage, flags)
		h.Write(b)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

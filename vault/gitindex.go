package vault

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
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
// encode), without a cache-tree (it would go stale; git
// rebuilds it), under git's lockfile protocol: index.lock, then rename;
// whole, or split as git's core.splitIndex writes it (splitindex.go). The
// file's format is vault/git/index's.
type gitIndex struct {
	path    string
	entries []*index.Entry // sorted by name
	// conflicted: entries holds a conflict's stages (a merge stopped); the
	// index is then git's alone, never written back.
	conflicted bool
	stat       fileStamp
	buf        []byte // the last index written, its room kept for the next
	// cacheTree is the tree the whole index makes, as git's cache-tree
	// said when git wrote it; zero when it did not (quire writes none).
	cacheTree Hash
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
	x.entries = append(x.entries, nil)
	copy(x.entries[i+1:], x.entries[i:])
	x.entries[i] = e
}

func (x *gitIndex) remove(name string) {
	if i, ok := x.find(name); ok {
		x.cacheTree = ZeroHash
		x.entries = append(x.entries[:i], x.entries[i+1:]...)
	}
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
	x.cacheTree = ZeroHash // quire writes no cache-tree
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

package vault

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
)

// gitIndex is .git/index, kept decoded between commits. Before each use its
// file's stat is compared with the one it was read at, and it is read again
// when another program changed it. It is written as version 2 (3 when an
// entry has an extended flag) without a cache-tree (it would go stale; git
// rebuilds it), under git's lockfile protocol: index.lock, then rename;
// whole, or split as git's core.splitIndex writes it (splitindex.go).
type gitIndex struct {
	path    string
	entries []*index.Entry // sorted by name; stage 0 only
	stat    fileStamp
	buf     []byte // the last index written, its room kept for the next
	// cacheTree is the tree the whole index makes, as git's cache-tree
	// said when git wrote it; zero when it did not (quire writes none).
	cacheTree plumbing.Hash
	// base is the shared index of a split index, as read or last written
	// (entries it holds unchanged are the same pointers as in entries),
	// and baseID its id; nil when the index on disk is whole.
	base   []*index.Entry
	baseID plumbing.Hash
	cfg    splitConfig
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
// written, without checking its checksum, as git reads it
// (decodeIndexFile).
func (x *gitIndex) load() error { return x.loadWith(false) }

// loadVerified reads the index again whatever its stat, its checksum and
// its shared index's checked: for quire check and quire janitor.
func (x *gitIndex) loadVerified() error {
	x.stat, x.base, x.baseID = fileStamp{}, nil, plumbing.ZeroHash
	return x.loadWith(true)
}

func (x *gitIndex) loadWith(verify bool) error {
	fi, err := os.Stat(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		x.entries, x.base, x.baseID = nil, nil, plumbing.ZeroHash
		x.cacheTree = plumbing.ZeroHash
		x.stat = fileStamp{}
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
	d, err := decodeIndexParts(data, verify, func(id plumbing.Hash) ([]*index.Entry, error) {
		return x.sharedEntries(id, verify)
	})
	if err != nil {
		return fmt.Errorf("vault: reading .git/index: %w", err)
	}
	for _, e := range d.entries {
		if e.Stage != 0 {
			return errors.New("vault: .git/index holds an unresolved merge; resolve it with git first")
		}
	}
	x.entries, x.base, x.baseID = d.entries, d.base, d.baseID
	x.cacheTree = d.root
	x.stat = stampOf(fi)
	return nil
}

// sharedEntries reads the shared index id, or answers the one held when it
// is the same: after a git command rewrote a split index, only its own
// small file is read again.
func (x *gitIndex) sharedEntries(id plumbing.Hash, verify bool) ([]*index.Entry, error) {
	if x.base != nil && id == x.baseID {
		return x.base, nil
	}
	data, err := os.ReadFile(x.sharedPath(id.String()))
	if err != nil {
		return nil, err
	}
	return decodeShared(id, data, verify)
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
// its stat alone, as git decides: same size, modification time to the
// nanosecond and inode, and modified before the index was written (an
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
	if fi.Mode()&0o111 != 0 != (e.Mode == filemode.Executable) {
		return false
	}
	st, ok := fsys.Stat(fi)
	return ok && e.Inode == uint32(st.Ino)
}

// set records name with its hash and the stat it was hashed from.
func (x *gitIndex) set(name string, h plumbing.Hash, fi fs.FileInfo) {
	e := &index.Entry{Name: name, Hash: h, Mode: filemode.Regular, ModifiedAt: fi.ModTime(), Size: uint32(fi.Size())}
	if fi.Mode()&0o111 != 0 {
		e.Mode = filemode.Executable
	}
	if st, ok := fsys.Stat(fi); ok {
		e.CreatedAt = st.Ctime
		e.Dev, e.Inode = uint32(st.Dev), uint32(st.Ino)
		e.UID, e.GID = st.UID, st.GID
	}
	x.cacheTree = plumbing.ZeroHash
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
		x.cacheTree = plumbing.ZeroHash
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
	x.cacheTree = plumbing.ZeroHash // quire writes no cache-tree
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

// encodeIndex appends the index file of entries to buf: version 2, as git
// writes it, or 3 when an entry carries an extended flag (skip-worktree,
// intent-to-add), as git does; no extensions; the checksum last.
func encodeIndex(buf []byte, entries []*index.Entry) []byte {
	return encodeIndexExt(buf, entries, 0, nil)
}

// encodeIndexExt is encodeIndex with the first nameless entries written
// without their names (a split index's replacements, which take the names
// of the shared entries they replace) and the extensions ext (each with
// its signature and size) before the checksum.
func encodeIndexExt(buf []byte, entries []*index.Entry, nameless int, ext []byte) []byte {
	version := uint32(2)
	size := 12 + len(ext) + 20
	for i, e := range entries {
		n := 62
		if e.SkipWorktree || e.IntentToAdd {
			version = 3
			n += 2
		}
		if i >= nameless {
			n += len(e.Name)
		}
		size += (n + 8) &^ 7
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	be := binary.BigEndian
	buf = append(buf, "DIRC"...)
	buf = be.AppendUint32(buf, version)
	buf = be.AppendUint32(buf, uint32(len(entries)))
	for i, e := range entries {
		start := len(buf)
		name := e.Name
		if i < nameless {
			name = ""
		}
		buf = appendIndexTime(buf, e.CreatedAt)
		buf = appendIndexTime(buf, e.ModifiedAt)
		buf = be.AppendUint32(buf, e.Dev)
		buf = be.AppendUint32(buf, e.Inode)
		buf = be.AppendUint32(buf, uint32(e.Mode))
		buf = be.AppendUint32(buf, e.UID)
		buf = be.AppendUint32(buf, e.GID)
		buf = be.AppendUint32(buf, e.Size)
		buf = append(buf, e.Hash[:]...)
		n := uint16(min(len(name), 0xfff))
		if e.SkipWorktree || e.IntentToAdd {
			var x uint16
			if e.IntentToAdd {
				x |= 1 << 13
			}
			if e.SkipWorktree {
				x |= 1 << 14
			}
			buf = be.AppendUint16(buf, n|0x4000)
			buf = be.AppendUint16(buf, x)
		} else {
			buf = be.AppendUint16(buf, n)
		}
		buf = append(buf, name...)
		// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
		for pad := 8 - (len(buf)-start)%8; pad > 0; pad-- {
			buf = append(buf, 0)
		}
	}
	buf = append(buf, ext...)
	sum := sha1.Sum(buf)
	return append(buf, sum[:]...)
}

// appendIndexTime is a stat time of an entry: seconds and nanoseconds, both
// zero for an entry whose stat is not known (git then hashes the file).
func appendIndexTime(buf []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(t.Unix()))
	return binary.BigEndian.AppendUint32(buf, uint32(t.Nanosecond()))
}

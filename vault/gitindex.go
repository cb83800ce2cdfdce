package vault

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
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
	path string
	// tab is the entries as read or last written, in place (index.Table):
	// the shared index when the index on disk is split (baseID), else
	// the whole index's file; over is what changed since, by name (an
	// entry of nil: the table's entry of that name is gone), onames its
	// names sorted, and n the count of entries in all. An entry of the
	// table is decoded when asked for; a boundary changes a few entries
	// of 600,000 at 100,000 runs (issue 28: decoded whole, the shared
	// index and its file were 160 MB of quire serve's 360).
	tab    *index.Table
	tabMap []byte // tab's file mapped (a shared index), nil when read
	over   map[string]change_
	onames []string
	// ochanges is over's changes in onames' order: what the walks of
	// the changes read, without a look-up of each name (1.4 ms of a
	// boundary at 100,000 runs, whose split index's own file held some
	// 15,000).
	ochanges []change_
	n        int
	// topNet is, for each folder at the root, the entries over adds
	// below it less those it deletes (countUnder): each index write's
	// cache tree counts them, and walking over's names for it was a
	// millisecond of a boundary at 100,000 runs, where a split index's
	// own file holds thousands.
	topNet map[string]int
	// splitRoom is the room of the last split (split).
	splitRoom index.Split
	// fsm holds the file system monitor's bit (FSMonitorValid) of each
	// entry of tab, by position (nil: none valid); over's entries carry
	// their own.
	fsm []bool
	// conflicted: the index holds a conflict's stages (a merge stopped);
	// the index is then git's alone, never written back.
	conflicted bool
	stat       fileStamp
	buf        []byte // the last index written: a split one's room is kept for the next
	bufTab     bool   // buf is tab's bytes (a whole index written), not to be written to
	// tabOwn: tab is the whole index quire last wrote, every entry as
	// index.EncodeSeq writes it (encode's patched may copy them).
	tabOwn bool
	// patchedWrites counts the writes encode made by patched (tests).
	patchedWrites int
	// tail is what follows buf in a split index written: its
	// extensions, the untracked cache's body copied from the index file
	// after tail[untrFrom-1] when untrFrom > 0, then the checksum.
	tail     [][]byte
	untrFrom int
	// copyBufs are writePieces' buffers for the untracked cache's body,
	// kept from one write to the next.
	copyBufs [2][]byte
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
	untrIn   *fileSection // the body is in the index file, not held (untr nil)
	untrDec  *index.Untracked
	untrOut  []byte
	untrGone bool // untrDec holds what untr does not
	// fsmn is the head of git's file system monitor extension as read
	// (nil: none); each entry's FSMonitorValid its bit, false for every
	// entry quire sets.
	fsmn []byte
	// baseID names the shared index tab is, when the index on disk is
	// split; zero when it is whole.
	baseID Hash
	cfg    splitConfig
	// version is the version of the index read (0: none on disk); v4 says
	// the one written is version 4 (encode).
	version uint32
	v4      bool
}

// change_ is an entry of gitIndex.over: the entry (nil: gone), and the
// position of the table's entry of its name, -1 when the table has none.
type change_ struct {
	e   *index.Entry
	pos int
}

// fileSection is where bytes lie in the index file of a stamp: a split
// index read or written keeps its untracked cache (14 MB at 100,000 runs)
// there, not in memory, and copies it into the next file written.
type fileSection struct {
	off, size int64
	st        fileStamp
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
	x.stat, x.baseID = fileStamp{}, ZeroHash
	x.rebase(nil, ZeroHash)
	return x.loadWith(true)
}

// rebase makes tab the index's entries, nothing changed since.
func (x *gitIndex) rebase(tab *index.Table, id Hash) {
	x.tab, x.baseID, x.tabMap, x.tabOwn = tab, id, nil, false
	x.over, x.onames, x.ochanges, x.n, x.fsm = map[string]change_{}, nil, nil, tab.Len(), nil
	clear(x.topNet)
}

// clear makes the index empty, as when there is none.
func (x *gitIndex) clear() {
	x.rebase(nil, ZeroHash)
	x.cacheTree = ZeroHash
	x.dropUntracked()
	x.fsmn = nil
	x.conflicted = false
}

// dropUntracked forgets git's untracked cache: git builds it again.
func (x *gitIndex) dropUntracked() {
	x.untr, x.untrIn, x.untrDec, x.untrGone, x.untrOut = nil, nil, nil, false, nil
}

// untrBody is the untracked cache's body: held, or read from the index
// file where it lies; nil when there is none, or when that file is no
// longer the one read (the cache is then dropped).
func (x *gitIndex) untrBody() []byte {
	if x.untr != nil || x.untrIn == nil {
		return x.untr
	}
	s := x.untrIn
	f, err := fsys.Open(x.path)
	if err == nil {
		defer f.Close()
		var fi fs.FileInfo
		if fi, err = f.Stat(); err == nil && stampOf(fi) == s.st {
			b := make([]byte, s.size)
			if _, err = f.ReadAt(b, s.off); err == nil {
				return b
			}
		}
	}
	x.dropUntracked()
	return nil
}

func (x *gitIndex) loadWith(verify bool) error {
	fi, err := os.Stat(x.path)
	if errors.Is(err, fs.ErrNotExist) {
		x.clear()
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
	data, err := fsys.ReadFile(x.path)
	if err != nil {
		return err
	}
	m, err := index.ReadMain(data, verify)
	if err != nil {
		return fmt.Errorf("vault: reading .git/index: %w", err)
	}
	var changes []index.Change
	if m.Whole != nil {
		if !x.resplit(m.Whole, verify) {
			x.rebase(m.Whole, ZeroHash)
		}
	} else {
		tab, mapped, err := x.sharedTable(m.SharedID, verify)
		if err != nil {
			return fmt.Errorf("vault: reading .git/index: the shared index %s of the split index: %w", m.SharedID, err)
		}
		if changes, err = index.ApplySplit(tab, m); err != nil {
			return fmt.Errorf("vault: reading .git/index: %w", err)
		}
		x.rebase(tab, m.SharedID)
		x.tabMap = mapped
		for _, c := range changes {
			x.put(c.Name, c.Entry, c.Pos)
		}
	}
	// A conflict's stages are kept as git wrote them: the vault refuses
	// every write while they are there (gitop.go) and never writes this
	// index back.
	x.conflicted = x.tab.Staged()
	for _, c := range changes {
		if c.Entry != nil && c.Entry.Stage != 0 {
			x.conflicted = true
		}
	}
	// The monitor's bitmap is over the whole index, a split one merged
	// (git's fill_fsmonitor_bitmap and tweak_fsmonitor).
	x.fsmn = nil
	if m.FSMonitor != nil {
		head, dirty := index.ReadFSMonitor(m.FSMonitor, x.n)
		x.fsmn = bytes.Clone(head) // not the file's bytes, which it would hold
		if head != nil {
			x.fsm = make([]bool, x.tab.Len())
			p := 0
			x.walk(func(e *index.Entry, pos int, own bool) bool {
				valid := p >= len(dirty) || !dirty[p]
				if own {
					e.FSMonitorValid = valid
				} else {
					x.fsm[pos] = valid
				}
				p++
				return true
			}, false)
		}
	}
	x.cacheTree = m.CacheTree
	x.dropUntracked()
	x.stat = stampOf(fi)
	switch {
	case m.Untracked == nil:
	case m.Whole != nil && x.baseID.IsZero():
		x.untr = m.Untracked // in the table's bytes, held anyway
	default:
		// Where it lies in the file (m.Untracked is a slice of data),
		// and data let go.
		x.untrIn = &fileSection{off: int64(cap(data) - cap(m.Untracked)), size: int64(len(m.Untracked)), st: x.stat}
	}
	x.version = m.Version
	return nil
}

// sharedTable reads the shared index id in place, or answers the one held
// when it is the same: after a git command rewrote a split index, only
// its own small file is read again.
//
// The file is mapped, not read into the heap, and its pages dropped from
// the process's resident memory once the table is made (fsys.Release):
// a boundary then touches a few pages of it (a search of the names, the
// entries it changes), not its 47 MB at 100,000 runs, and the collector
// neither counts nor scans it (issue 28). A shared index is never written
// to once named (git and quire write a new file and rename it), and a
// mapping outlives the file's removal. The mapping is released when the
// table is no longer used (runtime.AddCleanup), for an IndexMark may
// still read an old table. mapped is the mapping, nil when the file was
// read (Windows, or the table held).
func (x *gitIndex) sharedTable(id Hash, verify bool) (tab *index.Table, mapped []byte, err error) {
	if x.tab != nil && id == x.baseID {
		return x.tab, x.tabMap, nil
	}
	f, err := fsys.Open(x.sharedPath(id.String()))
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 || fi.Size() > 1<<32 {
		return nil, nil, fmt.Errorf("it holds %d bytes", fi.Size())
	}
	data, err := fsys.Map(f, int(fi.Size()))
	if err != nil {
		return nil, nil, err
	}
	if tab, err = index.ReadShared(id, data, verify); err != nil {
		fsys.Unmap(data)
		return nil, nil, err
	}
	fsys.Release(data)
	runtime.AddCleanup(tab, func(b []byte) { fsys.Unmap(b) }, data)
	return tab, data, nil
}

// sharedEntries reads the shared index id decoded whole (index.Decode's
// form).
func (x *gitIndex) sharedEntries(id Hash, verify bool) ([]*index.Entry, error) {
	data, err := fsys.ReadFile(x.sharedPath(id.String()))
	if err != nil {
		return nil, err
	}
	return index.DecodeShared(id, data, verify)
}

// sharedPath is the file of the shared index id, beside .git/index.
func (x *gitIndex) sharedPath(id string) string {
	return filepath.Join(filepath.Dir(x.path), "sharedindex."+id)
}

// put records e (nil: gone) under name in over; pos is the table's entry
// of that name, -1 when none.
func (x *gitIndex) put(name string, e *index.Entry, pos int) {
	if x.over == nil {
		x.over = map[string]change_{}
	}
	old, had := x.over[name]
	switch {
	case !had && pos < 0 && e != nil, had && old.e == nil && e != nil:
		x.n++
		x.countTop(name, 1)
	case !had && pos >= 0 && e == nil, had && old.e != nil && e == nil:
		x.n--
		x.countTop(name, -1)
	}
	i, _ := slices.BinarySearch(x.onames, name)
	if !had {
		x.onames = slices.Insert(x.onames, i, name)
		x.ochanges = slices.Insert(x.ochanges, i, change_{})
	}
	if e == nil && pos < 0 {
		// Added since the table and gone again: nothing to say.
		delete(x.over, name)
		x.onames = slices.Delete(x.onames, i, i+1)
		x.ochanges = slices.Delete(x.ochanges, i, i+1)
		return
	}
	x.over[name] = change_{e, pos}
	x.ochanges[i] = change_{e, pos}
}

// get answers the entry of name (a table's entry decoded anew).
func (x *gitIndex) get(name string) (*index.Entry, bool) {
	if c, ok := x.over[name]; ok {
		return c.e, c.e != nil
	}
	i, ok := x.tab.Search(name)
	if !ok {
		return nil, false
	}
	e := x.tab.Entry(i)
	if x.fsm != nil && x.fsm[i] {
		c := *e
		c.FSMonitorValid = true
		e = &c
	}
	return e, true
}

// has reports whether the index holds name.
func (x *gitIndex) has(name string) bool {
	if c, ok := x.over[name]; ok {
		return c.e != nil
	}
	_, ok := x.tab.Search(name)
	return ok
}

// len is the count of entries.
func (x *gitIndex) len() int { return x.n }

// walk calls fn with each entry in order (the whole index, a split one
// merged) until it answers false: the entry, and either its position in
// the table (own false: then the entry and its name are valid only
// during the call, not to be kept) or own true, an entry of over. With
// fields false a table's entry has only its name.
func (x *gitIndex) walk(fn func(e *index.Entry, pos int, own bool) bool, fields bool) {
	x.walkFrom("", fields, fn)
}

// walkFrom is walk from the first entry at or after the name start.
func (x *gitIndex) walkFrom(start string, fields bool, fn func(e *index.Entry, pos int, own bool) bool) {
	k, _ := slices.BinarySearch(x.onames, start)
	stop := false
	// flush yields over's added entries before name ("": all).
	flush := func(name string, all bool) bool {
		for ; k < len(x.onames) && (all || x.onames[k] < name); k++ {
			if c := x.ochanges[k]; c.pos < 0 && c.e != nil {
				if !fn(c.e, -1, true) {
					return false
				}
			}
		}
		return true
	}
	each := func(i int, e *index.Entry) bool {
		if !flush(e.Name, false) {
			stop = true
			return false
		}
		if k < len(x.onames) && x.onames[k] == e.Name {
			c := x.ochanges[k]
			k++
			if c.pos >= 0 {
				if c.e != nil && !fn(c.e, -1, true) {
					stop = true
					return false
				}
				return true
			}
		}
		if x.fsm != nil {
			e.FSMonitorValid = x.fsm[i]
		}
		if !fn(e, i, false) {
			stop = true
			return false
		}
		return true
	}
	if x.tab != nil {
		i := 0
		if start != "" {
			i, _ = x.tab.Search(start)
		}
		if fields {
			x.tab.Walk(i, each)
		} else {
			x.tab.WalkNames(i, each)
		}
	}
	if !stop {
		flush("", true)
	}
}

// each calls fn with each entry in order until it answers false; an
// entry and its name are valid only during the call.
func (x *gitIndex) each(fn func(e *index.Entry) bool) {
	x.walk(func(e *index.Entry, _ int, _ bool) bool { return fn(e) }, true)
}

// all is every entry, in order, each its own.
func (x *gitIndex) all() []*index.Entry {
	out := make([]*index.Entry, 0, x.n)
	x.walk(func(e *index.Entry, _ int, own bool) bool {
		if !own {
			c := *e
			c.Name = strings.Clone(e.Name)
			e = &c
		}
		out = append(out, e)
		return true
	}, true)
	return out
}

// clean reports whether the file at name is as the index recorded it, by
// its stat alone, as git decides: same size, modification and change
// times to the nanosecond and inode, and modified before the index was written (an
// entry as new as the index itself is "racy" and is read again).
func (x *gitIndex) clean(name string, fi fs.FileInfo) bool {
	e, ok := x.get(name)
	return ok && x.cleanEntry(e, fsys.StampOf(fi))
}

// cleanEntry is clean of the entry e, already looked up, by the stamp st
// (fsys.StampOf, or one a caller took): false where it holds no inode.
// The change time too, as git's core.trustctime: a write that puts the
// size and the modification time back (touch -r) cannot put it back.
func (x *gitIndex) cleanEntry(e *index.Entry, st fsys.Stamp) bool {
	mtime := time.Unix(0, st.MTime)
	return int64(e.Size) == st.Size && e.ModifiedAt.Equal(mtime) && mtime.Before(x.stat.mtime) &&
		st.Mode&0o111 != 0 == (e.Mode == object.Executable) &&
		st.Ino != 0 && e.Inode == uint32(st.Ino) &&
		(e.CreatedAt.IsZero() || e.CreatedAt.Equal(time.Unix(0, st.CTime)))
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
	x.setEntry(e)
}

// setEntry records e under its name.
func (x *gitIndex) setEntry(e *index.Entry) {
	x.cacheTree = ZeroHash
	if !x.has(e.Name) {
		x.forgetFolders(e.Name)
	}
	x.put(e.Name, e, x.posOf(e.Name))
}

// posOf is the position of the table's entry of name, -1 when none.
func (x *gitIndex) posOf(name string) int {
	if c, ok := x.over[name]; ok {
		return c.pos
	}
	if i, ok := x.tab.Search(name); ok {
		return i
	}
	return -1
}

func (x *gitIndex) remove(name string) {
	if x.has(name) {
		x.cacheTree = ZeroHash
		x.put(name, nil, x.posOf(name))
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
	if x.untr == nil && x.untrIn == nil {
		return
	}
	if x.untrDec == nil {
		b := x.untrBody()
		if b == nil {
			return
		}
		u, err := index.DecodeUntracked(b)
		if err != nil {
			x.dropUntracked() // git builds it again
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
	k, _ := slices.BinarySearch(x.onames, prefix)
	for ; k < len(x.onames) && strings.HasPrefix(x.onames[k], prefix); k++ {
		if x.ochanges[k].e != nil {
			return true
		}
	}
	found := false
	i, _ := x.tab.Search(prefix)
	x.tab.WalkNames(i, func(_ int, e *index.Entry) bool {
		if !strings.HasPrefix(e.Name, prefix) {
			return false
		}
		if c, ok := x.over[e.Name]; ok && c.e == nil {
			return true // gone
		}
		found = true
		return false
	})
	return found
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
//
// With fromFile, an untracked cache that lies in the index file is not
// read: its header is the last of ext, and untrFrom, len(ext), says that
// its body follows (writeLocked copies it); otherwise untrFrom is 0.
func (x *gitIndex) extensions(cfg splitConfig, fromFile bool) (ext [][]byte, untrFrom int) {
	if !x.cacheTree.IsZero() && x.treeDirs != nil && x.n > 0 {
		if dirs, err := x.treeDirs(x.cacheTree); err == nil {
			for i := range dirs {
				dirs[i].Count = x.countUnder(dirs[i].Name)
			}
			ext = append(ext, index.AppendExtension(nil, "TREE", index.AppendCacheTree(nil, x.cacheTree, x.n, dirs)))
		}
	}
	if cfg.noUntracked {
		x.dropUntracked()
	}
	if x.untrGone {
		x.untrOut = x.untrDec.Append(x.untrOut[:0])
		x.untr, x.untrIn, x.untrGone = x.untrOut, nil, false
		// untrDec's bytes are its own, never untrOut's: the next change
		// encodes from it again.
	}
	switch {
	case x.untrIn != nil && fromFile:
		ext = append(ext, index.ExtensionHeader(nil, "UNTR", int(x.untrIn.size)))
		untrFrom = len(ext)
	case x.untr != nil || x.untrIn != nil:
		if b := x.untrBody(); b != nil {
			ext = append(ext, index.ExtensionHeader(nil, "UNTR", len(b)), b)
		}
	}
	if x.fsmn != nil {
		// Each entry as the monitor last said, and every entry quire
		// set not valid: git stats those, and asks the monitor for the
		// rest since its token (which covers quire's writes too).
		ext = append(ext, index.AppendExtension(nil, "FSMN", index.AppendFSMonitorBits(nil, x.fsmn, x.dirtyBits())))
	}
	return ext, untrFrom
}

// validBits is each entry's FSMonitorValid, by position in the whole
// index.
func (x *gitIndex) validBits() []bool {
	valid := make([]bool, x.n)
	for i := range valid {
		valid[i] = true
	}
	for _, p := range x.dirtyBits() {
		valid[p] = false
	}
	return valid
}

// dirtyBits is the positions in the whole index (a split one merged) of
// the entries not FSMonitorValid: the table's by their bits, moved by the
// entries over adds and deletes before them, and over's own. It reads no
// name of the table but those over adds (to learn where they go): a walk
// of the names was 50 ms of every boundary at 100,000 runs where a
// monitor is set.
func (x *gitIndex) dirtyBits() []int {
	var dirty []int
	i, shift := 0, 0 // the table's next entry; its position in the whole index less i
	table := func(end int) {
		for ; i < end; i++ {
			if x.fsm == nil || !x.fsm[i] {
				dirty = append(dirty, i+shift)
			}
		}
	}
	for k, c := range x.ochanges {
		at := c.pos
		if at < 0 {
			at, _ = x.tab.Search(x.onames[k])
		}
		table(at)
		switch {
		case c.pos >= 0 && c.e == nil:
			i++
			shift--
		case c.pos >= 0:
			if !c.e.FSMonitorValid {
				dirty = append(dirty, i+shift)
			}
			i++
		default:
			if !c.e.FSMonitorValid {
				dirty = append(dirty, i+shift)
			}
			shift++
		}
	}
	table(x.tab.Len())
	return dirty
}

// countTop moves the net count of the root folder name lies in by d
// (topNet); a file at the root has none.
func (x *gitIndex) countTop(name string, d int) {
	top, _, below := strings.Cut(name, "/")
	if !below {
		return
	}
	if x.topNet == nil {
		x.topNet = map[string]int{}
	}
	if x.topNet[top] += d; x.topNet[top] == 0 {
		delete(x.topNet, top)
	}
}

// countUnder is the count of entries below the root folder dir: the
// table's and over's net (topNet).
func (x *gitIndex) countUnder(dir string) int {
	i, _ := x.tab.Search(dir + "/")
	j, _ := x.tab.Search(dir + "0") // '0' follows '/'
	return j - i + x.topNet[dir]
}

// under lists the names of the entries at or below the folder dir.
func (x *gitIndex) under(dir string) []string {
	prefix := dir + "/"
	var names []string
	k, _ := slices.BinarySearch(x.onames, prefix)
	i, _ := x.tab.Search(prefix)
	x.tab.WalkNames(i, func(_ int, e *index.Entry) bool {
		if !strings.HasPrefix(e.Name, prefix) {
			return false
		}
		for ; k < len(x.onames) && x.onames[k] < e.Name; k++ {
			if c := x.ochanges[k]; c.pos < 0 && c.e != nil {
				names = append(names, x.onames[k])
			}
		}
		if k < len(x.onames) && x.onames[k] == e.Name {
			k++
			if x.over[e.Name].e != nil {
				names = append(names, x.onames[k-1])
			}
			return true
		}
		names = append(names, strings.Clone(e.Name))
		return true
	})
	for ; k < len(x.onames) && strings.HasPrefix(x.onames[k], prefix); k++ {
		if c := x.ochanges[k]; c.pos < 0 && c.e != nil {
			names = append(names, x.onames[k])
		}
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
	// What encode's walks touched of the mapped shared index (the file
	// system monitor's bits are of every entry) leaves the resident set.
	fsys.Release(x.tabMap)
	if size := x.sizeToWrite(); size >= reserveFrom {
		fsys.Reserve(f, size)
	}
	crashpoint.Hit()
	untrAt, err := x.writePieces(f)
	x.tail = nil // what it held of the untracked cache is let go
	if err != nil {
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
	if untrAt >= 0 {
		// The untracked cache now lies in the file written; what was
		// held of it is let go.
		size := int64(len(x.untr))
		if x.untrIn != nil {
			size = x.untrIn.size
		}
		x.untr, x.untrOut = nil, nil
		x.untrIn = &fileSection{off: untrAt, size: size, st: x.stat}
	}
	return nil
}

// reserveFrom is the size of an index from which its file's blocks are
// reserved before it is written (fsys.Reserve). On the 2-core machine the
// rename of a split index's file of 700 KB took 1.0 ms, 0.36 ms reserved;
// of 64 KB, 0.45 and 0.3 ms. (A variable for the tests.)
var reserveFrom int64 = 64 << 10

// sizeToWrite is the size of the index writePieces will write (at most:
// an untracked cache no longer in its file is dropped).
func (x *gitIndex) sizeToWrite() int64 {
	if x.tail == nil {
		return int64(len(x.buf))
	}
	n := int64(len(x.buf)) + sha1.Size
	for _, p := range x.tail {
		n += int64(len(p))
	}
	if x.untrFrom > 0 && x.untrIn != nil {
		n += x.untrIn.size
	}
	return n
}

// writePieces writes the index encode made into f: buf whole (it ends in
// its checksum), or a split index's buf, its tail with the untracked
// cache's body copied from the index file it lies in, and the checksum
// of them all. It answers where the untracked cache's body lies in the
// file written, -1 when it holds none or the cache is held whole in a
// whole index. A body no longer where it was (another program replaced
// the file since it was read) is dropped with its header: git builds it
// again.
func (x *gitIndex) writePieces(f *os.File) (int64, error) {
	if x.tail == nil {
		_, err := f.Write(x.buf)
		return -1, err
	}
	var from *os.File
	if x.untrFrom > 0 {
		if g, err := fsys.Open(x.path); err == nil {
			defer g.Close()
			if fi, err := g.Stat(); err == nil && x.untrIn != nil && stampOf(fi) == x.untrIn.st {
				from = g
			}
		}
		if from == nil {
			x.dropUntracked()
		}
	}
	// The checksum is summed beside the writes (sideHash): with the
	// untracked cache, 14 MB at 100,000 runs, its SHA-1 took as long as
	// reading and writing it.
	h := newSideHash()
	defer h.sum() // ends its goroutine, whatever the writes met
	var n int64
	put := func(p []byte, back chan []byte) error {
		k, err := f.Write(p)
		n += int64(k)
		if err == nil {
			h.add(p, back)
		}
		return err
	}
	untrAt := int64(-1)
	if err := put(x.buf, nil); err != nil {
		return -1, err
	}
	for i, p := range x.tail {
		if i == x.untrFrom-1 && from == nil {
			continue // the header of a body dropped
		}
		if err := put(p, nil); err != nil {
			return -1, err
		}
		if i == x.untrFrom-1 {
			untrAt = n
			if err := x.copyUntracked(from, put); err != nil {
				return -1, err
			}
		} else if x.untr != nil && len(p) > 0 && len(x.untr) > 0 && &p[0] == &x.untr[0] {
			untrAt = n - int64(len(p))
		}
	}
	_, err := f.Write(h.sum())
	return untrAt, err
}

// copyUntracked puts the untracked cache's body, read from the index
// file from, in pieces of 1 MiB (the cache is 14 MB at 100,000 runs, and
// io.Copy's 32 KiB made 900 system calls of it), through two buffers: one
// is read and written while the other is hashed.
func (x *gitIndex) copyUntracked(from *os.File, put func([]byte, chan []byte) error) error {
	size := x.untrIn.size
	back := make(chan []byte, len(x.copyBufs))
	for i := range x.copyBufs {
		if x.copyBufs[i] == nil {
			x.copyBufs[i] = make([]byte, 1<<20)
		}
		back <- x.copyBufs[i]
	}
	r := io.NewSectionReader(from, x.untrIn.off, size)
	for got := int64(0); got < size; {
		buf := <-back
		k := min(int64(len(buf)), size-got)
		if _, err := io.ReadFull(r, buf[:k]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if err := put(buf[:k], back); err != nil {
			return err
		}
		got += k
	}
	return nil
}

// sideHash sums the SHA-1 of what is added to it on a goroutine of its
// own, in the order it is added: a piece is read there after add, so its
// bytes must stay as they are until sum, or, for one added with back,
// until it is sent back on back.
type sideHash struct {
	in  chan sidePiece
	out chan []byte
	got []byte
}

type sidePiece struct {
	p    []byte
	back chan []byte
}

func newSideHash() *sideHash {
	in, out := make(chan sidePiece, 16), make(chan []byte, 1)
	go func() {
		h := sha1.New()
		for pc := range in {
			h.Write(pc.p)
			if pc.back != nil {
				pc.back <- pc.p[:cap(pc.p)]
			}
		}
		out <- h.Sum(nil)
	}()
	return &sideHash{in: in, out: out}
}

func (s *sideHash) add(p []byte, back chan []byte) { s.in <- sidePiece{p, back} }

// sum answers the SHA-1 of what was added.
func (s *sideHash) sum() []byte {
	if s.in != nil {
		close(s.in)
		s.in = nil
		s.got = <-s.out
	}
	return s.got
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
	v.gitIdx.each(func(e *index.Entry) bool {
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
		return true
	})
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

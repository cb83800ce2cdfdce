package vault

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	gogit "github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/vault/git/object"
	"quire/vault/git/pack"
)

// objects reads and writes git objects. Writes are made by hand so that
// they cost little (a 5,000-entry tree is 175 KB; git's default level
// takes twice as long as zlib's best speed): inside a group of writes,
// the small ones wait in memory and go into one fresh pack when it ends
// (hold, flush), not compressed; the others are loose objects, at zlib's
// best speed or, from storedFrom, not compressed, renamed into place so
// that no reader sees half an object. Reads go through go-git's storage,
// which knows packs; trees are kept decoded in a cache keyed by hash, which
// cannot go stale since objects never change.
type objects struct {
	gitDir string

	mu    sync.Mutex
	store *filesystem.Storage
	trees map[Hash][]treeEntry // small bounded cache
	order []Hash
	held  int             // the entries of the trees cached
	dirs  map[string]bool // object fan-out folders known to exist
	// packs reads a commit's trees from mapped packs (go-git's storage
	// decodes a pack's whole index at its first read: 7 ms of a `quire
	// call` at 1,000 runs, growing with the vault); made at the first read.
	packs *pack.Reader
	// packReads counts the reads through packs since their pages were
	// last released, at packReleased (readPacked).
	packReads    int
	packReleased time.Time
	// packsPruned is when the packs whose index is gone were last let go
	// (anyFromPacks).
	packsPruned time.Time
	// kept holds the last versions of large trees as bytes (bigtree.go).
	kept  keptTrees
	known knownDeltas // the kept trees' deltas, for compaction
	// looseBytes counts the bytes of loose objects this process wrote
	// since the vault's count (.git/quire-loose) last took them: one
	// trigger of compaction (compact.go).
	looseBytes atomic.Int64
	// fresh holds the small objects of a group of commits, written as
	// one pack when the group ends (hold, flush; vault/git/pack's fresh
	// packs); nil when objects are written loose.
	fresh *freshObjects
	// freshMost is the most objects a fresh pack holds (pack.FreshMost;
	// 0 writes every object loose, for the tests of loose objects).
	freshMost int
	// late are the writes of loose objects under way (writeLate), in
	// turn and by id.
	late   []*lateLoose
	lateAt map[Hash]*lateLoose
}

// freshObjects are the objects a group's commits wrote so far, in order,
// and where each is among them by id.
type freshObjects struct {
	objs []pack.Object
	at   map[Hash]int
	// looseKept counts, by the last version's id, the versions of a
	// large kept tree the group wrote loose; chains are, by the last
	// version's id, those it holds as deltas of one whole version
	// (keptInGroup).
	looseKept map[Hash]int
	chains    map[Hash]*keptChain
}

// keptChain is a group's versions of a large kept tree in its fresh pack:
// base, held whole, and the ranges of its content that a version since
// has changed (entries' hashes), which the next delta of base names.
type keptChain struct {
	base   Hash
	ranges [][2]int
}

// hold makes the objects written from now on wait in memory, to be
// written as one pack by flush. The caller holds the write lock.
func (o *objects) hold() {
	o.mu.Lock()
	if o.fresh == nil {
		o.fresh = &freshObjects{at: map[Hash]int{}, looseKept: map[Hash]int{}, chains: map[Hash]*keptChain{}}
	}
	o.mu.Unlock()
}

// flush writes the objects held since hold as one pack, and writes the
// objects after it loose again. The caller holds the write lock.
func (o *objects) flush() error {
	o.mu.Lock()
	f := o.fresh
	o.fresh = nil
	o.mu.Unlock()
	var err error
	if f != nil && len(f.objs) > 0 {
		crashpoint.Hit()
		var name string
		if name, err = pack.WriteFresh(filepath.Join(o.gitDir, "objects"), f.objs); err == nil {
			noteFresh(o.gitDir, filepath.Base(name))
		}
	}
	// The loose objects written beside their commits, too.
	return errors.Join(err, o.settleLate())
}

// drop forgets the objects held, unwritten, once the loose objects under
// way are written. The caller holds the write lock.
func (o *objects) drop() {
	o.mu.Lock()
	o.fresh = nil
	o.mu.Unlock()
	o.settleLate()
}

// isHeld says whether an object is held for the group's pack, without
// making a held delta whole. The caller holds o.mu.
func (o *objects) isHeld(id Hash) bool {
	if o.fresh == nil {
		return false
	}
	_, ok := o.fresh.at[id]
	return ok
}

// heldFresh answers an object held for the group's pack (a delta made
// whole against its base). The caller holds o.mu.
func (o *objects) heldFresh(id Hash) (object.Type, []byte, bool) {
	if o.fresh == nil {
		return 0, nil, false
	}
	i, ok := o.fresh.at[id]
	if !ok {
		return 0, nil, false
	}
	h := o.fresh.objs[i]
	if h.Delta == nil {
		return h.Type, h.Data, true
	}
	_, base, ok := o.heldFresh(h.Base)
	if !ok {
		return 0, nil, false
	}
	data, err := pack.ApplyDelta(base, h.Delta)
	if err != nil {
		return 0, nil, false
	}
	return h.Type, data, true
}

// treeEntry is one entry of a tree (vault/git/object encodes trees).
type treeEntry = object.TreeEntry

func newObjects(gitDir string) *objects {
	o := &objects{gitDir: gitDir, trees: map[Hash][]treeEntry{}, dirs: map[string]bool{}, freshMost: pack.FreshMost, lateAt: map[Hash]*lateLoose{}}
	o.reopen()
	return o
}

func (o *objects) reopen() {
	o.store = filesystem.NewStorage(osfs.New(o.gitDir), cache.NewObjectLRU(16<<20))
}

var (
	tmpSeq   atomic.Int64
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	zlibPool = sync.Pool{New: func() any {
		zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
		return zw
	}}
)

// storedFrom is the size from which a loose object is written without
// compression (zlib's stored blocks, which git reads as any other): the
// large trees a boundary writes again whole, such as playbook-runs/ (1.6 MB
// at 20,000 runs), cost 2 ms so instead of 9 ms at git's loose level 1,
// and compaction, which packs them within minutes, compresses them and
// stores them as deltas.
const storedFrom = 256 << 10

// hashObject is git's object id of content of the given type ("blob",
// "tree", "commit").
func hashObject(typ string, content []byte) Hash {
	t, _ := object.ParseType(typ)
	return object.Sum(t, content)
}

// write stores content as a loose object of type typ.
func (o *objects) write(typ string, content []byte) (Hash, error) {
	t, _ := object.ParseType(typ)
	id := object.Sum(t, content)
	return id, o.writeAs(id, t, content)
}

// writeAs is write of an object whose id the caller took (a file's blob,
// hashed to compare with .git/index: a 130 MB log's SHA-1 is not taken
// twice).
func (o *objects) writeAs(id Hash, t object.Type, content []byte) error {
	if o.holdFresh(id, t, content) {
		return nil
	}
	if len(content) >= storedFrom {
		return o.writeStored(id, t, content)
	}
	buf := bufPool.Get().(*bytes.Buffer)
	defer bufPool.Put(buf)
	buf.Reset()
	zw := zlibPool.Get().(*zlib.Writer)
	defer zlibPool.Put(zw)
	zw.Reset(buf)
	object.WriteLoose(zw, t, content)
	if err := zw.Close(); err != nil {
		return err
	}
	return o.place(id, buf.Bytes())
}

// writeStored writes a large object loose in zlib's stored blocks (of
// keptBlock bytes, as a kept tree's), straight from content to the file:
// through zlib's writer into a buffer, vault/00-index.jsonl at 100,000
// runs (25 MB, written at each run's start) took 72 ms and four copies of
// it, the buffer growing by halves.
func (o *objects) writeStored(id Hash, t object.Type, content []byte) error {
	var hb [32]byte
	hdr := object.AppendHeader(hb[:0], t, len(content))
	n := len(hdr) + len(content)
	blocks := (n + keptBlock - 1) / keptBlock
	return o.placeWith(id, int64(2+5*blocks+n+4), func(w io.Writer) error {
		sum := adler32.New()
		sum.Write(hdr)
		sum.Write(content)
		bw := bufio.NewWriterSize(w, 1<<20)
		bw.Write([]byte{0x78, 0x01}) // deflate, 32 KiB window, the fastest level
		for b := 0; b < blocks; b++ {
			lo, hi := b*keptBlock, min((b+1)*keptBlock, n)
			bh := storedBlock(lo, n)
			bw.Write(bh[:])
			if lo < len(hdr) {
				bw.Write(hdr[lo:min(hi, len(hdr))])
			}
			bw.Write(content[max(lo, len(hdr))-len(hdr) : hi-len(hdr)])
		}
		bw.Write(sum.Sum(nil))
		return bw.Flush()
	})
}

// place writes the loose object id, whose file holds loose.
func (o *objects) place(id Hash, loose []byte) error {
	return o.placeWith(id, int64(len(loose)), func(w io.Writer) error {
		_, err := w.Write(loose)
		return err
	})
}

// placeWith writes the loose object id, whose file write writes (size
// bytes).
func (o *objects) placeWith(id Hash, size int64, write func(io.Writer) error) error {
	dir, file, err := o.fanOut(id)
	if err != nil {
		return err
	}
	// A temporary name of this process's own, created exclusively and
	// read-only as git's objects are, then renamed into place.
	tmp := tmpObjectIn(dir)
	crashpoint.Hit()
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		// The folder went away since: git (gc, prune-packed) removes the
		// fan-out folders it empties.
		if err = os.MkdirAll(dir, 0o755); err == nil {
			f, err = fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
		}
	}
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	crashpoint.Hit()
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return err
	}
	o.looseBytes.Add(size)
	return nil
}

// tmpObjectIn is a new name in dir for a loose object's temporary file,
// of this process's own (pack.TmpObjectPrefix, its pid, a number).
func tmpObjectIn(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("%s%d_%d", pack.TmpObjectPrefix, os.Getpid(), tmpSeq.Add(1)))
}

// fanOut answers the folder and the file of the loose object id, the
// folder made when this process has not seen it. No look first for an
// object already there: what a commit writes is new (unchanged files are
// skipped against .git/index), and writing an object again renames the
// same bytes over it.
func (o *objects) fanOut(id Hash) (dir, file string, err error) {
	hex := id.String()
	dir = filepath.Join(o.gitDir, "objects", hex[:2])
	o.mu.Lock()
	known := o.dirs[hex[:2]]
	o.mu.Unlock()
	if !known {
		crashpoint.Hit()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		o.mu.Lock()
		o.dirs[hex[:2]] = true
		o.mu.Unlock()
	}
	return dir, filepath.Join(dir, hex[2:]), nil
}

// A large kept tree's loose object (7.8 MB of playbook-runs/ at 100,000
// runs) is written beside the rest of its commit: the file is written
// from the moment its bytes are whole, while its SHA-1, which names it,
// is summed and the commit goes on; it is renamed into place once both
// are done. The group's flush waits for every such write before the
// branch names the commits (so no commit is answered, nor named by the
// branch, before its objects are there), a read of the object waits for
// its write (awaitLate), and the next version of the tree is made from
// its bytes only once they are written (keptTrees.take). Through the
// driver at 100,000 runs the write was some 4.7 ms of a boundary's
// 10-11 ms, and the SHA-1 2-3 ms.

// lateLoose is the write of one loose object under way.
type lateLoose struct {
	id    Hash
	named chan Hash // the id, once summed
	done  chan struct{}
	err   error // once done
}

// writeLate starts writing the loose object loose, whose id is not yet
// known: name names it. Only in a group, whose flush waits for it. The
// caller holds the write lock.
func (o *objects) writeLate(loose []byte) (w *lateLoose, name func(Hash)) {
	w = &lateLoose{named: make(chan Hash, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = o.placeLate(loose, w.named)
	}()
	return w, func(id Hash) {
		w.id = id
		o.mu.Lock()
		o.late = append(o.late, w)
		o.lateAt[id] = w
		o.mu.Unlock()
		w.named <- id
	}
}

// placeLate writes loose to a temporary file and renames it to the loose
// object named once it is.
func (o *objects) placeLate(loose []byte, named <-chan Hash) error {
	// In objects/, where the compaction removes the file a process that
	// died left (pack.TmpObjectPrefix): its folder is the id's.
	tmp := tmpObjectIn(filepath.Join(o.gitDir, "objects"))
	crashpoint.Hit()
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err == nil {
		_, err = f.Write(loose)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	id := <-named
	if err != nil {
		os.Remove(tmp)
		return err
	}
	dir, file, err := o.fanOut(id)
	if err == nil {
		crashpoint.Hit()
		err = os.Rename(tmp, file)
		if errors.Is(err, fs.ErrNotExist) {
			// The folder went away since (git gc, prune-packed).
			if err = os.MkdirAll(dir, 0o755); err == nil {
				err = os.Rename(tmp, file)
			}
		}
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	o.looseBytes.Add(int64(len(loose)))
	return nil
}

// awaitLate waits for the write of the loose object id, when one is
// under way (writeLate).
func (o *objects) awaitLate(id Hash) {
	o.mu.Lock()
	w := o.lateAt[id]
	o.mu.Unlock()
	if w != nil {
		<-w.done
	}
}

// settleLate waits for every write of a loose object under way, and
// answers what they met. A kept tree whose object was not written is
// dropped: no version is made from it. The caller holds the write lock.
func (o *objects) settleLate() error {
	o.mu.Lock()
	late := o.late
	o.late = nil
	o.mu.Unlock()
	var errs []error
	for _, w := range late {
		<-w.done
		if w.err != nil {
			errs = append(errs, w.err)
			o.kept.take(w.id)
		}
	}
	o.mu.Lock()
	for _, w := range late {
		if o.lateAt[w.id] == w {
			delete(o.lateAt, w.id)
		}
	}
	o.mu.Unlock()
	return errors.Join(errs...)
}

// readTree returns the entries of a tree, in git's order.
func (o *objects) readTree(id Hash) ([]treeEntry, error) {
	o.awaitLate(id)
	o.mu.Lock()
	if t, ok := o.trees[id]; ok {
		o.mu.Unlock()
		return t, nil
	}
	if typ, data, ok := o.heldFresh(id); ok && typ == object.Tree {
		o.mu.Unlock()
		entries, err := object.ParseTree(data)
		if err != nil {
			return nil, err
		}
		o.remember(id, entries)
		return entries, nil
	}
	if e, ok := o.fromPacks(id, object.Tree); ok {
		if entries, err := object.ParseTree(e); err == nil {
			o.mu.Unlock()
			o.remember(id, entries)
			return entries, nil
		}
	}
	o.mu.Unlock()
	var t *gogit.Tree
	err := o.retry(func(st *filesystem.Storage) (err error) {
		t, err = gogit.GetTree(st, plumbing.Hash(id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vault: reading tree %s: %w", id, err)
	}
	entries := make([]treeEntry, len(t.Entries))
	for i, e := range t.Entries {
		entries[i] = treeEntry{Name: e.Name, Mode: object.Mode(e.Mode), Hash: Hash(e.Hash)}
	}
	o.remember(id, entries)
	return entries, nil
}

// treeCacheEntries bounds the entries of the trees kept decoded: a
// boundary remembers the new version of each tree on its path, and at
// 100,000 runs a version of playbook-runs/ is 100,000 entries (4.8 MB of
// them, the names shared), which 64 versions made 300 MB.
const treeCacheEntries = 1 << 18

func (o *objects) remember(id Hash, entries []treeEntry) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.trees[id]; ok {
		return
	}
	o.trees[id] = entries
	o.order = append(o.order, id)
	o.held += len(entries)
	for len(o.order) > 64 || o.held > treeCacheEntries && len(o.order) > 1 {
		o.held -= len(o.trees[o.order[0]])
		delete(o.trees, o.order[0])
		o.order = o.order[1:]
	}
}

// writeTree stores the tree of entries, sorting them first in git's order
// (a folder sorts as "name/") when reshaped (entries added, removed, a
// mode changed). A large one is kept as bytes (bigtree.go), and its next
// versions are made from them (Vault.rebuildKept), not from entries.
func (o *objects) writeTree(entries []treeEntry, reshaped bool) (Hash, error) {
	if reshaped {
		object.SortTree(entries)
	}
	if object.TreeSize(entries) >= keptFrom {
		t := keepTree(entries)
		if err := o.writeKept(t); err != nil {
			return t.id, err
		}
		o.noteLooseKept(ZeroHash, t.id)
		o.kept.put(t)
		o.remember(t.id, entries)
		return t.id, nil
	}
	buf := object.AppendTree(make([]byte, 0, object.TreeSize(entries)), entries)
	id, err := o.write("tree", buf)
	if err != nil {
		return id, err
	}
	o.remember(id, entries)
	return id, nil
}

// patchKept writes the tree the kept tree old is with the hashes set
// gives its entries (ok false, nothing done, when old is not kept): as a
// delta in the group's fresh pack (keptInGroup), else loose, its delta
// known to compaction either way.
func (o *objects) patchKept(old Hash, set []hashAt) (id Hash, ok bool, err error) {
	t := o.kept.take(old)
	if t == nil {
		return ZeroHash, false, nil
	}
	if !o.keptInGroup(t, old, set) {
		var delta []byte
		if o.holdsLate(t) {
			first := t.setHashes(set)
			w, name := o.writeLate(t.loose)
			t.sum(first)
			delta = t.delta(set)
			name(t.id)
			t.late = w
		} else {
			delta = t.patch(set)
			if err := o.writeKept(t); err != nil {
				return t.id, true, err // t is dropped: its bytes are no tree written
			}
		}
		o.noteLooseKept(old, t.id)
		o.known.add(t.id, old, delta)
	}
	o.kept.put(t)
	return t.id, true, nil
}

// reshapeKept writes the tree the kept tree old is with edits made
// (keptTree.reshape; ok false, nothing done, when old is not kept), loose
// or in the group's fresh pack as any new large tree.
func (o *objects) reshapeKept(old Hash, edits []treeEdit) (id Hash, ok bool, err error) {
	t := o.kept.take(old)
	if t == nil {
		return ZeroHash, false, nil
	}
	if t = t.reshape(edits); len(t.ends) == 0 {
		return ZeroHash, true, nil // an empty folder is no tree
	}
	if err := o.writeKept(t); err != nil {
		return t.id, true, err
	}
	o.noteLooseKept(ZeroHash, t.id)
	o.kept.put(t)
	return t.id, true, nil
}

// findEntry is the entry name of the tree id: read in its kept bytes when
// it is a kept tree, else among its entries.
func (o *objects) findEntry(id Hash, name string) (treeEntry, bool, error) {
	if _, mode, h, found, kept := o.kept.entry(id, name); kept {
		return treeEntry{Name: name, Mode: mode, Hash: h}, found, nil
	}
	entries, err := o.readTree(id)
	if err != nil {
		return treeEntry{}, false, err
	}
	k, found := object.FindEntry(entries, name)
	if !found {
		return treeEntry{}, false, nil
	}
	return entries[k], true, nil
}

// writeKept stores a kept tree's version: in the group's fresh pack when
// it is small enough to be held (playbook-runs/ up to some 3,000 runs),
// else as the loose object kept with it. A loose file's creation, and its
// removal by the compaction, cost more than its bytes at 1,000 runs.
func (o *objects) writeKept(t *keptTree) error {
	if o.holdFresh(t.id, object.Tree, t.stream[t.hdr:]) {
		return nil
	}
	return o.place(t.id, t.loose)
}

// holdsLate says whether the kept tree t's next version is written loose
// beside the rest of its commit (writeLate): in a group, whose flush waits
// for it, and too large for its fresh pack.
func (o *objects) holdsLate(t *keptTree) bool {
	if len(t.stream)-t.hdr < storedFrom {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.fresh != nil
}

// keptFromGroup is the count of a large kept tree's versions a group
// writes loose before it holds the next ones as deltas in its fresh pack:
// the whole version the deltas need there costs a copy, its write and the
// pack's SHA-1 over it (some 9 ms at 100,000 runs), and each version so
// held saves a loose object's write and its removal (3.5 ms).
const keptFromGroup = 2

// keptInGroup makes t the tree t's version old is with the hashes set
// gives its entries, as a delta in the group's fresh pack, when a
// group holds objects, the tree is large, and the group wrote enough of
// its versions already: the version before is held whole first when the
// chain starts. Each delta is of that whole version, so a reader applies
// one. It answers false, having done nothing, otherwise. The caller holds
// the write lock.
func (o *objects) keptInGroup(t *keptTree, old Hash, set []hashAt) bool {
	if len(t.stream) < storedFrom {
		return false
	}
	o.mu.Lock()
	f := o.fresh
	if f == nil || len(f.objs)+2 > o.freshMost {
		o.mu.Unlock()
		return false
	}
	c := f.chains[old]
	if c == nil && f.looseKept[old] < keptFromGroup {
		o.mu.Unlock()
		return false
	}
	if c == nil {
		c = &keptChain{base: old}
		f.add(pack.Object{ID: old, Type: object.Tree, Data: bytes.Clone(t.stream[t.hdr:])})
	}
	delete(f.chains, old)
	delete(f.looseKept, old)
	o.mu.Unlock()
	prev := t.patch(set)
	c.ranges = t.hashRanges(c.ranges, set)
	o.mu.Lock()
	f.add(pack.Object{ID: t.id, Type: object.Tree, Base: c.base, Delta: pack.ReplaceDelta(t.stream[t.hdr:], c.ranges)})
	f.chains[t.id] = c
	o.mu.Unlock()
	o.known.add(t.id, old, prev)
	return true
}

// noteLooseKept counts a large kept tree's version written loose in the
// group under way, by its new id.
func (o *objects) noteLooseKept(old, id Hash) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f := o.fresh; f != nil {
		f.looseKept[id] = f.looseKept[old] + 1
		delete(f.looseKept, old)
	}
}

// holdFresh holds a copy of an object under storedFrom for the group's
// fresh pack, when a group holds objects and its pack has room.
func (o *objects) holdFresh(id Hash, t object.Type, content []byte) bool {
	if len(content) >= storedFrom {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	f := o.fresh
	if f == nil || len(f.objs) >= o.freshMost {
		return false
	}
	if _, dup := f.at[id]; !dup {
		f.add(pack.Object{ID: id, Type: t, Data: bytes.Clone(content)})
	}
	return true
}

// add holds obj for the pack, unless an object of its id is held already.
// The caller holds o.mu.
func (f *freshObjects) add(obj pack.Object) {
	if _, dup := f.at[obj.ID]; !dup {
		f.at[obj.ID] = len(f.objs)
		f.objs = append(f.objs, obj)
	}
}

// retry runs fn against the object storage, and once more against a fresh
// one when an object or a pack was not found: another process may have
// packed it, or rolled the pack it was in into a new one, since this one
// read the list of packs.
func (o *objects) retry(fn func(st *filesystem.Storage) error) error {
	o.mu.Lock()
	st := o.store
	o.mu.Unlock()
	err := fn(st)
	if !errors.Is(err, plumbing.ErrObjectNotFound) && !errors.Is(err, dotgit.ErrPackfileNotFound) && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	o.mu.Lock()
	o.reopen()
	st = o.store
	o.mu.Unlock()
	return fn(st)
}

// fromPacks reads an object of type typ through the mapped packs (and
// loose objects); not ok sends the caller to go-git's storage, which knows
// every form of repository. The caller holds o.mu.
func (o *objects) fromPacks(id Hash, typ object.Type) ([]byte, bool) {
	t, data, err := o.anyFromPacks(id)
	return data, err == nil && t == typ
}

// anyFromPacks is fromPacks of an object of any type, with its type, or
// what the packs met. The caller holds o.mu.
func (o *objects) anyFromPacks(id Hash) (object.Type, []byte, error) {
	if o.packs == nil {
		o.openPacks()
	} else if time.Since(o.packsPruned) >= packReleaseAfter {
		// A removed pack's mapping still reads (its objects are in the
		// packs that replaced it): letting it go frees the space, which
		// waits as the pages read wait. A stat of each pack at every
		// read was 4.7 s of quire check --full at 100,000 runs, whose
		// HEAD has 100,000 trees and ten packs.
		o.packs.Prune()
		o.packsPruned = time.Now()
	}
	t, data, err := o.packs.Object(id)
	o.readPacked()
	return t, data, err
}

// packReleaseEvery and packReleaseAfter say when the pages that reads
// through the mapped packs touched leave the process's resident memory:
// after 16 reads, once 100 ms have passed since the last release. Each
// read maps a cluster of cached pages around each page it touches (the
// kernel's fault-around, whole large folios: some 75 KB a touch here),
// and a lookup in a pack's index touches one or two places of it: at
// 100,000 runs, 64 reads held 13 MB of the 14 MB index and 15 MB of the
// pack, 16 a few MB of both (a boundary reads a few objects). A release
// is a walk of the mapping's page tables, some 70 µs over 141 MB, so the
// interval bounds its cost where reads come by the thousand (quire check
// asks for every blob of HEAD: 600,000 at 100,000 runs).
const packReleaseEvery = 16

var packReleaseAfter = 100 * time.Millisecond

// readPacked counts a read through the mapped packs and releases what the
// reads touched when it is due (pack.Reader.Release), so that a warm
// server holds a few MB of its packs, not every page it ever read. The
// caller holds o.mu.
func (o *objects) readPacked() {
	if o.packReads++; o.packReads >= packReleaseEvery && time.Since(o.packReleased) >= packReleaseAfter {
		o.packs.Release()
		o.packReads, o.packReleased = 0, time.Now()
	}
}

// openPacks makes the reader of the mapped packs. The caller holds o.mu.
func (o *objects) openPacks() {
	o.packs = pack.NewReader(filepath.Join(o.gitDir, "objects"))
	o.packs.SetLimit(8 << 20)
}

// readCommitTree returns the tree of a commit.
func (o *objects) readCommitTree(id Hash) (Hash, error) {
	o.mu.Lock()
	typ, data, ok := o.heldFresh(id)
	ok = ok && typ == object.Commit
	if !ok {
		data, ok = o.fromPacks(id, object.Commit)
	}
	o.mu.Unlock()
	if ok {
		if tree, _, err := object.ParseCommit(data); err == nil {
			return tree, nil
		}
	}
	var tree Hash
	err := o.retry(func(st *filesystem.Storage) error {
		c, err := gogit.GetCommit(st, plumbing.Hash(id))
		if err == nil {
			tree = Hash(c.TreeHash)
		}
		return err
	})
	return tree, err
}

// readBlob reads a blob's content: through the mapped packs first, as
// trees and commits are read (go-git's storage decodes a pack's whole
// index, 52 MB held at 100,000 runs, issue 28), then go-git's storage.
func (o *objects) readBlob(id Hash) ([]byte, error) {
	o.mu.Lock()
	typ, data, ok := o.heldFresh(id)
	ok = ok && typ == object.Blob
	var packsErr error
	if !ok {
		typ, data, packsErr = o.anyFromPacks(id)
		ok = packsErr == nil && typ == object.Blob
	}
	o.mu.Unlock()
	if ok {
		return bytes.Clone(data), nil // the reader may keep what it resolved
	}
	err := o.retry(func(st *filesystem.Storage) error {
		b, err := gogit.GetBlob(st, plumbing.Hash(id))
		if err != nil {
			return err
		}
		r, err := b.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(r)
		return err
	})
	if err != nil && packsErr != nil {
		// Both ways missed it: what the mapped packs met says more
		// (seen once in CI beside a compaction: "object not found").
		err = fmt.Errorf("blob %s: %w (the mapped packs: %v)", id, err, packsErr)
	}
	return data, err
}

// readRaw reads an object whole, with its type.
func (o *objects) readRaw(id Hash) ([]byte, object.Type, error) {
	o.awaitLate(id)
	o.mu.Lock()
	if typ, data, ok := o.heldFresh(id); ok {
		o.mu.Unlock()
		return bytes.Clone(data), typ, nil
	}
	// The mapped packs first, which look for new packs when they miss:
	// go-git's storage lists the packs once, so every fresh pack written
	// since was a miss there, and each miss decoded every pack's index
	// again (retry).
	typ, data, err := o.anyFromPacks(id)
	if err == nil {
		data = bytes.Clone(data) // the reader may keep what it resolved
	}
	o.mu.Unlock()
	if err == nil {
		return data, typ, nil
	}
	err = o.retry(func(st *filesystem.Storage) error {
		obj, err := st.EncodedObject(plumbing.AnyObject, plumbing.Hash(id))
		if err != nil {
			return err
		}
		typ = object.Type(obj.Type())
		r, err := obj.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(r)
		return err
	})
	return data, typ, err
}

// has reports whether the object exists, loose or packed: by the mapped
// packs' indexes first (a check of HEAD's tree asks for every blob of it,
// and go-git's storage looks for each as a loose file first, through a
// path it resolves part by part: 4.3 s of quire check --full at 100,000
// runs), then by go-git's storage, which knows every form of repository.
func (o *objects) has(id Hash) (bool, error) {
	o.awaitLate(id)
	o.mu.Lock()
	if o.isHeld(id) {
		o.mu.Unlock()
		return true, nil
	}
	if o.packs == nil {
		o.openPacks()
	}
	found := o.packs.Has(id)
	o.readPacked()
	o.mu.Unlock()
	if found {
		return true, nil
	}
	err := o.retry(func(st *filesystem.Storage) error { return st.HasEncodedObject(plumbing.Hash(id)) })
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	return err == nil, err
}

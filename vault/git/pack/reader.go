package pack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"quire/internal/fsys"
	"quire/vault/git/object"
)

// Reader reads objects for a walk over the whole history, faster than
// go-git's storage can: its packs and their indexes are mapped into memory,
// a delta is applied to its base straight from the map, and what it
// resolves is kept by offset (the next version of a large tree is a delta of
// this one) without hashing it again, as go-git's cache does. Packs of index
// version 2 and loose objects are read here; anything else (an alternate
// object store, an index of version 1) is ErrNotFound, and the caller reads
// it some other way (the vault: go-git).
type Reader struct {
	objDir string
	packs  []*pack
	cache  map[cacheKey]*resolved
	order  []cacheKey
	held   int // bytes in cache
	limit  int // the most the cache holds
	deltas int // the deltas applied
}

type cacheKey struct {
	p   *pack
	off int64
}

type resolved struct {
	typ  object.Type
	data []byte
}

type pack struct {
	name string // path without .idx/.pack
	data []byte
	idx  *Index
}

// CacheBytes is the most a Reader keeps of what it resolved, unless
// SetLimit says otherwise.
const CacheBytes = 128 << 20

// maxChain is the longest chain of deltas read (git's pack.depth is at
// most 4095): a chain of deltas by id that loops ends here.
const maxChain = 10000

// ErrNotFound: the object is in no pack the reader knows nor loose.
var ErrNotFound = errors.New("not in the packs or loose objects")

// NewReader reads the packs and loose objects of the object store objDir
// (a repository's .git/objects).
func NewReader(objDir string) *Reader {
	r := newReader(objDir)
	r.loadPacks()
	return r
}

// newReader is a reader of no pack yet.
func newReader(objDir string) *Reader {
	return &Reader{objDir: objDir, cache: map[cacheKey]*resolved{}, limit: CacheBytes}
}

// SetLimit sets the most the reader keeps of what it resolved.
func (r *Reader) SetLimit(n int) { r.limit = n }

// Deltas is the count of deltas the reader applied.
func (r *Reader) Deltas() int { return r.deltas }

// Packs is the count of packs the reader has mapped.
func (r *Reader) Packs() int { return len(r.packs) }

// loadPacks maps the packs not mapped yet. A pack listed that is gone when
// it is opened was replaced: a compaction, as git's repack, removes a pack
// only once the pack holding its objects is in place, so the packs are
// listed again, until a listing finds every pack it names or names what
// the last one did (an index left without its pack, which no listing
// mends). Found by CI: a blob just committed read as missing while a
// compaction placed its pack and removed the fresh one holding it between
// the listing and the open.
func (r *Reader) loadPacks() {
	var last []string
	for range 16 {
		listed, gone := r.loadListed()
		if !gone || slices.Equal(listed, last) {
			return
		}
		last = listed
	}
}

// loadListed maps the packs listed and not mapped yet: it answers the
// listing, and whether a pack it names was gone when opened.
func (r *Reader) loadListed() (idxs []string, gone bool) {
	have := map[string]bool{}
	for _, p := range r.packs {
		have[p.name] = true
	}
	idxs, _ = filepath.Glob(filepath.Join(r.objDir, "pack", "pack-*.idx"))
	sort.Strings(idxs)
	if afterListed != nil {
		afterListed()
	}
	for _, idx := range idxs {
		name := strings.TrimSuffix(idx, ".idx")
		if have[name] {
			continue
		}
		p, err := openPack(name)
		if err == nil {
			r.packs = append(r.packs, p)
		} else if errors.Is(err, os.ErrNotExist) {
			gone = true
		}
	}
	return idxs, gone
}

// afterListed, when set by a test, runs between the listing of the packs
// and their opening.
var afterListed func()

func mapFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, errors.New("empty")
	}
	return fsys.Map(f, int(fi.Size()))
}

// OpenIndex maps the index of version 2 of the pack name (its path without
// .idx). Unmap it with UnmapIndex.
func OpenIndex(name string) (*Index, error) {
	data, err := mapFile(name + ".idx")
	if err != nil {
		return nil, err
	}
	x, err := ParseIndex(data)
	if err != nil {
		fsys.Unmap(data)
		return nil, err
	}
	return x, nil
}

// UnmapIndex lets go of an index OpenIndex mapped.
func UnmapIndex(x *Index) { fsys.Unmap(x.data) }

func openPack(name string) (*pack, error) {
	idx, err := OpenIndex(name)
	if err != nil {
		return nil, err
	}
	p := &pack{name: name, idx: idx}
	if p.data, err = mapFile(name + ".pack"); err != nil {
		UnmapIndex(idx)
		return nil, err
	}
	return p, nil
}

// Prune unmaps the packs whose index is gone (a compaction or git's
// repack removed them): a long-lived reader would otherwise keep the
// removed files' space held by its mappings. Nothing read from them is
// lost: their objects are in the packs that replaced them.
func (r *Reader) Prune() {
	kept := r.packs[:0]
	for _, p := range r.packs {
		if _, err := os.Stat(p.name + ".idx"); err != nil {
			fsys.Unmap(p.data)
			UnmapIndex(p.idx)
			for k, o := range r.cache {
				if k.p == p {
					r.held -= len(o.data)
					delete(r.cache, k)
				}
			}
			continue
		}
		kept = append(kept, p)
	}
	for i := len(kept); i < len(r.packs); i++ {
		r.packs[i] = nil
	}
	r.packs = kept
}

// Release drops the pages the reader touched of its packs and their
// indexes from the process's resident memory (fsys.Release): they stay in
// the page cache, as a file read would leave them, and a later read maps
// them again. A long-lived reader scattered over a large pack otherwise
// holds a page cluster of it for each object it ever read (the kernel maps
// the cached pages around each fault): 100 MB of a 127 MB pack after 200
// boundaries at 100,000 runs (issue 28).
func (r *Reader) Release() {
	for _, p := range r.packs {
		fsys.Release(p.data)
		fsys.Release(p.idx.data)
	}
}

// Close unmaps the packs.
func (r *Reader) Close() {
	for _, p := range r.packs {
		fsys.Unmap(p.data)
		UnmapIndex(p.idx)
	}
	r.packs, r.cache, r.order = nil, nil, nil
}

// at reads the object at an offset of the pack: its type and content.
// depth is the count of deltas above it.
func (r *Reader) at(p *pack, off int64, depth int) (object.Type, []byte, error) {
	key := cacheKey{p, off}
	if o, ok := r.cache[key]; ok {
		return o.typ, o.data, nil
	}
	d := p.data
	if off < 12 || off >= int64(len(d))-20 {
		return 0, nil, fmt.Errorf("offset %d is outside pack %s", off, filepath.Base(p.name))
	}
	if depth > maxChain {
		return 0, nil, fmt.Errorf("a chain of more than %d deltas in pack %s", maxChain, filepath.Base(p.name))
	}
	end := int64(len(d)) - 20
	typ, size, back, n := ParseEntryHeader(d[off:end])
	if n == 0 {
		return 0, nil, fmt.Errorf("the entry at offset %d of pack %s has a malformed header", off, filepath.Base(p.name))
	}
	i := off + int64(n)
	var t object.Type
	var out []byte
	switch typ {
	case 1, 2, 3, 4:
		data, err := inflate(d[i:end], size)
		if err != nil {
			return 0, nil, err
		}
		t, out = object.Type(typ), data
	case OfsDelta, RefDelta:
		var base []byte
		var err error
		if typ == OfsDelta {
			if back <= 0 || back > off {
				return 0, nil, fmt.Errorf("the delta at offset %d of pack %s has its base outside it", off, filepath.Base(p.name))
			}
			t, base, err = r.at(p, off-back, depth+1)
		} else {
			if i+20 > end {
				return 0, nil, fmt.Errorf("the delta at offset %d of pack %s is cut short", off, filepath.Base(p.name))
			}
			var id object.Hash
			copy(id[:], d[i:i+20])
			i += 20
			t, base, err = r.object(id, depth+1)
		}
		if err != nil {
			return 0, nil, err
		}
		delta, err := inflate(d[i:end], size)
		if err != nil {
			return 0, nil, err
		}
		if out, err = ApplyDelta(base, delta); err != nil {
			return 0, nil, err
		}
		r.deltas++
	default:
		return 0, nil, fmt.Errorf("object of type %d at offset %d of pack %s", typ, off, filepath.Base(p.name))
	}
	r.keep(key, t, out)
	return t, out, nil
}

// keep remembers a resolved object, the oldest going first past the limit.
func (r *Reader) keep(key cacheKey, typ object.Type, data []byte) {
	if len(data) > r.limit/4 {
		return
	}
	r.cache[key] = &resolved{typ: typ, data: data}
	r.order = append(r.order, key)
	r.held += len(data)
	for r.held > r.limit && len(r.order) > 0 {
		k := r.order[0]
		r.order = r.order[1:]
		if o, ok := r.cache[k]; ok {
			r.held -= len(o.data)
			delete(r.cache, k)
		}
	}
}

// Object reads an object by id from the packs (looking again for new ones
// when it is in none), then the loose objects.
func (r *Reader) Object(id object.Hash) (object.Type, []byte, error) {
	return r.object(id, 0)
}

func (r *Reader) object(id object.Hash, depth int) (object.Type, []byte, error) {
	for again := 0; again < 2; again++ {
		for _, p := range r.packs {
			if off := p.idx.Find(id); off >= 0 {
				return r.at(p, off, depth)
			}
		}
		if t, data, err := r.loose(id); err == nil {
			return t, data, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return 0, nil, err
		}
		if again == 0 {
			r.loadPacks()
		}
	}
	return 0, nil, ErrNotFound
}

// Has says whether an object is in a pack the reader knows (looking again
// for new ones when it is in none) or loose, without reading it: an
// index's lookup, or a stat. Not found is not proof that the object is
// missing (an alternate object store, an index of version 1): the caller
// asks some other way.
func (r *Reader) Has(id object.Hash) bool {
	hex := id.String()
	for again := 0; again < 2; again++ {
		for _, p := range r.packs {
			if p.idx.Find(id) >= 0 {
				return true
			}
		}
		if _, err := os.Lstat(filepath.Join(r.objDir, hex[:2], hex[2:])); err == nil {
			return true
		}
		if again == 0 {
			r.loadPacks()
		}
	}
	return false
}

func (r *Reader) loose(id object.Hash) (object.Type, []byte, error) {
	hex := id.String()
	t, data, err := object.ReadLooseFile(filepath.Join(r.objDir, hex[:2], hex[2:]))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, nil, fmt.Errorf("loose object %s: %w", hex, err)
	}
	return t, data, err
}

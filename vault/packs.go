package vault

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"quire/internal/fsys"
	"quire/vault/git/object"
)

// packReader reads objects for a walk over the whole history, faster than
// go-git's storage can: its packs and their indexes are mapped into memory,
// a delta is applied to its base straight from the map, and what it
// resolves is kept by offset (the next version of a large tree is a delta of
// this one) without hashing it again, as go-git's cache does. Packs of index
// version 2 and loose objects are read here; anything else (an alternate
// object store, an index of version 1) falls back to go-git.
type packReader struct {
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
	typ  byte
	data []byte
}

type pack struct {
	name      string
	data, idx []byte
	n         int
}

const packCacheBytes = 128 << 20

func newPackReader(gitDir string) *packReader {
	r := &packReader{objDir: filepath.Join(gitDir, "objects"), cache: map[cacheKey]*resolved{}, limit: packCacheBytes}
	r.loadPacks()
	return r
}

// loadPacks maps the packs not mapped yet.
func (r *packReader) loadPacks() {
	have := map[string]bool{}
	for _, p := range r.packs {
		have[p.name] = true
	}
	idxs, _ := filepath.Glob(filepath.Join(r.objDir, "pack", "pack-*.idx"))
	sort.Strings(idxs)
	for _, idx := range idxs {
		name := strings.TrimSuffix(idx, ".idx")
		if have[name] {
			continue
		}
		p, err := openPack(name)
		if err == nil {
			r.packs = append(r.packs, p)
		}
	}
}

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

// openIndex maps a pack's index of version 2.
func openIndex(name string) (*pack, error) {
	idx, err := mapFile(name + ".idx")
	if err != nil {
		return nil, err
	}
	if len(idx) < 8+256*4 || !bytes.Equal(idx[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		fsys.Unmap(idx)
		return nil, errors.New("not a pack index of version 2")
	}
	n := int(binary.BigEndian.Uint32(idx[8+255*4:]))
	if len(idx) < 8+256*4+n*28 {
		fsys.Unmap(idx)
		return nil, errors.New("a pack index cut short")
	}
	return &pack{name: name, idx: idx, n: n}, nil
}

func openPack(name string) (*pack, error) {
	p, err := openIndex(name)
	if err != nil {
		return nil, err
	}
	if p.data, err = mapFile(name + ".pack"); err != nil {
		fsys.Unmap(p.idx)
		return nil, err
	}
	return p, nil
}

// prune unmaps the packs whose index is gone (a compaction or git's
// repack removed them): a long-lived reader would otherwise keep the
// removed files' space held by its mappings. Nothing read from them is
// lost: their objects are in the packs that replaced them.
func (r *packReader) prune() {
	kept := r.packs[:0]
	for _, p := range r.packs {
		if _, err := os.Stat(p.name + ".idx"); err != nil {
			fsys.Unmap(p.data)
			fsys.Unmap(p.idx)
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

func (r *packReader) close() {
	for _, p := range r.packs {
		fsys.Unmap(p.data)
		fsys.Unmap(p.idx)
	}
	r.packs, r.cache, r.order = nil, nil, nil
}

// find is the offset of an object in the pack, -1 when it has none.
func (p *pack) find(id Hash) int64 {
	fan := p.idx[8:]
	lo := 0
	if id[0] > 0 {
		lo = int(binary.BigEndian.Uint32(fan[(int(id[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(fan[int(id[0])*4:]))
	names := p.idx[8+256*4:]
	i := lo + sort.Search(hi-lo, func(k int) bool { return bytes.Compare(names[(lo+k)*20:(lo+k)*20+20], id[:]) >= 0 })
	if i >= hi || !bytes.Equal(names[i*20:i*20+20], id[:]) {
		return -1
	}
	return p.offset(i)
}

// id is the id of the ith object of the index.
func (p *pack) id(i int) Hash {
	var id Hash
	copy(id[:], p.idx[8+256*4+i*20:])
	return id
}

// offset is where the ith object of the index starts in the pack.
func (p *pack) offset(i int) int64 {
	offs := p.idx[8+256*4+p.n*24:]
	off := binary.BigEndian.Uint32(offs[i*4:])
	if off&(1<<31) == 0 {
		return int64(off)
	}
	large := p.idx[8+256*4+p.n*28:]
	k := int(off &^ (1 << 31))
	return int64(binary.BigEndian.Uint64(large[k*8:]))
}

var zlibReaders sync.Pool

func inflate(src []byte, size int) ([]byte, error) {
	br := bytes.NewReader(src)
	var zr io.ReadCloser
	if z, ok := zlibReaders.Get().(io.ReadCloser); ok {
		if err := z.(zlib.Resetter).Reset(br, nil); err != nil {
			return nil, err
		}
		zr = z
	} else {
		var err error
		if zr, err = zlib.NewReader(br); err != nil {
			return nil, err
		}
	}
	defer zlibReaders.Put(zr)
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, err
	}
	return out, nil
}

// at reads the object at an offset of the pack: its type (1 commit, 2
// tree, 3 blob, 4 tag) and content.
func (r *packReader) at(p *pack, off int64) (byte, []byte, error) {
	key := cacheKey{p, off}
	if o, ok := r.cache[key]; ok {
		return o.typ, o.data, nil
	}
	d := p.data
	if off < 12 || off >= int64(len(d))-20 {
		return 0, nil, fmt.Errorf("vault: offset %d is outside pack %s", off, filepath.Base(p.name))
	}
	i := off
	c := d[i]
	i++
	typ := (c >> 4) & 7
	size := int(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		c = d[i]
		i++
		size |= int(c&0x7f) << shift
	}
	var out []byte
	switch typ {
	case 1, 2, 3, 4:
		data, err := inflate(d[i:], size)
		if err != nil {
			return 0, nil, err
		}
		out = data
	case 6, 7:
		var bt byte
		var base []byte
		var err error
		if typ == 6 {
			c = d[i]
			i++
			rel := int64(c & 127)
			for c&128 != 0 {
				c = d[i]
				i++
				rel = (rel+1)<<7 | int64(c&127)
			}
			bt, base, err = r.at(p, off-rel)
		} else {
			var id Hash
			copy(id[:], d[i:i+20])
			i += 20
			bt, base, err = r.object(id)
		}
		if err != nil {
			return 0, nil, err
		}
		delta, err := inflate(d[i:], size)
		if err != nil {
			return 0, nil, err
		}
		if out, err = applyDelta(base, delta); err != nil {
			return 0, nil, err
		}
		r.deltas++
		typ = bt
	default:
		return 0, nil, fmt.Errorf("vault: object of type %d at offset %d of pack %s", typ, off, filepath.Base(p.name))
	}
	r.keep(key, typ, out)
	return typ, out, nil
}

// keep remembers a resolved object, the oldest going first past the limit.
func (r *packReader) keep(key cacheKey, typ byte, data []byte) {
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

func applyDelta(base, delta []byte) ([]byte, error) {
	bad := errors.New("vault: a malformed delta")
	varint := func() (int, bool) {
		v, n := binary.Uvarint(delta)
		if n <= 0 {
			return 0, false
		}
		delta = delta[n:]
		return int(v), true
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != len(base) {
		return nil, bad
	}
	out := make([]byte, 0, dstSize)
	for len(delta) > 0 {
		cmd := delta[0]
		delta = delta[1:]
		switch {
		case cmd&0x80 != 0:
			var off, n int
			for k := 0; k < 4; k++ {
				if cmd&(1<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					off |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			for k := 0; k < 3; k++ {
				if cmd&(0x10<<k) != 0 {
					if len(delta) == 0 {
						return nil, bad
					}
					n |= int(delta[0]) << (8 * k)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > len(base) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, base[off:off+n]...)
		case cmd != 0:
			n := int(cmd)
			if n > len(delta) || len(out)+n > dstSize {
				return nil, bad
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, bad
		}
	}
	if len(out) != dstSize {
		return nil, bad
	}
	return out, nil
}

var errNotHere = errors.New("vault: not in the packs or loose objects")

// object reads an object by id from the packs (looking again for new ones
// when it is in none), then the loose objects.
func (r *packReader) object(id Hash) (byte, []byte, error) {
	for again := 0; again < 2; again++ {
		for _, p := range r.packs {
			if off := p.find(id); off >= 0 {
				return r.at(p, off)
			}
		}
		if t, data, err := r.loose(id); err == nil {
			return t, data, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return 0, nil, err
		}
		r.loadPacks()
	}
	return 0, nil, errNotHere
}

func (r *packReader) loose(id Hash) (byte, []byte, error) {
	hex := id.String()
	t, data, err := object.ReadLooseFile(filepath.Join(r.objDir, hex[:2], hex[2:]))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, nil, fmt.Errorf("vault: loose object %s: %w", hex, err)
	}
	return byte(t), data, err
}

package pack

import (
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"quire/vault/git/object"
)

// Fresh packs. A commit's new objects written one loose file each cost a
// file's creation (and its removal by the compaction that packs it), some
// 120 µs of CPU each on the 2-core machine beside 15 µs for a write of
// the same bytes to one file: seven a boundary at 1,000 runs, a sixth of
// its CPU. The vault writes the small objects of a group of commits
// (vault/group.go) as one pack instead, the way git's own
// fetch.unpackLimit keeps a large fetch as a pack: WriteFresh, each
// object whole in zlib's stored blocks. A fresh pack lives until the next
// compaction, which compresses its objects: compressing them here too,
// at zlib's best speed, was a tenth of a boundary's CPU under the lock
// with 16 clients at 1,000 runs.
//
// The compaction takes a fresh pack's objects as it takes loose objects
// (each read whole and deltified against its window, or written as the
// delta its writer made, Known) and removes the pack once the new one is
// in place. Which packs are fresh is the caller's to say (Compact's
// fresh: the vault lists the ones it wrote); copied byte for byte as
// other packs are, a run log's every version would stay whole in the
// vault, where its compaction keeps it as its appended lines.

// FreshMost is the most objects a fresh pack holds: a group of 32
// commits writes some 200.
const FreshMost = 1024

// Object is an object for a fresh pack: its id, type and content, or,
// with Delta, a delta against Base, an object before it in the same pack
// (git resolves a pack's delta only against its own objects). A group's
// versions of a large tree go in as deltas of one whole version.
type Object struct {
	ID    object.Hash
	Type  object.Type
	Data  []byte
	Base  object.Hash
	Delta []byte
}

// WriteFresh writes objs as a pack of whole objects in objDir's pack
// folder (its index after it, as git renames them) and answers its path
// without extension. It is not synced: what a commit's objects promise
// is what loose objects promised (the event lines and state files are
// the durable truth, and a commit lost with the machine is made again
// from them).
func WriteFresh(objDir string, objs []Object) (string, error) {
	if len(objs) == 0 || len(objs) > FreshMost {
		return "", fmt.Errorf("pack: a fresh pack of %d objects (1 to %d)", len(objs), FreshMost)
	}
	w, err := newPackWriter(filepath.Join(objDir, "pack"), len(objs))
	if err != nil {
		return "", err
	}
	defer w.abandon()
	w.noSync = true
	w.store = storePool.Get().(*zlib.Writer)
	at := make(map[object.Hash]int64, len(objs))
	for _, o := range objs {
		off := w.off
		var err error
		if o.Delta != nil {
			base, ok := at[o.Base]
			if !ok {
				return "", fmt.Errorf("pack: the delta %s of a fresh pack before its base %s", o.ID, o.Base)
			}
			err = w.object(o.ID, OfsDelta, int64(len(o.Delta)), off-base, o.Delta)
		} else {
			err = w.object(o.ID, byte(o.Type), int64(len(o.Data)), 0, o.Data)
		}
		if err != nil {
			return "", err
		}
		at[o.ID] = off
	}
	return w.finish(context.Background())
}

// freshHeld is the most content of fresh packs' objects one compaction
// holds at once; the fresh packs past it wait for the next.
const freshHeld = 64 << 20

// takeFresh splits the packs into the fresh ones (those fresh says are,
// of FreshMost objects or fewer) and the others, and reads the fresh
// ones' objects as loose objects to pack: whole, in each pack's order,
// none twice, none of those already listed in loose. A fresh pack it
// cannot read is left among the others.
func takeFresh(objDir string, all []*oldPack, loose []looseObject, fresh func(name string) bool) (taken, others []*oldPack, objs []looseObject) {
	listed := make(map[object.Hash]bool, len(loose))
	for _, o := range loose {
		listed[o.id] = true
	}
	// A reader of the fresh packs alone (their objects are whole):
	// mapping every pack of the vault for them cost more than reading
	// them.
	r := newReader(objDir)
	defer r.Close()
	held := 0
	for _, p := range all {
		if fresh == nil || p.count > FreshMost || held > freshHeld || !fresh(filepath.Base(p.name)) {
			others = append(others, p)
			continue
		}
		fp, err := openPack(p.name)
		if err != nil {
			others = append(others, p)
			continue
		}
		r.packs = append(r.packs, fp)
		took, ok := readFresh(r, fp, listed)
		if !ok {
			others = append(others, p)
			continue
		}
		for _, o := range took {
			listed[o.id] = true
			held += len(o.data)
		}
		objs = append(objs, took...)
		taken = append(taken, p)
	}
	return taken, others, objs
}

// readFresh reads the objects of a fresh pack r holds, in the order they
// lie in it. A delta is not resolved (a version of a 7.8 MB tree each, at
// 100,000 runs): its type is its base's and its size the one it makes,
// and packLoose writes the delta its writer made (Known) or reads it
// whole then, one at a time.
func readFresh(r *Reader, p *pack, listed map[object.Hash]bool) ([]looseObject, bool) {
	fi, err := os.Stat(p.name + ".pack")
	if err != nil {
		return nil, false
	}
	order := make([]int, p.idx.Len())
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return p.idx.Offset(order[a]) < p.idx.Offset(order[b]) })
	at := fi.ModTime().UnixNano()
	var out []looseObject
	for k, i := range order {
		id := p.idx.ID(i)
		if listed[id] {
			continue
		}
		if typ, size, ok := deltaTarget(p, p.idx.Offset(i)); ok {
			out = append(out, looseObject{id: id, typ: typ, size: size, at: at + int64(k), inPack: true})
			continue
		}
		typ, data, err := r.at(p, p.idx.Offset(i), 0)
		if err != nil {
			return nil, false
		}
		out = append(out, looseObject{id: id, typ: typ, size: int64(len(data)), data: data, at: at + int64(k)})
	}
	return out, true
}

// deltaTarget answers, for an entry of p at off that is a delta against an
// object of p before it, the type of the object it makes (its base's,
// followed back to a whole object) and its size (the delta's second
// varint); ok false for any other entry.
func deltaTarget(p *pack, off int64) (object.Type, int64, bool) {
	d := p.data
	end := int64(len(d)) - 20
	if off < 12 || off >= end {
		return 0, 0, false
	}
	typ, size, back, n := ParseEntryHeader(d[off:end])
	if n == 0 || typ != OfsDelta || back <= 0 || back > off-12 {
		return 0, 0, false
	}
	delta, err := inflate(d[off+int64(n):end], size)
	if err != nil {
		return 0, 0, false
	}
	_, k := binary.Uvarint(delta)
	if k <= 0 {
		return 0, 0, false
	}
	target, m := binary.Uvarint(delta[k:])
	if m <= 0 {
		return 0, 0, false
	}
	for base, depth := off-back, 0; depth < maxChain; depth++ {
		bt, _, bback, bn := ParseEntryHeader(d[base:end])
		switch {
		case bn == 0:
			return 0, 0, false
		case bt >= 1 && bt <= 4:
			return object.Type(bt), int64(target), true
		case bt == OfsDelta && bback > 0 && bback <= base-12:
			base -= bback
		default:
			return 0, 0, false
		}
	}
	return 0, 0, false
}

package pack

import (
	"compress/zlib"
	"context"
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

// Object is an object for a fresh pack: its id, type and content.
type Object struct {
	ID   object.Hash
	Type object.Type
	Data []byte
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
	for _, o := range objs {
		if err := w.object(o.ID, byte(o.Type), int64(len(o.Data)), 0, o.Data); err != nil {
			return "", err
		}
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
// lie in it.
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
		typ, data, err := r.at(p, p.idx.Offset(i), 0)
		if err != nil {
			return nil, false
		}
		out = append(out, looseObject{id: id, typ: typ, size: int64(len(data)), data: data, at: at + int64(k)})
	}
	return out, true
}

package pack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"quire/vault/git/object"
)

// Compaction packs the loose objects, which a commit writes whole (about
// 140 KB of trees at 5,000 runs in one folder), with deltas: a boundary
// then costs a few KB, and the loose copies are removed. When to compact
// is the caller's (the vault: when git's gc --auto would); what and how is
// here.
//
// What. The packs are kept in a geometric progression, as git repack
// --geometric=2 does: sorted by their count of objects, each holds at least
// twice as many as the one before. A compaction writes one new pack of the
// loose objects and of the smallest packs that would break the progression
// (git's own split: first the packs that are not in progression, then as
// many more as the new pack needs to stay at most half the next one), and
// removes those packs. So n objects are in at most log2(n)+1 packs, and
// each object is copied into a new pack about log2(n) times in its life.
// Packs with a .keep file are never touched.
//
// Memory. A compaction streams: the objects it copies from old packs go
// byte for byte (their deltas kept, the offset of a delta's base rewritten,
// each checked against its CRC in the old index) through a small buffer,
// and each loose object is read, deltified against the last
// windowCount objects before it (same type, sorted by size as git and
// go-git do, at most windowBytes of their content held) and written
// at once. What it holds is that window, the object in hand and its delta,
// and at most about 150 bytes for each object of the new pack (its id,
// offsets and CRC for the index; 300 for a loose one, with its path): some
// 15 MB at 100,000 objects (30,000 events), whatever the objects' sizes.
//
// Safety. Packing runs in the background, without the write lock. It packs
// only the loose objects and packs it listed and removes only those, once
// the new pack and its index are renamed into place (pack first, then
// index, as git does), so objects written meanwhile are untouched and every
// object stays readable throughout. The pack is written under a temporary
// name (objects/pack/tmp_pack_<pid>_<n>, its index tmp_idx_<pid>_<n>) and
// removed when the compaction stops on an error or its context ends; the
// temporary files of a process that died are removed by the next
// compaction. The context is the
// caller's (the vault's SetCompactContext: quire serve gives its signal's,
// so SIGTERM abandons a compaction between two objects).
const (
	geometricFactor = 2
	windowCount     = 10
	windowBytes     = 32 << 20
	maxDepth        = 50
)

// looseObject is a loose object listed for packing.
type looseObject struct {
	id   object.Hash
	typ  object.Type
	size int64
	file string
	at   int64 // when it was written (its file's mtime, ns): versions of one tree in turn
	// data is the content of an object of a fresh pack (fresh.go), read
	// when listed; it has no file.
	data []byte
	// inPack: an object of a fresh pack that lies in it as a delta, not
	// read when listed (readFresh); it has no file and no data.
	inPack bool
}

// oldPack is a pack rolled up into the new one. Its index is mapped; its
// data is read through the file, not mapped, so that copying it does not
// grow the process.
type oldPack struct {
	name  string // path without .idx/.pack
	count int
	idx   *Index
	f     *os.File
	end   int64    // where its objects end (before the checksum)
	ents  []oldEnt // by offset
}

type oldEnt struct {
	off, newOff int64
	i           int32 // position in the index
	depth       int32 // of its delta chain in the new pack, once copied
}

// Compact packs the loose objects of the object store objDir (a
// repository's .git/objects), with the packs the geometric progression
// needs rolled up (see above), and removes what it packed. It answers
// whether it wrote a pack. It stops, leaving everything as it was, when ctx
// ends. read reads an object wherever it is, in a form this package does
// not read (a delta by id, whose base may be in another pack) or moved
// since it was listed (the vault: through go-git's storage). The packs
// fresh says are fresh (by their file's name without extension, nil:
// none) have their objects packed as loose ones are, and are removed
// (fresh.go).
//
// A git gc may pack and remove the same objects and packs meanwhile (a
// git commit starts one in the background now and then): a loose object
// gone since it was listed is read from wherever it went, and a pack gone
// before it was opened starts the compaction over, a few times.
//
// known, when not nil, answers for a loose object its writer made as a
// delta of another (a large tree's next version: vault/bigtree.go): that
// base's id and the delta. When the base goes into the new pack before it,
// the object is written as that delta, not read (nor its id checked: its
// writer took it from the same bytes).
func Compact(ctx context.Context, objDir string, read func(object.Hash) ([]byte, object.Type, error), known Known, fresh func(name string) bool) (bool, error) {
	for tries := 1; ; tries++ {
		packed, err := compactOnce(ctx, objDir, read, known, fresh)
		if tries == 3 || !errors.Is(err, ErrPackGone) {
			return packed, err
		}
	}
}

// Known answers, for an object, the base and delta its writer made it of.
type Known func(id object.Hash) (base object.Hash, delta []byte, ok bool)

// ErrPackGone: a pack listed for rolling up was gone when opened.
var ErrPackGone = errors.New("a pack was removed while the compaction began")

func compactOnce(ctx context.Context, objDir string, read func(object.Hash) ([]byte, object.Type, error), known Known, fresh func(name string) bool) (bool, error) {
	packDir := filepath.Join(objDir, "pack")
	removeDeadTemps(packDir, tmpPackPrefix)
	removeDeadTemps(packDir, tmpIdxPrefix)
	removeDeadTemps(objDir, TmpObjectPrefix)
	loose, err := listLoose(objDir)
	if err != nil {
		return false, err
	}
	all, err := listPacks(packDir)
	if err != nil {
		return false, err
	}
	freshPacks, all, freshObjs := takeFresh(objDir, all, loose, fresh)
	loose = append(loose, freshObjs...)
	roll := rollUp(all, len(loose))
	deltas := knownOf(loose, known)
	roll = rollBases(deltas, loose, all, roll)
	if len(loose) == 0 && len(roll) < 2 && len(freshPacks) == 0 {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	defer func() {
		for _, p := range roll {
			p.close()
		}
	}()
	for _, p := range roll {
		if err := p.open(); errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("%w: %w", ErrPackGone, err)
		} else if err != nil {
			return false, err
		}
	}
	// An object in two rolled-up packs, or loose and in one, goes in once.
	count := 0
	in := func(id object.Hash, before int) bool {
		for _, q := range roll[:before] {
			if q.idx.Find(id) >= 0 {
				return true
			}
		}
		return false
	}
	dups := make([][]bool, len(roll))
	for k, p := range roll {
		dups[k] = make([]bool, p.count)
		for i := 0; i < p.count; i++ {
			if dups[k][i] = in(p.idx.ID(i), k); !dups[k][i] {
				count++
			}
		}
	}
	var toPack []looseObject
	for _, o := range loose {
		if !in(o.id, len(roll)) {
			toPack = append(toPack, o)
		}
	}
	count += len(toPack)
	if err := ctx.Err(); err != nil {
		return false, err
	}

	w, err := newPackWriter(packDir, count)
	if err != nil {
		return false, err
	}
	defer w.abandon()
	for k, p := range roll {
		if err := w.copyPack(ctx, read, roll[:k], p, dups[k]); err != nil {
			return false, err
		}
	}
	if err := w.packLoose(ctx, toPack, read, deltas, roll); err != nil {
		return false, err
	}
	name, err := w.finish(ctx)
	if err != nil {
		return false, err
	}
	// The pack and its index are in place: every listed object is readable
	// from it, so the loose copies and the old packs can go.
	for _, o := range loose {
		if o.file != "" {
			os.Remove(o.file)
		}
	}
	for _, p := range append(roll, freshPacks...) {
		if p.name == name {
			continue // the same objects in the same order: the same pack
		}
		p.close()
		for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap"} {
			os.Remove(p.name + ext)
		}
	}
	syncDir(packDir)
	return true, nil
}

// rollUp picks the packs that go into the new pack with the loose objects
// (loose of them): git's geometric split with factor 2, the loose objects
// counted as one more pack, which is always rolled up.
func rollUp(packs []*oldPack, loose int) []*oldPack {
	type item struct {
		n int
		p *oldPack // nil for the loose objects
	}
	var items []item
	if loose > 0 {
		items = append(items, item{n: loose})
	}
	for _, p := range packs {
		items = append(items, item{n: p.count, p: p})
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].n < items[j].n })
	// The largest packs already in progression stay.
	i := len(items) - 1
	for ; i > 0; i-- {
		if items[i].n < geometricFactor*items[i-1].n {
			break
		}
	}
	split := 0
	if i > 0 {
		split = i + 1
	}
	for k, it := range items {
		if it.p == nil && k+1 > split {
			split = k + 1
		}
	}
	// And those the new pack would break the progression with go too.
	total := 0
	for _, it := range items[:split] {
		total += it.n
	}
	for split < len(items) && items[split].n < geometricFactor*total {
		total += items[split].n
		split++
	}
	var out []*oldPack
	for _, it := range items[:split] {
		if it.p != nil {
			out = append(out, it.p)
		}
	}
	// Oldest offsets first does not matter; the biggest first keeps the
	// copies of the one pack most objects are in at the start of the file.
	sort.SliceStable(out, func(i, j int) bool { return out[i].count > out[j].count })
	return out
}

// knownDelta is a loose object's delta its writer made (Known).
type knownDelta struct {
	base  object.Hash
	delta []byte
}

// knownOf takes the known deltas of the loose objects.
func knownOf(loose []looseObject, known Known) map[object.Hash]knownDelta {
	if known == nil {
		return nil
	}
	deltas := map[object.Hash]knownDelta{}
	for _, o := range loose {
		if base, d, ok := known(o.id); ok {
			deltas[o.id] = knownDelta{base, d}
		}
	}
	return deltas
}

// rollBaseMost is the largest pack rolled up for the sake of a known
// delta's base in it, in bytes, and in objects as a multiple of what the
// new pack takes in otherwise: copying a vault's whole pack into every
// compaction to save one tree (70 KB at 1,000 runs) cost more than it
// saved.
const (
	rollBaseMost  = 64 << 20
	rollBaseTimes = 4
)

// rollBases adds to roll the packs, up to rollBaseMost, that hold the base
// of a known delta whose base is neither loose nor rolled up already: the
// last compaction's pack holds the version of playbook-runs/ the first
// loose one was made from (7 MB at 100,000 runs), which the delta then
// needs in the new pack. Without it each compaction wrote that tree whole
// (2.5 MB compressed), a few boundaries apart.
func rollBases(deltas map[object.Hash]knownDelta, loose []looseObject, all, roll []*oldPack) []*oldPack {
	if len(deltas) == 0 {
		return roll
	}
	listed := make(map[object.Hash]bool, len(loose))
	for _, o := range loose {
		listed[o.id] = true
	}
	rolled := map[*oldPack]bool{}
	for _, p := range roll {
		rolled[p] = true
	}
	most := len(loose)
	for _, p := range roll {
		most += p.count
	}
	most *= rollBaseTimes
	var wanted []object.Hash
	for _, d := range deltas {
		if !listed[d.base] {
			wanted = append(wanted, d.base)
		}
	}
	for _, p := range all {
		if len(wanted) == 0 {
			break
		}
		if rolled[p] || p.count > most {
			continue
		}
		if fi, err := os.Stat(p.name + ".pack"); err != nil || fi.Size() > rollBaseMost {
			continue
		}
		idx, err := OpenIndex(p.name)
		if err != nil {
			continue // gone or not ours to read: the deltas' objects are read instead
		}
		kept := wanted[:0]
		for _, b := range wanted {
			if idx.Find(b) < 0 {
				kept = append(kept, b)
			}
		}
		UnmapIndex(idx)
		if len(kept) < len(wanted) {
			roll = append(roll, p)
		}
		wanted = kept
	}
	return roll
}

// listLoose lists the loose objects with their type and size, read from
// the start of each.
func listLoose(objDir string) ([]looseObject, error) {
	dirs, err := os.ReadDir(objDir)
	if err != nil {
		return nil, err
	}
	var out []looseObject
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(objDir, d.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			h := d.Name() + e.Name()
			id, err := object.ParseHash(h)
			if err != nil {
				continue
			}
			file := filepath.Join(objDir, d.Name(), e.Name())
			typ, size, err := object.LooseHeader(file)
			var fi os.FileInfo
			if err == nil {
				fi, err = e.Info()
			}
			if errors.Is(err, os.ErrNotExist) {
				continue // packed and removed by another process meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("loose object %s: %w", h, err)
			}
			out = append(out, looseObject{id: id, typ: typ, size: size, file: file, at: fi.ModTime().UnixNano()})
		}
	}
	return out, nil
}

// listPacks lists the packs that may be rolled up: those with an index and
// their data, and no .keep.
func listPacks(packDir string) ([]*oldPack, error) {
	idxs, err := filepath.Glob(filepath.Join(packDir, "pack-*.idx"))
	if err != nil {
		return nil, err
	}
	var out []*oldPack
	for _, idx := range idxs {
		name := strings.TrimSuffix(idx, ".idx")
		if _, err := os.Stat(name + ".keep"); err == nil {
			continue
		}
		if _, err := os.Stat(name + ".pack"); err != nil {
			continue
		}
		n, err := idxCount(idx)
		if err != nil {
			continue // not a version 2 index: left alone
		}
		out = append(out, &oldPack{name: name, count: n})
	}
	return out, nil
}

// idxCount reads the number of objects of a version 2 index.
func idxCount(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var b [8 + 256*4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, err
	}
	if !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return 0, errors.New("not a pack index of version 2")
	}
	return int(binary.BigEndian.Uint32(b[8+255*4:])), nil
}

func (p *oldPack) open() error {
	idx, err := OpenIndex(p.name)
	if err != nil {
		return err
	}
	p.idx = idx
	if p.f, err = os.Open(p.name + ".pack"); err != nil {
		return err
	}
	fi, err := p.f.Stat()
	if err != nil {
		return err
	}
	p.end = fi.Size() - 20
	p.count = idx.Len()
	p.ents = make([]oldEnt, idx.Len())
	for i := range p.ents {
		p.ents[i] = oldEnt{off: idx.Offset(i), newOff: -1, i: int32(i)}
	}
	sort.Slice(p.ents, func(i, j int) bool { return p.ents[i].off < p.ents[j].off })
	return nil
}

func (p *oldPack) close() {
	if p.idx != nil {
		UnmapIndex(p.idx)
		p.idx = nil
	}
	if p.f != nil {
		p.f.Close()
		p.f = nil
	}
}

// at is the entry at an offset of the pack, nil if none starts there.
func (p *oldPack) at(off int64) *oldEnt {
	i := sort.Search(len(p.ents), func(i int) bool { return p.ents[i].off >= off })
	if i < len(p.ents) && p.ents[i].off == off {
		return &p.ents[i]
	}
	return nil
}

// copyPack copies an old pack's objects in their order, reading the pack
// once from start to end: each entry's compressed bytes as they are
// (checked against the old index's CRC), a delta's base offset rewritten
// for the new pack. An object already copied from an earlier pack (dup) is
// not copied again; deltas on it point at that copy. A delta by reference
// is written whole.
func (w *packWriter) copyPack(ctx context.Context, read func(object.Hash) ([]byte, object.Type, error), earlier []*oldPack, p *oldPack, dup []bool) error {
	r := bufio.NewReaderSize(io.NewSectionReader(p.f, 0, p.end), 256<<10)
	buf := make([]byte, 64<<10)
	pos := int64(0)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("pack %s: %s", filepath.Base(p.name), fmt.Sprintf(format, a...))
	}
	for k := range p.ents {
		if k%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := &p.ents[k]
		id := p.idx.ID(int(e.i))
		end := p.end
		if k+1 < len(p.ents) {
			end = p.ents[k+1].off
		}
		if e.off < pos || end <= e.off {
			return bad("object %s at %d overlaps another", id, e.off)
		}
		if _, err := r.Discard(int(e.off - pos)); err != nil {
			return err
		}
		pos = end
		if dup[e.i] {
			for _, q := range earlier {
				if off := q.idx.Find(id); off >= 0 {
					if qe := q.at(off); qe != nil && qe.newOff >= 0 {
						e.newOff, e.depth = qe.newOff, qe.depth
					}
					break
				}
			}
			if e.newOff < 0 {
				return bad("object %s is in no pack copied before it", id)
			}
			if _, err := r.Discard(int(end - e.off)); err != nil {
				return err
			}
			continue
		}
		hdr, _ := r.Peek(int(min(32, end-e.off)))
		typ, size, back, n := ParseEntryHeader(hdr)
		var rel int64
		switch {
		case n == 0:
			return bad("the object at %d has a malformed header", e.off)
		case typ == OfsDelta:
			base := p.at(e.off - back)
			if back <= 0 || base == nil || base.newOff < 0 {
				return bad("the delta at %d has no base before it", e.off)
			}
			rel = w.off - base.newOff
			e.depth = base.depth + 1
		case typ == RefDelta:
			// Rare (git and go-git write deltas by offset): the object
			// whole, read by the caller.
			if _, err := r.Discard(int(end - e.off)); err != nil {
				return err
			}
			data, t, err := read(id)
			if err != nil {
				return err
			}
			e.newOff = w.off
			if err := w.object(id, byte(t), int64(len(data)), 0, data); err != nil {
				return err
			}
			continue
		case typ < 1 || typ > 4:
			return bad("the object at %d is of type %d", e.off, typ)
		}
		if w.written == w.count {
			return errors.New("more objects than the pack was begun for")
		}
		old := crc32.NewIEEE()
		old.Write(hdr[:n])
		if _, err := r.Discard(n); err != nil {
			return err
		}
		e.newOff = w.off
		w.crc.Reset()
		if _, err := w.Write(AppendEntryHeader(w.hdr[:0], typ, size, rel)); err != nil {
			return err
		}
		if _, err := io.CopyBuffer(io.MultiWriter(w, old), io.LimitReader(r, end-e.off-int64(n)), buf); err != nil {
			return err
		}
		if want := p.idx.CRC(int(e.i)); old.Sum32() != want {
			return bad("object %s does not match its CRC", id)
		}
		w.idx = append(w.idx, IndexEntry{ID: id, Offset: uint64(e.newOff), CRC: w.crc.Sum32()})
		w.written++
	}
	return nil
}

// windowEntry is an object the next ones may be deltas of.
type windowEntry struct {
	typ   object.Type
	data  []byte
	off   int64
	depth int
}

// diffTries is how many objects of the window, the nearest first, a loose
// object is tried against with go-git's DiffDelta when none shares all but
// one place with it (an affix delta under an eighth of the object): DiffDelta indexes the whole base, and trying the
// whole window was most of a compaction's time (a boundary's objects find
// their base by AffixDelta: its run's log, its state, its trees).
const diffTries = 2

// diffMost is the largest object tried with DiffDelta: it indexes the
// whole base first, some 100 ms for a 7 MB tree (playbook-runs/ at
// 100,000 runs), where the versions of such a tree find each other by
// AffixDelta. A larger object that shares no affix with its window is
// stored whole (compressed).
const diffMost = 2 << 20

// sparseFrom is the size from which an object is tried as a sparse delta
// (SparseDelta) of an object of its length in the window, and kept there
// past the window's count when written whole.
const sparseFrom = 1 << 20

// deltaIn answers the smallest delta of data against an object of the
// window, and its base: nil when none is under half of data.
func deltaIn(window []windowEntry, typ object.Type, data []byte) ([]byte, *windowEntry) {
	var best []byte
	var base *windowEntry
	fits := func(b *windowEntry) bool {
		return b.typ == typ && b.depth < maxDepth && len(data) >= len(b.data)>>4 && len(b.data) >= len(data)>>4
	}
	take := func(d []byte, b *windowEntry) {
		if d != nil && len(d) < len(data)/2 && (best == nil || len(d) < len(best)) {
			best, base = d, b
		}
	}
	if len(data) < 32 {
		return nil, nil
	}
	// One place changed: found by comparing bytes.
	for k := len(window) - 1; k >= 0; k-- {
		if b := &window[k]; fits(b) {
			take(AffixDelta(b.data, data, len(data)/2), b)
			if best != nil && len(best) < len(data)/32 {
				return best, base // as good as it gets
			}
		}
	}
	if best != nil && len(best) < len(data)/8 {
		return best, base
	}
	if len(data) >= sparseFrom {
		// Two versions of a large tree some boundaries apart differ at
		// the entries each changed, here and there: a sparse delta of an
		// object of its length, where the affix delta spans from the
		// first change to the last.
		for k := len(window) - 1; k >= 0; k-- {
			if b := &window[k]; fits(b) && len(b.data) == len(data) {
				take(SparseDelta(b.data, data, len(data)/16), b)
			}
		}
		if best != nil && len(best) < len(data)/8 {
			return best, base
		}
	}
	if len(data) > diffMost {
		return best, base
	}
	for k, tried := len(window)-1, 0; k >= 0 && tried < diffTries; k-- {
		if b := &window[k]; fits(b) {
			take(packfile.DiffDelta(b.data, data), b)
			tried++
		}
	}
	return best, base
}

// packLoose writes the loose objects, sorted by type and then size (largest
// first, as git does: a delta that removes is smaller than one that adds)
// and then by when they were written, each as a delta of one of the last
// windowCount objects when that is less than half its size. moved reads an
// object packed and removed since it was listed.
//
// The last key matters for the trees a boundary writes again: at 100,000
// runs the versions of playbook-runs/ are 7 MB each and most of one size,
// and two that follow each other differ at one entry (an affix delta of a
// few hundred bytes, found by comparing bytes), where two taken in any
// order differ at many, which sent each to DiffDelta (63 % of quire
// serve's CPU through 260 boundaries at 100,000 runs, quire-bench -only
// boundary).
func (w *packWriter) packLoose(ctx context.Context, loose []looseObject, moved func(object.Hash) ([]byte, object.Type, error), deltas map[object.Hash]knownDelta, rolled []*oldPack) error {
	// The objects whose writer made them as deltas of another (Known) go
	// last, each after its base: by how many known deltas of the loose
	// objects lead to it (a log's next version is larger than the last,
	// and would come first by size; file times are a kernel tick apart,
	// several milliseconds, so they do not order a boundary's trees).
	listed := make(map[object.Hash]bool, len(loose))
	for _, o := range loose {
		listed[o.id] = true
	}
	chain := make(map[object.Hash]int, len(deltas))
	var after func(id object.Hash) int
	after = func(id object.Hash) int {
		d, ok := deltas[id]
		if !ok || !listed[d.base] {
			return 0
		}
		if n, done := chain[id]; done {
			return n
		}
		chain[id] = 0 // a cycle, which no writer makes, ends here
		n := 1 + after(d.base)
		chain[id] = n
		return n
	}
	for id := range deltas {
		after(id)
	}
	sort.Slice(loose, func(i, j int) bool {
		a, b := loose[i], loose[j]
		_, ad := deltas[a.id]
		_, bd := deltas[b.id]
		switch {
		case ad != bd:
			return bd
		case ad && chain[a.id] != chain[b.id]:
			return chain[a.id] < chain[b.id]
		case ad:
			return a.at < b.at
		case a.typ != b.typ:
			return a.typ < b.typ
		case a.size != b.size:
			return a.size > b.size
		}
		return a.at < b.at
	})
	// Where each loose object went, and its depth, and where the known
	// deltas' bases copied from the rolled-up packs went.
	type placed struct {
		off   int64
		depth int
	}
	at := make(map[object.Hash]placed, len(loose))
	for _, d := range deltas {
		for _, p := range rolled {
			if off := p.idx.Find(d.base); off >= 0 {
				if e := p.at(off); e != nil && e.newOff >= 0 {
					at[d.base] = placed{e.newOff, int(e.depth)}
				}
				break
			}
		}
	}
	var window []windowEntry
	held := 0
	for _, o := range loose {
		if err := ctx.Err(); err != nil {
			return err
		}
		if k, ok := deltas[o.id]; ok {
			if b, in := at[k.base]; in && b.depth < maxDepth {
				off := w.off
				if err := w.object(o.id, OfsDelta, int64(len(k.delta)), off-b.off, k.delta); err != nil {
					return err
				}
				at[o.id] = placed{off, b.depth + 1}
				continue
			}
		}
		typ, data, err := o.typ, o.data, error(nil)
		switch {
		case o.file != "":
			typ, data, err = object.ReadLooseFileToHash(o.file)
		case o.inPack:
			// A fresh pack's delta without the delta its writer made:
			// read whole from where it lies (its pack is still there).
			data, typ, err = moved(o.id)
		}
		if errors.Is(err, os.ErrNotExist) {
			// Packed and removed since it was listed, by git (a git gc,
			// often started by a git commit in the background) or another
			// compaction: read from wherever it went.
			data, typ, err = moved(o.id)
		}
		if err != nil {
			return fmt.Errorf("loose object %s: %w", o.id, err)
		}
		if typ != o.typ || object.Sum(typ, data) != o.id {
			return fmt.Errorf("loose object %s does not hold what its name says", o.id)
		}
		best, base := deltaIn(window, typ, data)
		off, depth := w.off, 0
		if base != nil {
			depth = base.depth + 1
			err = w.object(o.id, OfsDelta, int64(len(best)), off-base.off, best)
		} else {
			err = w.object(o.id, byte(typ), int64(len(data)), 0, data)
		}
		if err != nil {
			return err
		}
		at[o.id] = placed{off, depth}
		if len(data) > windowBytes/2 {
			continue
		}
		window = append(window, windowEntry{typ: typ, data: data, off: off, depth: depth})
		held += len(data)
		for len(window) > windowCount || held > windowBytes {
			// The oldest goes, but a large object written whole (a
			// version of playbook-runs/ at a chain's start) stays while
			// the window's bytes allow: the versions past the chain's
			// depth are its sparse deltas (deltaIn), where without it
			// each was written whole, every maxDepth versions.
			drop := 0
			if held <= windowBytes {
				for drop < len(window)-1 && window[drop].depth == 0 && len(window[drop].data) >= sparseFrom {
					drop++
				}
			}
			// Shifted down, not resliced: window[1:] keeps the dropped
			// entry's data reachable from the array behind it until an
			// append moves it, which held up to twice the window.
			held -= len(window[drop].data)
			window = append(window[:drop], window[drop+1:]...)
		}
	}
	return nil
}

package vault

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"

	"quire/internal/fsys"
	"quire/vault/git/object"
)

// Compaction: every boundary writes the trees along its paths whole as loose
// objects (about 140 KB at 5,000 runs in one folder). When the loose objects
// pass a threshold, they are packed with deltas, which brings a boundary down
// to a few KB, and the loose copies are removed.
//
// When. Like git's gc --auto, the loose objects are counted in one fan-out
// folder (objects/17) times 256. git's gc.auto is 6,700; quire's threshold
// is 1,024, since its loose objects are large (whole trees of thousands of
// entries) and a pack of them is a few percent of their size. git's
// gc.autoPackLimit (50) is kept as a second trigger: more packs than that,
// made by anything, start a compaction even with few loose objects. A third:
// the process wrote 256 MiB of loose objects since it last started one (a
// large tree, stored uncompressed, is 1.6 MB at 20,000 runs: objects.go).
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
// compactWindow objects before it (same type, sorted by size as git and
// go-git do, at most compactWindowBytes of their content held) and written
// at once. What it holds is that window, the object in hand and its delta,
// and about 150 bytes for each object of the new pack (its id, offsets and
// the index go-git builds; 300 for a loose one, with its path): some 15 MB
// at 100,000 objects (30,000 events), whatever the objects' sizes.
//
// Safety. Packing runs in the background, without the write lock. It packs
// only the loose objects and packs it listed and removes only those, once
// the new pack and its index are renamed into place (pack first, then
// index, as git does), so objects written meanwhile are untouched and every
// object stays readable throughout. The pack is written under a temporary
// name (objects/pack/tmp_pack_<pid>_<n>) and removed when the compaction
// stops on an error or its context ends; the temporary files of a process
// that died are removed by the next compaction. The context is the vault's
// (SetCompactContext): quire serve gives its signal's, so SIGTERM abandons a
// compaction between two objects. Close waits for it.
const (
	compactThreshold   = 1024
	compactPackLimit   = 50
	compactFactor      = 2
	compactWindow      = 10
	compactWindowBytes = 32 << 20
	compactMaxDepth    = 50
	compactRetry       = 10 * time.Minute // after a compaction that failed
)

// compactLooseBytes: loose bytes written by this process that start a
// compaction (a variable for the tests).
var compactLooseBytes int64 = 256 << 20

// SetAutoCompact turns the background compaction after commits on (the
// default) or off; with it off, the owner calls Compact itself.
func (v *Vault) SetAutoCompact(on bool) {
	v.compactMu.Lock()
	v.noAutoCompact = !on
	v.compactMu.Unlock()
}

// SetCompactContext sets the context background compactions run under
// (context.Background until set): when it ends, a compaction under way is
// abandoned, leaving the repository as it found it, and none starts.
func (v *Vault) SetCompactContext(ctx context.Context) {
	v.compactMu.Lock()
	v.compactCtx = ctx
	v.compactMu.Unlock()
}

func (v *Vault) maybeCompact() {
	v.compactMu.Lock()
	off, ctx, failed := v.noAutoCompact, v.compactCtx, v.compactFailed
	v.compactMu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}
	if off || ctx.Err() != nil || time.Since(failed) < compactRetry ||
		(v.looseEstimate() < compactThreshold && v.packCount() <= compactPackLimit && v.objs.looseBytes.Load() < compactLooseBytes) {
		return
	}
	v.compactMu.Lock()
	if v.busy {
		v.compactMu.Unlock()
		return
	}
	v.busy = true
	v.compactMu.Unlock()
	v.objs.looseBytes.Store(0)
	v.compacting.Add(1)
	go func() {
		defer v.compacting.Done()
		defer func() { v.compactMu.Lock(); v.busy = false; v.compactMu.Unlock() }()
		// A loose object gone is another process's compaction at work.
		err := v.Compact(ctx)
		if err == nil || ctx.Err() != nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		v.compactMu.Lock()
		v.compactFailed = time.Now()
		v.compactMu.Unlock()
		if v.log != nil {
			v.log.Warn("vault: compaction stopped; it is tried again in 10 minutes", "err", err)
		}
	}()
}

func (v *Vault) looseEstimate() int {
	ents, err := os.ReadDir(filepath.Join(v.gitDir, "objects", "17"))
	if err != nil {
		return 0
	}
	return len(ents) * 256
}

func (v *Vault) packCount() int {
	idxs, _ := filepath.Glob(filepath.Join(v.gitDir, "objects", "pack", "pack-*.idx"))
	return len(idxs)
}

// looseObject is a loose object listed for packing.
type looseObject struct {
	id   Hash
	typ  byte // 1 commit, 2 tree, 3 blob, 4 tag
	size int64
	file string
}

// oldPack is a pack rolled up into the new one. Its index is mapped; its
// data is read through the file, not mapped, so that copying it does not
// grow the process.
type oldPack struct {
	name  string // path without .idx/.pack
	count int
	idx   *pack // only idx is set
	f     *os.File
	end   int64    // where its objects end (before the checksum)
	ents  []oldEnt // by offset
}

type oldEnt struct {
	off, newOff int64
	i           int32 // position in the index
}

// Compact packs the vault's loose objects, with the packs the geometric
// progression needs rolled up (see above), and removes what it packed. It
// stops, leaving everything as it was, when ctx ends.
//
// A git gc may pack and remove the same objects and packs meanwhile (a
// git commit starts one in the background now and then): a loose object
// gone since it was listed is read from wherever it went, and a pack gone
// before it was opened starts the compaction over, a few times.
func (v *Vault) Compact(ctx context.Context) error {
	for tries := 1; ; tries++ {
		err := v.compactOnce(ctx)
		if tries == 3 || !errors.Is(err, errPackGone) {
			return err
		}
	}
}

// errPackGone: a pack listed for rolling up was gone when opened.
var errPackGone = errors.New("vault: a pack was removed while the compaction began")

func (v *Vault) compactOnce(ctx context.Context) error {
	objDir := filepath.Join(v.gitDir, "objects")
	packDir := filepath.Join(objDir, "pack")
	removeDeadTemps(packDir)
	loose, err := listLoose(objDir)
	if err != nil {
		return err
	}
	all, err := listPacks(packDir)
	if err != nil {
		return err
	}
	roll := rollUp(all, len(loose))
	if len(loose) == 0 && len(roll) < 2 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	defer func() {
		for _, p := range roll {
			p.close()
		}
	}()
	for _, p := range roll {
		if err := p.open(); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %w", errPackGone, err)
		} else if err != nil {
			return err
		}
	}
	// An object in two rolled-up packs, or loose and in one, goes in once.
	count := 0
	in := func(id Hash, before int) bool {
		for _, q := range roll[:before] {
			if q.idx.find(id) >= 0 {
				return true
			}
		}
		return false
	}
	dups := make([][]bool, len(roll))
	for k, p := range roll {
		dups[k] = make([]bool, p.count)
		for i := 0; i < p.count; i++ {
			if dups[k][i] = in(p.idx.id(i), k); !dups[k][i] {
				count++
			}
		}
	}
	var fresh []looseObject
	for _, o := range loose {
		if !in(o.id, len(roll)) {
			fresh = append(fresh, o)
		}
	}
	count += len(fresh)
	if err := ctx.Err(); err != nil {
		return err
	}

	w, err := newPackWriter(packDir, count)
	if err != nil {
		return err
	}
	defer w.abandon()
	for k, p := range roll {
		if err := w.copyPack(ctx, v, roll[:k], p, dups[k]); err != nil {
			return err
		}
	}
	if err := w.packLoose(ctx, fresh, v.objs.readRaw); err != nil {
		return err
	}
	name, err := w.finish(ctx)
	if err != nil {
		return err
	}
	// The pack and its index are in place: every listed object is readable
	// from it, so the loose copies and the old packs can go.
	for _, o := range loose {
		os.Remove(o.file)
	}
	for _, p := range roll {
		if p.name == name {
			continue // the same objects in the same order: the same pack
		}
		p.close()
		for _, ext := range []string{".idx", ".pack", ".rev", ".bitmap"} {
			os.Remove(p.name + ext)
		}
	}
	syncDir(packDir)
	v.objs.mu.Lock()
	v.objs.reopen()
	v.objs.mu.Unlock()
	return nil
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
		if items[i].n < compactFactor*items[i-1].n {
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
	for split < len(items) && items[split].n < compactFactor*total {
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
			if errors.Is(err, os.ErrNotExist) {
				continue // packed and removed by another process meanwhile
			}
			if err != nil {
				return nil, fmt.Errorf("vault: loose object %s: %w", h, err)
			}
			out = append(out, looseObject{id: id, typ: byte(typ), size: size, file: file})
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
	idx, err := openIndex(p.name)
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
	p.count = idx.n
	p.ents = make([]oldEnt, idx.n)
	for i := range p.ents {
		p.ents[i] = oldEnt{off: idx.offset(i), newOff: -1, i: int32(i)}
	}
	sort.Slice(p.ents, func(i, j int) bool { return p.ents[i].off < p.ents[j].off })
	return nil
}

func (p *oldPack) close() {
	if p.idx != nil {
		fsys.Unmap(p.idx.idx)
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

// packWriter writes a pack to a temporary file, hashing it as it goes and
// noting each object for the index.
type packWriter struct {
	dir, tmp string
	f        *os.File
	bw       *bufio.Writer
	sum      hash.Hash
	crc      hash.Hash32
	off      int64
	count    int
	written  int
	zw       *zlib.Writer
	idx      idxfile.Writer
	done     bool
}

var tmpPackPrefix = "tmp_pack_"

func newPackWriter(dir string, count int) (*packWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d_%d", tmpPackPrefix, os.Getpid(), tmpSeq.Add(1)))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return nil, err
	}
	w := &packWriter{dir: dir, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, 256<<10), sum: sha1.New(), crc: crc32.NewIEEE(), count: count}
	w.zw, _ = zlib.NewWriterLevel(nil, zlib.DefaultCompression)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(count))
	_, err = w.Write(hdr[:])
	return w, err
}

func (w *packWriter) Write(b []byte) (int, error) {
	n, err := w.bw.Write(b)
	w.sum.Write(b[:n])
	w.crc.Write(b[:n])
	w.off += int64(n)
	return n, err
}

// abandon removes the temporary pack unless it was finished.
func (w *packWriter) abandon() {
	if w.done {
		return
	}
	w.f.Close()
	os.Remove(w.tmp)
}

// entryHeader is the header of a pack entry: its type and size, and for a
// delta by offset, how far back its base starts.
func entryHeader(typ byte, size int64, rel int64) []byte {
	b := make([]byte, 0, 24)
	c := typ<<4 | byte(size&15)
	size >>= 4
	for size != 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	b = append(b, c)
	if typ == 6 {
		var r [10]byte
		i := len(r) - 1
		r[i] = byte(rel & 127)
		for rel >>= 7; rel != 0; rel >>= 7 {
			rel--
			i--
			r[i] = 128 | byte(rel&127)
		}
		b = append(b, r[i:]...)
	}
	return b
}

// object writes one entry: data compressed under its header.
func (w *packWriter) object(id Hash, typ byte, size, rel int64, data []byte) error {
	if w.written == w.count {
		return errors.New("vault: more objects than the pack was begun for")
	}
	start := w.off
	w.crc.Reset()
	if _, err := w.Write(entryHeader(typ, size, rel)); err != nil {
		return err
	}
	w.zw.Reset(w)
	if _, err := w.zw.Write(data); err != nil {
		return err
	}
	if err := w.zw.Close(); err != nil {
		return err
	}
	w.idx.Add(plumbing.Hash(id), uint64(start), w.crc.Sum32())
	w.written++
	return nil
}

// copyPack copies an old pack's objects in their order, reading the pack
// once from start to end: each entry's compressed bytes as they are
// (checked against the old index's CRC), a delta's base offset rewritten
// for the new pack. An object already copied from an earlier pack (dup) is
// not copied again; deltas on it point at that copy. A delta by reference
// is written whole.
func (w *packWriter) copyPack(ctx context.Context, v *Vault, earlier []*oldPack, p *oldPack, dup []bool) error {
	crcs := p.idx.idx[8+256*4+p.idx.n*20:]
	r := bufio.NewReaderSize(io.NewSectionReader(p.f, 0, p.end), 256<<10)
	buf := make([]byte, 64<<10)
	pos := int64(0)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("vault: pack %s: %s", filepath.Base(p.name), fmt.Sprintf(format, a...))
	}
	for k := range p.ents {
		if k%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		e := &p.ents[k]
		id := p.idx.id(int(e.i))
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
				if off := q.idx.find(id); off >= 0 {
					if qe := q.at(off); qe != nil && qe.newOff >= 0 {
						e.newOff = qe.newOff
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
		typ, size, back, n := parseEntryHeader(hdr)
		var rel int64
		switch {
		case n == 0:
			return bad("the object at %d has a malformed header", e.off)
		case typ == 6:
			base := p.at(e.off - back)
			if back <= 0 || base == nil || base.newOff < 0 {
				return bad("the delta at %d has no base before it", e.off)
			}
			rel = w.off - base.newOff
		case typ == 7:
			// Rare (git and go-git write deltas by offset): the object
			// whole, read through go-git's storage.
			if _, err := r.Discard(int(end - e.off)); err != nil {
				return err
			}
			data, t, err := v.objs.readRaw(id)
			if err != nil {
				return err
			}
			e.newOff = w.off
			if err := w.object(id, t, int64(len(data)), 0, data); err != nil {
				return err
			}
			continue
		case typ < 1 || typ > 4:
			return bad("the object at %d is of type %d", e.off, typ)
		}
		if w.written == w.count {
			return errors.New("vault: more objects than the pack was begun for")
		}
		old := crc32.NewIEEE()
		old.Write(hdr[:n])
		if _, err := r.Discard(n); err != nil {
			return err
		}
		e.newOff = w.off
		w.crc.Reset()
		if _, err := w.Write(entryHeader(typ, size, rel)); err != nil {
			return err
		}
		if _, err := io.CopyBuffer(io.MultiWriter(w, old), io.LimitReader(r, end-e.off-int64(n)), buf); err != nil {
			return err
		}
		if want := binary.BigEndian.Uint32(crcs[int(e.i)*4:]); old.Sum32() != want {
			return bad("object %s does not match its CRC", id)
		}
		w.idx.Add(plumbing.Hash(id), uint64(e.newOff), w.crc.Sum32())
		w.written++
	}
	return nil
}

// parseEntryHeader reads the header of a pack entry: its type, size, for a
// delta by offset how far back its base is, and the header's length (0
// when b does not hold a whole header).
func parseEntryHeader(b []byte) (typ byte, size, back int64, n int) {
	if len(b) == 0 {
		return 0, 0, 0, 0
	}
	c := b[0]
	n = 1
	typ = (c >> 4) & 7
	size = int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if n == len(b) || shift > 56 {
			return 0, 0, 0, 0
		}
		c = b[n]
		n++
		size |= int64(c&0x7f) << shift
	}
	if typ != 6 {
		return typ, size, 0, n
	}
	if n == len(b) {
		return 0, 0, 0, 0
	}
	c = b[n]
	n++
	back = int64(c & 127)
	for c&128 != 0 {
		if n == len(b) || back > 1<<55 {
			return 0, 0, 0, 0
		}
		c = b[n]
		n++
		back = (back+1)<<7 | int64(c&127)
	}
	return typ, size, back, n
}

// windowEntry is an object the next ones may be deltas of.
type windowEntry struct {
	typ   byte
	data  []byte
	off   int64
	depth int
}

// packLoose writes the loose objects, sorted by type and then size (largest
// first, as git does: a delta that removes is smaller than one that adds),
// each as a delta of one of the last compactWindow objects when that is
// less than half its size. moved reads an object packed and removed since
// it was listed.
func (w *packWriter) packLoose(ctx context.Context, loose []looseObject, moved func(Hash) ([]byte, byte, error)) error {
	sort.Slice(loose, func(i, j int) bool {
		a, b := loose[i], loose[j]
		if a.typ != b.typ {
			return a.typ < b.typ
		}
		return a.size > b.size
	})
	var window []windowEntry
	held := 0
	for _, o := range loose {
		if err := ctx.Err(); err != nil {
			return err
		}
		t, data, err := object.ReadLooseFile(o.file)
		typ := byte(t)
		if errors.Is(err, os.ErrNotExist) {
			// Packed and removed since it was listed, by git (a git gc,
			// often started by a git commit in the background) or another
			// compaction: read from wherever it went.
			data, typ, err = moved(o.id)
		}
		if err != nil {
			return fmt.Errorf("vault: loose object %s: %w", o.id, err)
		}
		if typ != o.typ || object.Sum(object.Type(typ), data) != o.id {
			return fmt.Errorf("vault: loose object %s does not hold what its name says", o.id)
		}
		var best []byte
		var base *windowEntry
		for k := len(window) - 1; k >= 0 && len(data) >= 32; k-- {
			b := &window[k]
			if b.typ != typ || b.depth >= compactMaxDepth || len(data) < len(b.data)>>4 || len(b.data) < len(data)>>4 {
				continue
			}
			// One place changed: found by comparing bytes.
			d := affixDelta(b.data, data, len(data)/64)
			if d == nil {
				d = packfile.DiffDelta(b.data, data)
			}
			if len(d) < len(data)/2 && (best == nil || len(d) < len(best)) {
				best, base = d, b
				if len(d) < len(data)/32 {
					break // as good as it gets
				}
			}
		}
		off, depth := w.off, 0
		if base != nil {
			depth = base.depth + 1
			err = w.object(o.id, 6, int64(len(best)), off-base.off, best)
		} else {
			err = w.object(o.id, typ, int64(len(data)), 0, data)
		}
		if err != nil {
			return err
		}
		if len(data) > compactWindowBytes/2 {
			continue
		}
		window = append(window, windowEntry{typ: typ, data: data, off: off, depth: depth})
		held += len(data)
		for len(window) > compactWindow || held > compactWindowBytes {
			// Shifted down, not resliced: window[1:] keeps the dropped
			// entry's data reachable from the array behind it until an
			// append moves it, which held up to twice the window.
			held -= len(window[0].data)
			window = append(window[:0], window[1:]...)
		}
	}
	return nil
}

// finish writes the checksum, syncs the pack, writes its index, and renames
// both into place: the pack first, then its index, as git does. It answers
// the pack's path without extension.
func (w *packWriter) finish(ctx context.Context) (string, error) {
	if w.written != w.count {
		return "", fmt.Errorf("vault: %d objects written of the %d the pack was begun for", w.written, w.count)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := w.bw.Flush(); err != nil {
		return "", err
	}
	var sum Hash
	copy(sum[:], w.sum.Sum(nil))
	if _, err := w.f.Write(sum[:]); err != nil {
		return "", err
	}
	if err := w.f.Sync(); err != nil {
		return "", err
	}
	if err := w.f.Close(); err != nil {
		return "", err
	}
	if err := w.idx.OnFooter(plumbing.Hash(sum)); err != nil {
		return "", err
	}
	mem, err := w.idx.Index()
	if err != nil {
		return "", err
	}
	tmpIdx := w.tmp + ".idx"
	f, err := os.OpenFile(tmpIdx, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmpIdx)
	bw := bufio.NewWriter(f)
	_, err = idxfile.NewEncoder(bw).Encode(mem)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	name := filepath.Join(w.dir, "pack-"+sum.String())
	if err := os.Rename(w.tmp, name+".pack"); err != nil {
		return "", err
	}
	w.done = true
	if err := os.Rename(tmpIdx, name+".idx"); err != nil {
		os.Remove(name + ".pack")
		return "", err
	}
	return name, nil
}

// syncDir makes a folder's entries durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// removeDeadTemps removes the temporary packs of processes that are gone.
func removeDeadTemps(packDir string) {
	tmps, _ := filepath.Glob(filepath.Join(packDir, tmpPackPrefix+"*"))
	for _, t := range tmps {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(t), tmpPackPrefix), "_")
		n, err := strconv.Atoi(pid)
		if err != nil || n == os.Getpid() {
			continue
		}
		if fsys.Gone(n) {
			os.Remove(t)
		}
	}
}

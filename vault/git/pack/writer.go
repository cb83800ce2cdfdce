package pack

import (
	"bufio"
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	kzlib "github.com/klauspost/compress/zlib"

	"quire/internal/fsys"
	"quire/vault/git/object"
)

// packWriter writes a pack to a temporary file, hashing it as it goes and
// noting each object for the index.
type packWriter struct {
	dir, tmp string
	tmpIdx   string // the index's temporary name
	f        *os.File
	bw       *bufio.Writer
	sum      hash.Hash
	crc      hash.Hash32
	off      int64
	count    int
	written  int
	zw       *kzlib.Writer // git's default level
	fast     *kzlib.Writer // zlib's best speed, for large objects (fastFrom)
	idx      []IndexEntry
	hdr      [24]byte
	done     bool
	noSync   bool // a fresh pack's (WriteFresh): neither the pack nor its index synced
	// store, when set (a fresh pack's), writes every object in zlib's
	// stored blocks, not compressed.
	store *zlib.Writer
}

var (
	// A pack and its index are written under the temporary names git
	// gives its own (tmp_pack_<pid>_<n> and tmp_idx_<pid>_<n>), with no
	// extension: git gc removes an objects/pack/*.idx it finds no .pack
	// beside as garbage, so an index written as <tmp>.idx was taken from
	// under a pack being placed whenever a person's git gc (or the gc
	// --auto of their commit) ran at that moment.
	tmpPackPrefix = "tmp_pack_"
	tmpIdxPrefix  = "tmp_idx_"
	tmpSeq        atomic.Int64
	// beforePlaced, for the tests: called once a pack and its index are
	// written under their temporary names, before they are renamed.
	beforePlaced func()
	// A pack writer's buffer and compressors are taken from pools and
	// given back when it is done: a fresh pack is written at every
	// boundary (fresh.go), and making them anew (a compressor's state is
	// some 800 KB) cost more than writing the pack.
	bufPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}
	// The compaction's compressors are klauspost/compress's zlib, not the
	// standard library's: the same format and about the same sizes, in
	// less time (the 8 MB tree of playbook-runs/ at 100,000 runs, which
	// each compaction writes whole once: 27 ms at best speed against 59;
	// 60 against 97 at the default level). The compressor was a third of
	// a compaction's CPU there.
	defaultPool = sync.Pool{New: func() any { zw, _ := kzlib.NewWriterLevel(nil, kzlib.DefaultCompression); return zw }}
	fastPool    = sync.Pool{New: func() any { zw, _ := kzlib.NewWriterLevel(nil, kzlib.BestSpeed); return zw }}
	storePool   = sync.Pool{New: func() any { zw, _ := zlib.NewWriterLevel(nil, zlib.NoCompression); return zw }}
)

// release gives the writer's buffer and compressors back to their pools.
func (w *packWriter) release() {
	if w.bw != nil {
		w.bw.Reset(nil)
		bufPool.Put(w.bw)
		w.bw = nil
	}
	if w.zw != nil {
		// Pointed away from this writer, so that the pool holds none of
		// it (a large compaction's index entries).
		w.zw.Reset(io.Discard)
		w.fast.Reset(io.Discard)
		defaultPool.Put(w.zw)
		fastPool.Put(w.fast)
		w.zw, w.fast = nil, nil
	}
	if w.store != nil {
		w.store.Reset(io.Discard)
		storePool.Put(w.store)
		w.store = nil
	}
}

func newPackWriter(dir string, count int) (*packWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n := tmpSeq.Add(1)
	tmp := filepath.Join(dir, fmt.Sprintf("%s%d_%d", tmpPackPrefix, os.Getpid(), n))
	tmpIdx := filepath.Join(dir, fmt.Sprintf("%s%d_%d", tmpIdxPrefix, os.Getpid(), n))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return nil, err
	}
	bw := bufPool.Get().(*bufio.Writer)
	bw.Reset(f)
	w := &packWriter{dir: dir, tmp: tmp, tmpIdx: tmpIdx, f: f, bw: bw, sum: sha1.New(), crc: crc32.NewIEEE(), count: count}
	w.zw = defaultPool.Get().(*kzlib.Writer)
	w.fast = fastPool.Get().(*kzlib.Writer)
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

// fastFrom is the size from which an object is compressed at zlib's best
// speed: a large tree whole, the first version of playbook-runs/ in a
// compaction at 100,000 runs (7 MB, mostly SHA-1s, which no level
// compresses much), took half of the compaction's time at the default.
const fastFrom = 1 << 20

// abandon removes the temporary pack unless it was finished.
func (w *packWriter) abandon() {
	w.release()
	if w.done {
		return
	}
	w.f.Close()
	os.Remove(w.tmp)
}

// object writes one entry: data compressed under its header.
func (w *packWriter) object(id object.Hash, typ byte, size, rel int64, data []byte) error {
	if w.written == w.count {
		return errors.New("more objects than the pack was begun for")
	}
	start := w.off
	w.crc.Reset()
	if _, err := w.Write(AppendEntryHeader(w.hdr[:0], typ, size, rel)); err != nil {
		return err
	}
	var zw interface {
		io.WriteCloser
		Reset(io.Writer)
	} = w.zw
	switch {
	case w.store != nil:
		zw = w.store
	case len(data) >= fastFrom:
		zw = w.fast
	}
	zw.Reset(w)
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	w.idx = append(w.idx, IndexEntry{ID: id, Offset: uint64(start), CRC: w.crc.Sum32()})
	w.written++
	return nil
}

// finish writes the checksum, syncs the pack, writes its index, and renames
// both into place: the pack first, then its index, as git does. It answers
// the pack's path without extension.
func (w *packWriter) finish(ctx context.Context) (string, error) {
	if w.written != w.count {
		return "", fmt.Errorf("%d objects written of the %d the pack was begun for", w.written, w.count)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := w.bw.Flush(); err != nil {
		return "", err
	}
	var sum object.Hash
	copy(sum[:], w.sum.Sum(nil))
	if _, err := w.f.Write(sum[:]); err != nil {
		return "", err
	}
	if !w.noSync {
		if err := w.f.Sync(); err != nil {
			return "", err
		}
	}
	if err := w.f.Close(); err != nil {
		return "", err
	}
	f, err := os.OpenFile(w.tmpIdx, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return "", err
	}
	defer os.Remove(w.tmpIdx)
	err = EncodeIndex(f, w.idx, sum)
	if err == nil && !w.noSync {
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
	if beforePlaced != nil {
		beforePlaced()
	}
	name := filepath.Join(w.dir, "pack-"+sum.String())
	if placed(name) {
		// The same objects in the same order are in place already, indexed
		// (a compaction that found nothing to change, a commit's objects
		// written again): the pack is the same to the byte, and the one in
		// place is not touched. Renamed over, and its index then failing,
		// it was removed, and every object it held with it.
		return name, nil
	}
	if err := os.Rename(w.tmp, name+".pack"); err != nil {
		return "", err
	}
	w.done = true
	if err := os.Rename(w.tmpIdx, name+".idx"); err != nil {
		if !placed(name) {
			os.Remove(name + ".pack") // no index: no reader saw it
		}
		return "", err
	}
	return name, nil
}

// placed reports whether the pack name (without extension) and its index
// are both in place.
func placed(name string) bool {
	_, perr := os.Stat(name + ".pack")
	_, ierr := os.Stat(name + ".idx")
	return perr == nil && ierr == nil
}

// syncDir makes a folder's entries durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// TmpObjectPrefix begins the name of a loose object's temporary file in
// the object store's own folder (the vault's objects.placeLate):
// "tmp_obj_<pid>_<n>". git neither reads nor removes such a file there.
const TmpObjectPrefix = "tmp_obj_"

// removeDeadTemps removes the temporary files of processes that are gone
// whose names in dir are prefix, the pid, "_" and a number: the packs' in
// objects/pack, the loose objects' in objects. git's own temporary packs
// and indexes there begin with the same words, followed by six letters
// and digits (mkstemp's, with no "_"), which may all be digits: such a
// file is a git process's at work (a fetch, a repack) and is never taken
// for a pid's.
func removeDeadTemps(dir, prefix string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, prefix+"*"))
	for _, t := range tmps {
		pid, seq, ok := strings.Cut(strings.TrimPrefix(filepath.Base(t), prefix), "_")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if _, serr := strconv.Atoi(seq); err != nil || serr != nil || n == os.Getpid() {
			continue
		}
		if fsys.Gone(n) {
			os.Remove(t)
		}
	}
}

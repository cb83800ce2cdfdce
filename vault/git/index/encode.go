package index

import (
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"quire/vault/git/object"
)

// Encode appends the index file of entries (sorted by name, stage 0) to
// buf: version 2, as git writes it, or 3 when an entry carries an extended
// flag (skip-worktree, intent-to-add), as git does; no extensions (a
// cache-tree would go stale; git rebuilds it); the checksum last.
func Encode(buf []byte, entries []*Entry) []byte {
	return encodeExt(buf, nil, entries, false)
}

// EncodeV4 is Encode in version 4, which git writes with index.version 4
// or feature.manyFiles: each name prefix-compressed against the one
// before it (the bytes it strips, as git's offset varint, then the rest
// and a NUL), no padding. At 600,000 entries of run folders' paths the
// index is less than half as large, and git reads it faster.
func EncodeV4(buf []byte, entries []*Entry) []byte {
	return encodeExt(buf, nil, entries, true)
}

// EncodeExt is Encode (EncodeV4 when v4) with the extensions ext after
// the entries: each its signature, its size and its body, as
// AppendExtension writes them.
func EncodeExt(buf []byte, entries []*Entry, v4 bool, ext ...[]byte) []byte {
	return encodeExt(buf, nil, entries, v4, ext...)
}

// EncodeSplit appends the split index that applies s to the shared index
// sharedID: the replacements first, written without their names, then the
// entries added, and the link extension; in version 4 when v4 is set.
func EncodeSplit(buf []byte, s Split, sharedID object.Hash, v4 bool) []byte {
	return EncodeSplitExt(buf, s, sharedID, v4)
}

// EncodeSplitExt is EncodeSplit with the extensions ext after the link
// extension: git writes the cache-tree and the untracked cache of a split
// index in its own file, never in the shared index.
func EncodeSplitExt(buf []byte, s Split, sharedID object.Hash, v4 bool, ext ...[]byte) []byte {
	buf = EncodeSplitHead(buf, s, sharedID, v4)
	for _, p := range ext {
		buf = append(buf, p...)
	}
	sum := sha1.Sum(buf)
	return append(buf, sum[:]...)
}

// EncodeSplitHead is the head of EncodeSplitExt's file: its entries and
// its link extension, without the extensions that follow and the
// checksum. The file is then the head, the extensions, and the checksum
// Sum answers of them all; the caller writes each piece as it holds it
// (git's untracked cache, 14 MB at 100,000 runs, is not copied).
//
// It is written at each boundary into the last one's buffer, and
// allocates nothing more once that has room: at 100,000 runs the link's
// bitmaps and the entries copied into one list were 0.7 MB a boundary
// for the collector, whose cycles the slowest boundaries met.
func EncodeSplitHead(buf []byte, s Split, sharedID object.Hash, v4 bool) []byte {
	room := 8 + len(sharedID) + ewahRoom(s.Delete) + ewahRoom(s.Replace)
	buf = encodeBody(buf, s.Replaced, s.Added, v4, room)
	return appendLink(buf, sharedID, s)
}

// Sum is the checksum of an index file whose pieces these are: the SHA-1
// of them all, in order.
func Sum(pieces ...[]byte) []byte {
	h := sha1.New()
	for _, p := range pieces {
		h.Write(p)
	}
	return h.Sum(nil)
}

// AppendExtension appends one extension: its signature, its body's size
// and its body.
func AppendExtension(buf []byte, sig string, body []byte) []byte {
	return append(ExtensionHeader(buf, sig, len(body)), body...)
}

// ExtensionHeader appends an extension's signature and the size of its
// body, which is to follow.
func ExtensionHeader(buf []byte, sig string, size int) []byte {
	buf = append(buf, sig[:4]...)
	return binary.BigEndian.AppendUint32(buf, uint32(size))
}

// AppendFSMonitor appends the body of an FSMN extension (gitformat-index(5),
// "File System Monitor cache"): its head as Decode read it (the version,
// and the monitor's token or time), then the bitmap of the entries not
// FSMonitorValid, by position in the whole index.
func AppendFSMonitor(buf, head []byte, entries []*Entry) []byte {
	var dirty []int
	for i, e := range entries {
		if !e.FSMonitorValid {
			dirty = append(dirty, i)
		}
	}
	buf = append(buf, head...)
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf = appendEWAH(buf, dirty)
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf
}

// TreeNode is a folder of a cache-tree: its path from its parent (no
// slash), the count of index entries at or below it, and its tree.
type TreeNode struct {
	Name  string
	Count int
	Tree  object.Hash
}

// AppendCacheTree appends the body of a TREE extension (gitformat-index(5),
// "Cache tree") that holds the root, valid, as the tree root of all count
// entries, and the folders subs of the root, each valid, with no deeper
// folders: git trusts a valid folder whole (unpack-trees.c,
// cache_tree_matches_traversal; cache-tree.c, update_one), so git status
// compares the index with HEAD without reading a tree of those folders,
// and a deeper folder git needs it makes itself (git commit). subs are
// written in git's order for a cache-tree's subtrees: the shorter name
// first, then by bytes (cache-tree.c, subtree_name_cmp).
func AppendCacheTree(buf []byte, root object.Hash, count int, subs []TreeNode) []byte {
	subs = append([]TreeNode(nil), subs...)
	sort.Slice(subs, func(i, j int) bool {
		a, b := subs[i].Name, subs[j].Name
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	buf = fmt.Appendf(buf, "\x00%d %d\n", count, len(subs))
	buf = append(buf, root[:]...)
	for _, s := range subs {
		buf = fmt.Appendf(append(buf, s.Name...), "\x00%d 0\n", s.Count)
		buf = append(buf, s.Tree[:]...)
	}
	return buf
}

// encodeExt is Encode with the first nameless entries written
// without their names (a split index's replacements, which take the names
// of the shared entries they replace) and the extensions ext (each with
// its signature and size, in as many pieces as the caller has) before the
// checksum; in version 4 when v4.
func encodeExt(buf []byte, nameless, named []*Entry, v4 bool, ext ...[]byte) []byte {
	room := 20
	for _, p := range ext {
		room += len(p)
	}
	buf = encodeBody(buf, nameless, named, v4, room)
	for _, p := range ext {
		buf = append(buf, p...)
	}
	sum := sha1.Sum(buf)
	return append(buf, sum[:]...)
}

// encodeBody is encodeExt's header and entries, the nameless ones first,
// with room after them for room bytes more (what the caller appends: its
// extensions, the checksum). A buf too small for it is replaced by one with
// an eighth more room: a split index's own file, written at each boundary
// into the last one's room, grows by an entry or two a boundary.
func encodeBody(buf []byte, nameless, named []*Entry, v4 bool, room int) []byte {
	version := uint32(2)
	size := 12 + room
	for k, part := range [2][]*Entry{nameless, named} {
		for _, e := range part {
			n := 62
			if e.SkipWorktree || e.IntentToAdd {
				version = 3
				n += 2
			}
			if k == 1 {
				n += len(e.Name)
			}
			size += (n + 8) &^ 7
		}
	}
	if v4 {
		version = 4
	}
	if cap(buf)-len(buf) < size {
		buf = append(make([]byte, 0, len(buf)+size+size/8), buf...)
	}
	be := binary.BigEndian
	buf = append(buf, "DIRC"...)
	buf = be.AppendUint32(buf, version)
	buf = be.AppendUint32(buf, uint32(len(nameless)+len(named)))
	prev := ""
	for _, e := range nameless {
		buf = appendEntry(buf, e, "", v4, prev)
		prev = ""
	}
	for _, e := range named {
		buf = appendEntry(buf, e, e.Name, v4, prev)
		prev = e.Name
	}
	return buf
}

// appendEntry appends one entry under name (a split index's replacement:
// "", its shared entry's), in version 4 stripped against prev, the name of
// the one before.
func appendEntry(buf []byte, e *Entry, name string, v4 bool, prev string) []byte {
	be := binary.BigEndian
	start := len(buf)
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
	if v4 {
		// As git's ce_write_entry: a nameless entry strips all of
		// the name before it, and the next is stripped against "".
		common := 0
		for common < len(prev) && common < len(name) && prev[common] == name[common] {
			common++
		}
		buf = appendVarint(buf, uint64(len(prev)-common))
		return append(append(buf, name[common:]...), 0)
	}
	buf = append(buf, name...)
	// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
	for pad := 8 - (len(buf)-start)%8; pad > 0; pad-- {
		buf = append(buf, 0)
	}
	return buf
}

// appendVarint appends git's offset varint (varint.c's encode_varint), as
// varint reads it.
func appendVarint(buf []byte, v uint64) []byte {
	var b [10]byte
	i := len(b) - 1
	b[i] = byte(v & 127)
	for v >>= 7; v > 0; v >>= 7 {
		v--
		i--
		b[i] = 128 | byte(v&127)
	}
	return append(buf, b[i:]...)
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

// Split is how an index differs from its shared index: the shared
// entries replaced (their positions, and the new entries in that order),
// the ones deleted, and the entries added.
type Split struct {
	Replace, Delete []int
	Replaced, Added []*Entry
}

// NotShared is the count of entries the split index holds itself, which
// git's splitIndex.maxPercentChange compares with the whole.
func (s Split) NotShared() int { return len(s.Replaced) + len(s.Added) }

// Diff compares an index with its shared index, both sorted by name: an
// entry the same pointer is unchanged, at no cost per entry beyond the
// walk.
func Diff(base, cur []*Entry) Split {
	var d Split
	i, j := 0, 0
	for i < len(base) || j < len(cur) {
		switch {
		case i < len(base) && j < len(cur) && base[i] == cur[j]:
			i, j = i+1, j+1
		case j == len(cur) || i < len(base) && base[i].Name < cur[j].Name:
			d.Delete = append(d.Delete, i)
			i++
		case i == len(base) || cur[j].Name < base[i].Name:
			d.Added = append(d.Added, cur[j])
			j++
		default:
			if !Same(base[i], cur[j]) {
				d.Replace = append(d.Replace, i)
				d.Replaced = append(d.Replaced, cur[j])
			}
			i, j = i+1, j+1
		}
	}
	return d
}

// appendLink appends the `link` extension: the shared index's id, then
// the delete bitmap and the replace bitmap in git's EWAH form.
func appendLink(buf []byte, shared object.Hash, d Split) []byte {
	buf = append(buf, "link"...)
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0) // the body's size, once it is written
	buf = append(buf, shared[:]...)
	buf = appendEWAH(buf, d.Delete)
	buf = appendEWAH(buf, d.Replace)
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf
}

// ewahRoom is the most bytes appendEWAH writes for set: its three
// counts, and a word for each bit set and a run-length word before each,
// or a word for every 64 bits and one more, whichever is fewer.
func ewahRoom(set []int) int {
	words := 2*len(set) + 1
	if len(set) > 0 {
		words = min(words, 2*(set[len(set)-1]/64+1)+1)
	}
	return 12 + 8*words
}

// appendEWAH appends git's EWAH bitmap (ewah/ewah_io.c) with the bits at
// the sorted positions set: the bit count, the count of 64-bit words, the
// words (each run-length word: bit 0 the run's bit, 32 bits the count of
// clean words, 31 the count of literal words that follow), and the
// position of the last run-length word. Runs of zero words are
// compressed; words with a bit set are written as they are. The words go
// straight into buf, each run-length word set in place once its run ends.
func appendEWAH(buf []byte, set []int) []byte {
	be := binary.BigEndian
	bits := 0
	if len(set) > 0 {
		bits = set[len(set)-1] + 1
	}
	head := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0) // the counts, at the end
	first := len(buf)
	at, rlw := first, uint64(0) // the run-length word under way: where, and what
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	newRLW := func(w uint64) {
		be.PutUint64(buf[at:], rlw)
		at, rlw = len(buf), w
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	next := 0 // the next position of set to place
	for w := 0; w*64 < bits; w++ {
		var lit uint64
		for next < len(set) && set[next] < (w+1)*64 {
			lit |= 1 << (set[next] % 64)
			next++
		}
		run, lits := rlw>>1&0xffffffff, rlw>>33
		switch {
		case lit == 0 && lits == 0 && run < 0xffffffff:
			rlw += 1 << 1
		case lit == 0:
			newRLW(1 << 1)
		default:
			if lits == 0x7fffffff {
				newRLW(0)
			}
			rlw += 1 << 33
			buf = be.AppendUint64(buf, lit)
		}
	}
	be.PutUint64(buf[at:], rlw)
	be.PutUint32(buf[head:], uint32(bits))
	be.PutUint32(buf[head+4:], uint32((len(buf)-first)/8))
	return be.AppendUint32(buf, uint32((at-first)/8))
}

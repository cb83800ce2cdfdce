package vault

import (
	"bytes"
	"crypto/sha1"
	"encoding"
	"encoding/binary"
	"hash"
	"hash/adler32"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"quire/vault/git/index"
	"quire/vault/git/object"
	"quire/vault/git/pack"
)

// A large tree that every boundary writes again, playbook-runs/ (one entry
// a run: 7 MB at 100,000 runs), changes at one entry: the run folder's
// new tree. Encoding it, hashing it and writing its loose object whole were
// most of a boundary's CPU at 100,000 runs (AppendTree 4.6 ms, the order
// checked 2.6 ms, SHA-1 6.8 ms, zlib's stored blocks and their Adler-32
// 7.6 ms, in quire serve through 260 boundaries). So the last version of
// each large tree written is kept as bytes: the object's stream (header and
// content), where each entry ends, its loose object's bytes (zlib stored
// blocks, made here), the SHA-1 of the stream after each keptChunk of it
// and the stream's Adler-32. A next version that only changes entries'
// hashes (same names, same modes: a folder's new tree) is those bytes with
// each changed hash written over, in the stream and in the loose object,
// the SHA-1 taken again from the last chunk before the first change (the
// run folders a boundary touches are the recent ones, near the end of the
// tree), and the Adler-32 moved by each changed byte (adlerPatch).
//
// The id is the same SHA-1 git takes of the whole stream (SHA-1 is a
// chain over 64-byte blocks, and a state after a chunk is that chain's
// state), and the loose object is the zlib stream any reader inflates.
// Tests: TestKeptTreeIsWhatAWholeWriteMakes holds every version made this
// way to the bytes, id and loose object a whole write makes.

// keptFrom is the size from which a tree is kept, and its loose object
// stored, not compressed: playbook-runs/ from about 450 runs. At 1,000
// runs (70 KB) compressing it at zlib's best speed was 14 % of quire
// serve's CPU through 1,700 boundaries, and compaction, which compresses
// it, takes it as the kept tree's delta (knownDeltas) without reading it.
const keptFrom = 32 << 10

// keptChunk is how much of a stream lies between two kept sums: the most
// hashed again in front of a change. A loose object's stored blocks are
// half of it, so a chunk ends at a block's end.
const (
	keptChunk = 64 << 10
	keptBlock = keptChunk / 2
)

// keptMost is how many large trees are kept (a vault's playbooks each
// have a playbook-runs/).
const keptMost = 4

type keptTree struct {
	id     Hash
	hdr    int     // the length of the stream's header
	stream []byte  // "tree <size>\0" and the entries
	ends   []int32 // where each entry ends in stream: its hash is the 20 bytes before
	loose  []byte  // the loose object's file
	sha    [][]byte
	adler  uint32 // of stream: the loose object's last four bytes
	// late is the write of this version's loose object, under way beside
	// the rest of its commit (objects.writeLate), or nil: its bytes
	// change only once it is done (take).
	late *lateLoose
}

type keptTrees struct {
	mu    sync.Mutex
	trees []*keptTree // the last one written last
}

// take hands out the kept tree id, if kept, taking it out: the caller
// changes its bytes in place, once the write of its loose object under
// way, if any, is done.
func (k *keptTrees) take(id Hash) *keptTree {
	k.mu.Lock()
	var t *keptTree
	for i, c := range k.trees {
		if c.id == id {
			k.trees = append(k.trees[:i], k.trees[i+1:]...)
			t = c
			break
		}
	}
	k.mu.Unlock()
	if t != nil && t.late != nil {
		<-t.late.done
		t.late = nil
	}
	return t
}

func (k *keptTrees) put(t *keptTree) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.trees = append(k.trees, t)
	if len(k.trees) > keptMost {
		k.trees = append(k.trees[:0], k.trees[1:]...)
	}
}

// looseAt is where byte p of the stream lies in the loose object: after
// zlib's two-byte header and the five-byte header of each stored block up
// to and with p's.
func looseAt(p int) int { return 2 + 5*(p/keptBlock+1) + p }

// keepTree makes the kept form of a tree whose content is entries, in
// git's order: its stream, its loose object and its sums.
func keepTree(entries []treeEntry) *keptTree {
	buf := object.AppendTree(make([]byte, keptRoom, keptRoom+object.TreeSize(entries)), entries)
	ends := make([]int32, len(entries))
	p := 0
	for i, e := range entries {
		p += max(1, (bits.Len32(uint32(e.Mode))+2)/3) + 1 + len(e.Name) + 1 + 20 // octal digits, space, name, NUL, id
		ends[i] = int32(p)
	}
	return keepStream(buf, ends)
}

// keptRoom is the room kept in front of a tree's content for its header.
const keptRoom = 32

// keepStream makes the kept form of the tree whose content follows
// keptRoom bytes in buf, each entry ending at ends (from the content's
// start): its header written into the room, its loose object and its
// sums.
func keepStream(buf []byte, ends []int32) *keptTree {
	var hdr [keptRoom]byte
	h := object.AppendHeader(hdr[:0], object.Tree, len(buf)-keptRoom)
	copy(buf[keptRoom-len(h):], h)
	t := &keptTree{hdr: len(h), stream: buf[keptRoom-len(h):], ends: ends}
	for i := range ends {
		ends[i] += int32(len(h))
	}
	n := len(t.stream)
	blocks := (n + keptBlock - 1) / keptBlock
	t.loose = make([]byte, 2+5*blocks+n+4)
	t.loose[0], t.loose[1] = 0x78, 0x01 // deflate, 32 KiB window, the fastest level
	for b := 0; b < blocks; b++ {
		lo, hi := b*keptBlock, min((b+1)*keptBlock, n)
		at := looseAt(lo) - 5
		h := storedBlock(lo, n)
		copy(t.loose[at:], h[:])
		copy(t.loose[at+5:], t.stream[lo:hi])
	}
	t.sha = make([][]byte, n/keptChunk)
	t.adler = adler32.Checksum(t.stream)
	binary.BigEndian.PutUint32(t.loose[len(t.loose)-4:], t.adler)
	t.sum(0)
	return t
}

// treeEdit is a change of a kept tree's entries that reshapes it: the
// entry at (found) given e, or removed when e's hash is zero; or e added
// (not found) where git's order puts it.
type treeEdit struct {
	at    int
	found bool
	e     treeEntry
}

// reshape makes the kept form of the tree t is with edits made (each
// name at most once), from t's bytes: the entries between two edits are
// copied as they lie, where decoding the whole tree, sorting and
// encoding it again (a run started at 100,000 runs adds an entry to
// playbook-runs/) cost twice as much. Its SHA-1 and Adler-32 are taken
// whole: the header says the new size.
func (t *keptTree) reshape(edits []treeEdit) *keptTree {
	type op struct {
		at  int // the edit goes before the old entry at (an add), or is it
		add bool
		e   treeEntry
	}
	ops := make([]op, 0, len(edits))
	grow := 0
	for _, ed := range edits {
		at := ed.at
		if !ed.found {
			at = sort.Search(len(t.ends), func(i int) bool {
				n, m, _ := t.entryAt(i)
				return !treeLessName(n, m == object.Dir, ed.e.Name, ed.e.Mode == object.Dir)
			})
		}
		ops = append(ops, op{at, !ed.found, ed.e})
		grow += len(ed.e.Name) + 28
	}
	slices.SortStableFunc(ops, func(a, b op) int {
		if a.at != b.at {
			return a.at - b.at
		}
		if a.add != b.add { // an add goes before the entry at its place
			if a.add {
				return -1
			}
			return 1
		}
		if object.TreeLess(a.e, b.e) {
			return -1
		}
		return 1
	})
	buf := make([]byte, keptRoom, keptRoom+len(t.stream)-t.hdr+grow)
	ends := make([]int32, 0, len(t.ends)+len(ops))
	start := func(i int) int { // where the old entry i starts in t.stream
		if i == 0 {
			return t.hdr
		}
		return int(t.ends[i-1])
	}
	next := 0               // the first old entry not yet copied
	copyTo := func(i int) { // the old entries from next up to i, as they lie
		from := len(buf) - keptRoom - start(next)
		buf = append(buf, t.stream[start(next):start(i)]...)
		for j := next; j < i; j++ {
			ends = append(ends, int32(int(t.ends[j])+from))
		}
		next = i
	}
	for _, o := range ops {
		copyTo(o.at)
		if !o.add {
			next = o.at + 1 // the old entry is replaced or removed
		}
		if !o.e.Hash.IsZero() {
			buf = object.AppendTree(buf, []treeEntry{o.e})
			ends = append(ends, int32(len(buf)-keptRoom))
		}
	}
	copyTo(len(t.ends))
	return keepStream(buf, ends)
}

// storedBlock is the header of the stored deflate block of a stream of n
// bytes that starts at byte lo (its blocks keptBlock bytes long): the
// last one's final bit, and its length and the length's complement.
func storedBlock(lo, n int) (h [5]byte) {
	k := min(keptBlock, n-lo)
	if lo+k == n {
		h[0] = 1 // the final block; stored (type 0) as every one
	}
	binary.LittleEndian.PutUint16(h[1:], uint16(k))
	binary.LittleEndian.PutUint16(h[3:], ^uint16(k))
	return h
}

// sum takes the stream's SHA-1 again from byte from (the states kept
// before it are the stream's as it is), keeping its state after each
// chunk, and sets the id. The loose object's checksum is its bytes'
// (setHashes, keepStream): a write of them may be under way.
func (t *keptTree) sum(from int) {
	c := from / keptChunk
	sh := sha1.New()
	if c > 0 {
		resume(sh, t.sha[c-1])
	}
	for off := c * keptChunk; off < len(t.stream); off += keptChunk {
		sh.Write(t.stream[off:min(off+keptChunk, len(t.stream))])
		if k := off / keptChunk; k < len(t.sha) {
			t.sha[k] = state(sh, t.sha[k])
		}
	}
	sh.Sum(t.id[:0])
}

// adlerMod is Adler-32's modulus.
const adlerMod = 65521

// adlerPatch is the Adler-32 of n bytes whose checksum was sum once the
// byte at p (from 0) changes from was to now. Adler-32 is A = 1 + the sum
// of the bytes and B = the sum of A after each byte, n + the sum of each
// byte times (n - p), both modulo 65521: a byte moves A by its change and
// B by its change times n - p, whatever the bytes around it.
func adlerPatch(sum uint32, n, p int, was, now byte) uint32 {
	d := int64(now) - int64(was)
	a := (int64(sum&0xffff) + d) % adlerMod
	b := (int64(sum>>16) + d*int64(n-p)%adlerMod) % adlerMod
	if a < 0 {
		a += adlerMod
	}
	if b < 0 {
		b += adlerMod
	}
	return uint32(b)<<16 | uint32(a)
}

func state(h hash.Hash, buf []byte) []byte {
	b, err := h.(encoding.BinaryAppender).AppendBinary(buf[:0])
	if err != nil {
		panic(err) // the standard library's SHA-1 and Adler-32 always can
	}
	return b
}

func resume(h hash.Hash, b []byte) {
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(b); err != nil {
		panic(err)
	}
}

// hashAt is a kept tree's entry i given the hash h (its mode and name
// the same).
type hashAt struct {
	i int
	h Hash
}

// patch makes t the tree whose entries differ from t's only in the hashes
// set gives them, and answers it as a git delta of the tree t was (its
// content's bytes at the changed hashes), for compaction.
func (t *keptTree) patch(set []hashAt) []byte {
	t.sum(t.setHashes(set))
	return t.delta(set)
}

// setHashes gives the entries set names their new hashes in the stream
// and the loose object, with its Adler-32: the loose object's bytes are
// then whole, and the id is not yet summed (sum). It answers where the
// first change lies.
func (t *keptTree) setHashes(set []hashAt) (first int) {
	first = len(t.stream)
	for _, c := range set {
		end := int(t.ends[c.i])
		for j := 0; j < 20; j++ {
			p := end - 20 + j
			if t.stream[p] != c.h[j] {
				t.adler = adlerPatch(t.adler, len(t.stream), p, t.stream[p], c.h[j])
				t.stream[p] = c.h[j]
			}
			t.loose[looseAt(p)] = c.h[j]
		}
		first = min(first, end-20)
	}
	binary.BigEndian.PutUint32(t.loose[len(t.loose)-4:], t.adler)
	return first
}

// delta is the tree's delta from its version before the hashes set gave
// (setHashes).
func (t *keptTree) delta(set []hashAt) []byte {
	return pack.ReplaceDelta(t.stream[t.hdr:], t.hashRanges(nil, set))
}

// hashRanges adds to ranges where the hashes of the entries set changes
// lie in the tree's content, and answers them in order, each once (an
// entry changed twice).
func (t *keptTree) hashRanges(ranges [][2]int, set []hashAt) [][2]int {
	for _, c := range set {
		end := int(t.ends[c.i]) - t.hdr
		ranges = append(ranges, [2]int{end - 20, end})
	}
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	return slices.Compact(ranges)
}

// entryAt reads the entry i of the tree's stream: its name (the
// stream's own bytes), mode and hash.
func (t *keptTree) entryAt(i int) (name []byte, mode object.Mode, h Hash) {
	start := t.hdr
	if i > 0 {
		start = int(t.ends[i-1])
	}
	end := int(t.ends[i])
	rec := t.stream[start : end-21] // "<mode> <name>", then NUL and the hash
	sp := bytes.IndexByte(rec, ' ')
	for _, c := range rec[:sp] {
		mode = mode<<3 | object.Mode(c-'0')
	}
	copy(h[:], t.stream[end-20:end])
	return rec[sp+1:], mode, h
}

// find is the position of the entry name, as object.FindEntry finds it
// in the tree's entries (a kept tree is in git's order, as it was made).
func (t *keptTree) find(name string) (int, bool) {
	for _, dir := range []bool{false, true} {
		i := sort.Search(len(t.ends), func(i int) bool {
			n, m, _ := t.entryAt(i)
			return !treeLessName(n, m == object.Dir, name, dir)
		})
		if i < len(t.ends) {
			if n, _, _ := t.entryAt(i); string(n) == name {
				return i, true
			}
		}
	}
	return 0, false
}

// treeLessName is object.TreeLess of an entry named a (a folder when
// aDir) and one named b.
func treeLessName(a []byte, aDir bool, b string, bDir bool) bool {
	n := min(len(a), len(b))
	for j := 0; j < n; j++ {
		if a[j] != b[j] {
			return a[j] < b[j]
		}
	}
	ac, bc := byte(0), byte(0)
	if len(a) > n {
		ac = a[n]
	} else if aDir {
		ac = '/'
	}
	if len(b) > n {
		bc = b[n]
	} else if bDir {
		bc = '/'
	}
	return ac < bc
}

// entry answers the entry name of the tree id, when id is a kept tree
// (kept false otherwise): its position, mode and hash, read in the kept
// bytes. A writer takes a tree out (take) before it changes its bytes.
func (k *keptTrees) entry(id Hash, name string) (i int, mode object.Mode, h Hash, found, kept bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, t := range k.trees {
		if t.id == id {
			if i, found = t.find(name); found {
				_, mode, h = t.entryAt(i)
			}
			return i, mode, h, found, true
		}
	}
	return 0, 0, ZeroHash, false, false
}

// knownMost bounds the deltas kept for compaction (about 1 KB each at
// 100,000 runs): past it they are dropped, and compaction reads the
// objects as any other.
const knownMost = 8192

// knownDeltas are the deltas of the trees made from kept bytes, by the
// new tree's id, until a compaction of this process packs them.
type knownDeltas struct {
	mu sync.Mutex
	m  map[Hash]knownDelta
}

type knownDelta struct {
	base  Hash
	delta []byte
}

func (k *knownDeltas) add(id, base Hash, delta []byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= knownMost {
		k.m = map[Hash]knownDelta{}
	}
	k.m[id] = knownDelta{base, delta}
}

// appendedMost is the largest version of an append-only file kept as a
// delta of its last: proving the last version is its prefix takes its
// SHA-1 again, and a larger log is left to compaction's affix delta.
const appendedMost = 8 << 20

// knowAppended keeps, for compaction, the new version id (data) of an
// append-only file whose staged entry is was: a delta that appends to
// the staged blob, when that blob is data's prefix (its id proves it).
func (o *objects) knowAppended(was index.Entry, id Hash, data []byte) {
	n := int(was.Size)
	if n == 0 || n >= len(data) || len(data) > appendedMost || hashObject("blob", data[:n]) != was.Hash {
		return
	}
	o.known.add(id, was.Hash, pack.AppendDelta(data, n))
}

// known is pack.Known: a delta is handed out once.
func (k *knownDeltas) known(id object.Hash) (object.Hash, []byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	d, ok := k.m[id]
	delete(k.m, id)
	return d.base, d.delta, ok
}

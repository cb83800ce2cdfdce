package index

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"unsafe"

	"quire/vault/git/object"
)

// Index is an index as read: its entries, the root of git's cache-tree,
// and, for a split index, the shared index's entries and id. An entry the
// split index does not replace is the same *Entry in Entries and Shared.
type Index struct {
	Entries []*Entry // sorted by name
	// CacheTree is the tree the whole index makes, as git's cache-tree
	// (the TREE extension) says when git left it valid; zero when there is
	// none.
	CacheTree object.Hash
	// Shared and SharedID are the shared index of a split index; nil and
	// zero when the index is whole.
	Shared   []*Entry
	SharedID object.Hash
	// Version is the main file's version: 2, 3 or 4.
	Version uint32
	// Untracked is the body of git's untracked cache (the UNTR
	// extension) as git wrote it, nil when there is none
	// (DecodeUntracked reads it).
	Untracked []byte
	// FSMonitor is the head of git's file system monitor extension
	// (FSMN: its version and its token, what AppendFSMonitor writes
	// again), nil when there is none or its bitmap does not fit the
	// index; each entry's FSMonitorValid holds its bit.
	FSMonitor []byte
}

// Decode reads an index file in the forms git writes (versions 2, 3 and
// 4, whole or split). shared answers the entries of a shared index by its
// id (DecodeShared of its file, or what was decoded before: a shared index
// is named by its checksum, so one id is one content). The checksum is
// checked when verify is set.
func Decode(data []byte, verify bool, shared func(id object.Hash) ([]*Entry, error)) (Index, error) {
	var d Index
	entries, link, root, untr, fsmn, err := decodeFile(data, true, verify)
	d.CacheTree, d.Untracked = root, untr
	if len(data) >= 8 {
		d.Version = binary.BigEndian.Uint32(data[4:])
	}
	if err != nil {
		return d, err
	}
	if link == nil {
		d.Entries = entries
	} else {
		base, err := shared(link.shared)
		if err != nil {
			return d, fmt.Errorf("the shared index %s of the split index: %w", link.shared, err)
		}
		if d.Entries, err = mergeSplit(base, entries, link); err != nil {
			return d, err
		}
		d.Shared, d.SharedID = base, link.shared
	}
	// The monitor's bitmap is over the whole index, a split one merged
	// (git's fill_fsmonitor_bitmap and tweak_fsmonitor).
	d.FSMonitor = applyFSMonitor(fsmn, d.Entries)
	return d, nil
}

// applyFSMonitor sets each entry's FSMonitorValid from an FSMN
// extension's bitmap (a bit set: the entry is not valid), and answers the
// extension's head; nil, every entry not valid, when there is none or it
// does not read as git writes it.
func applyFSMonitor(ext []byte, entries []*Entry) []byte {
	for _, e := range entries {
		e.FSMonitorValid = false
	}
	if len(ext) < 4 {
		return nil
	}
	var head int
	switch binary.BigEndian.Uint32(ext) {
	case 1: // a time in nanoseconds
		head = 4 + 8
	case 2: // a token the monitor gave, and a NUL
		z := bytes.IndexByte(ext[4:], 0)
		if z < 0 {
			return nil
		}
		head = 4 + z + 1
	default:
		return nil
	}
	if len(ext) < head+4 {
		return nil
	}
	size := int(binary.BigEndian.Uint32(ext[head:]))
	if size != len(ext)-head-4 {
		return nil
	}
	dirty, n, err := decodeEWAH(ext[head+4:])
	if err != nil || n != size || len(dirty) > len(entries) {
		return nil
	}
	for i, e := range entries {
		e.FSMonitorValid = i >= len(dirty) || !dirty[i]
	}
	return ext[:head]
}

// DecodeShared reads the shared index id of a split index from its file's
// bytes.
func DecodeShared(id object.Hash, data []byte, verify bool) ([]*Entry, error) {
	if len(data) < 20 || !bytes.Equal(data[len(data)-20:], id[:]) {
		// git names a shared index by its checksum, and checks it.
		return nil, fmt.Errorf("the shared index %s is not the one its name says", id)
	}
	entries, link, _, _, _, err := decodeFile(data, false, verify)
	if err != nil {
		return nil, fmt.Errorf("the shared index %s: %w", id, err)
	}
	if link != nil {
		return nil, fmt.Errorf("the shared index %s is itself split", id)
	}
	return entries, nil
}

// cacheTreeRoot reads the root entry of a TREE extension: an empty path,
// the count of entries it covers (-1 when invalid), the count of subtrees,
// and, when valid, the tree's id.
func cacheTreeRoot(ext []byte) object.Hash {
	if len(ext) < 1 || ext[0] != 0 {
		return object.ZeroHash
	}
	nl := bytes.IndexByte(ext, '\n')
	if nl < 0 || len(ext) < nl+1+20 {
		return object.ZeroHash
	}
	count, _, ok := bytes.Cut(ext[1:nl], []byte{' '})
	if !ok || len(count) == 0 || count[0] == '-' {
		return object.ZeroHash
	}
	var h object.Hash
	copy(h[:], ext[nl+1:nl+21])
	return h
}

var errShort = errors.New("it ends in the middle of an entry")

// linkExt is the `link` extension of a split index.
type linkExt struct {
	shared          object.Hash
	delete, replace []bool // by position in the shared index
	hasDel, hasRepl bool
}

func decodeFile(data []byte, main, verify bool) (entries []*Entry, link *linkExt, root object.Hash, untr, fsmn []byte, err error) {
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return nil, nil, root, nil, nil, errors.New("it is not a git index (no DIRC header)")
	}
	body := data[:len(data)-20]
	if verify {
		if err := checkSum(data); err != nil {
			return nil, nil, root, nil, nil, err
		}
	}
	be := binary.BigEndian
	version := be.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, nil, root, nil, nil, fmt.Errorf("it is of version %d; git writes 2, 3 and 4", version)
	}
	count := int(be.Uint32(data[8:]))
	// Every entry takes at least 63 bytes (62 of fields and a name's NUL)
	// in versions 2 and 3, and at least 64 in version 4 (a varint).
	if count > len(body)/62 {
		return nil, nil, root, nil, nil, fmt.Errorf("it says it holds %d entries, more than its %d bytes can", count, len(data))
	}
	// Names are cut from the file's bytes without copying: data is never
	// written to after it is read.
	text := unsafe.String(&body[0], len(body))
	slab := make([]Entry, count)
	entries = make([]*Entry, count)
	off := 12
	prev := ""
	for i := 0; i < count; i++ {
		start := off
		if off+62 > len(body) {
			return nil, nil, root, nil, nil, errShort
		}
		e := &slab[i]
		flags := fillFixed(e, body[off:])
		off += 62
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, nil, root, nil, nil, fmt.Errorf("entry %d has extended flags in a version 2 index", i)
			}
			if off+2 > len(body) {
				return nil, nil, root, nil, nil, errShort
			}
			x := be.Uint16(body[off:])
			e.IntentToAdd, e.SkipWorktree = x&(1<<13) != 0, x&(1<<14) != 0
			off += 2
		}
		if version == 4 {
			strip, n := varint(body[off:])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, nil, root, nil, nil, fmt.Errorf("entry %d strips %d bytes of a name of %d", i, strip, len(prev))
			}
			off += n
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return nil, nil, root, nil, nil, errShort
			}
			// A name of "" (all of the last one stripped, nothing added) is
			// a split index's entry that takes its shared entry's name.
			e.Name = prev[:len(prev)-int(strip)] + text[off:off+end]
			off += end + 1
		} else {
			n := int(flags & 0xfff)
			if n == 0xfff {
				n = bytes.IndexByte(body[off:], 0)
				if n < 0 {
					return nil, nil, root, nil, nil, errShort
				}
			}
			if off+n >= len(body) || body[off+n] != 0 {
				return nil, nil, root, nil, nil, fmt.Errorf("entry %d's name does not end where its length says", i)
			}
			e.Name = text[off : off+n]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off = start + (off-start+n+8)&^7
			if off > len(body) {
				return nil, nil, root, nil, nil, errShort
			}
		}
		prev = e.Name
		entries[i] = e
	}
	if link, root, untr, fsmn, err = readExtensions(body, off, main); err != nil {
		return nil, nil, root, nil, nil, err
	}
	if link == nil {
		for _, e := range entries {
			if e.Name == "" {
				return nil, nil, root, nil, nil, errors.New("an entry has no name")
			}
		}
	}
	if !sort.SliceIsSorted(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name }) && link == nil {
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	}
	return entries, link, root, untr, fsmn, nil
}

// readExtensions reads the extensions of an index from off in body (the
// file less its checksum) to its end.
func readExtensions(body []byte, off int, main bool) (link *linkExt, root object.Hash, untr, fsmn []byte, err error) {
	be := binary.BigEndian
	for off < len(body) {
		if off+8 > len(body) {
			return nil, object.ZeroHash, nil, nil, errors.New("an extension's header is cut")
		}
		sig, size := string(body[off:off+4]), int(be.Uint32(body[off+4:]))
		off += 8
		if size < 0 || size > len(body)-off {
			return nil, object.ZeroHash, nil, nil, fmt.Errorf("extension %q says it holds %d bytes, past the end", sig, size)
		}
		ext := body[off : off+size]
		off += size
		switch {
		case sig == "link" && main:
			l, err := decodeLink(ext)
			if err != nil {
				return nil, object.ZeroHash, nil, nil, fmt.Errorf("the link extension: %w", err)
			}
			link = l
		case sig == "TREE":
			root = cacheTreeRoot(ext)
		case sig == "UNTR" && main:
			untr = ext
		case sig == "FSMN" && main:
			fsmn = ext
		case sig[0] >= 'A' && sig[0] <= 'Z':
			// Optional (REUC, EOIE, IEOT): skipped.
		default:
			return nil, object.ZeroHash, nil, nil, fmt.Errorf("it holds the extension %q, which quire does not know and git says must be understood", sig)
		}
	}
	return link, root, untr, fsmn, nil
}

// varint is git's offset varint (varint.c): 7 bits a byte, high bit
// set on all but the last, one added at each continuation.
func varint(p []byte) (uint64, int) {
	var v uint64
	for i, c := range p {
		if i > 9 {
			return 0, 0
		}
		if i > 0 {
			v++
		}
		v = v<<7 | uint64(c&127)
		if c&128 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

func decodeLink(ext []byte) (*linkExt, error) {
	if len(ext) < 20 {
		return nil, errors.New("it is shorter than a shared index's id")
	}
	l := &linkExt{}
	copy(l.shared[:], ext)
	rest := ext[20:]
	if len(rest) == 0 {
		return l, nil
	}
	var err error
	var n int
	if l.delete, n, err = decodeEWAH(rest); err != nil {
		return nil, fmt.Errorf("its delete bitmap: %w", err)
	}
	rest = rest[n:]
	if l.replace, n, err = decodeEWAH(rest); err != nil {
		return nil, fmt.Errorf("its replace bitmap: %w", err)
	}
	if n != len(rest) {
		return nil, errors.New("bytes follow its bitmaps")
	}
	l.hasDel, l.hasRepl = true, true
	return l, nil
}

// decodeEWAH reads one of git's EWAH bitmaps (ewah/ewah_io.c): the bit
// count, the count of 64-bit words, the words, and the position of the
// last run-length word. It answers the bits and the bytes it read.
func decodeEWAH(p []byte) ([]bool, int, error) {
	be := binary.BigEndian
	if len(p) < 8 {
		return nil, 0, errShort
	}
	bits, words := int(be.Uint32(p)), int(be.Uint32(p[4:]))
	if words > (len(p)-12)/8 || bits > words*64*64 && bits > 1<<24 {
		return nil, 0, errors.New("it says it is longer than it is")
	}
	if bits > 1<<27 {
		return nil, 0, errors.New("it says it holds more bits than any index has entries")
	}
	w := p[8 : 8+8*words]
	out := make([]bool, bits)
	pos := 0
	for i := 0; i < words; {
		rlw := be.Uint64(w[8*i:])
		i++
		run := int(rlw >> 1 & 0xffffffff)
		lits := int(rlw >> 33)
		if rlw&1 != 0 {
			for k := 0; k < run*64 && pos+k < bits; k++ {
				out[pos+k] = true
			}
		}
		pos += run * 64
		if pos > bits+64 && run > 0 {
			return nil, 0, errors.New("a run goes past its bit count")
		}
		if lits > words-i {
			return nil, 0, errors.New("a run-length word counts more literal words than follow")
		}
		for k := 0; k < lits; k++ {
			lit := be.Uint64(w[8*(i+k):])
			for b := 0; b < 64; b++ {
				if lit&(1<<b) != 0 {
					if pos+b >= bits {
						return nil, 0, errors.New("a bit is set past its bit count")
					}
					out[pos+b] = true
				}
			}
			pos += 64
		}
		i += lits
	}
	return out, 8 + 8*words + 4, nil
}

// mergeSplit applies a split index to its shared index as git does
// (split-index.c, merge_base_index): the main index's first entries replace
// the shared entries the replace bitmap marks, in order, taking their
// names; the shared entries the delete bitmap marks go; the main index's
// other entries are added.
func mergeSplit(base, main []*Entry, l *linkExt) ([]*Entry, error) {
	if len(l.replace) > len(base) && bitsFrom(l.replace, len(base)) || len(l.delete) > len(base) && bitsFrom(l.delete, len(base)) {
		return nil, errors.New("the split index's bitmaps mark entries its shared index lacks")
	}
	merged := make([]*Entry, 0, len(base)+len(main))
	r := 0
	for i, e := range base {
		if i < len(l.replace) && l.replace[i] {
			if r >= len(main) || main[r].Name != "" {
				return nil, errors.New("the split index replaces more entries than it holds without names")
			}
			c := *main[r]
			c.Name = e.Name
			e = &c
			r++
		}
		if i < len(l.delete) && l.delete[i] {
			continue
		}
		merged = append(merged, e)
	}
	for _, e := range main[r:] {
		if e.Name == "" {
			return nil, errors.New("an entry of the split index has no name and replaces nothing")
		}
		i := sort.Search(len(merged), func(i int) bool { return merged[i].Name >= e.Name })
		if i < len(merged) && merged[i].Name == e.Name {
			merged[i] = e
			continue
		}
		merged = append(merged, nil)
		copy(merged[i+1:], merged[i:])
		merged[i] = e
	}
	sort.SliceStable(merged, func(i, j int) bool { return merged[i].Name < merged[j].Name })
	return merged, nil
}

func bitsFrom(b []bool, from int) bool {
	for _, v := range b[from:] {
		if v {
			return true
		}
	}
	return false
}

// checkSum checks an index file's checksum, its last 20 bytes: the SHA-1
// of what comes before them, or twenty zero bytes, which git 2.40 and
// later write under index.skipHash (implied by feature.manyFiles) and
// read as no checksum, as JGit does. (An index written so was taken for
// a damaged one: quire check and a writer's repair rebuilt it from HEAD,
// and what a person had staged was gone.)
func checkSum(data []byte) error {
	body, sum := data[:len(data)-20], data[len(data)-20:]
	if object.Hash(sum) == object.ZeroHash {
		return nil
	}
	if h := sha1.Sum(body); !bytes.Equal(h[:], sum) {
		return errors.New("its checksum does not match its content")
	}
	return nil
}

package index

import (
	"bytes"
	"crypto/sha1"
)

// Patch is an entry of a whole index replaced by another of the same
// name: its position in the table, and the new entry.
type Patch struct {
	Pos   int
	Entry *Entry
}

// Patched answers the whole index that t was read from (ReadMain) with
// the entries at the positions of patches replaced, and the extensions
// ext in place of t's, as EncodeSeq writes it of the same entries, and
// that file read back (ReadMain's answer, without reading its entries
// again: the table over the new bytes shares t's offsets and names).
//
// A boundary changes a few entries of an index it writes whole (under
// the split index's 10,000 entries, splitindex.go): each entry encoded
// again and the file read back was a third of a boundary's CPU at 1,000
// runs. Here every entry but the patched ones is copied as it lies.
//
// ok is false, and nothing is made, when a patched entry would not take
// its old entry's bytes exactly (another name, extended flags where it
// had none or the reverse) or t was not read in place from a whole
// index: the caller then encodes the index whole. The bytes are the ones
// EncodeSeq writes only when t's own were (an index quire wrote, read
// back): a copied entry keeps what EncodeSeq would not write again.
func (t *Table) Patched(patches []Patch, ext ...[]byte) (buf []byte, m Main, ok bool) {
	if t == nil || t.off == nil || t.end == 0 || t.staged || len(t.data) < t.end+20 {
		return nil, Main{}, false
	}
	size := t.end
	for _, p := range ext {
		size += len(p)
	}
	// One allocation, the entries copied into it and only the room after
	// them cleared (append's growth; make would clear all of it first).
	buf = append(t.data[:t.end:t.end], make([]byte, size-t.end+20)...)[:t.end]
	v4 := t.version == 4
	var scratch []byte
	for _, p := range patches {
		i := p.Pos
		if i < 0 || i >= len(t.off) {
			return nil, Main{}, false
		}
		start, end := int(t.off[i]), t.end
		if i+1 < len(t.off) {
			end = int(t.off[i+1])
		}
		prev := ""
		if v4 && i > 0 {
			prev = t.Name(i - 1)
		}
		name := t.Name(i)
		if p.Entry.Name != name {
			return nil, Main{}, false
		}
		scratch = appendEntry(scratch[:0], p.Entry, name, v4, prev)
		// The same room, and the same bytes past the fields: the name
		// (and the extended flags' presence) as they were.
		if len(scratch) != end-start || !bytes.Equal(scratch[62:], t.data[start+62:end]) && !extendedOnly(scratch, t.data[start:end]) {
			return nil, Main{}, false
		}
		copy(buf[start:end], scratch)
	}
	for _, p := range ext {
		buf = append(buf, p...)
	}
	sum := sha1.Sum(buf)
	buf = append(buf, sum[:]...)
	nt := &Table{data: buf, off: t.off, version: t.version, marks: t.marks, end: t.end}
	link, root, untr, fsmn, err := readExtensions(buf[:len(buf)-20], t.end, true)
	if err != nil || link != nil {
		return nil, Main{}, false
	}
	return buf, Main{Whole: nt, CacheTree: root, Version: t.version, Untracked: untr, FSMonitor: fsmn}, true
}

// extendedOnly reports whether two encodings of one entry, each with
// extended flags, differ only in the fields and those flags: both carry
// them (bit 0x4000 of the flags) and the names after are the same.
func extendedOnly(a, b []byte) bool {
	const ext = 0x40
	return len(a) == len(b) && len(a) >= 64 && a[60]&ext != 0 && b[60]&ext != 0 && bytes.Equal(a[64:], b[64:])
}

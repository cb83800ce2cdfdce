package index

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unsafe"

	"quire/vault/git/object"
)

// Table is the entries of an index file read in place: the file's bytes
// kept once, the offset of each entry, and, in version 4 (whose names are
// prefix-compressed, each against the one before it), the whole name of
// every markEvery-th entry; an entry is decoded when it is asked for. At
// 600,000 entries (100,000 runs) the shared index held this way is its
// file's 47 MB and 5 MB beside it, where decoded it was 116 MB beside the
// file's bytes (issue 28). A Table is never written to once made; it may
// be read from several goroutines.
//
// A Table made by TableOf holds decoded entries instead, and answers
// them (the same pointers).
type Table struct {
	data    []byte
	off     []uint32
	version uint32
	marks   []string // version 4: the names of entries 0, markEvery, 2*markEvery…
	ents    []*Entry // TableOf's
	staged  bool     // an entry is of a conflict's stage
	// end is where the entries end in data, the extensions begin
	// (a table read in place; Patch).
	end int
}

// markEvery is how many entries of a version 4 table one whole name
// stands for: a name is decoded from the mark before it in at most
// markEvery-1 steps.
const markEvery = 16

// TableOf is a table of decoded entries, sorted by name.
func TableOf(entries []*Entry) *Table { return &Table{ents: entries} }

// Len is the count of entries.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	if t.off == nil {
		return len(t.ents)
	}
	return len(t.off)
}

// Version is the version of the index file the table was read from (0
// for a TableOf's).
func (t *Table) Version() uint32 {
	if t == nil {
		return 0
	}
	return t.version
}

// Size is the count of bytes the table holds, near enough: its file's,
// its offsets and its marks (a TableOf's: its entries').
func (t *Table) Size() int {
	if t == nil {
		return 0
	}
	n := len(t.data) + 4*len(t.off)
	for _, m := range t.marks {
		n += len(m) + 16
	}
	for _, e := range t.ents {
		n += int(unsafe.Sizeof(*e)) + len(e.Name) + 8
	}
	return n
}

// nameAt answers where entry i's name lies in data: the offset of its
// name's bytes (version 4: of its strip count), as the entry's flags say.
func (t *Table) nameAt(i int) int {
	o := int(t.off[i])
	if binary.BigEndian.Uint16(t.data[o+60:])&0x4000 != 0 {
		return o + 64
	}
	return o + 62
}

// suffix reads a version 4 name's strip count and the bytes it adds.
func (t *Table) suffix(i int) (int, []byte) {
	p := t.nameAt(i)
	strip, n := varint(t.data[p:])
	p += n
	end := bytes.IndexByte(t.data[p:], 0)
	return int(strip), t.data[p : p+end]
}

// appendName appends entry i's name to buf.
func (t *Table) appendName(buf []byte, i int) []byte {
	if t.off == nil {
		return append(buf, t.ents[i].Name...)
	}
	if t.version != 4 {
		p := t.nameAt(i)
		end := bytes.IndexByte(t.data[p:], 0)
		return append(buf, t.data[p:p+end]...)
	}
	m := i / markEvery * markEvery
	at := len(buf)
	buf = append(buf, t.marks[m/markEvery]...)
	for k := m + 1; k <= i; k++ {
		strip, add := t.suffix(k)
		buf = append(buf[:len(buf)-strip], add...)
	}
	_ = at
	return buf
}

// Name is entry i's name, its own (never the file's bytes: they may be
// a mapping, unmapped once the table is no longer used).
func (t *Table) Name(i int) string {
	if t.off == nil {
		return t.ents[i].Name
	}
	return string(t.appendName(nil, i))
}

// name is entry i's name, in versions 2 and 3 cut from the file's bytes:
// valid while the table is.
func (t *Table) name(i int) string {
	if t.off == nil || t.version == 4 {
		return t.Name(i)
	}
	p := t.nameAt(i)
	end := bytes.IndexByte(t.data[p:], 0)
	return unsafe.String(&t.data[p], end) // data is never written to
}

// Entry is entry i, decoded anew (a TableOf's: its own pointer, not to be
// written to).
func (t *Table) Entry(i int) *Entry {
	if t.off == nil {
		return t.ents[i]
	}
	e := &Entry{}
	t.fill(e, i)
	e.Name = t.Name(i)
	return e
}

// fill decodes entry i's fields, all but its name, into e.
func (t *Table) fill(e *Entry, i int) {
	fillFields(e, t.data[t.off[i]:])
}

// fillFields decodes an entry's fields from its bytes in the file.
func fillFields(e *Entry, f []byte) {
	e.CreatedAt, e.ModifiedAt = time.Time{}, time.Time{}
	e.IntentToAdd, e.SkipWorktree, e.FSMonitorValid = false, false, false
	if flags := fillFixed(e, f); flags&0x4000 != 0 {
		x := binary.BigEndian.Uint16(f[62:])
		e.IntentToAdd, e.SkipWorktree = x&(1<<13) != 0, x&(1<<14) != 0
	}
}

// fillFixed sets e's fields from the 62 bytes every entry starts with
// (its stat, mode, id and flags), and answers the flags. The times are
// set only when not zero.
func fillFixed(e *Entry, f []byte) uint16 {
	be := binary.BigEndian
	if s, ns := be.Uint32(f[0:]), be.Uint32(f[4:]); s != 0 || ns != 0 {
		e.CreatedAt = time.Unix(int64(s), int64(ns))
	}
	if s, ns := be.Uint32(f[8:]), be.Uint32(f[12:]); s != 0 || ns != 0 {
		e.ModifiedAt = time.Unix(int64(s), int64(ns))
	}
	e.Dev, e.Inode = be.Uint32(f[16:]), be.Uint32(f[20:])
	e.Mode = object.Mode(be.Uint32(f[24:]))
	e.UID, e.GID, e.Size = be.Uint32(f[28:]), be.Uint32(f[32:]), be.Uint32(f[36:])
	copy(e.Hash[:], f[40:60])
	flags := be.Uint16(f[60:])
	e.Stage = uint8(flags>>12) & 3
	return flags
}

// Search answers the position of the first entry whose name is not
// before name, and whether its name is name.
func (t *Table) Search(name string) (int, bool) {
	n := t.Len()
	if n == 0 {
		return 0, false
	}
	if t.off == nil || t.version != 4 {
		i := sort.Search(n, func(i int) bool { return t.name(i) >= name })
		return i, i < n && t.name(i) == name
	}
	// The last mark not after name, then the entries after it in turn.
	m := sort.Search(len(t.marks), func(j int) bool { return t.marks[j] > name }) - 1
	if m < 0 {
		return 0, n > 0 && t.marks[0] == name
	}
	buf := append([]byte(nil), t.marks[m]...)
	i := m * markEvery
	for {
		if c := strings.Compare(unsafe.String(unsafe.SliceData(buf), len(buf)), name); c >= 0 {
			return i, c == 0
		}
		i++
		if i == n || i%markEvery == 0 {
			return i, i < n && t.marks[i/markEvery] == name
		}
		strip, add := t.suffix(i)
		buf = append(buf[:len(buf)-strip], add...)
	}
}

// Walk calls fn with each entry from the position from on, in order, until
// fn answers false: its position, and the entry decoded into one Entry
// used again for each (its name too is valid only during the call, not
// to be kept: strings.Clone it).
func (t *Table) Walk(from int, fn func(i int, e *Entry) bool) {
	t.walk(from, true, fn)
}

// WalkNames is Walk with only the entries' names set.
func (t *Table) WalkNames(from int, fn func(i int, e *Entry) bool) {
	t.walk(from, false, fn)
}

func (t *Table) walk(from int, fields bool, fn func(i int, e *Entry) bool) {
	n := t.Len()
	if n == 0 {
		return
	}
	if t.off == nil {
		for i := from; i < n; i++ {
			if !fn(i, t.ents[i]) {
				return
			}
		}
		return
	}
	var e Entry
	var buf []byte
	for i := from; i < n; i++ {
		if fields {
			t.fill(&e, i)
		}
		switch {
		case t.version != 4:
			e.Name = t.name(i)
		case i == from || i%markEvery == 0:
			buf = t.appendName(buf[:0], i)
			e.Name = unsafe.String(unsafe.SliceData(buf), len(buf))
		default:
			strip, add := t.suffix(i)
			// The name before is not kept by fn; its bytes are reused.
			buf = append(buf[:len(buf)-strip], add...)
			e.Name = unsafe.String(unsafe.SliceData(buf), len(buf))
		}
		if !fn(i, &e) {
			return
		}
	}
}

// Main is a main index file (.git/index) as ReadMain reads it: a whole
// index's entries in place, or a split index's own entries and its link
// to its shared index.
type Main struct {
	// Whole is the entries of a whole index; nil when the index is split.
	Whole *Table
	// Own is a split index's own entries: the replacements first, with
	// no names (they take their shared entries'), then the entries added.
	Own []*Entry
	// SharedID names the shared index of a split index; Replace and
	// Delete are its bitmaps, by position in the shared index.
	SharedID        object.Hash
	Replace, Delete []bool
	// CacheTree, Version and Untracked are as Index's.
	CacheTree object.Hash
	Version   uint32
	Untracked []byte
	// FSMonitor is the body of git's file system monitor extension as
	// written, nil when none: ReadFSMonitor reads it against the count of
	// the whole index's entries.
	FSMonitor []byte
}

// ReadMain reads an index file in the forms git writes (versions 2, 3 and
// 4, whole or split) without applying a split index to its shared index:
// the entries of a whole index are read in place (a Table over data,
// which must not be written to again), a split index's own entries
// decoded. The checksum is checked when verify is set.
func ReadMain(data []byte, verify bool) (Main, error) {
	var m Main
	if len(data) >= 8 {
		m.Version = binary.BigEndian.Uint32(data[4:])
	}
	t, link, root, untr, fsmn, err := readTable(data, true, verify)
	if err != nil {
		return m, err
	}
	m.CacheTree, m.Untracked, m.FSMonitor = root, untr, fsmn
	if link == nil {
		m.Whole = t
		return m, nil
	}
	m.Own = make([]*Entry, t.Len())
	for i := range m.Own {
		m.Own[i] = t.Entry(i) // its own name, not data's
	}
	m.SharedID, m.Replace, m.Delete = link.shared, link.replace, link.delete
	return m, nil
}

// ReadShared reads the shared index id of a split index from its file's
// bytes, in place (data must not be written to again; it may be a
// mapping of the file, which the table never hands out: every name and
// entry it answers is its own, but Walk's).
func ReadShared(id object.Hash, data []byte, verify bool) (*Table, error) {
	if len(data) < 20 || !bytes.Equal(data[len(data)-20:], id[:]) {
		return nil, fmt.Errorf("the shared index %s is not the one its name says", id)
	}
	t, link, _, _, _, err := readTable(data, false, verify)
	if err != nil {
		return nil, fmt.Errorf("the shared index %s: %w", id, err)
	}
	if link != nil {
		return nil, fmt.Errorf("the shared index %s is itself split", id)
	}
	return t, nil
}

// Change is one entry of a split index applied to its shared index: the
// entry that replaces or adds Name (nil: the shared entry is deleted), and
// the position of the shared entry of that name, -1 when there is none.
type Change struct {
	Name  string
	Entry *Entry
	Pos   int
}

// ApplySplit applies a split index to its shared index as git does
// (split-index.c, merge_base_index; mergeSplit): the changes it makes, by
// name.
func ApplySplit(shared *Table, m Main) ([]Change, error) {
	n := shared.Len()
	if len(m.Replace) > n && bitsFrom(m.Replace, n) || len(m.Delete) > n && bitsFrom(m.Delete, n) {
		return nil, errors.New("the split index's bitmaps mark entries its shared index lacks")
	}
	var out []Change
	at := map[string]int{}
	r := 0
	for i := 0; i < n && (i < len(m.Replace) || i < len(m.Delete)); i++ {
		repl, del := i < len(m.Replace) && m.Replace[i], i < len(m.Delete) && m.Delete[i]
		if !repl && !del {
			continue
		}
		name := shared.Name(i)
		c := Change{Name: name, Pos: i}
		if repl {
			if r >= len(m.Own) || m.Own[r].Name != "" {
				return nil, errors.New("the split index replaces more entries than it holds without names")
			}
			e := *m.Own[r]
			e.Name = name
			c.Entry = &e
			r++
		}
		if del {
			c.Entry = nil
		}
		at[name] = len(out)
		out = append(out, c)
	}
	for _, e := range m.Own[r:] {
		if e.Name == "" {
			return nil, errors.New("an entry of the split index has no name and replaces nothing")
		}
		if k, ok := at[e.Name]; ok {
			out[k].Entry = e
			continue
		}
		pos, found := shared.Search(e.Name)
		if !found {
			pos = -1
		}
		at[e.Name] = len(out)
		out = append(out, Change{Name: e.Name, Entry: e, Pos: pos})
	}
	return out, nil
}

// Changes answers how next differs from t, as a split index of next
// against t as its shared index would say it, by name: next's entries
// that t lacks or holds otherwise (Pos t's entry of that name, -1 when
// none), and t's entries next lacks (Entry nil). Entries are compared as
// they lie in the two files (stat, mode, id and flags; names decoded as
// the walk goes), so a table of 600,000 entries costs a walk of each,
// not 600,000 entries decoded. ok is false, and nothing answered, once
// more than most differ, or when either table is not read in place.
func (t *Table) Changes(next *Table, most int) (changes []Change, ok bool) {
	if t == nil || next == nil || t.off == nil || next.off == nil {
		return nil, false
	}
	a, b := tableCursor{t: t}, tableCursor{t: next}
	a.seek(0)
	b.seek(0)
	for !a.done() || !b.done() {
		var c int
		switch {
		case a.done():
			c = 1
		case b.done():
			c = -1
		default:
			c = bytes.Compare(a.name, b.name)
		}
		switch {
		case c < 0:
			changes = append(changes, Change{Name: string(a.name), Pos: a.i})
			a.seek(a.i + 1)
		case c > 0:
			changes = append(changes, Change{Name: string(b.name), Entry: next.entryNamed(b.i, b.name), Pos: -1})
			b.seek(b.i + 1)
		default:
			if !bytes.Equal(a.fixed(), b.fixed()) {
				changes = append(changes, Change{Name: string(b.name), Entry: next.entryNamed(b.i, b.name), Pos: a.i})
			}
			a.seek(a.i + 1)
			b.seek(b.i + 1)
		}
		if len(changes) > most {
			return nil, false
		}
	}
	return changes, true
}

// entryNamed is entry i decoded, its name name (the walk's).
func (t *Table) entryNamed(i int, name []byte) *Entry {
	e := &Entry{Name: string(name)}
	t.fill(e, i)
	return e
}

// tableCursor walks a table read in place one entry at a time: its
// position and name (in a buffer of its own, valid until the next seek).
type tableCursor struct {
	t    *Table
	i    int
	name []byte
}

func (c *tableCursor) done() bool { return c.i >= len(c.t.off) }

// seek moves to entry i, the next one or the first (a version 4 name is
// decoded from the one before it).
func (c *tableCursor) seek(i int) {
	c.i = i
	if c.done() {
		return
	}
	t := c.t
	switch {
	case t.version != 4:
		p := t.nameAt(i)
		c.name = t.data[p : p+bytes.IndexByte(t.data[p:], 0)]
	case i == 0 || i%markEvery == 0:
		c.name = append(c.name[:0], t.marks[i/markEvery]...)
	default:
		strip, add := t.suffix(i)
		c.name = append(c.name[:len(c.name)-strip], add...)
	}
}

// fixed is the entry's bytes before its name: stat, mode, id and flags,
// and the extended flags when it has them.
func (c *tableCursor) fixed() []byte {
	o := int(c.t.off[c.i])
	return c.t.data[o:c.t.nameAt(c.i)]
}

// ReadFSMonitor reads the body of an FSMN extension against an index of
// n entries: its head (what AppendFSMonitorBits writes again) and the
// bitmap of the entries not valid, by position; nil, nil when it does not
// read as git writes it (every entry is then not valid).
func ReadFSMonitor(ext []byte, n int) (head []byte, dirty []bool) {
	if len(ext) < 4 {
		return nil, nil
	}
	var h int
	switch binary.BigEndian.Uint32(ext) {
	case 1: // a time in nanoseconds
		h = 4 + 8
	case 2: // a token the monitor gave, and a NUL
		z := bytes.IndexByte(ext[4:], 0)
		if z < 0 {
			return nil, nil
		}
		h = 4 + z + 1
	default:
		return nil, nil
	}
	if len(ext) < h+4 {
		return nil, nil
	}
	size := int(binary.BigEndian.Uint32(ext[h:]))
	if size != len(ext)-h-4 {
		return nil, nil
	}
	d, k, err := decodeEWAH(ext[h+4:])
	if err != nil || k != size || len(d) > n {
		return nil, nil
	}
	if d == nil {
		d = []bool{}
	}
	return ext[:h], d
}

// AppendFSMonitorBits is AppendFSMonitor with the positions of the
// entries not valid, sorted, in place of the entries.
func AppendFSMonitorBits(buf, head []byte, dirty []int) []byte {
	buf = append(buf, head...)
	at := len(buf)
	buf = append(buf, 0, 0, 0, 0)
	buf = appendEWAH(buf, dirty)
	binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	return buf
}

// EncodeSeq is EncodeExt of the count entries seq yields, in order: each
// may be the same Entry filled anew (nothing of it is kept); size is a
// guess of the bytes to come, for the room made at once.
func EncodeSeq(buf []byte, count, size int, seq func(yield func(*Entry) bool), v4 bool, ext ...[]byte) []byte {
	if cap(buf)-len(buf) < size {
		buf = append(make([]byte, 0, len(buf)+size), buf...)
	}
	version := uint32(2)
	if v4 {
		version = 4
	}
	start := len(buf)
	buf = append(buf, "DIRC"...)
	buf = binary.BigEndian.AppendUint32(buf, version)
	buf = binary.BigEndian.AppendUint32(buf, uint32(count))
	var prev []byte
	n := 0
	seq(func(e *Entry) bool {
		if !v4 && (e.SkipWorktree || e.IntentToAdd) {
			version = 3
		}
		buf = appendEntry(buf, e, e.Name, v4, unsafe.String(unsafe.SliceData(prev), len(prev)))
		if v4 {
			prev = append(prev[:0], e.Name...)
		}
		n++
		return true
	})
	if n != count {
		panic(fmt.Sprintf("index: EncodeSeq told %d entries and given %d", count, n))
	}
	binary.BigEndian.PutUint32(buf[start+4:], version)
	for _, p := range ext {
		buf = append(buf, p...)
	}
	sum := sha1.Sum(buf[start:])
	return append(buf, sum[:]...)
}

// readTable is decodeFile with the entries read in place: a Table over
// data. An index whose entries are out of order (git never writes one) is
// decoded and sorted instead, as decodeFile does.
func readTable(data []byte, main, verify bool) (t *Table, link *linkExt, root object.Hash, untr, fsmn []byte, err error) {
	fail := func(err error) (*Table, *linkExt, object.Hash, []byte, []byte, error) {
		return nil, nil, object.ZeroHash, nil, nil, err
	}
	if len(data) < 12+20 || string(data[:4]) != "DIRC" {
		return fail(errors.New("it is not a git index (no DIRC header)"))
	}
	body := data[:len(data)-20]
	if verify {
		if err := checkSum(data); err != nil {
			return fail(err)
		}
	}
	be := binary.BigEndian
	version := be.Uint32(data[4:])
	if version < 2 || version > 4 {
		return fail(fmt.Errorf("it is of version %d; git writes 2, 3 and 4", version))
	}
	count := int(be.Uint32(data[8:]))
	if count > len(body)/62 {
		return fail(fmt.Errorf("it says it holds %d entries, more than its %d bytes can", count, len(data)))
	}
	t = &Table{data: data, off: make([]uint32, count), version: version}
	if version == 4 {
		t.marks = make([]string, 0, (count+markEvery-1)/markEvery)
	}
	off := 12
	var cur, prev []byte
	sorted, named := true, true
	for i := 0; i < count; i++ {
		start := off
		if off+62 > len(body) {
			return fail(errShort)
		}
		t.off[i] = uint32(off)
		flags := be.Uint16(body[off+60:])
		if flags>>12&3 != 0 {
			t.staged = true
		}
		off += 62
		if flags&0x4000 != 0 {
			if version < 3 {
				return fail(fmt.Errorf("entry %d has extended flags in a version 2 index", i))
			}
			if off+2 > len(body) {
				return fail(errShort)
			}
			off += 2
		}
		if version == 4 {
			strip, n := varint(body[off:])
			if n == 0 || strip > uint64(len(prev)) {
				return fail(fmt.Errorf("entry %d strips %d bytes of a name of %d", i, strip, len(prev)))
			}
			off += n
			end := bytes.IndexByte(body[off:], 0)
			if end < 0 {
				return fail(errShort)
			}
			cur = append(append(cur[:0], prev[:len(prev)-int(strip)]...), body[off:off+end]...)
			off += end + 1
			if i%markEvery == 0 {
				t.marks = append(t.marks, string(cur))
			}
		} else {
			n := int(flags & 0xfff)
			if n == 0xfff {
				n = bytes.IndexByte(body[off:], 0)
				if n < 0 {
					return fail(errShort)
				}
			}
			if off+n >= len(body) || body[off+n] != 0 {
				return fail(fmt.Errorf("entry %d's name does not end where its length says", i))
			}
			cur = body[off : off+n]
			off = start + (off-start+n+8)&^7
			if off > len(body) {
				return fail(errShort)
			}
		}
		if len(cur) == 0 {
			named = false
		}
		if i > 0 && bytes.Compare(cur, prev) < 0 {
			sorted = false
		}
		if version == 4 {
			prev, cur = cur, prev
		} else {
			prev = cur
		}
	}
	t.end = off
	if link, root, untr, fsmn, err = readExtensions(body, off, main); err != nil {
		return fail(err)
	}
	if link == nil && !named {
		return fail(errors.New("an entry has no name"))
	}
	if link == nil && !sorted {
		// Decoded from a copy: decodeFile's names are cut from the bytes
		// it reads, which may be a mapping.
		entries, _, _, _, _, err := decodeFile(bytes.Clone(data), main, false)
		if err != nil {
			return fail(err)
		}
		t = TableOf(entries)
	}
	return t, link, root, untr, fsmn, nil
}

// Staged reports whether an entry is of a conflict's stage (1 to 3).
func (t *Table) Staged() bool {
	if t == nil {
		return false
	}
	if t.off != nil {
		return t.staged
	}
	for _, e := range t.ents {
		if e.Stage != 0 {
			return true
		}
	}
	return false
}

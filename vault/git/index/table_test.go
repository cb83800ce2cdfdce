package index

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"quire/vault/git/object"
)

// readInPlace reads an index as the vault does, in place (ReadMain,
// ReadShared, ApplySplit), and answers its entries merged, as Decode
// answers them.
func readInPlace(data, shared []byte) ([]*Entry, error) {
	m, err := ReadMain(data, false)
	if err != nil {
		return nil, err
	}
	if m.Whole != nil {
		return tableEntries(m.Whole), nil
	}
	t, err := ReadShared(m.SharedID, shared, false)
	if err != nil {
		return nil, err
	}
	changes, err := ApplySplit(t, m)
	if err != nil {
		return nil, err
	}
	by := map[string]Change{}
	for _, c := range changes {
		by[c.Name] = c
	}
	var out []*Entry
	for _, e := range tableEntries(t) {
		if c, ok := by[e.Name]; ok {
			if c.Entry != nil {
				out = append(out, c.Entry)
			}
			continue
		}
		out = append(out, e)
	}
	for _, c := range changes {
		if c.Pos < 0 && c.Entry != nil {
			out = append(out, c.Entry)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// tableEntries is every entry of t, by Entry and again by Walk, which
// must agree.
func tableEntries(t *Table) []*Entry {
	out := make([]*Entry, t.Len())
	for i := range out {
		out[i] = t.Entry(i)
	}
	t.Walk(0, func(i int, e *Entry) bool {
		if !Same(e, out[i]) {
			panic(fmt.Sprintf("Walk's entry %d is %+v, Entry's %+v", i, *e, *out[i]))
		}
		return true
	})
	return out
}

// checkInPlace: what Decode reads, the in-place reading reads the same,
// and Search finds each name (and each name's prefixes) where a search of
// the decoded entries does.
func checkInPlace(t *testing.T, data, shared []byte) {
	d, err := decodeSeed(data, shared)
	if err != nil {
		return
	}
	got, err := readInPlace(data, shared)
	if err != nil {
		t.Fatalf("Decode reads it, the in-place reading refuses it: %v", err)
	}
	if len(got) != len(d.Entries) {
		t.Fatalf("in place: %d entries, Decode %d", len(got), len(d.Entries))
	}
	for i := range got {
		if !Same(got[i], d.Entries[i]) {
			t.Fatalf("entry %d: in place %+v, Decode %+v", i, *got[i], *d.Entries[i])
		}
	}
	var tab *Table
	var ents []*Entry
	if m, _ := ReadMain(data, false); m.Whole != nil {
		tab, ents = m.Whole, d.Entries
	} else if tab, err = ReadShared(m.SharedID, shared, false); err != nil || !sorted(d.Shared) {
		return
	} else {
		ents = d.Shared
	}
	for _, e := range ents {
		for _, name := range []string{e.Name, e.Name[:len(e.Name)/2], e.Name + "\x00", e.Name + "~"} {
			i, found := tab.Search(name)
			j := sort.Search(len(ents), func(k int) bool { return ents[k].Name >= name })
			if i != j || found != (j < len(ents) && ents[j].Name == name) {
				t.Fatalf("Search(%q) = %d %v; the decoded entries say %d", name, i, found, j)
			}
		}
	}
}

// Every form git writes, and the fuzz seeds, read in place as Decode reads
// them.
func TestReadInPlaceAsDecode(t *testing.T) {
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			dir := gitIndex(t, 60, form.set)
			_, data := read(t, dir)
			var shared []byte
			if m, err := ReadMain(data, true); err == nil && m.Whole == nil {
				shared, _ = os.ReadFile(filepath.Join(dir, ".git", "sharedindex."+m.SharedID.String()))
			}
			checkInPlace(t, data, shared)
		})
	}
}

// What EncodeSeq writes is what EncodeExt writes of the same entries.
func TestEncodeSeqIsEncodeExt(t *testing.T) {
	dir := gitIndex(t, 40, forms[0].set)
	d, _ := read(t, dir)
	ext := AppendExtension(nil, "TREE", AppendCacheTree(nil, object.ZeroHash, len(d.Entries), nil))
	for _, v4 := range []bool{false, true} {
		want := EncodeExt(nil, d.Entries, v4, ext)
		var e Entry
		got := EncodeSeq([]byte("x"), len(d.Entries), 10, func(yield func(*Entry) bool) {
			for _, x := range d.Entries {
				e = *x
				if !yield(&e) {
					return
				}
			}
		}, v4, ext)
		if string(got[1:]) != string(want) || got[0] != 'x' {
			t.Fatalf("v4 %v: EncodeSeq wrote %d bytes unlike EncodeExt's %d", v4, len(got)-1, len(want))
		}
	}
}

func FuzzReadInPlace(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, data, shared []byte) {
		checkInPlace(t, data, shared)
		readInPlace(data, shared) // never a panic
		// A table's changes against itself are none, and against any
		// other never a panic.
		m, err := ReadMain(data, false)
		if err != nil || m.Whole == nil {
			return
		}
		if c, ok := m.Whole.Changes(m.Whole, 0); !ok || len(c) != 0 {
			t.Fatalf("a table against itself: %d changes, %v", len(c), ok)
		}
		if s, err := ReadShared(object.ZeroHash, shared, false); err == nil {
			s.Changes(m.Whole, 1<<20)
			m.Whole.Changes(s, 1<<20)
		}
	})
}

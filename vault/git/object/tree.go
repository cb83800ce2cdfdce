package object

import (
	"bytes"
	"errors"
	"sort"
	"strconv"
)

// TreeEntry is one entry of a tree.
type TreeEntry struct {
	Name string
	Mode Mode
	Hash Hash
}

// ParseTree decodes a tree's content.
func ParseTree(data []byte) ([]TreeEntry, error) {
	var out []TreeEntry
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp < 0 {
			return nil, errors.New("a tree entry without its mode")
		}
		mode, err := strconv.ParseUint(string(data[:sp]), 8, 32)
		if err != nil {
			return nil, err
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul < 0 || len(data) < nul+21 {
			return nil, errors.New("a tree entry cut short")
		}
		e := TreeEntry{Name: string(data[:nul]), Mode: Mode(mode)}
		copy(e.Hash[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// TreeSize is the most AppendTree appends for entries (a mode takes up
// to six digits): the room to make for it.
func TreeSize(entries []TreeEntry) int {
	size := 0
	for _, e := range entries {
		size += len(e.Name) + 28
	}
	return size
}

// AppendTree appends the tree of entries, which are in git's order
// (SortTree).
func AppendTree(buf []byte, entries []TreeEntry) []byte {
	for _, e := range entries {
		buf = strconv.AppendUint(buf, uint64(e.Mode), 8)
		buf = append(buf, ' ')
		buf = append(buf, e.Name...)
		buf = append(buf, 0)
		buf = append(buf, e.Hash[:]...)
	}
	return buf
}

// TreeLess orders tree entries as git does: a folder sorts as if its name
// ended in "/". It allocates nothing.
func TreeLess(a, b TreeEntry) bool {
	an, bn := a.Name, b.Name
	n := min(len(an), len(bn))
	if an[:n] != bn[:n] {
		return an[:n] < bn[:n]
	}
	ac, bc := byte(0), byte(0)
	if len(an) > n {
		ac = an[n]
	} else if a.Mode == Dir {
		ac = '/'
	}
	if len(bn) > n {
		bc = bn[n]
	} else if b.Mode == Dir {
		bc = '/'
	}
	return ac < bc
}

// FindEntry is the index of the entry named name: found by halves in
// entries in git's order (as a file's name and as a folder's), and by a
// scan when not found so (entries out of order, or added at the end by
// a caller that sorts them later). At 100,000 runs a scan of
// playbook-runs/ took a millisecond for every file a boundary looked up.
func FindEntry(entries []TreeEntry, name string) (int, bool) {
	for _, mode := range []Mode{Regular, Dir} {
		probe := TreeEntry{Name: name, Mode: mode}
		i := sort.Search(len(entries), func(i int) bool { return !TreeLess(entries[i], probe) })
		if i < len(entries) && entries[i].Name == name {
			return i, true
		}
	}
	for i := range entries {
		if entries[i].Name == name {
			return i, true
		}
	}
	return 0, false
}

// SortTree puts entries in git's order.
func SortTree(entries []TreeEntry) {
	if sort.SliceIsSorted(entries, func(i, j int) bool { return TreeLess(entries[i], entries[j]) }) {
		return
	}
	sort.Slice(entries, func(i, j int) bool { return TreeLess(entries[i], entries[j]) })
}

package vault

import (
	"iter"
	"slices"
	"strings"

	"quire/vault/git/index"
)

// IndexMark is .git/index as quire last left it: its entries, each with
// the stat git keeps of its file. A git command writes a file of the work
// tree only with its entry (checkout, reset --hard, stash, merge, pull
// write the file, then record its new stat in the index), so after a git
// command the files git may have written are those whose entries differ
// from the mark's, and those the index no longer holds. A warm process
// checks those alone, not every file (a stat a file: 10 µs each on the
// bench's machine, 200 ms at 20,000 runs).
type IndexMark struct {
	tab  *index.Table
	over map[string]change_
	set  bool
}

// MarkIndex answers the index as it is now. The caller holds the lock.
//
// The mark shares the index's table and its changes, not a copy (a copy
// was 1.4 ms a boundary at 20,000 runs): a reload or a new shared index
// puts git's entries in a new table and changes, and the old ones are
// written only by quire's own changes after the mark (an entry set or
// removed), so every entry the mark shows is one quire recorded, and
// WrittenSince answers "written" for any entry it cannot match with an
// equal one: quire's own changes cost a stat or two, never a file missed.
func (v *Vault) MarkIndex() (IndexMark, error) {
	x := v.gitIdx
	if err := x.load(); err != nil {
		return IndexMark{}, err
	}
	return IndexMark{tab: x.tab, over: x.over, set: true}, nil
}

// WrittenSince answers whether a file may have been written by a git
// command since the mark (its entry differs, or the index does not hold
// it), for each path asked; ok is false when the mark is unset (nothing to
// compare: every file may have been). The caller holds the lock.
func (v *Vault) WrittenSince(m IndexMark) (written func(path string) bool, ok bool, err error) {
	if !m.set {
		return nil, false, nil
	}
	x := v.gitIdx
	if err := x.load(); err != nil {
		return nil, false, err
	}
	changed := map[string]bool{}
	old := &gitIndex{tab: m.tab, over: m.over}
	if m.tab == x.tab {
		// The same table: the entries that may differ are those either
		// side changed.
		differs := func(name string) {
			a, aok := old.get(name)
			b, bok := x.get(name)
			if aok != bok || aok && a != b && !index.Same(a, b) {
				changed[name] = true
			}
		}
		for name := range m.over {
			differs(name)
		}
		for name := range x.over {
			if _, seen := m.over[name]; !seen {
				differs(name)
			}
		}
	} else {
		old.n = -1 // not counted: only walked
		for name := range old.over {
			old.onames = append(old.onames, name)
		}
		slices.Sort(old.onames)
		next, stop := iter.Pull(func(yield func(*index.Entry) bool) { old.each(yield) })
		defer stop()
		o, more := next()
		x.each(func(e *index.Entry) bool {
			for more && o.Name < e.Name {
				changed[strings.Clone(o.Name)] = true
				o, more = next()
			}
			switch {
			case more && o.Name == e.Name:
				if o != e && !index.Same(o, e) {
					changed[strings.Clone(e.Name)] = true
				}
				o, more = next()
			default:
				changed[strings.Clone(e.Name)] = true
			}
			return true
		})
		for more {
			changed[strings.Clone(o.Name)] = true
			o, more = next()
		}
	}
	return func(path string) bool {
		if changed[path] {
			return true
		}
		return !x.has(path)
	}, true, nil
}

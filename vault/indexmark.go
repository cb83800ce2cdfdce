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

// Written is what a git command may have written since a mark
// (WrittenSince): the files whose entries differ from the mark's, and
// those the index does not hold.
type Written struct {
	changed map[string]bool
	x       *gitIndex
}

// Of answers those of paths that may have been written, in one walk of
// the index's names beside the paths sorted. A lookup of one path in the
// index read in place searches from its nearest whole name: 17 µs at
// 100,000 runs, and a history asks for each of its 100,000 files (3.6 s
// of the first boundary after a person's git commit). The caller holds
// the lock, as for WrittenSince.
func (w *Written) Of(paths []string) map[string]bool {
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	out := map[string]bool{}
	j := 0
	if len(sorted) > 0 {
		w.x.walk(func(e *index.Entry, _ int, _ bool) bool {
			for j < len(sorted) && sorted[j] < e.Name {
				out[sorted[j]] = true // not held
				j++
			}
			if j < len(sorted) && sorted[j] == e.Name {
				if w.changed[e.Name] {
					out[sorted[j]] = true
				}
				j++
			}
			return j < len(sorted)
		}, false)
	}
	for ; j < len(sorted); j++ {
		out[sorted[j]] = true
	}
	return out
}

// WrittenSince answers what a git command may have written since the mark
// (Written); ok is false when the mark is unset (nothing to compare: every
// file may have been). The caller holds the lock.
func (v *Vault) WrittenSince(m IndexMark) (written *Written, ok bool, err error) {
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
		for _, name := range old.onames {
			old.ochanges = append(old.ochanges, old.over[name])
		}
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
	return &Written{changed: changed, x: x}, true, nil
}

package vault

import (
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
	entries []*index.Entry
	set     bool
}

// MarkIndex answers the index as it is now. The caller holds the lock.
//
// The mark shares the index's slice, not a copy (a copy was 1.4 ms a
// boundary at 20,000 runs): a reload puts git's entries in a new slice, and
// the old one is written only by quire's own changes after the mark (an
// entry set in place, entries shifted or filtered), so every entry the mark
// shows is one quire recorded, and WrittenSince's walk answers "written"
// for any entry it cannot match with an equal one: quire's own changes cost
// a stat or two, never a file missed.
func (v *Vault) MarkIndex() (IndexMark, error) {
	x := v.gitIdx
	if err := x.load(); err != nil {
		return IndexMark{}, err
	}
	return IndexMark{entries: x.entries, set: true}, nil
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
	old, now := m.entries, x.entries
	for len(old) > 0 || len(now) > 0 {
		switch {
		case len(now) == 0 || len(old) > 0 && old[0].Name < now[0].Name:
			changed[old[0].Name] = true
			old = old[1:]
		case len(old) == 0 || now[0].Name < old[0].Name:
			changed[now[0].Name] = true
			now = now[1:]
		default:
			if old[0] != now[0] && !index.Same(old[0], now[0]) {
				changed[now[0].Name] = true
			}
			old, now = old[1:], now[1:]
		}
	}
	return func(path string) bool {
		if changed[path] {
			return true
		}
		_, held := x.find(path)
		return !held
	}, true, nil
}

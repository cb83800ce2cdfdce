package index

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"
	"time"

	"quire/vault/git/object"
)

// Whatever entries an index quire wrote holds and whichever of them a
// write changes, Patched answers the bytes EncodeSeq writes of the
// changed entries, and what ReadMain reads of them; or, when a change
// does not take its old entry's room, no answer at all. Over random
// indexes of versions 2, 3 and 4, random changes and extensions.
func TestPatchedIsAWholeEncode(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	at := time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)
	randomEntry := func(name string) *Entry {
		return &Entry{
			Name: name, Mode: object.Mode([]uint32{0o100644, 0o100755, 0o120000}[r.Intn(3)]),
			CreatedAt: at.Add(time.Duration(r.Int63n(1e15))), ModifiedAt: at.Add(time.Duration(r.Int63n(1e15))),
			Dev: r.Uint32(), Inode: r.Uint32(), UID: r.Uint32() % 2000, GID: r.Uint32() % 2000, Size: r.Uint32(),
			Hash: object.Sum(object.Blob, []byte(fmt.Sprint(r.Int()))),
		}
	}
	ext := func() [][]byte {
		var out [][]byte
		if r.Intn(2) == 0 {
			out = append(out, AppendExtension(nil, "TREE", AppendCacheTree(nil, object.Sum(object.Tree, []byte(fmt.Sprint(r.Int()))), r.Intn(100), nil)))
		}
		if r.Intn(3) == 0 {
			out = append(out, AppendExtension(nil, "ZZZZ", bytes.Repeat([]byte{byte(r.Intn(256))}, r.Intn(40))))
		}
		return out
	}
	patched, refused := 0, 0
	for round := 0; round < 300; round++ {
		v4 := r.Intn(2) == 0
		var entries []*Entry
		for i, n := 0, 1+r.Intn(60); i < n; i++ {
			name := fmt.Sprintf("playbook-runs/close-%04d/%s", r.Intn(50), []string{"run.jsonl", "run.state.json", "thread.md", "artifacts/.gitkeep", "a-longer-name-than-the-others.md"}[r.Intn(5)])
			if r.Intn(8) == 0 {
				name = fmt.Sprintf("%s%d", name, i) // names of every length
			}
			entries = append(entries, randomEntry(name))
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		entries = uniqueNames(entries)
		for _, e := range entries {
			e.SkipWorktree = r.Intn(6) == 0
		}
		data := EncodeExt(nil, entries, v4, ext()...)
		m, err := ReadMain(data, true)
		if err != nil || m.Whole == nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var patches []Patch
		want := append([]*Entry(nil), entries...)
		for k := r.Intn(4); k >= 0; k-- {
			i := r.Intn(len(entries))
			e := randomEntry(entries[i].Name)
			e.SkipWorktree = entries[i].SkipWorktree
			if r.Intn(5) == 0 {
				e.IntentToAdd, e.SkipWorktree = true, r.Intn(2) == 0 // the extended flags, as they were or not
			}
			if r.Intn(20) == 0 {
				e.Name += "x" // another name: refused
			}
			patches = append(patches, Patch{Pos: i, Entry: e})
			want[i] = e
		}
		x := ext()
		got, gm, ok := m.Whole.Patched(patches, x...)
		whole := EncodeExt(nil, want, v4, x...)
		if !ok {
			// Refused only where the room differs.
			same := true
			for _, p := range patches {
				if p.Entry.Name != entries[p.Pos].Name || (p.Entry.SkipWorktree || p.Entry.IntentToAdd) != entries[p.Pos].SkipWorktree {
					same = false
				}
			}
			if same {
				t.Fatalf("round %d: refused a patch that takes its entries' room", round)
			}
			refused++
			continue
		}
		patched++
		if !bytes.Equal(got, whole) {
			t.Fatalf("round %d (v4 %v): patched %d bytes, a whole encode %d, unlike", round, v4, len(got), len(whole))
		}
		back, err := ReadMain(whole, true)
		if err != nil {
			t.Fatal(err)
		}
		if gm.CacheTree != back.CacheTree || gm.Version != back.Version || !bytes.Equal(gm.Untracked, back.Untracked) || !bytes.Equal(gm.FSMonitor, back.FSMonitor) {
			t.Fatalf("round %d: the patched file's extensions read otherwise", round)
		}
		for i := range want {
			if a, b := gm.Whole.Entry(i), back.Whole.Entry(i); !Same(a, b) {
				t.Fatalf("round %d: entry %d reads %+v from the patched table, %+v from the file", round, i, a, b)
			}
		}
	}
	if patched < 100 || refused < 10 {
		t.Fatalf("%d patched, %d refused: the rounds do not try both", patched, refused)
	}
}

// uniqueNames drops the entries whose names the one before has (sorted).
func uniqueNames(es []*Entry) []*Entry {
	out := es[:0]
	for i, e := range es {
		if i == 0 || e.Name != es[i-1].Name {
			out = append(out, e)
		}
	}
	return out
}

// Whatever two indexes hold (versions 2, 3 and 4, either way round, of
// up to 200 entries, with entries kept, changed in a field, added and
// removed), Changes answers what makes the first the second: applied to
// the first's entries, they are the second's, each entry said once; and
// it answers nothing at all when more than most differ.
func TestChangesMakeOneTableTheOther(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	at := time.Date(2026, 12, 7, 4, 0, 0, 0, time.UTC)
	for round := 0; round < 400; round++ {
		base := map[string]*Entry{}
		for i, n := 0, r.Intn(200); i < n; i++ {
			name := fmt.Sprintf("playbook-runs/close-%04d/%s", r.Intn(80), []string{"run.jsonl", "run.state.json", "thread.md", "artifacts/.gitkeep"}[r.Intn(4)])
			base[name] = &Entry{Name: name, Mode: 0o100644, ModifiedAt: at.Add(time.Duration(r.Intn(1e6))), Size: r.Uint32() % 5000,
				Hash: object.Sum(object.Blob, []byte(fmt.Sprint(r.Int())))}
		}
		next := map[string]*Entry{}
		for name, e := range base {
			switch k := r.Intn(10); {
			case k == 0: // removed
			case k == 1:
				c := *e
				c.Size++
				next[name] = &c
			case k == 2:
				c := *e
				c.SkipWorktree = true // extended flags: two bytes more
				next[name] = &c
			case k == 3:
				c := *e
				c.Hash[0] ^= 1
				next[name] = &c
			default:
				c := *e
				next[name] = &c
			}
		}
		for i, n := 0, r.Intn(20); i < n; i++ {
			name := fmt.Sprintf("notes/%03d-%d.md", r.Intn(100), i)
			next[name] = &Entry{Name: name, Mode: 0o100644, Hash: object.Sum(object.Blob, []byte(name))}
		}
		table := func(m map[string]*Entry, v4 bool) (*Table, []*Entry) {
			var ents []*Entry
			for _, e := range m {
				ents = append(ents, e)
			}
			sort.Slice(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
			got, err := ReadMain(EncodeExt(nil, ents, v4), true)
			if err != nil || got.Whole == nil {
				t.Fatalf("round %d: %v", round, err)
			}
			return got.Whole, ents
		}
		a, _ := table(base, r.Intn(2) == 0)
		b, want := table(next, r.Intn(2) == 0)
		changes, ok := a.Changes(b, a.Len()+b.Len())
		if !ok {
			t.Fatalf("round %d: no answer with room for every entry", round)
		}
		merged := map[string]*Entry{}
		for i := 0; i < a.Len(); i++ {
			merged[a.Name(i)] = a.Entry(i)
		}
		said := map[string]bool{}
		for _, c := range changes {
			if said[c.Name] {
				t.Fatalf("round %d: %s said twice", round, c.Name)
			}
			said[c.Name] = true
			if pos, found := a.Search(c.Name); found != (c.Pos >= 0) || found && pos != c.Pos {
				t.Fatalf("round %d: %s at %d, the first table's at %d (%v)", round, c.Name, c.Pos, pos, found)
			}
			if c.Entry == nil {
				delete(merged, c.Name)
			} else {
				merged[c.Name] = c.Entry
			}
		}
		if len(merged) != len(want) {
			t.Fatalf("round %d: %d entries made, want %d", round, len(merged), len(want))
		}
		for _, e := range want {
			if got := merged[e.Name]; got == nil || !Same(got, e) {
				t.Fatalf("round %d: %s made %+v, want %+v", round, e.Name, got, e)
			}
		}
		if len(changes) > 0 {
			if _, ok := a.Changes(b, len(changes)-1); ok {
				t.Fatalf("round %d: an answer of %d changes under a bound of %d", round, len(changes), len(changes)-1)
			}
		}
	}
}

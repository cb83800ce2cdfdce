package vault

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"quire/vault/git/object"
)

func rawTree(entries map[string]TreeEntry) []byte {
	list := make([]object.TreeEntry, 0, len(entries))
	for _, e := range entries {
		m := object.Regular
		if e.Dir {
			m = object.Dir
		}
		list = append(list, object.TreeEntry{Name: e.Name, Mode: m, Hash: e.Hash})
	}
	object.SortTree(list)
	return object.AppendTree(nil, list)
}

// DiffTrees finds exactly the entries a naive comparison of the two trees
// decoded whole finds, in git's order, whatever changed where.
func TestDiffTreesIsTheNaiveDiff(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	randHash := func() (h Hash) { rng.Read(h[:]); return h }
	for round := 0; round < 300; round++ {
		old := map[string]TreeEntry{}
		n := rng.Intn(60)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("run-%d", rng.Intn(100))
			if rng.Intn(7) == 0 {
				name = name + ".md"
			}
			old[name] = TreeEntry{Name: name, Dir: rng.Intn(4) > 0, Hash: randHash()}
		}
		cur := map[string]TreeEntry{}
		for k, v := range old {
			cur[k] = v
		}
		for c := rng.Intn(5); c > 0; c-- {
			name := fmt.Sprintf("run-%d", rng.Intn(100))
			switch rng.Intn(3) {
			case 0:
				delete(cur, name)
			case 1:
				e := cur[name]
				e.Name, e.Hash = name, randHash()
				cur[name] = e
			default:
				cur[name] = TreeEntry{Name: name, Dir: rng.Intn(2) == 0, Hash: randHash()}
			}
		}
		a, b := rawTree(old), rawTree(cur)
		var got []string
		if err := DiffTrees(a, b, func(o, n *TreeEntry) error {
			switch {
			case o == nil:
				got = append(got, "+"+n.Name)
			case n == nil:
				got = append(got, "-"+o.Name)
			default:
				got = append(got, "~"+o.Name)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		var want []string
		ea, _ := TreeEntries(a)
		eb, _ := TreeEntries(b)
		i, j := 0, 0
		for i < len(ea) || j < len(eb) {
			switch {
			case i < len(ea) && j < len(eb) && ea[i].Name == eb[j].Name:
				if ea[i] != eb[j] {
					want = append(want, "~"+ea[i].Name)
				}
				i, j = i+1, j+1
			case j == len(eb) || (i < len(ea) && gitLess(ea[i], eb[j])):
				want = append(want, "-"+ea[i].Name)
				i++
			default:
				want = append(want, "+"+eb[j].Name)
				j++
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: DiffTrees %v, naive %v", round, got, want)
		}
	}
}

// The walk's own reader of packs and loose objects reads every object as
// go-git does, deltas included, before and after compaction.
func TestHistoryReadsWhatGoGitReads(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.SetAutoCompact(false)
	for i := 0; i < 30; i++ {
		for j := 0; j < 3; j++ {
			p := filepath.Join(dir, "playbook-runs", fmt.Sprintf("run-%02d", (i*7+j)%25), "run.jsonl")
			os.MkdirAll(filepath.Dir(p), 0o755)
			AppendLine(p, []byte(fmt.Sprintf(`{"event":"step_completed","n":%d}`+"\n", i)))
		}
		if err := v.Locked(func() error {
			_, err := v.Commit([]string{"playbook-runs"}, Signature{Name: "a", When: time.Now()}, "c")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if i == 20 {
			if err := v.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	iter, err := v.objs.store.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	h := v.History()
	defer h.Close()
	n := 0
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		want, err := h.fromGoGit(object.Type(o.Type()), Hash(o.Hash()))
		if err != nil {
			return err
		}
		got, err := h.read(object.Type(o.Type()), Hash(o.Hash()))
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s %s differs", o.Type(), o.Hash())
		}
		n++
		return nil
	})
	if err != nil || n < 200 {
		t.Fatalf("%d objects: %v", n, err)
	}
	if h.packs.Packs() == 0 || h.packs.Deltas() == 0 {
		t.Fatalf("%d packs read, %d deltas applied", h.packs.Packs(), h.packs.Deltas())
	}
}

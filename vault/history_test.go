package vault

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"quire/vault/git/object"
)

// The walk's own reader of packs and loose objects reads every object as
// go-git does, deltas included, in the packs quire's compaction writes
// (vault/git/walk checks it on the packs git writes).
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
		id := Hash(o.Hash())
		want, typ, err := v.objs.readRaw(id)
		if err != nil {
			return err
		}
		var got []byte
		switch typ {
		case object.Tree:
			got, err = h.Tree(id)
		case object.Blob:
			got, err = h.Blob(id)
		case object.Commit:
			tree, parents, err2 := h.Commit(id)
			wt, wp, _ := object.ParseCommit(want)
			if fmt.Sprint(tree, parents) != fmt.Sprint(wt, wp) {
				return fmt.Errorf("commit %s: tree %s parents %v, go-git %s %v", id, tree, parents, wt, wp)
			}
			got, err = want, err2
		}
		if err != nil {
			return err
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s %s differs", typ, id)
		}
		n++
		return nil
	})
	if err != nil || n < 200 {
		t.Fatalf("%d objects: %v", n, err)
	}
	if h.Deltas() == 0 {
		t.Fatal("no delta applied: the walk read nothing from the packs")
	}
}

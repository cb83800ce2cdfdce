package vault

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"hash/adler32"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"quire/vault/git/object"
	"quire/vault/git/pack"
)

// Every version of a large tree made from the kept bytes of the one
// before (bigtree.go) is the tree a whole write makes: the same id, the
// same content in its loose object as Go's zlib inflates it (checking its
// Adler-32), and git reads each one (git fsck of them all). The versions
// change one to three entries' hashes at random places, the first and the
// last among them, and now and then an entry is added, removed or changes
// its mode, which makes the tree whole again.
func TestKeptTreeIsWhatAWholeWriteMakes(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	if _, err := exec.LookPath("git"); err == nil {
		if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
	} else {
		t.Fatal("these tests need git on the PATH")
	}
	o := newObjects(gitDir)
	rng := rand.New(rand.NewSource(3))
	hash := func() (h Hash) { rng.Read(h[:]); return h }
	var entries []treeEntry
	for i := 0; i < 6000; i++ {
		entries = append(entries, treeEntry{Name: fmt.Sprintf("2026-11-%02d-close-%08x-%d", i%28+1, rng.Uint32(), i), Mode: object.Dir, Hash: hash()})
	}
	entries = append(entries, treeEntry{Name: "README.md", Mode: object.Regular, Hash: hash()})
	object.SortTree(entries)
	if object.TreeSize(entries) < keptFrom {
		t.Fatalf("a tree of %d bytes is not kept", object.TreeSize(entries))
	}
	var prev Hash
	var ids []string
	var batch bytes.Buffer // what git cat-file --batch answers for them
	patched := 0
	for v := 0; v < 120; v++ {
		entries = slices.Clone(entries)
		var changed []int
		reshaped := prev.IsZero()
		switch k := rng.Intn(12); {
		case k == 0:
			entries = append(entries, treeEntry{Name: fmt.Sprintf("2026-12-01-pay-%d", v), Mode: object.Dir, Hash: hash()})
			reshaped = true
		case k == 1:
			i := rng.Intn(len(entries))
			entries = append(entries[:i], entries[i+1:]...)
			reshaped = true
		case k == 2:
			i := rng.Intn(len(entries))
			if entries[i].Mode == object.Regular {
				entries[i].Mode = object.Executable
			} else {
				entries[i].Mode = object.Regular
			}
			reshaped = true
		default:
			for n := 1 + rng.Intn(3); n > 0; n-- {
				i := rng.Intn(len(entries))
				switch rng.Intn(4) {
				case 0:
					i = 0
				case 1:
					i = len(entries) - 1
				}
				entries[i].Hash = hash()
				changed = append(changed, i)
			}
			if !reshaped {
				patched++
			}
		}
		id, sorted, want := writeVersion(t, o, prev, entries, changed, reshaped)
		typ, got, err := object.ReadLooseFile(filepath.Join(gitDir, "objects", id.String()[:2], id.String()[2:]))
		if err != nil || typ != object.Tree || !bytes.Equal(got, want) {
			t.Fatalf("version %d: the loose object reads %v %d bytes (%v), want a tree of %d", v, typ, len(got), err, len(want))
		}
		prev = id
		ids = append(ids, id.String())
		fmt.Fprintf(&batch, "%s tree %d\n%s\n", id, len(want), want)
		entries = sorted
	}
	if patched < 60 {
		t.Fatalf("only %d versions were made from kept bytes", patched)
	}
	// git inflates each (zlib's checksum checked) and answers its bytes.
	catFile := func(when string) {
		t.Helper()
		cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
		cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil || !bytes.Equal(out, batch.Bytes()) {
			t.Fatalf("git cat-file --batch %s: %v, %d bytes, want %d", when, err, len(out), batch.Len())
		}
	}
	catFile("of the loose objects")
	// Compaction writes the versions made from kept bytes as the deltas
	// their writer made, without reading them; git reads the pack the same.
	packed, err := pack.Compact(context.Background(), filepath.Join(gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
		return o.readRaw(id)
	}, o.known.known, nil)
	if !packed || err != nil {
		t.Fatalf("compacted %v: %v", packed, err)
	}
	if n := len(o.known.m); n != 0 {
		t.Fatalf("%d known deltas were not taken", n)
	}
	catFile("of the pack")
	if out, err := exec.Command("git", "-C", dir, "verify-pack", "-v", gitDir+"/objects/pack/"+packName(t, gitDir)).CombinedOutput(); err != nil || strings.Count(string(out), " tree ") != len(ids) {
		t.Fatalf("git verify-pack: %v\n%s", err, out)
	}
}

func packName(t *testing.T, gitDir string) string {
	t.Helper()
	idx, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("%d packs", len(idx))
	}
	return filepath.Base(idx[0])
}

// A compaction after another takes the versions of a large tree as the
// deltas they were made as, the first of them too: the pack of the last
// compaction, which holds its base, is rolled into the new one. The two
// compactions leave one whole version (about the tree's size), not one
// for each compaction, and git reads every version.
func TestCompactionsAfterAnotherKeepOneWholeTree(t *testing.T) {
	dir, gitDir, o := objectsRepo(t)
	rng := rand.New(rand.NewSource(8))
	hash := func() (h Hash) { rng.Read(h[:]); return h }
	var entries []treeEntry
	for i := 0; i < 6000; i++ {
		entries = append(entries, treeEntry{Name: fmt.Sprintf("2026-11-%02d-close-%08x", i%28+1, i), Mode: object.Dir, Hash: hash()})
	}
	object.SortTree(entries)
	size := len(object.AppendTree(nil, entries))
	var ids []string
	var prev Hash
	compact := func() {
		t.Helper()
		if ok, err := pack.Compact(context.Background(), filepath.Join(gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
			return o.readRaw(id)
		}, o.known.known, nil); !ok || err != nil {
			t.Fatalf("compacted %v: %v", ok, err)
		}
	}
	// 24 versions, then 8 and 8 (a chain of fewer than 50 deltas, the
	// most a pack chains): the pack of the first is more than
	// twice the loose objects of the next, so the geometric progression
	// alone would leave it out of the next compaction.
	for _, n := range []int{24, 8, 8} {
		for v := 0; v < n; v++ {
			entries = slices.Clone(entries)
			i := rng.Intn(len(entries))
			entries[i].Hash = hash()
			id, err := o.writeTreeFrom(prev, entries, []int{i}, prev.IsZero())
			if err != nil {
				t.Fatal(err)
			}
			prev = id
			ids = append(ids, id.String())
		}
		compact()
	}
	packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.pack"))
	total := int64(0)
	for _, p := range packs {
		fi, _ := os.Stat(p)
		total += fi.Size()
	}
	var whole bytes.Buffer // one version as a pack holds it
	zw, _ := zlib.NewWriterLevel(&whole, zlib.BestSpeed)
	zw.Write(object.AppendTree(nil, entries))
	zw.Close()
	if total > int64(whole.Len())*13/10 {
		t.Fatalf("%d packs of %d bytes for %d versions of a tree of %d bytes, %d compressed: more than one whole", len(packs), total, len(ids), size, whole.Len())
	}
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch-check")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	if out, err := cmd.Output(); err != nil || strings.Count(string(out), " tree ") != len(ids) {
		t.Fatalf("git cat-file: %v\n%s", err, out)
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--connectivity-only", "--no-dangling").CombinedOutput(); err != nil && !strings.Contains(string(out), "broken link") {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// adlerPatch moves a checksum as Adler-32 of the changed bytes is: random
// bytes changed one by one in buffers of random lengths (some past the
// 5,552 bytes after which zlib reduces its sums) against the whole sum.
func TestAdlerPatchIsTheWholeSum(t *testing.T) {
	rng := randv2.New(randv2.NewPCG(7, 28))
	for round := 0; round < 200; round++ {
		b := make([]byte, 1+rng.IntN(1<<uint(1+rng.IntN(20))))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		sum := adler32.Checksum(b)
		for k := 0; k < 20; k++ {
			p := rng.IntN(len(b))
			now := byte(rng.Uint32())
			if k%5 == 0 {
				now = 0xff
			}
			sum = adlerPatch(sum, len(b), p, b[p], now)
			b[p] = now
			if want := adler32.Checksum(b); sum != want {
				t.Fatalf("%d bytes, byte %d changed: %08x, want %08x", len(b), p, sum, want)
			}
		}
	}
}

// A group's versions of a large tree past its first keptFromGroup are
// deltas of one whole version in the group's fresh pack, not loose
// objects: git reads every version (cat-file, fsck, verify-pack), and a
// compaction packs them, with the deltas their writer made and, as
// another process's compaction, reading each whole from where it lies.
func TestAGroupsTreeVersionsAreDeltasInItsPack(t *testing.T) {
	for _, withKnown := range []bool{true, false} {
		t.Run(fmt.Sprintf("known=%v", withKnown), func(t *testing.T) {
			dir, gitDir, o := objectsRepo(t)
			rng := rand.New(rand.NewSource(28))
			hash := func() (h Hash) { rng.Read(h[:]); return h }
			var entries []treeEntry
			for i := 0; i < 6000; i++ {
				entries = append(entries, treeEntry{Name: fmt.Sprintf("close-%08x-%d", rng.Uint32(), i), Mode: object.Dir, Hash: hash()})
			}
			object.SortTree(entries)
			if object.TreeSize(entries) < storedFrom {
				t.Fatalf("a tree of %d bytes is not large", object.TreeSize(entries))
			}
			var prev Hash
			var ids []string
			var batch bytes.Buffer
			versions := 0
			for g := 0; g < 12; g++ {
				o.hold()
				for k := rng.Intn(7); k >= 0; k-- {
					entries = slices.Clone(entries)
					var changed []int
					reshaped := prev.IsZero()
					if rng.Intn(10) == 0 {
						entries = append(entries, treeEntry{Name: fmt.Sprintf("pay-%d-%d", g, k), Mode: object.Dir, Hash: hash()})
						reshaped = true
					} else {
						for n := 1 + rng.Intn(3); n > 0; n-- {
							i := rng.Intn(len(entries))
							entries[i].Hash = hash()
							changed = append(changed, i)
						}
					}
					id, sorted, want := writeVersion(t, o, prev, entries, changed, reshaped)
					// Readable before the group's pack is written.
					if got, typ, err := o.readRaw(id); err != nil || typ != object.Tree || !bytes.Equal(got, want) {
						t.Fatalf("group %d: the held version reads %v %d bytes (%v)", g, typ, len(got), err)
					}
					prev = id
					ids = append(ids, id.String())
					fmt.Fprintf(&batch, "%s tree %d\n%s\n", id, len(want), want)
					entries = sorted
					versions++
				}
				if err := o.flush(); err != nil {
					t.Fatal(err)
				}
				o.drop()
			}
			loose, _ := filepath.Glob(filepath.Join(gitDir, "objects", "??", "*"))
			if len(loose) >= versions {
				t.Fatalf("%d loose objects for %d versions: no version went into a fresh pack", len(loose), versions)
			}
			check := func(when string) {
				t.Helper()
				cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
				cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
				if out, err := cmd.Output(); err != nil || !bytes.Equal(out, batch.Bytes()) {
					t.Fatalf("git cat-file --batch %s: %v, %d bytes, want %d", when, err, len(out), batch.Len())
				}
				packs, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
				for _, p := range packs {
					if out, err := exec.Command("git", "-C", dir, "verify-pack", p).CombinedOutput(); err != nil {
						t.Fatalf("git verify-pack %s %s: %v\n%s", filepath.Base(p), when, err, out)
					}
				}
			}
			check("of the fresh packs")
			known := o.known.known
			if !withKnown {
				known = nil
			}
			packed, err := pack.Compact(context.Background(), filepath.Join(gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
				return o.readRaw(id)
			}, known, func(string) bool { return true })
			if !packed || err != nil {
				t.Fatalf("compacted %v: %v", packed, err)
			}
			if left, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx")); len(left) != 1 {
				t.Fatalf("%d packs after the compaction", len(left))
			}
			check("after the compaction")
		})
	}
}

// objectsRepo is a new git repository in a test's folder, and the objects
// of its .git.
func objectsRepo(t *testing.T) (dir, gitDir string, o *objects) {
	t.Helper()
	dir = t.TempDir()
	gitDir = filepath.Join(dir, ".git")
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	return dir, gitDir, newObjects(gitDir)
}

// writeVersion writes a version of a tree as a commit does, and holds its
// id to a whole write's: it answers the entries in git's order and the
// tree's content.
func writeVersion(t *testing.T, o *objects, prev Hash, entries []treeEntry, changed []int, reshaped bool) (Hash, []treeEntry, []byte) {
	t.Helper()
	id, err := o.writeTreeFrom(prev, entries, changed, reshaped)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(entries)
	object.SortTree(sorted)
	want := object.AppendTree(nil, sorted)
	if wantID := object.Sum(object.Tree, want); id != wantID {
		t.Fatalf("id %s, a whole write's %s", id, wantID)
	}
	return id, sorted, want
}

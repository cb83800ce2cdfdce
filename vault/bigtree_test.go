package vault

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"hash/adler32"
	"maps"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

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
			id, err := writeFrom(o, prev, entries, []int{i}, prev.IsZero())
			if err != nil {
				t.Fatal(err)
			}
			prev = id
			ids = append(ids, id.String())
		}
		compact()
	}
	total, whole := packBytes(t, dir), wholeTree(entries)
	if total > whole*13/10 {
		t.Fatalf("packs of %d bytes for %d versions of a tree of %d bytes, %d compressed: more than one whole", total, len(ids), size, whole)
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
	id, err := writeFrom(o, prev, entries, changed, reshaped)
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

// A kept tree's entry is found in its bytes as object.FindEntry finds it
// among its entries: every name, and names it lacks, where git's order
// puts a folder as if its name ended in "/" (a, a.b, a/ and a0).
func TestAKeptTreesEntryIsFoundAsAmongItsEntries(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var entries []treeEntry
	names := map[string]bool{}
	for len(entries) < 3000 {
		n := fmt.Sprintf("r%d", rng.Intn(400))
		for _, s := range []string{"", ".b", "-c", "0", "/x"} {
			if rng.Intn(2) == 0 {
				n += s
			}
		}
		if i := strings.IndexByte(n, '/'); i >= 0 {
			n = n[:i]
		}
		if names[n] {
			continue
		}
		names[n] = true
		mode := object.Regular
		if rng.Intn(2) == 0 {
			mode = object.Dir
		}
		var h Hash
		rng.Read(h[:])
		entries = append(entries, treeEntry{Name: n, Mode: mode, Hash: h})
	}
	object.SortTree(entries)
	kept := keepTree(entries)
	k := &keptTrees{trees: []*keptTree{kept}}
	for _, probe := range append(slices.Collect(maps.Keys(names)), "r1.b.c", "r", "r400", "", "zz", "r1/") {
		want, wantFound := object.FindEntry(entries, probe)
		i, mode, h, found, isKept := k.entry(kept.id, probe)
		if !isKept || found != wantFound || found && (i != want || mode != entries[want].Mode || h != entries[want].Hash) {
			t.Fatalf("%q: found %v at %d (%o %s), among the entries %v at %d", probe, found, i, mode, h, wantFound, want)
		}
	}
	if _, _, _, _, isKept := k.entry(Hash{1}, "r1"); isKept {
		t.Fatal("a tree not kept answers as kept")
	}
}

// Commits that change files of a vault's many run folders, one or a few
// at a time, make each version of playbook-runs/ from the last one's kept
// bytes (rebuildKept): every commit's tree is the one git writes from the
// same files, whatever the commit does beside (a run added or removed, a
// file made executable, a run folder emptied), alone or in a group.
func TestCommitsOfManyRunsMakeGitsTrees(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	run := func(i int) string {
		return fmt.Sprintf("playbook-runs/close-019a4012-7c3e-7d10-9b2a-%012x-2026-11-01", i)
	}
	write := func(rel, s string) {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runs := 3400 // playbook-runs/ past storedFrom: a group holds its versions as deltas
	for i := 0; i < runs; i++ {
		write(run(i)+"/run.jsonl", "{}\n") // one blob and one folder tree for all: a quick first commit
		if i < 50 {
			write(run(i)+"/thread.md", "# thread\n")
		}
	}
	commit := func(paths ...string) {
		t.Helper()
		if err := v.Locked(func() error {
			_, err := v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, "c")
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	commit("playbook-runs")
	idx := filepath.Join(t.TempDir(), "index")
	gitTree := func() string {
		t.Helper()
		// git's own tree of the same files: an index of its own, from the
		// work tree.
		env := append(os.Environ(), "GIT_INDEX_FILE="+idx)
		add := exec.Command("git", "-C", dir, "add", "-A", ".")
		add.Env = env
		if out, err := add.CombinedOutput(); err != nil {
			t.Fatalf("git add: %v %s", err, out)
		}
		wt := exec.Command("git", "-C", dir, "write-tree")
		wt.Env = env
		want, err := wt.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(want))
	}
	rng := rand.New(rand.NewSource(11))
	for c := 0; c < 40; c++ {
		var paths []string
		switch k := rng.Intn(10); {
		case k == 0: // a run added
			write(run(runs)+"/run.jsonl", "{}\n")
			paths = append(paths, run(runs))
			runs++
		case k == 1: // a run removed
			i := rng.Intn(runs)
			os.RemoveAll(filepath.Join(dir, run(i)))
			paths = append(paths, run(i))
		case k == 2: // a file made executable
			p := run(rng.Intn(50)) + "/thread.md"
			if os.Chmod(filepath.Join(dir, p), 0o755) != nil {
				continue
			}
			paths = append(paths, p)
		case k == 3: // the files of a run folder gone, the folder left
			i := rng.Intn(runs)
			os.Remove(filepath.Join(dir, run(i), "run.jsonl"))
			os.Remove(filepath.Join(dir, run(i), "thread.md"))
			paths = append(paths, run(i)+"/run.jsonl", run(i)+"/thread.md")
		default: // lines appended to one to three runs
			for n := 1 + rng.Intn(3); n > 0; n-- {
				p := run(rng.Intn(runs)) + "/run.jsonl"
				if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
					continue
				}
				AppendLine(filepath.Join(dir, p), []byte(fmt.Sprintf("{\"c\":%d}\n", c)))
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			continue
		}
		commit(paths...)
		if got, want := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{tree}")), gitTree(); got != want {
			t.Fatalf("commit %d (%v): HEAD's tree %s, git's of the same files %s", c, paths, got, want)
		}
	}
	// Writers at once, each on its own run: groups of commits.
	before := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD"))
	var wg sync.WaitGroup
	for w := 0; w < 24; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := run(w) + "/group.jsonl"
			for k := 0; k < 3; k++ {
				AppendLine(filepath.Join(dir, p), []byte(fmt.Sprintf("{\"k\":%d}\n", k)))
				if err := v.Locked(func() error {
					_, err := v.Commit([]string{p}, Signature{Name: "agent-7", When: time.Now()}, fmt.Sprint(w))
					return err
				}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got, want := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{tree}")), gitTree(); got != want {
		t.Fatalf("after the groups: HEAD's tree %s, git's of the same files %s", got, want)
	}
	// Each commit of the groups changes its own run's file alone.
	for _, line := range strings.Split(strings.TrimSpace(gitOut(t, dir, "log", "--format=%H %s", before+"..HEAD")), "\n") {
		id, subject, _ := strings.Cut(line, " ")
		w, _ := strconv.Atoi(subject)
		if changed := strings.TrimSpace(gitOut(t, dir, "diff-tree", "--no-commit-id", "--name-only", "-r", id)); changed != run(w)+"/group.jsonl" {
			t.Fatalf("commit %s of writer %s changes %q", id, subject, changed)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// A large object is written loose in stored blocks straight from its
// content (writeStored): git reads back the same bytes at every size about
// a block's edge, the header's bytes in the first block, and the file is
// the size the loose bytes counted say.
func TestStoredLooseObjectsAreWhatGitReads(t *testing.T) {
	dir, gitDir, o := objectsRepo(t)
	hdrLen := len(object.AppendHeader(nil, object.Blob, storedFrom))
	var ids []string
	var batch bytes.Buffer
	before := o.looseBytes.Load()
	var written int64
	for _, n := range []int{storedFrom, storedFrom + 1, 9*keptBlock - hdrLen - 1, 9*keptBlock - hdrLen, 9*keptBlock - hdrLen + 1, 3 << 20} {
		content := make([]byte, n)
		for i := range content {
			content[i] = byte(i*7 + n)
		}
		id := object.Sum(object.Blob, content)
		if err := o.writeAs(id, object.Blob, content); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(gitDir, "objects", id.String()[:2], id.String()[2:])
		typ, got, err := object.ReadLooseFile(file)
		if err != nil || typ != object.Blob || !bytes.Equal(got, content) {
			t.Fatalf("%d bytes: Go's zlib reads %v %d bytes (%v)", n, typ, len(got), err)
		}
		fi, _ := os.Stat(file)
		written += fi.Size()
		ids = append(ids, id.String())
		fmt.Fprintf(&batch, "%s blob %d\n%s\n", id, n, content)
	}
	if got := o.looseBytes.Load() - before; got != written {
		t.Errorf("%d loose bytes counted for files of %d", got, written)
	}
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	if out, err := cmd.Output(); err != nil || !bytes.Equal(out, batch.Bytes()) {
		t.Fatalf("git cat-file --batch: %v, %d bytes, want %d", err, len(out), batch.Len())
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// A kept tree reshaped from its bytes (entries added, removed, given
// other hashes, made folders or files) is the tree a whole write of the
// same entries makes: its stream, id, loose object and where each entry
// ends, whatever the edits, several at one place among them.
func TestAReshapedKeptTreeIsWhatAWholeWriteMakes(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	hash := func() (h Hash) { rng.Read(h[:]); return h }
	name := func() string {
		n := fmt.Sprintf("r%d", rng.Intn(300))
		for _, s := range []string{".b", "-c", "0"} {
			if rng.Intn(3) == 0 {
				n += s
			}
		}
		return n
	}
	mode := func() object.Mode { return []object.Mode{object.Regular, object.Dir, object.Executable}[rng.Intn(3)] }
	for round := 0; round < 200; round++ {
		byName := map[string]treeEntry{}
		for len(byName) < 1+rng.Intn(400) {
			n := name()
			byName[n] = treeEntry{Name: n, Mode: mode(), Hash: hash()}
		}
		entries := slices.Collect(maps.Values(byName))
		object.SortTree(entries)
		kept := keepTree(entries)
		var edits []treeEdit
		edited := map[string]bool{}
		for k := rng.Intn(8); k >= 0; k-- {
			n := name()
			if edited[n] {
				continue
			}
			edited[n] = true
			i, found := object.FindEntry(entries, n)
			switch {
			case !found:
				e := treeEntry{Name: n, Mode: mode(), Hash: hash()}
				edits = append(edits, treeEdit{e: e})
				byName[n] = e
			case rng.Intn(3) == 0 || len(byName) == 1 && rng.Intn(2) == 0:
				edits = append(edits, treeEdit{at: i, found: true, e: treeEntry{Name: n}})
				delete(byName, n)
			case (entries[i].Mode == object.Dir) != (rng.Intn(2) == 0):
				// Made a folder or a file: removed, and added where it sorts.
				e := treeEntry{Name: n, Mode: object.Dir, Hash: hash()}
				if entries[i].Mode == object.Dir {
					e.Mode = object.Regular
				}
				edits = append(edits, treeEdit{at: i, found: true, e: treeEntry{Name: n}}, treeEdit{e: e})
				byName[n] = e
			default:
				e := treeEntry{Name: n, Mode: entries[i].Mode, Hash: hash()}
				if e.Mode != object.Dir && rng.Intn(2) == 0 {
					e.Mode = object.Regular + object.Executable - e.Mode
				}
				edits = append(edits, treeEdit{at: i, found: true, e: e})
				byName[n] = e
			}
		}
		got := kept.reshape(edits)
		want := slices.Collect(maps.Values(byName))
		object.SortTree(want)
		if len(want) == 0 {
			if len(got.ends) != 0 {
				t.Fatalf("round %d: every entry removed leaves %d", round, len(got.ends))
			}
			continue
		}
		whole := keepTree(want)
		if got.id != whole.id || !bytes.Equal(got.stream, whole.stream) || !bytes.Equal(got.loose, whole.loose) || !slices.Equal(got.ends, whole.ends) || got.adler != whole.adler {
			t.Fatalf("round %d: %d edits of %d entries make %s, a whole write %s", round, len(edits), len(entries), got.id, whole.id)
		}
		for i := range want {
			if n, m, h := got.entryAt(i); string(n) != want[i].Name || m != want[i].Mode || h != want[i].Hash {
				t.Fatalf("round %d: entry %d reads %s %o, written %s %o", round, i, n, m, want[i].Name, want[i].Mode)
			}
		}
	}
}

// A large tree's versions past the depth a pack chains deltas to (50)
// are sparse deltas of the version written whole at the chain's start,
// kept in the compaction's window for them: 110 versions of a 2.2 MB tree
// in one compaction leave one whole version, not three, and git reads
// every version.
func TestVersionsPastAChainsDepthAreSparseDeltas(t *testing.T) {
	dir, gitDir, o := objectsRepo(t)
	rng := rand.New(rand.NewSource(12))
	hash := func() (h Hash) { rng.Read(h[:]); return h }
	var entries []treeEntry
	for i := 0; i < 45000; i++ { // past diffMost, which go-git's DiffDelta is tried to
		entries = append(entries, treeEntry{Name: fmt.Sprintf("close-%08x-%d", rng.Uint32(), i), Mode: object.Dir, Hash: hash()})
	}
	object.SortTree(entries)
	var ids []string
	var prev Hash
	for v := 0; v < 110; v++ {
		var changed []int
		for n := 1 + rng.Intn(3); n > 0; n-- {
			i := rng.Intn(len(entries))
			entries[i].Hash = hash()
			changed = append(changed, i)
		}
		id, err := writeFrom(o, prev, entries, changed, prev.IsZero())
		if err != nil {
			t.Fatal(err)
		}
		prev = id
		ids = append(ids, id.String())
		// Loose, as one client's boundaries leave them, and a few
		// blobs and small trees between, as a boundary writes.
		for k := 0; k < 4; k++ {
			if _, err := o.write("blob", []byte(fmt.Sprintf("version %d blob %d %x", v, k, rng.Uint64()))); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ok, err := pack.Compact(context.Background(), filepath.Join(gitDir, "objects"), func(id object.Hash) ([]byte, object.Type, error) {
		return o.readRaw(id)
	}, o.known.known, nil); !ok || err != nil {
		t.Fatalf("compacted %v: %v", ok, err)
	}
	total, whole := packBytes(t, dir), wholeTree(entries)
	if total > whole*15/10 {
		t.Fatalf("%d bytes of packs for %d versions of a tree of %d bytes compressed: more than one whole", total, len(ids), whole)
	}
	cmd := exec.Command("git", "-C", dir, "cat-file", "--batch-check")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	if out, err := cmd.Output(); err != nil || strings.Count(string(out), " tree ") != len(ids) {
		t.Fatalf("git cat-file: %v\n%s", err, out)
	}
	idx, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	for _, p := range idx {
		if out, err := exec.Command("git", "-C", dir, "verify-pack", p).CombinedOutput(); err != nil {
			t.Fatalf("git verify-pack: %v\n%s", err, out)
		}
	}
}

// wholeTree is the bytes of the tree of entries as a pack holds it whole
// (compressed at zlib's best speed, as a compaction compresses a large
// object).
func wholeTree(entries []treeEntry) int {
	var b bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write(object.AppendTree(nil, entries))
	zw.Close()
	return b.Len()
}

// writeFrom writes the tree of entries as rebuild does: from the kept
// bytes of prev with the hashes at changed new when it is kept and not
// reshaped (patchKept), else whole.
func writeFrom(o *objects, prev Hash, entries []treeEntry, changed []int, reshaped bool) (Hash, error) {
	if !reshaped && !prev.IsZero() {
		set := make([]hashAt, len(changed))
		for k, i := range changed {
			set[k] = hashAt{i, entries[i].Hash}
		}
		if id, ok, err := o.patchKept(prev, set); ok || err != nil {
			return id, err
		}
	}
	return o.writeTree(entries, reshaped)
}

// A large tree's next version in a group is written loose beside the rest
// of its commit (writeLate): its file is there once the group flushes, as
// git reads it; and a write that fails is the flush's answer, leaves no
// file behind, and the kept tree it was of is dropped, so that no version
// is made from bytes no object holds.
func TestALateLooseTreeIsWrittenByTheFlushOrItsFailureIsTheFlushs(t *testing.T) {
	dir, gitDir, o := objectsRepo(t)
	rng := rand.New(rand.NewSource(7))
	hash := func() (h Hash) { rng.Read(h[:]); return h }
	var entries []treeEntry
	for i := 0; i < 6000; i++ {
		entries = append(entries, treeEntry{Name: fmt.Sprintf("close-%08x-%d", rng.Uint32(), i), Mode: object.Dir, Hash: hash()})
	}
	first, sorted, _ := writeVersion(t, o, ZeroHash, entries, nil, true)
	next := func(prev Hash) (Hash, []byte, error) {
		entries = slices.Clone(sorted)
		i := rng.Intn(len(entries))
		entries[i].Hash = hash()
		id, err := writeFrom(o, prev, entries, []int{i}, false)
		return id, object.AppendTree(nil, entries), err
	}
	o.hold()
	id, want, err := next(first)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.flush(); err != nil {
		t.Fatal(err)
	}
	o.drop()
	out, err := exec.Command("git", "-C", dir, "cat-file", "tree", id.String()).Output()
	if err != nil || !bytes.Equal(out, want) {
		t.Fatalf("git cat-file tree %s: %v, %d bytes, want %d", id, err, len(out), len(want))
	}

	// The next write's temporary file is taken: its write fails.
	o.hold()
	block := filepath.Join(gitDir, "objects", fmt.Sprintf("%s%d_%d", pack.TmpObjectPrefix, os.Getpid(), tmpSeq.Load()+1))
	if err := os.Mkdir(block, 0o755); err != nil {
		t.Fatal(err)
	}
	failed, _, err := next(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.flush(); err == nil {
		t.Fatal("the flush answers no error for a loose tree it could not write")
	}
	o.drop()
	os.Remove(block)
	if has, err := o.has(failed); has || err != nil {
		t.Fatalf("the tree whose write failed: has %v, %v", has, err)
	}
	if o.kept.take(failed) != nil {
		t.Fatal("the tree whose write failed is still kept")
	}
	if tmps, _ := filepath.Glob(filepath.Join(gitDir, "objects", pack.TmpObjectPrefix+"*")); len(tmps) > 0 {
		t.Fatalf("left behind: %v", tmps)
	}
}

package vault

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/vault/git/index"
)

// The forms of .git/index git writes, each made by the git CLI:
// version 2 (git's default), 3 (an entry with an extended flag: git add -N),
// 4 (prefix-compressed names) and split (the link extension and a shared
// index), and split in version 4.
var indexForms = []struct {
	name string
	set  func(t *testing.T, dir string)
}{
	{"v2", func(t *testing.T, dir string) { gitOut(t, dir, "update-index", "--index-version", "2") }},
	{"v3", func(t *testing.T, dir string) {
		gitOut(t, dir, "update-index", "--index-version", "3", "--skip-worktree", "quire.yaml")
	}},
	{"v4", func(t *testing.T, dir string) { gitOut(t, dir, "update-index", "--index-version", "4") }},
	{"split", func(t *testing.T, dir string) {
		gitOut(t, dir, "update-index", "--index-version", "2")
		gitOut(t, dir, "update-index", "--split-index")
	}},
	{"split-v4", func(t *testing.T, dir string) {
		gitOut(t, dir, "update-index", "--index-version", "4")
		gitOut(t, dir, "update-index", "--split-index")
	}},
	// core.splitIndex set: git and quire both write the split form.
	{"split-config", func(t *testing.T, dir string) { gitOut(t, dir, "config", "core.splitIndex", "true") }},
}

// splitOnDisk reports whether .git/index is split, and the size of the
// file itself.
func splitOnDisk(t *testing.T, dir string) (bool, int) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	x := &gitIndex{path: indexPath(filepath.Join(dir, ".git"))}
	d, err := index.Decode(data, true, func(id Hash) ([]*index.Entry, error) { return x.sharedEntries(id, true) })
	if err != nil {
		t.Fatal(err)
	}
	return d.Shared != nil, len(data)
}

// gitEntries is what git itself lists of its index: mode, id, stage, name.
func gitEntries(t *testing.T, dir string) string {
	return gitOut(t, dir, "ls-files", "-s")
}

func ourEntries(t *testing.T, dir string) (string, []*index.Entry) {
	t.Helper()
	x := &gitIndex{path: indexPath(filepath.Join(dir, ".git"))}
	if err := x.load(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	all := x.all()
	for _, e := range all {
		fmt.Fprintf(&b, "%o %s %d\t%s\n", uint32(e.Mode), e.Hash, e.Stage, e.Name)
	}
	return b.String(), all
}

// manyFiles writes n run folders of three files (names sharing long
// prefixes, what version 4 compresses) and an executable file.
func manyFiles(t *testing.T, dir string, n int) []string {
	var rels []string
	for i := 0; i < n; i++ {
		for _, f := range []string{"run.jsonl", "run.state.json", "thread.md"} {
			rel := fmt.Sprintf("playbook-runs/close-019a4012-%04d-2026-11-01/%s", i, f)
			os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, rel), []byte(rel+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			rels = append(rels, rel)
		}
	}
	os.MkdirAll(filepath.Join(dir, "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "x", "run.sh"), []byte("x"), 0o755)
	return rels
}

// Every form git writes is read as git lists it by the index the vault
// keeps (vault/git/index compares the decoder with go-git's).
func TestDecodeIndexReadsEveryFormGitWrites(t *testing.T) {
	for _, form := range indexForms {
		t.Run(form.name, func(t *testing.T) {
			dir := t.TempDir()
			v, err := Init(dir, "acme", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			v.Close()
			manyFiles(t, dir, 30)
			gitOut(t, dir, "add", "-A")
			form.set(t, dir)
			os.WriteFile(filepath.Join(dir, "new.md"), []byte("new\n"), 0o644)
			gitOut(t, dir, "add", "-N", "new.md")
			gitOut(t, dir, "rm", "-q", "--cached", "playbook-runs/close-019a4012-0003-2026-11-01/thread.md")
			got, _ := ourEntries(t, dir)
			if want := gitEntries(t, dir); got != want {
				t.Fatalf("read:\n%s\ngit lists:\n%s", got, want)
			}
			if strings.HasPrefix(form.name, "split") {
				if _, err := os.Stat(filepath.Join(dir, ".git", "index")); err != nil {
					t.Fatal(err)
				}
				ms, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
				if len(ms) == 0 {
					t.Fatal("git made no shared index")
				}
				return
			}
		})
	}
}

// git and quire take turns on a vault whose index git keeps in each of its
// forms: quire commits, git finds its index clean and the repository
// sound; git commits, quire reads what git wrote and commits again.
func TestGitAndQuireTakeTurnsInEveryIndexForm(t *testing.T) {
	// Short: one turn each, git fsck at the end; long: more runs and
	// turns, git fsck after each.
	runs, turns, long := 10, 1, os.Getenv("QUIRE_TEST_LONG") != ""
	if long {
		runs, turns = 300, 3
	}
	for _, form := range indexForms {
		t.Run(form.name, func(t *testing.T) {
			dir := t.TempDir()
			v, err := Init(dir, "acme", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			rels := manyFiles(t, dir, runs)
			commit := func(paths ...string) { t.Helper(); commitWaiting(t, v, paths...) }
			sound := func(when string) {
				t.Helper()
				indexIsHEADs(t, dir, when)
				if long {
					gitOut(t, dir, "fsck", "--strict", "--no-progress")
				}
			}
			commit("playbook-runs", "x")
			sound("quire's first commit")
			form.set(t, dir)
			for turn := 0; turn < turns; turn++ {
				a := rels[(turn*7)%len(rels)]
				AppendLine(filepath.Join(dir, a), []byte(fmt.Sprintf("{\"turn\":%d}\n", turn)))
				commit(filepath.Dir(a))
				sound(fmt.Sprintf("quire's commit %d", turn))
				// quire keeps the form: split where git left it split or
				// the config asks for it, whole otherwise (a small index).
				if split, _ := splitOnDisk(t, dir); split != strings.HasPrefix(form.name, "split") {
					t.Fatalf("after quire's commit %d the index is split: %v", turn, split)
				}
				if got, want := func() string { s, _ := ourEntries(t, dir); return s }(), gitEntries(t, dir); got != want {
					t.Fatalf("after quire's commit %d, quire reads\n%s\ngit lists\n%s", turn, got, want)
				}
				b := rels[(turn*11+1)%len(rels)]
				AppendLine(filepath.Join(dir, b), []byte("{\"by\":\"a person\"}\n"))
				gitOut(t, dir, "add", b)
				gitOut(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "a person's change")
				form.set(t, dir) // git keeps the form (split, version) the user chose
				sound(fmt.Sprintf("git's commit %d", turn))
			}
			// quire's last commit reads git's index in this form and commits
			// what git had not: nothing of git's is lost.
			c := rels[len(rels)-1]
			AppendLine(filepath.Join(dir, c), []byte("{\"last\":true}\n"))
			commit(filepath.Dir(c))
			sound("quire's last commit")
			if s := gitOut(t, dir, "log", "--format=%s", "-3"); !strings.Contains(s, "a person's change") {
				t.Fatalf("log:\n%s", s)
			}
			gitOut(t, dir, "config", "core.splitIndex", "false")
			if s := gitOut(t, dir, "update-index", "--no-split-index"); s != "" {
				t.Fatal(s)
			}
			sound("split index turned off")
			// With core.splitIndex false quire writes the index whole.
			AppendLine(filepath.Join(dir, rels[0]), []byte("{\"whole\":true}\n"))
			commit(filepath.Dir(rels[0]))
			if split, _ := splitOnDisk(t, dir); split {
				t.Fatal("quire wrote a split index with core.splitIndex false")
			}
			sound("quire's commit with the split index off")
			gitOut(t, dir, "fsck", "--strict", "--no-progress")
		})
	}
}

// The root of git's cache-tree is read when git left it valid (after a
// commit it is HEAD's tree), and not when git invalidated it (a path
// staged since), nor from an index quire wrote.
func TestCacheTreeRootIsGits(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	root := func() string {
		x := &gitIndex{path: indexPath(filepath.Join(dir, ".git"))}
		if err := x.load(); err != nil {
			t.Fatal(err)
		}
		if x.cacheTree.IsZero() {
			return ""
		}
		return x.cacheTree.String()
	}
	if r, want := root(), strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{tree}")); r != want {
		t.Fatalf("quire's own index has the cache-tree %q, HEAD's tree %s", r, want)
	}
	manyFiles(t, dir, 3)
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "a person's commit")
	if r, want := root(), strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD^{tree}")); r != want {
		t.Fatalf("cache-tree root %q, HEAD's tree %s", r, want)
	}
	os.WriteFile(filepath.Join(dir, "x", "run.sh"), []byte("changed"), 0o755)
	gitOut(t, dir, "add", "x/run.sh")
	if r := root(); r != "" {
		t.Fatalf("a cache-tree git invalidated is read as %s", r)
	}
}

// A large split index is held in place: its shared index's bytes once
// and little beside them (decoded whole, 600,000 entries at 100,000 runs
// were 116 MB beside the file's 47; issue 28), and read as written.
func TestSharedIndexHeldInPlace(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	os.MkdirAll(gitDir, 0o755)
	var entries []*index.Entry
	at := time.Unix(1764000000, 5)
	for i := 0; i < 20000; i++ {
		for _, f := range []string{"context.md", "definition.md", "run.jsonl", "run.state.json", "thread.md"} {
			name := fmt.Sprintf("playbook-runs/close-019a4012-7c3e-7d10-9b2a-%012x-2026-11-01/%s", i, f)
			entries = append(entries, &index.Entry{Name: name, Mode: 0o100644, Hash: hashObject("blob", []byte(name)), ModifiedAt: at, CreatedAt: at, Size: uint32(i)})
		}
	}
	shared := index.EncodeV4(nil, entries)
	var id Hash
	copy(id[:], shared[len(shared)-20:])
	os.WriteFile(filepath.Join(gitDir, "sharedindex."+id.String()), shared, 0o644)
	changed := *entries[7]
	changed.Size = 99
	os.WriteFile(indexPath(gitDir), index.EncodeSplit(nil, index.Split{Replace: []int{7}, Replaced: []*index.Entry{&changed}}, id, true), 0o644)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := &gitIndex{path: indexPath(gitDir)}
	if err := x.load(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("held %d bytes for a shared index of %d", held, len(shared))
	if held > int64(len(shared))*3/2 {
		t.Errorf("the index of %d entries holds %d bytes, its shared index's file %d", len(entries), held, len(shared))
	}
	if e, ok := x.get(entries[7].Name); !ok || e.Size != 99 {
		t.Errorf("the entry the split index replaces reads %+v %v", e, ok)
	}
	if e, ok := x.get(entries[12345].Name); !ok || !index.Same(e, entries[12345]) {
		t.Errorf("a shared entry reads %+v %v", e, ok)
	}
	if n := x.countUnder("playbook-runs"); n != len(entries) || x.len() != len(entries) {
		t.Errorf("%d entries under playbook-runs/ of %d, %d written", n, x.len(), len(entries))
	}
	runtime.KeepAlive(x)
}

// quire's commits one after another in a small vault (a whole index)
// write .git/index by changing the entries they changed in the last one
// quire wrote (index.Table.Patched), and git reads it as the index of
// HEAD: clean, every entry as git lists it, sound to git fsck, before and
// after a person's own git commit and a git status that rewrites it.
func TestQuireIndexWrittenInPlaceIsGits(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rels := manyFiles(t, dir, 12)
	commit := func(paths ...string) { t.Helper(); commitWaiting(t, v, paths...) }
	sound := func(when string) {
		t.Helper()
		indexIsHEADs(t, dir, when)
		if got, want := func() string { s, _ := ourEntries(t, dir); return s }(), gitEntries(t, dir); got != want {
			t.Fatalf("%s: quire reads\n%s\ngit lists\n%s", when, got, want)
		}
		gitOut(t, dir, "fsck", "--strict", "--no-progress")
	}
	commit("playbook-runs", "x")
	sound("the first commit")
	for turn := 0; turn < 8; turn++ {
		// Two commits with no git between (git status rewrites the
		// index it refreshes): the second writes in place of the first.
		b := rels[(turn*7+3)%len(rels)]
		AppendLine(filepath.Join(dir, b), []byte(fmt.Sprintf("{\"before\":%d}\n", turn)))
		commit(filepath.Dir(b))
		a := rels[(turn*5)%len(rels)]
		AppendLine(filepath.Join(dir, a), []byte(fmt.Sprintf("{\"turn\":%d}\n", turn)))
		if turn == 4 {
			// A person's commit and status between quire's: quire reads
			// what git wrote, then writes in place of its own again.
			AppendLine(filepath.Join(dir, rels[1]), []byte("{\"by\":\"a person\"}\n"))
			gitOut(t, dir, "add", rels[1])
			gitOut(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "a person's change")
			gitOut(t, dir, "status", "--porcelain")
		}
		commit(filepath.Dir(a))
		sound(fmt.Sprintf("quire's commit %d", turn))
	}
	if split, _ := splitOnDisk(t, dir); split {
		t.Fatal("the index of a small vault was split")
	}
	if n := v.gitIdx.patchedWrites; n < 7 {
		t.Fatalf("%d of the 8 commits after another of quire's wrote the index in place of its last", n)
	}
}

// commitWaiting commits paths as a boundary does, then waits for a
// compaction it started. Turns: quire is idle when git runs. A commit may
// start compaction in the background (as git's gc --auto does), and a
// git fsck that lists loose objects while it packs them finds some gone;
// wait for it, as a person's git would run after it.
func commitWaiting(t *testing.T, v *Vault, paths ...string) {
	t.Helper()
	if err := v.Locked(func() error {
		_, err := v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, "finance: step_completed")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v.compacting.Wait()
}

// indexIsHEADs fails unless git finds the vault at dir clean and its
// index HEAD's.
func indexIsHEADs(t *testing.T, dir, when string) {
	t.Helper()
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("%s: git status not clean:\n%s", when, s)
	}
	if s := gitOut(t, dir, "diff", "--cached", "--stat"); s != "" {
		t.Fatalf("%s: git diff --cached:\n%s", when, s)
	}
}

// The cache tree's counts of entries below each root folder are the
// table's and the changes' net, kept as entries are set and removed: any
// sequence of them leaves each count the one a walk of the index finds,
// and the changes in their names' order each name's change.
func TestCountUnderIsTheWalksCount(t *testing.T) {
	tops := []string{"playbook-runs", "playbooks", "vault", "README.md", "playbook-runs0"}
	name := func(r *rand.Rand) string {
		top := tops[r.Intn(len(tops))]
		if strings.Contains(top, ".") || top == "playbook-runs0" && r.Intn(2) == 0 {
			return top
		}
		return fmt.Sprintf("%s/%03d/f%d", top, r.Intn(40), r.Intn(3))
	}
	for seed := int64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewSource(seed))
		var base []*index.Entry
		seen := map[string]bool{}
		for i := 0; i < 200; i++ {
			if n := name(r); !seen[n] {
				seen[n] = true
				base = append(base, &index.Entry{Name: n, Mode: 0o100644})
			}
		}
		slices.SortFunc(base, func(a, b *index.Entry) int { return strings.Compare(a.Name, b.Name) })
		x := &gitIndex{}
		x.rebase(index.TableOf(base), ZeroHash)
		for step := 0; step < 400; step++ {
			n := name(r)
			if r.Intn(3) == 0 {
				x.remove(n)
			} else {
				x.setEntry(&index.Entry{Name: n, Mode: 0o100644, Size: uint32(step)})
			}
			if step%50 == 49 {
				x.rebase(index.TableOf(x.all()), ZeroHash)
			}
			if len(x.ochanges) != len(x.onames) || len(x.onames) != len(x.over) {
				t.Fatalf("seed %d step %d: %d changes in order, %d names, %d changes", seed, step, len(x.ochanges), len(x.onames), len(x.over))
			}
			for k, name := range x.onames {
				if x.ochanges[k] != x.over[name] {
					t.Fatalf("seed %d step %d: the change of %s in order is not its change", seed, step, name)
				}
			}
			for _, top := range tops {
				want := 0
				x.each(func(e *index.Entry) bool {
					if strings.HasPrefix(e.Name, top+"/") {
						want++
					}
					return true
				})
				if got := x.countUnder(top); got != want {
					t.Fatalf("seed %d step %d: %d entries under %s/, a walk finds %d", seed, step, got, top, want)
				}
			}
		}
	}
}

// Whatever a table's monitor bits and whichever entries the index adds,
// replaces and removes since it, the positions the FSMN extension is
// written with (dirtyBits, which reads no name of the table but those
// added) are those a walk of the whole index finds not FSMonitorValid.
func TestMonitorBitsByPositionAsAWalkFindsThem(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for round := 0; round < 300; round++ {
		var entries []*index.Entry
		for i, n := 0, r.Intn(120); i < n; i++ {
			entries = append(entries, &index.Entry{Name: fmt.Sprintf("playbook-runs/r%03d/f%d", i, r.Intn(3)), Mode: 0o100644})
		}
		m, err := index.ReadMain(index.EncodeExt(nil, entries, r.Intn(2) == 0), true)
		if err != nil {
			t.Fatal(err)
		}
		x := &gitIndex{}
		x.rebase(m.Whole, ZeroHash)
		if r.Intn(5) > 0 {
			x.fsm = make([]bool, len(entries))
			for i := range x.fsm {
				x.fsm[i] = r.Intn(3) > 0
			}
		}
		for k, n := 0, r.Intn(30); k < n; k++ {
			valid := r.Intn(2) == 0
			switch {
			case len(entries) > 0 && r.Intn(3) == 0: // removed
				i := r.Intn(len(entries))
				x.put(entries[i].Name, nil, i)
			case len(entries) > 0 && r.Intn(2) == 0: // replaced
				i := r.Intn(len(entries))
				x.put(entries[i].Name, &index.Entry{Name: entries[i].Name, Mode: 0o100644, Size: 1, FSMonitorValid: valid}, i)
			default: // added, before, between or after the table's
				name := fmt.Sprintf("playbook-runs/r%03d/g%d", r.Intn(130), r.Intn(3))
				if _, ok := x.tab.Search(name); !ok {
					x.put(name, &index.Entry{Name: name, Mode: 0o100644, FSMonitorValid: valid}, -1)
				}
			}
		}
		var want []int
		p := 0
		x.walk(func(e *index.Entry, pos int, own bool) bool {
			if !(own && e.FSMonitorValid || !own && x.fsm != nil && x.fsm[pos]) {
				want = append(want, p)
			}
			p++
			return true
		}, false)
		if got := x.dirtyBits(); !slices.Equal(got, want) || p != x.len() {
			t.Fatalf("round %d: dirtyBits %v, a walk of the %d entries (len %d) finds %v", round, got, p, x.len(), want)
		}
	}
}

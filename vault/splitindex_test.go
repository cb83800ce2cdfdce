package vault

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/vault/git/index"
)

// commitNow commits paths under the vault's lock, then waits for the
// compaction the commit may have started (git runs after it in the tests).
func commitNow(t *testing.T, v *Vault, paths ...string) {
	t.Helper()
	if err := v.Locked(func() error {
		_, err := v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, "finance: step")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v.compacting.Wait()
}

// Property: on a vault whose index is split (core.splitIndex true), any
// sequence of quire's boundaries (files changed, added, removed) and git
// commits between them leaves an index that git lists as quire reads it,
// git status and git diff --cached clean, and, with the shared index
// rewritten as changes pass maxPercentChange, each index write after the
// first a small file.
func TestSplitIndexUnderAnySequenceOfWrites(t *testing.T) {
	runs, steps := 40, 12
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		runs, steps = 200, 60
	}
	for _, pct := range []string{"20", "100"} {
		t.Run("maxPercentChange="+pct, func(t *testing.T) {
			dir := t.TempDir()
			v, err := Init(dir, "acme", time.Now())
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			gitOut(t, dir, "config", "core.splitIndex", "true")
			gitOut(t, dir, "config", "splitIndex.maxPercentChange", pct)
			// git status writes its untracked cache into the split index
			// (the UNTR extension, kilobytes), which is not quire's growth.
			gitOut(t, dir, "config", "core.untrackedCache", "false")
			rels := manyFiles(t, dir, runs)
			rng := rand.New(rand.NewSource(int64(len(pct))))
			commit := func(paths ...string) { t.Helper(); commitNow(t, v, paths...) }
			check := func(when string) {
				t.Helper()
				if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
					t.Fatalf("%s: git status:\n%s", when, s)
				}
				if s := gitOut(t, dir, "diff", "--cached", "--stat"); s != "" {
					t.Fatalf("%s: git diff --cached:\n%s", when, s)
				}
				if got, _ := ourEntries(t, dir); got != gitEntries(t, dir) {
					t.Fatalf("%s: quire reads\n%s\ngit lists\n%s", when, got, gitEntries(t, dir))
				}
			}
			commit("playbook-runs", "x")
			check("the first commit")
			shared, last := 0, 0
			for step := 0; step < steps; step++ {
				op := rng.Intn(4)
				boundary := op < 2
				switch op {
				case 0, 1: // a boundary: a few files of a run appended to
					run := filepath.Dir(rels[rng.Intn(len(rels))])
					AppendLine(filepath.Join(dir, run, "run.jsonl"), []byte(fmt.Sprintf("{\"step\":%d}\n", step)))
					commit(run)
				case 2: // a run added, or one removed
					if rng.Intn(2) == 0 {
						run := fmt.Sprintf("playbook-runs/new-%d-%d", step, rng.Intn(1000))
						os.MkdirAll(filepath.Join(dir, run), 0o755)
						os.WriteFile(filepath.Join(dir, run, "run.jsonl"), []byte("{}\n"), 0o644)
						commit(run)
					} else {
						run := filepath.Dir(rels[rng.Intn(len(rels))])
						os.RemoveAll(filepath.Join(dir, run))
						commit(run)
					}
				case 3: // a person's git commit between boundaries
					p := "notes/" + fmt.Sprint(step) + ".md"
					os.MkdirAll(filepath.Join(dir, "notes"), 0o755)
					os.WriteFile(filepath.Join(dir, p), []byte("a note\n"), 0o644)
					gitOut(t, dir, "add", p)
					gitOut(t, dir, "-c", "user.name=p", "-c", "user.email=p@x", "commit", "-q", "-m", "a person's note")
				}
				check(fmt.Sprintf("step %d", step))
				split, size := splitOnDisk(t, dir)
				if !split {
					t.Fatalf("step %d: the index is not split", step)
				}
				sharedFiles, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
				shared = max(shared, len(sharedFiles))
				// A boundary adds to the split index only the entries it
				// changed (git's own writes may add more: git status
				// refreshes the stat of racy entries).
				if boundary && pct == "100" && size > last+3*150 {
					t.Fatalf("step %d: a boundary of one file grew the split index from %d to %d bytes", step, last, size)
				}
				last = size
			}
			gitOut(t, dir, "fsck", "--strict", "--no-progress")
			if pct == "100" && shared != 1 {
				t.Fatalf("with maxPercentChange 100 the shared index was written %d times", shared)
			}
		})
	}
}

// Below core.splitIndex, quire splits an index of its own accord once it
// is large, keeps the shared index it uses fresh, and removes shared
// indexes no longer used once past splitIndex.sharedIndexExpire.
func TestLargeIndexSplitOfItsOwnAccord(t *testing.T) {
	defer func(n int) { splitMinEntries = n }(splitMinEntries)
	splitMinEntries = 60
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	commit := func(paths ...string) { t.Helper(); commitNow(t, v, paths...) }
	rels := manyFiles(t, dir, 10)
	commit("playbook-runs", "x")
	if split, _ := splitOnDisk(t, dir); split {
		t.Fatal("an index of 30 entries was split")
	}
	rels = append(rels, manyFiles(t, dir, 30)...)
	commit("playbook-runs")
	if split, _ := splitOnDisk(t, dir); !split {
		t.Fatal("an index of 90 entries was not split")
	}
	AppendLine(filepath.Join(dir, rels[5]), []byte("{}\n"))
	commit(filepath.Dir(rels[5]))
	if split, size := splitOnDisk(t, dir); !split || size > 400 {
		t.Fatalf("a boundary wrote a split index of %d bytes (split: %v)", size, split)
	}
	old, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	if len(old) != 1 {
		t.Fatalf("shared indexes: %v", old)
	}
	// The shared index in use is touched at each write.
	long := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(old[0], long, long)
	AppendLine(filepath.Join(dir, rels[6]), []byte("{}\n"))
	commit(filepath.Dir(rels[6]))
	if fi, _ := os.Stat(old[0]); fi.ModTime().Before(time.Now().Add(-time.Hour)) {
		t.Fatal("the shared index in use was not touched")
	}
	// Changes past 20 % write a new shared index; the old one stays until
	// it expires (ten minutes, sharedIndexExpire unset), then goes.
	for _, r := range rels[:40] {
		AppendLine(filepath.Join(dir, r), []byte("{}\n"))
	}
	commit("playbook-runs")
	now, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
	if len(now) != 2 {
		t.Fatalf("after a large change, shared indexes: %v", now)
	}
	os.Chtimes(old[0], long, long)
	gitOut(t, dir, "config", "splitIndex.maxPercentChange", "0") // a new shared index at every write
	AppendLine(filepath.Join(dir, rels[7]), []byte("{}\n"))
	commit(filepath.Dir(rels[7]))
	if _, err := os.Stat(old[0]); err == nil {
		t.Fatal("a shared index unused for 30 days was kept")
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status:\n%s", s)
	}
	// (git status may have written a shared index of its own: with
	// maxPercentChange 0 git too writes one at each write.)
	left, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex*"))
	if slices.ContainsFunc(left, func(p string) bool { return strings.Contains(p, "sharedindex_") }) {
		t.Fatalf("left behind: %v", left)
	}
}

// Where .git/config leaves splitIndex.maxPercentChange unset, quire's
// writes also start a new shared index once the split file would hold
// more than splitHeadMost entries (git's 20 % let it grow to 8 MB at
// 100,000 runs, written at every boundary), and remove shared indexes
// unused for ten minutes; set, git's rule alone holds. git reads every index
// as quire does.
func TestASplitIndexHeadIsCappedWhereGitSetsNoRule(t *testing.T) {
	defer func(n, m int) { splitMinEntries, splitHeadMost = n, m }(splitMinEntries, splitHeadMost)
	splitMinEntries, splitHeadMost = 60, 20
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	gitOut(t, dir, "config", "core.untrackedCache", "false")
	rels := manyFiles(t, dir, 40) // 120 entries and x/
	commitNow(t, v, "playbook-runs", "x")
	shared := func() []string {
		t.Helper()
		names, _ := filepath.Glob(filepath.Join(dir, ".git", "sharedindex.*"))
		return names
	}
	check := func(when string) {
		t.Helper()
		if split, _ := splitOnDisk(t, dir); !split {
			t.Fatalf("%s: the index is not split", when)
		}
		if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
			t.Fatalf("%s: git status:\n%s", when, s)
		}
		if got, _ := ourEntries(t, dir); got != gitEntries(t, dir) {
			t.Fatalf("%s: quire reads\n%s\ngit lists\n%s", when, got, gitEntries(t, dir))
		}
	}
	check("the first commit")
	first := shared()
	if len(first) != 1 {
		t.Fatalf("shared indexes: %v", first)
	}
	// 21 logs changed, one at a time: 17 % of the entries, under git's
	// 20 %, over splitHeadMost at the last.
	change := func(from, to int) {
		t.Helper()
		for _, r := range rels[from:to] {
			AppendLine(filepath.Join(dir, r), []byte("{}\n"))
			commitNow(t, v, filepath.Dir(r))
		}
	}
	change(0, 20)
	if n := len(shared()); n != 1 {
		t.Fatalf("20 entries changed: %d shared indexes", n)
	}
	change(20, 21)
	check("past splitHeadMost")
	if n := len(shared()); n != 2 {
		t.Fatalf("21 entries changed: %d shared indexes, want a new one beside the last", n)
	}
	// The one replaced, unused for two hours, goes with the next new one;
	// the one in use stays.
	long := time.Now().Add(-2 * time.Hour)
	os.Chtimes(first[0], long, long)
	change(21, 42)
	check("past splitHeadMost again")
	if _, err := os.Stat(first[0]); err == nil {
		t.Fatal("a shared index unused for two hours was kept")
	}
	if n := len(shared()); n != 2 {
		t.Fatalf("after the second new one: %d shared indexes", n)
	}
	// git's rule, set: 21 changed entries are under its 20 %.
	gitOut(t, dir, "config", "splitIndex.maxPercentChange", "20")
	before := shared()
	change(42, 63)
	check("with maxPercentChange set")
	if after := shared(); !slices.Equal(after, before) {
		t.Fatalf("with maxPercentChange 20, 21 changed entries wrote a shared index: %v, was %v", after, before)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
}

// A large object is written loose without compression; git reads it as
// any other, and the bytes written so start a compaction once past
// compactLooseBytes, which packs them.
func TestLargeLooseObjectsStoredAndCompacted(t *testing.T) {
	defer func(n int64) { compactLooseBytes = n }(compactLooseBytes)
	compactLooseBytes = 1 << 20
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	big := make([]byte, storedFrom+1000)
	for i := range big {
		big[i] = byte('a' + i%7)
	}
	os.MkdirAll(filepath.Join(dir, "playbook-runs", "r"), 0o755)
	write := func(n int) {
		t.Helper()
		big[0] = byte('0' + n)
		os.WriteFile(filepath.Join(dir, "playbook-runs", "r", "big.txt"), big, 0o644)
		commitNow(t, v, "playbook-runs/r")
	}
	write(0)
	id := strings.TrimSpace(gitOut(t, dir, "rev-parse", "HEAD:playbook-runs/r/big.txt"))
	fi, err := os.Stat(filepath.Join(dir, ".git", "objects", id[:2], id[2:]))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < int64(len(big)) {
		t.Fatalf("a %d-byte object was compressed to %d bytes", len(big), fi.Size())
	}
	if got := gitOut(t, dir, "cat-file", "blob", id); got != string(big) {
		t.Fatal("git reads the stored object otherwise")
	}
	packs := func() int { // a compaction's, not a group's fresh pack
		m, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		fresh, n := freshPacks(filepath.Join(dir, ".git")), 0
		for _, p := range m {
			if !fresh[strings.TrimSuffix(filepath.Base(p), ".pack")] {
				n++
			}
		}
		return n
	}
	if packs() != 0 {
		t.Fatal("packed before the threshold")
	}
	for n := 1; n < 6 && packs() == 0; n++ {
		write(n)
	}
	if packs() == 0 {
		t.Fatal("no compaction after more loose bytes than compactLooseBytes")
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
}

// untrackedOf is the body of git's untracked cache in .git/index, nil
// when there is none.
func untrackedOf(t *testing.T, dir string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := index.ReadMain(data, true)
	if err != nil {
		t.Fatal(err)
	}
	return m.Untracked
}

// A split index's untracked cache lies in its file, not in quire's
// memory: each boundary copies it into the next index from the one
// before, as git left it, or as quire changed it when a new file made
// folders of it stale; git reads every index so written, and git status
// stays clean, also after another program rewrote the index between two
// boundaries.
func TestSplitIndexCarriesTheUntrackedCacheFromItsFile(t *testing.T) {
	// Every index written has its blocks reserved first (fsys.Reserve),
	// which must leave it the bytes written and no more.
	defer func(n int64) { reserveFrom = n }(reserveFrom)
	reserveFrom = 0
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	gitOut(t, dir, "config", "core.splitIndex", "true")
	gitOut(t, dir, "config", "core.untrackedCache", "true")
	rels := manyFiles(t, dir, 20)
	commitNow(t, v, append(rels, "x/run.sh")...)
	time.Sleep(1100 * time.Millisecond) // a folder changed in the index's second is read again
	clean := func(when string) {
		t.Helper()
		if data, err := os.ReadFile(filepath.Join(dir, ".git", "index")); err != nil {
			t.Fatal(err)
		} else if _, err := index.ReadMain(data, true); err != nil {
			t.Fatalf("%s: the index written does not read with its checksum: %v", when, err)
		}
		if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
			t.Fatalf("%s: git status:\n%s", when, s)
		}
		if got, want := func() string { s, _ := ourEntries(t, dir); return s }(), gitEntries(t, dir); got != want {
			t.Fatalf("%s: quire reads\n%s\ngit lists\n%s", when, got, want)
		}
	}
	clean("before")
	before := untrackedOf(t, dir)
	if before == nil {
		t.Fatal("git status wrote no untracked cache")
	}
	os.WriteFile(filepath.Join(dir, rels[4]), []byte("changed\n"), 0o644)
	commitNow(t, v, rels[4])
	if got := untrackedOf(t, dir); string(got) != string(before) {
		t.Fatalf("a boundary that adds no file changed the untracked cache (%d bytes, %d before)", len(got), len(before))
	}
	clean("after a boundary")
	// A new file: the folders it makes stale are forgotten, the rest
	// kept; then a boundary copies the cache quire wrote from its file.
	added := filepath.Join(filepath.Dir(rels[0]), "notes.md")
	os.WriteFile(filepath.Join(dir, added), []byte("notes\n"), 0o644)
	commitNow(t, v, filepath.ToSlash(added))
	changed := untrackedOf(t, dir)
	if changed == nil || string(changed) == string(before) {
		t.Fatalf("a boundary that adds a file kept the untracked cache as it was (%d bytes)", len(changed))
	}
	os.WriteFile(filepath.Join(dir, rels[7]), []byte("changed\n"), 0o644)
	commitNow(t, v, rels[7])
	if got := untrackedOf(t, dir); string(got) != string(changed) {
		t.Fatal("the untracked cache quire wrote was not carried into the next index")
	}
	clean("after a file added")
	// Another program rewrites the index between two boundaries.
	if err := v.Locked(func() error {
		if err := v.gitIdx.load(); err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
		gitOut(t, dir, "update-index", "--force-untracked-cache", "--untracked-cache")
		gitOut(t, dir, "status", "--porcelain")
		os.WriteFile(filepath.Join(dir, rels[9]), []byte("changed\n"), 0o644)
		_, err := v.Commit([]string{rels[9]}, Signature{Name: "agent-7", When: time.Now()}, "finance: step")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v.compacting.Wait()
	clean("after an index rewritten by git")
}

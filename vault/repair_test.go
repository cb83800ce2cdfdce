package vault

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/words/refusal"
)

func commitAll(t testing.TB, v *Vault, paths ...string) error {
	t.Helper()
	return v.Locked(func() error {
		_, err := v.Commit(paths, Signature{Name: "agent-7", When: time.Now()}, "a boundary")
		return err
	})
}

func writeFile(t testing.TB, dir, rel, s string) {
	t.Helper()
	abs := filepath.Join(dir, rel)
	os.MkdirAll(filepath.Dir(abs), 0o755)
	if err := os.WriteFile(abs, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A git lock another program holds (a person's git command) is waited for,
// then refused as unavailable with what to do; once it goes, commits work.
func TestForeignGitLockIsWaitedForThenRefused(t *testing.T) {
	defer func(d time.Duration) { gitLockWait = d }(gitLockWait)
	gitLockWait = 300 * time.Millisecond
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, lock := range []string{".git/index.lock", ".git/refs/heads/main.lock"} {
		writeFile(t, dir, lock, "")
		writeFile(t, dir, "playbook-runs/a/run.jsonl", "{}\n"+lock+"\n")
		start := time.Now()
		err := commitAll(t, v, "playbook-runs/a")
		r, ok := refusal.As(err)
		if !ok || r.Code != refusal.Unavailable || !strings.Contains(r.Message, "delete "+lock) || !strings.Contains(r.Message, "another program") {
			t.Fatalf("%s: %v", lock, err)
		}
		if time.Since(start) < gitLockWait {
			t.Fatalf("%s: refused after %v, without waiting", lock, time.Since(start))
		}
		// A lock held for longer is not waited for: every writer would
		// wait in turn.
		old := time.Now().Add(-time.Minute)
		os.Chtimes(filepath.Join(dir, lock), old, old)
		start = time.Now()
		if err := commitAll(t, v, "playbook-runs/a"); err == nil || time.Since(start) > gitLockWait/2 {
			t.Fatalf("%s: an old lock: %v after %v", lock, err, time.Since(start))
		}
		// The lock is the person's: quire left it.
		if _, err := os.Stat(filepath.Join(dir, lock)); err != nil {
			t.Fatalf("%s: quire removed another program's lock", lock)
		}
		// The next writer finds the journal of the one that stopped on the
		// error, and still leaves the other program's lock alone.
		if err := commitAll(t, v, "playbook-runs/a"); err == nil {
			t.Fatalf("%s: committed through another program's lock", lock)
		}
		os.Remove(filepath.Join(dir, lock))
		if err := commitAll(t, v, "playbook-runs/a"); err != nil {
			t.Fatalf("%s: after the lock went: %v", lock, err)
		}
		if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
			t.Fatalf("git status:\n%s", s)
		}
	}
}

// A git lock that a quire writer took and never released (it died) is
// removed by the next writer, which says so in the log and commits.
func TestDeadQuireGitLockIsRemoved(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var log bytes.Buffer
	v.SetLogger(slog.New(slog.NewTextHandler(&log, nil)))
	// What a writer killed while it held the branch's lock leaves: its
	// journal, and the lock.
	var journal []byte
	v.Locked(func() error {
		f, err := v.takeGitLock(filepath.Join(dir, ".git/refs/heads/main.lock"))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		journal, _ = os.ReadFile(v.journalPath())
		return nil
	})
	os.WriteFile(v.journalPath(), journal, 0o644) // as the dead writer left it
	writeFile(t, dir, "playbook-runs/a/run.jsonl", "{}\n")
	if err := commitAll(t, v, "playbook-runs/a"); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	if !strings.Contains(log.String(), "removed .git/refs/heads/main.lock") {
		t.Fatalf("log: %s", log.String())
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status:\n%s", s)
	}
}

// .git/index out of step with HEAD (a crash between the branch's move and
// the index's, or git commands) is set back to HEAD's entries when the
// vault is opened, for quire's paths only.
func TestIndexOutOfStepIsRepairedAtOpen(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		writeFile(t, dir, fmt.Sprintf("playbook-runs/r%d/run.jsonl", i), "{}\n")
	}
	if err := commitAll(t, v, "playbook-runs"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "playbook-runs/r3/run.jsonl", "{}\n")
	if err := commitAll(t, v, "playbook-runs"); err != nil {
		t.Fatal(err)
	}
	v.Close()
	// The index of the commit before (r3 staged for deletion), another run
	// staged for deletion, and a person's own file staged outside quire's paths.
	gitOut(t, dir, "read-tree", "HEAD~1")
	gitOut(t, dir, "rm", "-q", "--cached", "playbook-runs/r1/run.jsonl")
	writeFile(t, dir, "notes.txt", "mine\n")
	gitOut(t, dir, "add", "notes.txt")
	if s := gitOut(t, dir, "status", "--porcelain"); !strings.Contains(s, "D  playbook-runs/r1/run.jsonl") {
		t.Fatalf("git status before:\n%s", s)
	}
	v2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer v2.Close()
	if s := gitOut(t, dir, "status", "--porcelain"); s != "A  notes.txt\n" {
		t.Fatalf("git status after open:\n%s", s)
	}
	var found []Finding
	v2.LockedRead(func() error { found = v2.InspectGit(); return nil })
	if len(found) > 0 {
		t.Fatalf("inspect: %v", found)
	}
}

// quire check's look at git: an index that cannot be read, which the
// janitor rebuilds from HEAD, and a HEAD whose tree is gone, which needs a
// person.
func TestInspectGitSeesACorruptIndexAndAMissingTree(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.objs.freshMost = 0 // every object loose: a tree is removed below
	writeFile(t, dir, "playbook-runs/a/run.jsonl", "{}\n")
	if err := commitAll(t, v, "playbook-runs/a"); err != nil {
		t.Fatal(err)
	}
	inspect := func() string {
		var found []Finding
		v.LockedRead(func() error { found = v.InspectGit(); return nil })
		return fmt.Sprint(found)
	}
	os.WriteFile(filepath.Join(dir, ".git/index"), []byte("DIRC garbage"), 0o644)
	if got := inspect(); !strings.Contains(got, ".git/index cannot be read") {
		t.Fatalf("a corrupt index: %s", got)
	}
	var did []string
	if err := v.Locked(func() error { did, err = v.RepairGit(); return err }); err != nil || len(did) == 0 {
		t.Fatalf("repair: %v %v", did, err)
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status after the repair:\n%s", s)
	}
	if got := inspect(); got != "[]" {
		t.Fatalf("after the repair: %s", got)
	}
	// An index whose checksum alone is wrong is read as git reads it (git
	// checks an index's checksum only in git fsck), and quire check names
	// it.
	data, _ := os.ReadFile(filepath.Join(dir, ".git/index"))
	data[len(data)-1] ^= 1
	os.WriteFile(filepath.Join(dir, ".git/index"), data, 0o644)
	if got := inspect(); !strings.Contains(got, ".git/index cannot be read (vault: reading .git/index: its checksum does not match its content)") {
		t.Fatalf("an index of a wrong checksum: %s", got)
	}
	writeFile(t, dir, "playbook-runs/a/run.jsonl", "{}\n{}\n")
	if err := commitAll(t, v, "playbook-runs/a"); err != nil {
		t.Fatalf("a commit over an index of a wrong checksum: %v", err)
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status after the commit:\n%s", s)
	}
	if got := inspect(); got != "[]" {
		t.Fatalf("after the commit: %s", got)
	}
	// The tree of playbook-runs/a, gone from .git/objects.
	tree := strings.Fields(gitOut(t, dir, "rev-parse", "HEAD:playbook-runs/a"))[0]
	os.Remove(filepath.Join(dir, ".git/objects", tree[:2], tree[2:]))
	v2, _ := Open(dir)
	defer v2.Close()
	var found []Finding
	v2.LockedRead(func() error { found = v2.InspectGit(); return nil })
	if got := fmt.Sprint(found); !strings.Contains(got, "HEAD's commit or tree cannot be read") {
		t.Fatalf("a missing tree: %s", got)
	}
}

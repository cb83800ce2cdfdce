package vault

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Writers of one process at once each make their own commit, grouped or
// not: 12 goroutines committing a file each leave 12 commits in one chain,
// a reflog line each, every file in HEAD, and git status and fsck clean.
func TestWritersAtOnceEachCommit(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel := fmt.Sprintf("notes/%02d.md", i)
			errs <- v.Locked(func() error {
				if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
					return err
				}
				if err := WriteAtomic(filepath.Join(dir, rel), []byte(fmt.Sprintf("note %d\n", i))); err != nil {
					return err
				}
				_, err := v.Commit([]string{rel}, Signature{Name: "ana", When: time.Now()}, "note "+rel)
				return err
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if c := strings.TrimSpace(gitOut(t, dir, "rev-list", "--count", "HEAD")); c != fmt.Sprint(n+1) {
		t.Fatalf("%s commits, not %d", c, n+1)
	}
	if c := strings.TrimSpace(gitOut(t, dir, "rev-list", "--count", "--min-parents=2", "HEAD")); c != "0" {
		t.Fatalf("%s merges", c)
	}
	if lines := strings.Count(gitOut(t, dir, "reflog", "show", "main"), "\n"); lines != n+1 {
		t.Fatalf("%d reflog lines for %d commits", lines, n+1)
	}
	if files := strings.Count(gitOut(t, dir, "ls-tree", "-r", "--name-only", "HEAD", "notes"), "\n"); files != n {
		t.Fatalf("HEAD holds %d notes", files)
	}
	if s := gitOut(t, dir, "status", "--porcelain"); s != "" {
		t.Fatalf("git status:\n%s", s)
	}
	gitOut(t, dir, "fsck", "--strict")
}

// A write that panics ends its group: the lock and git's locks are
// released, and the next write commits.
func TestAWritePanickingLeavesNoLock(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	commit := func(rel string) error {
		if err := WriteAtomic(filepath.Join(dir, rel), []byte(rel+"\n")); err != nil {
			return err
		}
		_, err := v.Commit([]string{rel}, Signature{Name: "ana", When: time.Now()}, "write "+rel)
		return err
	}
	func() {
		defer func() { recover() }()
		v.Locked(func() error {
			if err := commit("a.md"); err != nil {
				t.Error(err)
			}
			panic("a bug")
		})
	}()
	done := make(chan error, 1)
	go func() { done <- v.Locked(func() error { return commit("b.md") }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write after a panic waits for the lock")
	}
	if log := gitOut(t, dir, "log", "--format=%s"); !strings.HasPrefix(log, "write b.md\nwrite a.md\n") {
		t.Fatalf("log:\n%s", log)
	}
	gitOut(t, dir, "fsck", "--strict")
}

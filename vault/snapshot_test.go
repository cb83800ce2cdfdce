package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A snapshot reads a file as a commit holds it, whatever the work tree
// holds since; a revision is resolved by its full id, an abbreviation or a
// ref, and one that names no commit says so; the commit that put a blob at
// a path is found walking back from HEAD.
func TestSnapshotReadsACommitsFiles(t *testing.T) {
	dir := t.TempDir()
	v, err := Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rel := "playbooks/finance/definitions/workflow/close.yaml"
	save := func(s string, when time.Time) Hash {
		t.Helper()
		abs := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		var id string
		if err := v.Locked(func() error {
			id, err = v.Commit([]string{rel}, Signature{Name: "ana", When: when}, "finance: save workflow/close")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		h, err := ParseHash(id)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := save("version: 1\n", time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC))
	second := save("version: 2\n", time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))

	ctx := context.Background()
	for _, rev := range []string{first.String(), first.String()[:9], "main~1"} {
		id, err := v.ResolveCommit(ctx, rev)
		if err != nil || id != first {
			t.Fatalf("ResolveCommit(%q) = %s, %v; want %s", rev, id, err, first)
		}
	}
	for _, rev := range []string{"no-such-ref", "0123456789abcdef0123456789abcdef01234567", "--help"} {
		if _, err := v.ResolveCommit(ctx, rev); !errors.Is(err, ErrNoCommit) {
			t.Fatalf("ResolveCommit(%q): %v, want ErrNoCommit", rev, err)
		}
	}
	s, err := v.Snapshot(first)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if data, ok, err := s.ReadFile(rel); err != nil || !ok || string(data) != "version: 1\n" {
		t.Fatalf("ReadFile at the first commit: %q %v %v", data, ok, err)
	}
	if _, ok, err := s.ReadFile("playbooks/finance/nothing.yaml"); ok || err != nil {
		t.Fatalf("a file the commit lacks: %v %v", ok, err)
	}
	if !s.Meta.Committed.Equal(time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)) {
		t.Fatalf("committed %s", s.Meta.Committed)
	}
	if got, err := v.SavedIn(rel, blobHash("version: 1\n")); err != nil || got != first {
		t.Fatalf("SavedIn version 1 = %s, %v; want %s", got, err, first)
	}
	if got, err := v.SavedIn(rel, blobHash("version: 2\n")); err != nil || got != second {
		t.Fatalf("SavedIn version 2 = %s, %v; want %s", got, err, second)
	}
}

// blobHash is a blob's id, as a Hash.
func blobHash(s string) Hash { return hashObject("blob", []byte(s)) }

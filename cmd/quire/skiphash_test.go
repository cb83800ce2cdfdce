package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// git 2.40 and later write .git/index with twenty zero bytes where its
// checksum was under index.skipHash, which feature.manyFiles (set in every
// vault) implies. quire reads such an index as git does: quire check names
// no problem and leaves it as it is, what a person staged stays staged,
// and a boundary commits beside it. A vault quire makes sets
// index.skipHash false, so that git computes the checksum as before.
func TestAnIndexWrittenWithoutItsChecksum(t *testing.T) {
	dir, v, runID := newCloseRun(t)
	if got := strings.TrimSpace(git(t, dir, "config", "--get", "index.skipHash")); got != "false" {
		t.Fatalf("index.skipHash in a new vault: %q", got)
	}
	os.WriteFile(filepath.Join(dir, "NOTES.md"), []byte("A note of mine.\n"), 0o644)
	git(t, dir, "add", "NOTES.md")
	// The index as git 2.40 writes it under index.skipHash.
	index := filepath.Join(dir, ".git", "index")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	copy(data[len(data)-20:], make([]byte, 20))
	if err := os.WriteFile(index, data, 0o644); err != nil {
		t.Fatal(err)
	}
	staged := func(when string) {
		t.Helper()
		if got := git(t, dir, "diff", "--cached", "--name-only"); got != "NOTES.md\n" {
			t.Fatalf("staged %s: %q", when, got)
		}
	}
	for _, args := range [][]string{{"check", "--full"}, {"check"}, {"janitor"}} {
		if code, out, errs := quire(t, "", append([]string{v}, args...)...); code != 0 || strings.Contains(out+errs, "checksum") {
			t.Fatalf("quire %s: %d\n%s%s", strings.Join(args, " "), code, out, errs)
		}
		staged("after quire " + strings.Join(args, " "))
	}
	// A boundary writes the index again, with its checksum (git before
	// 2.40 refuses one without in git fsck).
	if code, out, errs := quire(t, "", v, "run", "event", "step_completed", "--playbook", "finance", "--run", runID, "--step", "do/1", "--actor", "agent-7"); code != 0 {
		t.Fatalf("a boundary: %d %s %s", code, out, errs)
	}
	staged("after a boundary")
	git(t, dir, "fsck", "--no-dangling")
}

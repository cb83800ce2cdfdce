package main

import (
	"os/exec"
	"strings"
	"testing"

	"quire/ledger"
	"quire/vault"
)

// The bench's vault, written at object level, is a repository git finds
// sound, holds every commit, and quire check --history proves it clean,
// then the boundaries quire commits after it.
func TestBenchHistoryVault(t *testing.T) {
	dir := t.TempDir()
	b := newHistoryBuilder(dir)
	names := b.build(20, 300)
	if out, err := exec.Command("git", "-C", dir, "fsck", "--strict").CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("git fsck: %v %s", err, out)
	}
	if out, _ := exec.Command("git", "-C", dir, "rev-list", "--count", "HEAD").Output(); strings.TrimSpace(string(out)) != "300" {
		t.Fatalf("commits: %s", out)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, problems, err := l.CheckHistory()
	if err != nil || len(problems) > 0 || rep.Commits != 300 {
		t.Fatalf("full walk: %+v %v %v", rep, problems, err)
	}
	bv, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer bv.Close()
	for i := 0; i < 3; i++ {
		b.boundaryOnDisk(bv, names[i])
	}
	if rep, problems, err = l.CheckHistory(); err != nil || len(problems) > 0 || rep.Commits != 3 {
		t.Fatalf("incremental walk: %+v %v %v", rep, problems, err)
	}
}

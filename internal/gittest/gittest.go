// Package gittest runs git over a vault in tests as a person's script
// should beside quire: git fsck holding off quire's compaction.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"

	"quire/internal/fsys"
)

// Fsck runs git fsck with args in the vault at dir, holding
// .git/quire-compact.lock (flock) meanwhile, as docs/vault-format.md
// says a person's script should: a compaction in the background (every
// 16 groups of writes, fresh packs) removes the packs and loose objects it
// packed, and a git fsck that listed them then reports "index not opened"
// or a missing object, as it does beside git's own gc. It answers git's
// output and error.
func Fsck(dir string, args ...string) ([]byte, error) {
	defer HoldCompaction(dir)()
	cmd := exec.Command("git", append([]string{"fsck"}, args...)...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// HoldCompaction waits for a compaction of the vault at dir under way to
// end and holds off the next (.git/quire-compact.lock, flock) until the
// function it answers is called: what reads .git/objects meanwhile sees
// it still. A process that would start one finds the lock held and starts
// none (vault/compact.go).
func HoldCompaction(dir string) (release func()) {
	f, err := os.OpenFile(filepath.Join(dir, ".git", "quire-compact.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return func() {}
	}
	if fsys.Lock(f) != nil {
		f.Close()
		return func() {}
	}
	return func() {
		fsys.Unlock(f)
		f.Close()
	}
}

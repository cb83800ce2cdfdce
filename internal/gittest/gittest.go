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
	if f, err := os.OpenFile(filepath.Join(dir, ".git", "quire-compact.lock"), os.O_RDWR|os.O_CREATE, 0o644); err == nil {
		defer f.Close()
		if fsys.Lock(f) == nil {
			defer fsys.Unlock(f)
		}
	}
	cmd := exec.Command("git", append([]string{"fsck"}, args...)...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

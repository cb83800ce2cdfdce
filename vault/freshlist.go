package vault

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"quire/internal/fsys"
)

// The fresh packs quire wrote (objects.flush: a group's small objects
// as one pack, vault/git/pack's fresh packs) are named in .git/quire-fresh,
// one pack's file name without extension a line, so that the compaction
// packs their objects as it packs loose ones and removes them. Any
// process appends under the file's own lock; a compaction rewrites it in
// place, under the same lock, without the packs it removed. It is a hint,
// not data: a line lost or torn leaves a fresh pack to be copied whole as
// any other pack is (a larger .git, never an object lost), and a name of a
// pack that is gone is dropped at the next compaction.
const freshFile = "quire-fresh"

// freshPacksDue is how many fresh packs listed start a compaction
// (compactDue), so that those waiting for it stay well under git's
// gc.autoPackLimit of 50, past which a person's git commit would start a
// whole repack.
const freshPacksDue = 16

// freshLine is the length of a line of the list: "pack-", the pack's
// SHA-1 in hex and a newline.
const freshLine = len("pack-") + 40 + 1

// freshListed is about how many fresh packs are listed, from the list's
// size alone (one stat a boundary).
func freshListed(gitDir string) int {
	fi, err := os.Stat(filepath.Join(gitDir, freshFile))
	if err != nil {
		return 0
	}
	return int(fi.Size()) / freshLine
}

// noteFresh appends the pack name (its file name without extension) to
// the list.
func noteFresh(gitDir, name string) {
	lockedFile(filepath.Join(gitDir, freshFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, func(f *os.File) {
		f.Write([]byte(name + "\n"))
	})
}

// lockedFile runs fn on the file at path, opened with flag, under the
// file's own flock, which any process may take; it does nothing when the
// file cannot be opened or locked: the files it is for (.git/quire-loose,
// .git/quire-fresh) are counts and hints, not data.
func lockedFile(path string, flag int, fn func(f *os.File)) {
	f, err := fsys.OpenFile(path, flag, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if fsys.Lock(f) != nil {
		return
	}
	defer fsys.Unlock(f)
	fn(f)
}

// freshPacks answers the names on the list.
func freshPacks(gitDir string) map[string]bool {
	data, _ := fsys.ReadFile(filepath.Join(gitDir, freshFile))
	names := map[string]bool{}
	for _, n := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(n, "pack-") {
			names[n] = true
		}
	}
	return names
}

// pruneFresh rewrites the list without the packs that are gone (the
// compaction removed them, or git's gc did).
func pruneFresh(gitDir string) {
	lockedFile(filepath.Join(gitDir, freshFile), os.O_RDWR, func(f *os.File) {
		fi, err := f.Stat()
		if err != nil {
			return
		}
		data := make([]byte, fi.Size())
		if n, _ := f.ReadAt(data, 0); n != len(data) {
			return
		}
		var kept bytes.Buffer
		for _, n := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(n, "pack-") {
				continue
			}
			if _, err := os.Stat(filepath.Join(gitDir, "objects", "pack", n+".idx")); err == nil {
				kept.WriteString(n + "\n")
			}
		}
		if kept.Len() == len(data) {
			return
		}
		if _, err := f.WriteAt(kept.Bytes(), 0); err == nil {
			f.Truncate(int64(kept.Len()))
		}
	})
}

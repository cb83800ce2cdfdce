package vault

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"quire/internal/fsys"
	"quire/vault/git/index"
)

// A vault holds six files a run: 600,000 at 100,000 runs, where a
// person's git status took 4.9 s (issue 28). quire init and quire clone
// set what git offers for work trees of many files (git-config(1)):
//
//   - feature.manyFiles true, and index.version 4 (which it implies):
//     names prefix-compressed, an index less than half as large to read
//     and write; quire writes an index of version 4 as 4 (gitindex.go);
//   - core.untrackedCache true: git status skips reading the folders
//     whose stat has not changed since it last looked for untracked files
//     (git's cache, which quire's commits keep: gitindex.go);
//   - core.fsmonitor true where git has its own file system monitor
//     (macOS and Windows): git status then asks the daemon what changed
//     instead of a stat of every file. Git's builtin monitor does not run
//     on Linux; there a hook (Watchman's, core.fsmonitor naming it) is the
//     person's to install, which the README says. Its cache in the index
//     is kept by quire's commits too;
//   - index.skipHash false, which feature.manyFiles implies true from git
//     2.40 on: git then writes the index with twenty zero bytes for its
//     checksum (which quire reads, as git does), and, with a split index,
//     which quire writes from 10,000 entries on, names a new shared index
//     by that null hash and reads the split index back as having none:
//     every entry gone from its own view (git's bug, reported in November
//     2026). libgit2 reads no index written so either. git computes the
//     checksum as before 2.40.
//
// core.splitIndex is left as git's default: quire splits an index of
// 10,000 entries or more of its own accord (splitindex.go).
func setManyFiles(gitDir string) error {
	s := filesystem.NewStorage(osfs.New(gitDir), cache.NewObjectLRUDefault())
	cfg, err := s.Config()
	if err != nil {
		return err
	}
	cfg.Raw.Section("feature").SetOption("manyFiles", "true")
	cfg.Raw.Section("index").SetOption("version", "4")
	cfg.Raw.Section("index").SetOption("skipHash", "false")
	cfg.Raw.Section("core").SetOption("untrackedCache", "true")
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		cfg.Raw.Section("core").SetOption("fsmonitor", "true")
	}
	return s.SetConfig(cfg)
}

// UseManyFiles sets git's settings for many files in the repository of
// the work tree root (setManyFiles), and writes its index again as
// version 4, as git update-index --index-version 4 does: quire clone's,
// which git clone wrote before the settings were there.
func UseManyFiles(root string) error {
	gitDir := filepath.Join(root, ".git")
	if err := setManyFiles(gitDir); err != nil {
		return err
	}
	p := indexPath(gitDir)
	data, err := fsys.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	x := &gitIndex{path: p}
	d, err := index.Decode(data, true, func(id Hash) ([]*index.Entry, error) { return x.sharedEntries(id, true) })
	if err != nil || d.Version == 4 || d.Shared != nil {
		return err // a split index is git's own, and stays as it is
	}
	tmp := p + ".lock"
	if err := os.WriteFile(tmp, index.EncodeV4(nil, d.Entries), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

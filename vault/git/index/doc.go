// Package index is git's index file, .git/index, in every form git writes
// it (gitformat-index(5), git's Documentation/gitformat-index.txt; before
// git 2.38, Documentation/technical/index-format.txt): versions 2, 3 (the
// extended flags: skip-worktree, intent-to-add) and 4 (names
// prefix-compressed with git's offset varint), and the split index
// (core.splitIndex; "Split index" in the same document, and
// split-index.c): a small index naming a shared index,
// sharedindex.<its checksum>, in its `link` extension, with two EWAH
// bitmaps (ewah/ewah_io.c) of the shared entries it replaces and deletes.
//
// Decode reads them all: the entries (one allocation for all of them, and
// names, in versions 2 and 3, cut from the file's bytes without copying:
// go-git's decoder reads each field through binary.Read on an interface,
// which at 30,000 entries was a third of a `quire call`,
// docs/boundary-speed.md), and the root of git's cache-tree (the TREE
// extension) when git left it valid, git's untracked cache (UNTR, as
// git wrote it; DecodeUntracked reads it, and Untracked forgets folders
// and writes it back) and git's file system monitor cache (FSMN: each
// entry's FSMonitorValid). The checksum is checked on request,
// as git checks it only in git fsck (since git 2.13 its other commands
// skip it: an index is replaced whole by a rename, and the SHA-1 of a 1 MB
// index was a third of reading it). Other optional extensions are
// skipped; one git says must be understood and quire does not know is
// refused.
//
// Encode writes version 2, or 3 when an entry carries an extended flag,
// without extensions; EncodeExt with the ones given (AppendCacheTree,
// Untracked.Append, AppendFSMonitor). Diff and EncodeSplit (EncodeSplitExt)
// write the split form against a shared index.
//
// The cut: this package is the file's bytes and entries, nothing of the
// disk. The vault keeps .git/index (vault/gitindex.go: the stat it was
// read at, the lockfile protocol, the in-memory entries between commits)
// and decides when to split it, when to write a new shared index and when
// to remove old ones (vault/splitindex.go, from git's config).
//
// Decode answers an error, never a panic, whatever its input (FuzzDecode,
// seeded with each form the git CLI writes, testdata/).
package index

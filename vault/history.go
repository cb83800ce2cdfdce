package vault

import (
	"quire/vault/git/object"
	"quire/vault/git/walk"
)

// Walking the history, for quire check --history (vault/git/walk):
// commits, trees and blobs read straight from the object store. Trees are
// handed out as git's raw bytes, so that two versions of a folder of 5,000
// runs are compared without decoding either whole (DiffTrees).

// Hash is a git object id (vault/git/object).
type Hash = object.Hash

// ZeroHash is no object: the parent of a first commit, a missing entry.
var ZeroHash = object.ZeroHash

// ParseHash reads an object id written in hex.
func ParseHash(s string) (Hash, error) { return object.ParseHash(s) }

// HeadCommit is the commit the vault's branch points at; zero before the
// first commit.
func (v *Vault) HeadCommit() (Hash, error) { return v.head() }

// History reads objects for one walk over the history (walk.History).
// Close it after the walk.
type History = walk.History

// History starts a walk over the vault's history.
func (v *Vault) History() *History { return walk.Open(v.gitDir) }

// TreeEntry is one entry of a raw tree.
type TreeEntry = walk.Entry

// TreeEntries lists a raw tree's entries.
func TreeEntries(raw []byte) ([]TreeEntry, error) { return walk.TreeEntries(raw) }

// TreeFind finds the entry of a raw tree by name.
func TreeFind(raw []byte, name string) (TreeEntry, bool, error) { return walk.TreeFind(raw, name) }

// DiffTrees calls fn, in git's order, for every entry that differs between
// two raw trees: old is nil for an entry added, new nil for one removed
// (walk.DiffTrees).
func DiffTrees(a, b []byte, fn func(old, new *TreeEntry) error) error {
	return walk.DiffTrees(a, b, fn)
}

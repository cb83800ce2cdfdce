// Package walk reads a repository's history for a walk over all of it (quire
// check --history): commits, trees and blobs read straight from the object
// store, and trees compared as git's raw bytes.
//
// History reads through vault/git/pack's reader of packs, mapped into
// memory, which keeps what a walk reads next (the next version of a large
// tree is a delta of this one), and through go-git's storage for what that
// reader does not know (an alternate object store, an index of version 1).
// Commit answers a commit's tree and parents (vault/git/object's
// ParseCommit); Tree answers a tree's raw content.
//
// The tree format (entries of "<octal mode> <name>\0<20-byte id>" in git's
// order, a folder sorting as if its name ended in "/": git's tree-walk.c,
// decode_tree_entry; the user manual's "The Object Database") is read here
// without decoding a tree whole: DiffTrees finds the bytes two versions of
// a tree share at their start and end (everything but the entries a commit
// changed: a folder of 5,000 runs, compared by memory) and reads only the
// entries between; TreeFind reads up to the entry it looks for. Encoding a
// tree, and decoding it whole, are vault/git/object's.
//
// The cut: what a walk reads and how trees are compared are here; what the
// walk proves of a history (the rules of a run folder's files) is the
// ledger's, through the vault's History.
//
// DiffTrees, TreeFind and TreeEntries answer an error, never a panic,
// whatever the bytes (FuzzDiffTrees, seeded with the trees git writes, each
// beside its parent commit's).
package walk

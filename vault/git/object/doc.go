// Package object is git's object model as quire reads and writes it: the
// object id (Hash, the SHA-1 of "<type> <size>\0<content>"), the four
// object types, the modes a tree entry carries, and three encodings:
//
//   - the loose object (gitformat-loose(5), git's
//     Documentation/gitformat-loose.txt): the header "<type> <size>\0" and
//     the content, zlib-deflated, one file per object under
//     objects/<2 hex>/<38 hex>. WriteLoose writes the inflated stream into
//     the caller's zlib writer (the vault picks the level: best speed, or
//     stored blocks for a large tree); ReadLoose and ReadLooseFile decode
//     it, LooseHeader reads its header alone;
//   - the tree: entries of "<octal mode> <name>\0<20-byte id>", sorted as
//     git sorts them, a folder as if its name ended in "/" (git's tree-walk.c,
//     decode_tree_entry, and fsck.c's checks; the user manual's "The Object
//     Database"). ParseTree and AppendTree;
//   - the commit's header: "tree <hex>", then one "parent <hex>" line for
//     each parent (git's commit.c, parse_commit_buffer). ParseCommit reads
//     those; the vault writes its commits itself (vault/commit.go).
//
// The cut: this package knows the bytes of one object, nothing of where it
// is kept. Packs and deltas are vault/git/pack, the index vault/git/index,
// the history walk's reading of raw trees vault/git/walk; the vault's
// object store (objects.go: loose writes renamed into place, a cache of
// trees, go-git's storage for what quire's readers do not know) uses them.
//
// Every decoder answers an error, never a panic, whatever its input
// (FuzzReadLoose, FuzzParseTree, FuzzParseCommit, seeded with what the git
// CLI writes).
package object

// Package pack is git's packs (gitformat-pack(5), git's
// Documentation/gitformat-pack.txt; before git 2.38,
// Documentation/technical/pack-format.txt): the pack file, its entries
// (a header of type and size, then the zlib stream of an object or of a
// delta, by offset or by id, against a base), the delta's instructions,
// and the pack index of version 2 beside it.
//
//   - Reader reads objects from a repository's packs, mapped into memory,
//     and its loose objects: it applies each delta to its base straight
//     from the map and keeps what it resolved by offset, for a walk over the
//     whole history and for the vault's reads of trees and commits;
//   - ParseIndex and EncodeIndex read and write the pack index (the fan-out
//     table, the sorted ids, the CRC-32 and offset of each entry, large
//     offsets past 2 GiB);
//   - ApplyDelta reads git's delta (git's patch-delta.c); AffixDelta makes
//     one by the bytes the base and the target share at their start and
//     end, the delta of an object a boundary writes again with one place
//     changed (go-git's DiffDelta makes the others);
//   - Compact packs loose objects, with the packs a geometric progression
//     needs rolled up, as git repack --geometric=2 keeps them, streaming
//     (compact.go says how, and what it holds in memory).
//
// The cut: the bytes of packs and what compaction does with them are here;
// when to compact, and the object store the vault writes loose objects
// into, are the vault's (vault/compact.go, vault/objects.go). Objects,
// their ids and the loose format are vault/git/object's.
//
// The decoders (Reader on any pack and index, ApplyDelta, ParseIndex)
// answer an error, never a panic, whatever their input (FuzzReader and
// FuzzDelta, seeded with the packs and deltas git repack writes).
package pack

// Package vault is the store under every run folder: one git repository
// holding one organization's playbooks, definitions, runs and comments.
//
// It owns
//   - opening and making a vault (quire.yaml, vault/00-index.jsonl,
//     playbook-runs/AGENTS.md, .gitignore, the first commit);
//   - the one write lock (a file lock at .git/quire.lock plus an in-process
//     mutex), under which every write to the vault happens;
//   - the only two ways a file is written: WriteAtomic (temporary file,
//     fsync, rename, fsync of the folder) and AppendLine (one O_APPEND write
//     of a whole line, then fsync), with RepairTail for a last line without
//     its newline (a whole JSON line is completed; a torn one is moved into
//     .quire/quarantine/ and cut, see CutTail);
//   - the index, an identity registry appended to, never rewritten;
//   - object-level git commits (commit.go): only the changed blobs, the trees
//     along their paths, the commit, the branch ref under git's lockfile
//     protocol with a reflog line, and the changed entries of .git/index;
//   - compaction of loose objects into packs in the background;
//   - reading the history for quire check --history (walk.go, packs.go):
//     commits, raw trees diffed by the bytes two versions share at their
//     start and end, and a reader of packs mapped into memory that applies
//     each delta to the base it keeps, with go-git for what it does not know.
//
// Paths handed to the vault are slash-separated and relative to its root;
// Join refuses any that would leave it, through "..", an absolute path or a
// symbolic link.
package vault

// Package vault is the store under every run folder: one git repository
// holding one organization's playbooks, definitions, runs and comments.
//
// It owns
//   - opening and making a vault (quire.yaml, vault/00-index.jsonl,
//     playbook-runs/AGENTS.md, .gitignore, the first commit);
//   - the one write lock (a file lock at .git/quire.lock plus an in-process
//     mutex), under which every write to the vault happens; the writes of
//     a process that wait on it at once are a group (group.go), each its
//     own commit, the branch moved and .git/index written once a group;
//   - the only two ways a file is written: WriteAtomic (temporary file,
//     fsync, rename, fsync of the folder) and AppendLine (one O_APPEND write
//     of a whole line, then fsync), with RepairTail for a last line without
//     its newline (a whole JSON line is completed; a torn one is moved into
//     .quire/quarantine/ and cut, see CutTail);
//   - the index, an identity registry appended to, never rewritten;
//   - object-level git commits (commit.go): only the changed blobs, the trees
//     along their paths, the commit, the branch ref under git's lockfile
//     protocol with a reflog line, and the changed entries of .git/index;
//   - compaction of loose objects into packs in the background
//     (compact.go, with vault/git/pack): when git's gc --auto would (the
//     loose objects estimated from objects/17, the count of packs),
//     streaming (old packs copied entry by entry, loose objects deltified
//     against a window of 10 objects and 32 MiB: memory is that window plus
//     about 150 bytes an object, not the objects), the packs kept a
//     geometric progression of
//     factor 2 as git repack --geometric=2 keeps them, and abandoned,
//     leaving the repository as it was, when its context
//     (SetCompactContext) ends;
//   - the journal (journal.go): .quire/writing exists while a writer holds
//     the lock and names git's lock files it takes, so the next writer
//     knows a dead quire's git lock from another program's (removes the
//     first, waits for the second and then refuses with what to do) and
//     finishes what the dead one left (Recover, with the ledger's
//     OnRecover), first putting back what an undoable write that had not
//     settled changed (undo.go);
//   - .git/index kept true to HEAD: git's index.lock is held through each
//     group of commits, the in-memory index is dropped on any failed commit, and a
//     stamp (.quire/index-stamp: HEAD and the index's stat) checked at open
//     finds an index out of step, which is then compared with HEAD folder
//     by folder and repaired for quire's paths (repair.go);
//   - InspectGit, RepairGit and Status, what quire check and quire janitor
//     see of git's state and the work tree;
//   - reading the history for quire check --history (history.go, with
//     vault/git/walk): commits, raw trees diffed by the bytes two versions
//     share at their start and end, and vault/git/pack's reader of packs
//     mapped into memory that applies each delta to the base it keeps, with
//     go-git for what it does not know.
//
// git's own formats are packages of their own under vault/git, each with
// its decoder and encoder, a doc citing git's document of the format and a
// fuzz test seeded with what the git CLI writes: object (object ids, loose
// objects, trees, commits' headers), index (.git/index in every form, the
// split index), pack (packs and their indexes, deltas, compaction) and walk
// (the history walk's reads, raw trees compared). The vault's API names none of go-git's types: Hash is
// vault/git/object's.
//
// The crash test's hook (internal/crashpoint) is hit before every
// file-changing step of the vault, the run folder and the history: with
// QUIRE_CRASH_AFTER=n the process SIGKILLs itself at its (n+1)th.
//
// Paths handed to the vault are slash-separated and relative to its root;
// Join refuses any that would leave it, through "..", an absolute path or a
// symbolic link.
package vault

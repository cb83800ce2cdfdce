// Package checker checks a vault against the playbook-run capsule and
// repairs what a writer that stopped in the middle left: quire check,
// quire check --history and quire janitor's repair pass, beside the
// runtime that writes the vault (package ledger), as a backup tool's
// checker sits beside its repository.
//
// It imports nothing of the ledger. What it needs of the vault is Vault (a
// *vault.Vault is one); what it needs of the runtime is Host: the vault's
// lock as a reader, the one write transaction to repair inside, a run's
// folder, the playbooks' histories (Histories: whatever shape they take,
// where they no longer match their files), reindexing, the clock and
// progress. The ledger's operations check_vault and repair_vault, its
// janitor's archive and its reindex call it.
//
// # What quire check checks
//
// Check reads the files as they are, each problem at its path and line,
// all of it holding the vault's lock as a reader, so that it sees the
// vault between two writes and never a write in the middle (a vault this
// process may not write is read through a read-only descriptor of the
// lock; check records nothing there):
//
//   - every run folder holds the capsule's six entries (rule 6), each a
//     file or a folder as the capsule wants, and is in the index of things
//     (vault/00-index.jsonl); every entry of the index exists;
//   - a run's definition.md has the front matter's required fields, a
//     concrete playbook_version (rule 2), member_of naming projects of the
//     index (rule 1), its playbook a definition of the index, started a
//     date and binding a file of the vault, and the uid the index gives it;
//   - every line of a run.jsonl and of a playbook's events.jsonl parses, a
//     run's log begins with run_created, every line holds the capsule's
//     minimum fields (event, timestamp, step, which may be null, and
//     detail), no line follows archived (rule 5), and a torn last line is
//     named;
//   - each playbook's history numbers its events without a gap or a
//     repeated seq; run.state.json agrees with run.jsonl and definition.md;
//   - the vault's git state and work tree:
//     git's lock files, HEAD and .git/index, a committed part edited by hand
//     (a committed line of an append-only file, a definition.md; the write
//     guard refuses the next write over it), staging folders and temporary
//     files a stopped writer left, changes a commit should have taken,
//     symbolic links, torn tails kept in .quire/quarantine/, and a
//     playbook's history (.quire/history, derived) that no longer matches
//     its files.
//
// A check that finds no problem keeps .quire/check-record (record.go): the
// stamps of every file of the work tree and of what in .git says what HEAD
// and .git/index are, and what it read of each run folder. The next check
// stamps the vault first; when every stamp and HEAD are the record's, it
// answers from it (after git's lock files and a writer's journal, which
// no stamp covers); otherwise it reads the vault as a whole again, and of
// the run folders only those whose stamps differ. CheckAll reads
// everything.
//
// # What quire check --history proves
//
// CheckHistory proves the capsule's append-only rules from the vault's git
// history, commit by commit, against each parent:
//
//   - every committed run.jsonl only ever grew: the complete lines of the
//     parent's version are a byte prefix of the commit's (rule 3, the very
//     rule the write guard holds: vault.KeptLines); a run folder or its
//     run.jsonl removed is lines removed;
//   - definition.md never changed after its run began (rule 2: it pins the
//     version, and it is written once);
//   - a run archived in the parent is not changed at all (rule 5);
//   - the lines a commit adds to a run.jsonl are in seq order, after the
//     last seq it already held (lines without a seq, written by hand, are
//     skipped: they take their place by position).
//
// Only the run folders whose tree id differs between a commit and its
// parent are read, and in them only the files that differ. What was proved
// is kept in .quire/check-history.json (derived: delete it and the next
// check walks the whole history again): the commits proved, the commit the
// last walk ended at, and the problems found, which every later check
// reports again while their commits are still in HEAD's history. The
// record carries a digest of what it covers (digestOf); one that does not
// match is not trusted, and the whole history is proved again.
//
// # What it repairs
//
// What a writer that stopped in the middle leaves, and what quire does with
// it. The next writer (Recover, the vault's OnRecover, when the writer's
// journal says it stopped; see vault/journal.go) and quire janitor (Repair,
// always) do the same:
//
//   - git's lock files it held: removed (vault).
//   - .git/index out of step with HEAD: set to HEAD's entries (vault).
//   - a staging folder playbook-runs/.new-*: removed. The run's folder was
//     never renamed into place, so no one was told of the run, and the
//     history's record of its run_created (reserved first) is dropped by the
//     next writer of the playbook as a record whose line is missing. Rolled
//     back.
//   - a temporary file .<name>.tmp* of an atomic write: removed. The rename
//     that would have made it the file never happened. Rolled back.
//   - a run folder renamed into place but not in vault/00-index.jsonl: its
//     index line is written from its definition.md and it is committed. The
//     folder is whole (the rename is atomic) and its run_created already
//     holds a seq in the history, so rolling it back would leave a gap.
//     Finished.
//   - uncommitted changes a commit should have taken (a run.state.json
//     rewritten at a boundary, a new run folder, the index's new lines, a
//     playbook's files, a comment): committed as vault-janitor. Finished.
//     A run's run.jsonl, thread.md and artifacts changed since its last
//     boundary are not such changes: they wait for the run's next boundary
//     by design.
//   - a committed part changed by hand (a committed line of run.jsonl,
//     thread.md or events.jsonl, a run's definition.md): HEAD's part put
//     back, the lines appended after it kept, the edited copy kept in
//     .quire/quarantine/ (vault.RestoreCommitted). Restored. Only quire
//     janitor does this, never a writer on its way.
//   - a playbook's history that no longer matches its files: rebuilt from
//     them (Host.Reindex), after the repair's write.
//
// # What needs a person
//
// What needs a person is reported and left, with what to do: another
// program's git lock, a HEAD whose objects are missing, a symbolic link, a
// file deleted, a run's context.md edited by hand, a run folder outside
// the index that cannot be added to it; and what quire check --history
// finds in commits already made, which no repair rewrites.
package checker

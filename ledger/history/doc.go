// Package history is the playbooks' histories: where each event of a
// playbook lies and which seq it has, the lines written by hand that take
// their place among them, the git stamp that says the histories are true to
// the files, and the commits a write could not make.
//
// It owns, under the vault's .quire/ (derived state, rebuilt from the
// files when missing, never committed):
//
//	history/<playbook>.seq    one 16-byte record an event (history.go)
//	history/<playbook>.files  the files the records point into
//	history/<playbook>.chain  a digest of the records up to each (chain.go)
//	history/git.stamp         git's stat when quire last knew them true
//	uncommitted               the paths left for the next commit
//
// The event files themselves (a run's run.jsonl, a playbook's
// events.jsonl) are the ledger's: the history points into them and never
// writes them, but for cutting a reserved line that was never written whole
// back off its file.
//
// # The API
//
// A Store is one vault's histories, shared by a ledger's writers and
// readers. Store.Of answers a playbook's History.
//
// Reads, without the vault's lock: History.Len and History.Page (what the
// page keeper and list_playbook_events read), History.Chain (a view
// receipt's digest of the records; Page extends the chain file, derived
// state that two readers write alike), Store.EachEvent and
// Store.NthEvent (an event file's lines as reads present them, lines
// written by hand with their seq and derived id), Store.Stale,
// Store.Peek and History.Verify (for quire check), Store.AdoptFor (a
// reader that finds lines written by hand asks its caller to take the lock
// and adopt them). Store.Reset forgets what the store holds in memory, for
// quire reindex, which removes the folder.
//
// Writes, by the caller that holds the vault's lock: Store.FollowGit,
// History.Repair, History.Reserve, Store.Adopt, Store.Commit and
// Store.FinishPending. In package ledger only the methods of its write
// transaction call them, which a test there checks.
//
// What it needs of the ledger it asks through Source, in the consumer's
// style of fold.History: the event files of a playbook in their order, the
// uid a file's derived ids begin with, and a callback to forget what was
// derived from a history thrown away (the pages' views).
//
// # Decisions
//
//   - A record is reserved before its line is written, and a record whose
//     line is not whole is dropped by the next writer (Repair): seq has no
//     gaps or repeats and no event is read twice. A reader that meets a last
//     record whose line is being written ends its page before it.
//   - The list of files only grows, read by what was added (fsys.Grown),
//     so a warm reader costs a stat; a rebuild makes it anew.
//   - A rebuild numbers every line once and gives the same files byte for
//     byte from the same event files (History.rebuild says how). Store.Of
//     rebuilds a history that .quire/history lacks for whoever asks first,
//     a reader too: it is derived from the event files alone.
//   - A line written by hand is numbered when quire next writes or reads its
//     file, after the file's last numbered line (lines.go); its id is
//     derived from its place in its file, never written into it.
//   - The git stamp is four stats compared whole, written in place and not
//     synced: a stamp torn or lost costs one check of the histories, never
//     a check skipped (stamp.go).
//   - A commit that fails after the write is durable is not an error: its
//     paths wait in .quire/uncommitted for the next commit (pending.go).
package history

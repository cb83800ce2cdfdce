package checker

import (
	"time"

	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
)

// Vault is what the checker reads of the vault, and what its repairs
// change. A *vault.Vault is one; the checker takes no lock of its own (see
// Host).
type Vault interface {
	Root() string
	GitDir() string
	Abs(rel string) string
	Join(rel string) (string, error)
	Exists(rel string) bool
	// ReadOnly: this process may not write the vault; check reports and
	// records nothing.
	ReadOnly() bool

	// The index of things (vault/00-index.jsonl).
	Entries() ([]vault.Entry, error)
	// Shared is Entries without a copy: lines the caller must not change.
	Shared() ([]vault.Entry, error)
	Lookup(uid string) (vault.Entry, bool, error)
	Find(keep func(*vault.Entry) bool) ([]vault.Entry, error)
	FindType(typ string, keep func(*vault.Entry) bool) ([]vault.Entry, error)
	Register(e vault.Entry) error
	// IndexProblems are the index's lines that are not index lines.
	IndexProblems() ([]vault.BadLine, error)

	// The work tree against git: git's own state, and what changed since
	// the last commit, leaving out what a passing check at the commit
	// since saw unchanged (vault.Unchanged; nil: nothing is left out).
	InspectGit() []vault.Finding
	UnchangedSince(since vault.Hash, look []string) *vault.Unchanged
	StatusFrom(u *vault.Unchanged) ([]vault.Change, error)
	// StatusStamped is StatusFrom taking run folders' entries from the
	// stamps the check took (vault.FolderStamps).
	StatusStamped(u *vault.Unchanged, stamps vault.FolderStamps) ([]vault.Change, error)
	HandEditsFrom(u *vault.Unchanged) ([]*vault.HandEdit, error)
	InspectGitFrom(u *vault.Unchanged) []vault.Finding
	InspectGitState() []vault.Finding
	// AskMonitor asks the file system monitor .git/config names what
	// changed since token (ok false: none, or it failed).
	AskMonitor(token string) (vault.MonitorAnswer, bool)
	// IndexMonitorToken is the monitor's token git keeps in .git/index,
	// "" for none (vault.IndexMonitorToken).
	IndexMonitorToken() string
	// IndexDigest is the SHA-256 of .git/index's entries without their
	// stat data.
	IndexDigest() ([32]byte, error)
	RepairGit() ([]string, error)
	Recovered() []string
	HandEdits() ([]*vault.HandEdit, error)
	GitOperation() *vault.GitOperation
	RestoreCommitted(he *vault.HandEdit) (string, error)
	Commit(paths []string, author vault.Signature, msg string) (string, error)

	// The git history, for check --history.
	HeadCommit() (vault.Hash, error)
	History() *vault.History
}

// Host is what the checker needs of the runtime that runs it (package
// ledger implements it): its lock, its write transaction, the run folders,
// the playbooks' histories it derives, its clock and its progress.
type Host interface {
	// ReadLocked runs fn holding the vault's lock as a reader that must
	// see the vault between writes; fn changes nothing.
	ReadLocked(fn func() error) error
	// Write runs fn as one write transaction of the host: the vault's
	// lock held, what a writer that stopped in the middle left finished
	// or rolled back first.
	Write(fn func() error) error
	// Folder is the run folder at rel, read through the host's vault.
	Folder(rel string) runfolder.Folder
	// Histories are the playbooks' histories under .quire/history.
	Histories() Histories
	// Reindex throws away the derived state under .quire/ and rebuilds
	// the histories from the files; it takes the write transaction
	// itself.
	Reindex() error
	// Progress tells how long work goes, after each of its units.
	Progress(task, unit string, done, total int)
	// Now is the host's clock (the janitor's commits are dated by it).
	Now() time.Time
	// RunWarnings are what looks wrong in a run but breaks no rule of
	// the capsule (CheckReport.Warnings): steps its pinned document does
	// not have. A run answered from the record, with the playbooks' files
	// as recorded, gives the ones it recorded. st is the run's state as
	// the check derived it from the log (nil: the host reads it).
	RunWarnings(e vault.Entry, st *runfolder.State) []Problem
}

// Histories is what the checker asks of the playbooks' histories
// (.quire/history/<playbook>.seq, derived from the files): whichever shape
// the history has, it can say where it no longer matches its files.
type Histories interface {
	// PointPast lists the playbooks whose history points past the end of
	// the files it indexes (git took lines back).
	// A file's size is size's where it knows it (nil: none), else a
	// stat's.
	PointPast(size func(file string) (int64, bool)) ([]string, error)
	// Disagrees says how a playbook's history disagrees with its files,
	// or "" when it agrees (or is not built yet).
	Disagrees(playbook string) string
	// DisagreesFrom is Disagrees given lines, the count of the
	// playbook's event lines (quire check counted them), reading of the
	// history only what since, the mark of a passing check, did not
	// prove, or what lies in files not held since (history.VerifyFrom);
	// it answers the mark of what it proved.
	DisagreesFrom(playbook string, lines int64, since history.Mark, held func(file string) bool) (string, history.Mark)
	// Pending lists the paths quire's own writes left uncommitted.
	Pending() []string
}

// A Checker checks and repairs one vault for its host.
type Checker struct {
	v Vault
	h Host
}

// New is the checker of v, run by h.
func New(v Vault, h Host) *Checker { return &Checker{v: v, h: h} }

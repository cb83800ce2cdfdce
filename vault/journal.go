package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
	"quire/words/refusal"
)

// The journal: .quire/writing holds lines while a writer holds the vault's
// lock, from before its first change to after its last, and is empty
// between writes. A writer that takes the
// lock and finds it was left by one that died in the middle (a kill, a
// power cut) or stopped on an error: it finishes or rolls back what that
// one left (see Recover) before it writes anything itself.
//
// The journal also records each of git's lock files before quire takes it
// ("lock <path>") and once it holds it ("locked <path> <inode>"), and a lock
// found held by another program ("foreign <path> <inode>"). Since quire
// takes git's locks only under its own lock, a git lock named there that a
// later holder of the vault's lock finds is a dead quire's: it is removed
// and the write carries on. Any other git lock is another program's (a
// person's git command): it is waited for gitLockWait, then refused with
// what to do.
//
// The journal is not fsynced: it guards against the death of a process,
// whose writes the kernel keeps, not against the loss of the machine.
const journalFile = "writing"

// gitLockWait is how long a writer waits, under the vault's lock, for a
// git lock another program took lately (git's own commands hold theirs for
// milliseconds). A lock held longer than gitLockOld (a person's long git
// command, or one that was killed) is not waited for at all: every writer
// would wait for it in turn, under the lock, and one boundary's commit is
// not worth that. The commit is then left for the next writer (the write
// answers committed: false), or refused with what to do.
var gitLockWait = time.Second

// gitLockOld is the age past which another program's git lock is not
// waited for.
const gitLockOld = time.Second

// SetGitLockWait sets how long writers wait for a git lock another program
// holds, and returns a function that sets it back: for tests that hold
// one on purpose.
func SetGitLockWait(d time.Duration) (restore func()) {
	old := gitLockWait
	gitLockWait = d
	return func() { gitLockWait = old }
}

func (v *Vault) journalPath() string { return filepath.Join(v.root, QuireDir, journalFile) }

// journal returns the journal, kept open from the first write on: a
// write to it and its truncation are the whole cost of a write's journal,
// with no file made or removed per write.
func (v *Vault) journal() (*os.File, error) {
	if v.jf == nil {
		crashpoint.Hit()
		f, err := fsys.OpenFile(v.journalPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		v.jf = f
	}
	return v.jf, nil
}

// note appends one line to the journal.
func (v *Vault) note(format string, args ...any) error {
	f, err := v.journal()
	if err != nil {
		return err
	}
	crashpoint.Hit()
	_, err = fmt.Fprintf(f, format+"\n", args...)
	return err
}

// begin starts a write under the lock: it finishes what a writer that died
// holding the lock left, then opens this writer's journal. A write that
// continues a group (group.go) finds the group's own journal and adds to
// it.
func (v *Vault) begin(continuing bool) error {
	f, err := v.journal()
	if err != nil {
		return err
	}
	if continuing {
		v.commitFailed = false
		v.undo = nil
		return v.note("pid %d", os.Getpid())
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	var old []byte
	if fi.Size() > 0 {
		old = make([]byte, fi.Size())
		if _, err := f.ReadAt(old, 0); err != nil {
			return err
		}
	}
	if len(old) > 0 && v.opening {
		return errDeferred
	}
	v.commitFailed = false
	v.undo = nil
	if err := v.note("pid %d", os.Getpid()); err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	return v.recover(old)
}

// end closes a write, and says whether it ended clean: its journal may be
// emptied (by its group's end) unless the write stopped on an error that
// was not a refusal, or a commit failed, which may have left changes half
// made for the next writer to finish. v.undo is left set for a write that
// was undoable, which ends its group.
func (v *Vault) end(err error) bool {
	u := v.undo
	if _, refused := refusal.As(err); v.commitFailed || err != nil && !refused && !wroteNothing(err) {
		return false
	}
	if u != nil && !u.settled && err != nil {
		// A refused write that was not settled writes nothing: what it
		// changed before the refusal is put back now.
		if old, rerr := fsys.ReadFile(v.journalPath()); rerr != nil {
			return false
		} else if _, rerr := v.undoLeft(old); rerr != nil {
			return false // the journal stays: the next writer puts it back
		}
	}
	if u != nil && u.copies > 0 {
		os.RemoveAll(v.Abs(undoDir)) // the copies of a write that stands, or was put back
	}
	return true
}

// wroteNothing reports an error that says the write found its work done
// before it wrote anything (a repeated request id).
func wroteNothing(err error) bool {
	var n interface{ WroteNothing() bool }
	return errors.As(err, &n) && n.WroteNothing()
}

// recover finishes what the writer whose journal is old left: its git
// locks go, .git/index is made true to HEAD again, and the ledger's
// OnRecover finishes or rolls back the rest.
func (v *Vault) recover(old []byte) error {
	pids := []string{}
	for _, line := range strings.Split(string(old), "\n") {
		if pid, ok := strings.CutPrefix(line, "pid "); ok {
			pids = append(pids, pid)
		}
	}
	who := "a quire process (pid " + strings.Join(pids, ", ") + ")"
	// A write that had not settled is undone first: it was never
	// committed, and its call was never answered.
	undone, err := v.undoLeft(old)
	for _, d := range undone {
		v.logf("%s, after %s stopped", d, who)
	}
	v.recovered = append(v.recovered, undone...)
	if err != nil {
		return err
	}
	for _, lock := range deadLocks(v.gitDir, old) {
		crashpoint.Hit()
		if err := os.Remove(filepath.Join(v.gitDir, filepath.FromSlash(lock))); err == nil {
			v.logf("removed .git/%s, left by %s that stopped during a commit", lock, who)
			v.recovered = append(v.recovered, "removed .git/"+lock+", left by "+who)
		}
	}
	v.gitIdx.stat = fileStamp{} // read it again
	fixed, err := v.repairIndex()
	if err != nil {
		return err
	}
	if len(fixed) > 0 {
		msg := fmt.Sprintf("set %d entries of .git/index to HEAD's (%s)", len(fixed), sample(fixed))
		v.logf("%s, after %s stopped", msg, who)
		v.recovered = append(v.recovered, msg)
	}
	if v.OnRecover != nil {
		done, err := v.OnRecover()
		for _, d := range done {
			v.logf("%s, after %s stopped", d, who)
		}
		v.recovered = append(v.recovered, done...)
		if err != nil {
			return err
		}
	}
	return nil
}

func sample(names []string) string {
	if len(names) > 3 {
		return strings.Join(names[:3], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// deadLocks reads a dead writer's journal for the git locks (paths under
// .git) it took or was taking, and returns those that still stand as it
// left them: a lock it held, by its inode, or one it was about to take
// when it died, unless the one there is another program's it had seen.
func deadLocks(gitDir string, journal []byte) []string {
	type seen struct {
		ino     uint64
		held    bool // it holds the lock of inode ino
		foreign map[uint64]bool
	}
	locks := map[string]*seen{}
	var order []string
	for _, line := range strings.Split(string(journal), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "lock" && f[0] != "locked" && f[0] != "foreign") {
			continue
		}
		s := locks[f[1]]
		if s == nil {
			s = &seen{foreign: map[uint64]bool{}}
			locks[f[1]] = s
			order = append(order, f[1])
		}
		var ino uint64
		if len(f) > 2 {
			ino, _ = strconv.ParseUint(f[2], 10, 64)
		}
		switch f[0] {
		case "lock":
			s.held = false
		case "locked":
			s.ino, s.held = ino, true
		case "foreign":
			s.foreign[ino] = true
		}
	}
	var dead []string
	for _, name := range order {
		s := locks[name]
		if strings.Contains(name, "..") || !strings.HasSuffix(name, ".lock") {
			continue // not a lock quire takes
		}
		fi, err := os.Lstat(filepath.Join(gitDir, filepath.FromSlash(name)))
		if err != nil {
			continue
		}
		ino := inodeOf(fi)
		if s.held && ino == s.ino || !s.held && !s.foreign[ino] {
			dead = append(dead, name)
		}
	}
	return dead
}

func inodeOf(fi fs.FileInfo) uint64 { return fsys.Inode(fi) }

// takeGitLock creates one of git's lock files (a path under .git ending in
// .lock) exclusively, noting it in the journal before and after. A lock
// that another program holds is waited for gitLockWait, then refused as
// unavailable with what to do.
func (v *Vault) takeGitLock(abs string) (*os.File, error) {
	rel, err := filepath.Rel(v.gitDir, abs)
	if err != nil {
		return nil, err
	}
	rel = filepath.ToSlash(rel)
	if err := v.note("lock %s", rel); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(gitLockWait)
	var noted uint64
	for {
		crashpoint.Hit()
		f, err := fsys.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			fi, err := f.Stat()
			if err == nil {
				err = v.note("locked %s %d", rel, inodeOf(fi))
			}
			if err != nil {
				f.Close()
				os.Remove(abs)
				return nil, err
			}
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		old := false
		if fi, err := os.Lstat(abs); err == nil {
			old = time.Since(fi.ModTime()) > gitLockOld
			if inodeOf(fi) != noted {
				noted = inodeOf(fi)
				if err := v.note("foreign %s %d", rel, noted); err != nil {
					return nil, err
				}
			}
		}
		if old || time.Now().After(deadline) {
			return nil, refusal.New(refusal.Unavailable,
				"vault: git's lock .git/%s is held by another program (a git command?); "+
					"try again once it ends, or, if no git command is running in %s, delete .git/%s (a git command that was killed leaves it)",
				rel, v.root, rel)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logf says what quire did on its own: in the log of quire serve, on
// standard error for a command.
func (v *Vault) logf(format string, args ...any) {
	v.Logger().Warn("quire: " + fmt.Sprintf(format, args...))
}

// Logger is where the vault and its owner say what they did on their own:
// the logger SetLogger set, else standard error.
func (v *Vault) Logger() *slog.Logger {
	if v.log == nil {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return v.log
}

// Logf is logf for the vault's owner: what it did on its own, in the same
// log.
func (v *Vault) Logf(format string, args ...any) { v.logf(format, args...) }

// SetLogger sets where the vault says what it repaired on its own; standard
// error by default. Set it before the vault is used.
func (v *Vault) SetLogger(l *slog.Logger) { v.log = l }

// Recovered returns, and forgets, what the writers of this process
// finished or rolled back of what earlier writers left.
func (v *Vault) Recovered() []string {
	out := v.recovered
	v.recovered = nil
	return out
}

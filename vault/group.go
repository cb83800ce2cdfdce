package vault

import (
	"errors"
	"os"
	"sync"

	"quire/internal/crashpoint"
	"quire/internal/fsys"
)

// Group commit. Writers of one process that wait for the lock while
// another writes join its group, as a database groups the commits that
// wait on its log: the group takes the file lock once, each write in turn
// runs and makes its own commit, each the parent of the next, and the
// group ends when no writer waits (or groupMost have written), with what
// every commit of it costs only once: the branch moved once from the
// group's first parent to its last commit (a reflog line a commit, as
// git writes them), .git/index written once, the stamp and the
// compaction's count once. Every write of the group answers once the group
// has ended, so none is answered before the branch shows its commit.
//
// What a write leaves when its process dies inside a group is finished by
// the next writer, as a single write's is: the journal is emptied only
// when the group ends, so it names the pids and the git locks of the whole
// group, and the next writer's recovery (journal.go) removes the locks,
// sets .git/index to HEAD's and commits what the group's writes left on
// the disk. A write that may be undone (undo.go), or that leaves its
// journal for the next writer (an error, a failed commit), ends its group
// at once, so a journal that is kept across writes holds no undo lines.
//
// Writers of other processes take turns with groups as with writes: the
// file lock is held from a group's start to its end.
const groupMost = 32

// group is a group of writes under one hold of the lock.
type group struct {
	base   Hash     // the branch at the group's first commit
	based  bool     // base was read
	tip    Hash     // the group's last commit, zero before its first
	reflog []string // one line for each commit, appended when the branch moves
	index  *os.File // .git/index.lock, held from the first commit to the end
	ref    *os.File // the branch's lock, held from the first new commit on
	dirty  bool     // the index kept in memory holds what .git/index does not
	writes int
	done   chan struct{} // closed when the group has ended
	err    error         // what ending the group met: every write's answer
	after  []func()      // what runs once the branch has moved (AfterCommits)
	syncs  []heldFile    // files written, to sync at the end (SyncAtEnd)
}

// heldFile is a file a group syncs at its end, with its stat when it was
// handed over (nil when it could not be taken).
type heldFile struct {
	f  *os.File
	fi os.FileInfo
}

// syncHeld syncs and closes the files the group's writes handed it
// (SyncAtEnd: the lines they appended, the histories' records numbering
// them), side by side: the file system makes one commit of its journal for
// fsyncs that wait at once. It answers their errors.
func (g *group) syncHeld() error {
	files := g.syncs
	g.syncs = nil
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, h := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.f.Sync()
			h.f.Close()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeGrouped runs fn as one write of a group: the one under way, when a
// write of this process holds the lock, or a new one.
func (v *Vault) writeGrouped(fn func() error) error {
	v.writers.Add(1)
	v.mu.Lock()
	v.writers.Add(-1)
	g := v.grp
	if g == nil {
		if err := v.takeLock(); err != nil {
			v.mu.Unlock()
			return err
		}
		g = &group{done: make(chan struct{})}
		v.grp = g
	}
	v.locked, v.checked = true, nil
	// The group's small objects wait to be written as one pack when it
	// ends (flushOnce; vault/git/pack's fresh packs).
	v.objs.hold()
	finished := false
	defer func() {
		if !finished { // fn panicked: the group ends with it, its journal kept
			v.locked, v.checked, v.undo = false, nil, nil
			v.endGroup(g, false)
			v.mu.Unlock()
		}
	}()
	err := v.begin(g.writes > 0)
	clean := false
	if err == nil {
		err = fn()
		clean = v.end(err)
	}
	finished = true
	undoable := v.undo != nil
	v.locked, v.checked, v.undo = false, nil, nil
	g.writes++
	if clean && !undoable && v.writers.Load() > 0 && g.writes < groupMost {
		v.mu.Unlock()
		<-g.done
		if err == nil {
			err = g.err
		}
		return err
	}
	v.endGroup(g, clean)
	v.mu.Unlock()
	if err == nil {
		err = g.err
	}
	return err
}

// endGroup makes the group's commits the branch's and releases the lock:
// the journal is emptied when the last write ended clean and the branch
// moved. The caller holds v.mu.
func (v *Vault) endGroup(g *group, clean bool) {
	if err := v.flushGroup(g); err == nil && clean {
		crashpoint.Hit()
		v.jf.Truncate(0)
	}
	// A group that failed before its end leaves its held objects
	// unwritten: no branch names them, and the next writer commits again
	// what the files hold.
	v.objs.drop()
	v.grp = nil
	fsys.Unlock(v.lockF)
	close(g.done)
}

// flushGroup moves the branch to the group's last commit and writes
// .git/index once, then runs what waited for the branch to move; the
// group may go on after it (flushCommits). After a commit that failed, the
// index kept in memory is not the commits' and is not written: the next
// writer sets .git/index to HEAD's (recover). What it fails on stays the
// group's answer, and its journal stays for the next writer.
func (v *Vault) flushGroup(g *group) error {
	// The lines first: a commit of the group may hold them.
	synced := g.syncHeld()
	if g.err == nil {
		if g.err = v.flushOnce(g); g.err != nil {
			v.commitFailed = true
			v.gitIdx.stat = fileStamp{}
			v.lastCommit, v.lastTree = ZeroHash, ZeroHash
		}
	}
	if g.err == nil {
		g.err = synced
	}
	return g.err
}

func (v *Vault) flushOnce(g *group) error {
	defer func() {
		for _, f := range []*os.File{g.index, g.ref} {
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
		g.index, g.ref = nil, nil
	}()
	// The objects of the group's commits are written before the branch
	// names them.
	if err := v.objs.flush(); err != nil {
		return err
	}
	moved := false
	if g.ref != nil && !g.tip.IsZero() {
		f := g.ref
		g.ref = nil
		if err := v.moveBranch(f, g.base, g.tip, g.reflog); err != nil {
			return err
		}
		g.base, g.reflog, moved = g.tip, nil, true
	}
	if v.commitFailed {
		return nil
	}
	if g.index != nil && g.dirty {
		f := g.index
		g.index = nil
		if err := v.gitIdx.writeLocked(f); err != nil {
			return err
		}
		if err := v.writeStamp(g.base); err != nil {
			return err
		}
		g.dirty = false
	}
	after := g.after
	g.after = nil
	for _, fn := range after {
		fn()
	}
	if moved {
		v.maybeCompact()
	}
	return nil
}

// flushCommits makes the commits of the group under way the branch's now,
// for what reads git's state under the lock (quire check, the janitor,
// the recovery of a writer that stopped): it sees the branch, the index
// and git's locks as a write between groups leaves them. The caller holds
// the lock.
func (v *Vault) flushCommits() error {
	if v.grp == nil {
		return nil
	}
	return v.flushGroup(v.grp)
}

// AfterCommits runs fn once the commits of this write are the branch's:
// at the end of its group, or at once outside of one. The caller holds
// the lock.
func (v *Vault) AfterCommits(fn func()) {
	if v.grp == nil {
		fn()
		return
	}
	v.grp.after = append(v.grp.after, fn)
}

// tip is the commit the next commit of this writer builds on: the group's
// last commit, or the branch's.
func (v *Vault) tip() (Hash, error) {
	if g := v.grp; g != nil && !g.tip.IsZero() {
		return g.tip, nil
	}
	return v.head()
}

package ledger

import (
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"quire/internal/fsys"
	"quire/vault"
)

// The history under .quire/history/ is derived from the event files, and
// a person's git command can take those files back (git stash, git reset
// --hard, git checkout): the history then points past them, and the next
// event would take a seq an event already has. So the history records what
// it was built from: .quire/history/git.stamp holds the stat of git's HEAD,
// branch folder, packed-refs and index as they were when quire last knew
// the history true (after its own commits, and after each check). A write
// compares them (four stats) and, when git changed anything quire did not,
// checks every playbook's history against the sizes of the files it points
// into (a stat a file), and rebuilds the histories that point past them,
// with their views. A warm process also keeps .git/index as it left it
// (vault.IndexMark): git writes a file of the work tree only with its
// entry, so it stats only the files whose entries git changed and those
// the index does not hold, not every file (200 ms at 20,000 runs).
const gitStampFile = vault.QuireDir + "/history/git.stamp"

// gitStamp is the stat of what a git command that moves files changes.
func (l *Ledger) gitStamp() string {
	var b strings.Builder
	for _, name := range []string{"HEAD", "index", "packed-refs", "refs/heads"} {
		fi, err := os.Stat(filepath.Join(l.v.GitDir(), filepath.FromSlash(name)))
		if err != nil {
			fmt.Fprintf(&b, "%s -\n", name)
			continue
		}
		fmt.Fprintf(&b, "%s %d %d %d\n", name, fi.Size(), fi.ModTime().UnixNano(), fsys.Inode(fi))
	}
	return b.String()
}

// restamp records that the histories are true to git as it is now. The
// caller holds the lock.
func (l *Ledger) restamp() {
	p := l.v.Abs(gitStampFile)
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		writeStamp(p, []byte(l.gitStamp()))
	}
	var err error
	if l.mark, err = l.v.MarkIndex(); err != nil {
		l.mark = vault.IndexMark{} // every file is checked next time
	}
}

// writeStamp writes the stamp over the one before, in place and not
// synced: it is only ever compared whole with git's stat, so a stamp a
// crash or a failed write leaves cut, mixed, older or missing differs from
// it and costs one check of the histories, never a check skipped. (A
// temporary file renamed over it and synced cost a millisecond or two a
// boundary.)
func writeStamp(p string, stamp []byte) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.WriteAt(stamp, 0); err != nil || f.Truncate(int64(len(stamp))) != nil {
		os.Remove(p)
	}
}

// checkDerived rebuilds the histories that git took files back under. The
// caller holds the lock.
func (l *Ledger) checkDerived() error {
	if data, err := os.ReadFile(l.v.Abs(gitStampFile)); err == nil && string(data) == l.gitStamp() {
		return nil
	}
	written, ok, err := l.v.WrittenSince(l.mark)
	if err != nil || !ok {
		written = nil // every file
	}
	stale, err := l.staleHistoriesOf(written)
	if err != nil {
		return err
	}
	for _, p := range stale {
		l.forgetHistory(p)
	}
	l.restamp()
	return nil
}

// staleHistories lists the playbooks whose history points past the end of
// a file it names (or into a file that is gone).
func (l *Ledger) staleHistories() ([]string, error) { return l.staleHistoriesOf(nil) }

// staleHistoriesOf is staleHistories looking only at the files for which
// written answers true (every file when it is nil).
func (l *Ledger) staleHistoriesOf(written func(path string) bool) ([]string, error) {
	seqs, err := filepath.Glob(filepath.Join(l.v.Abs(path.Join(vault.QuireDir, "history")), "*.seq"))
	if err != nil {
		return nil, err
	}
	var stale []string
	for _, s := range seqs {
		p := strings.TrimSuffix(filepath.Base(s), ".seq")
		if l.historyPointsPast(s, strings.TrimSuffix(s, ".seq")+".files", written) {
			stale = append(stale, p)
		}
	}
	return stale, nil
}

func (l *Ledger) historyPointsPast(seqPath, filesPath string, written func(path string) bool) bool {
	recs, err := os.ReadFile(seqPath)
	if err != nil {
		return false
	}
	names, err := os.ReadFile(filesPath)
	if err != nil {
		return len(recs) > 0
	}
	files := strings.Split(strings.TrimSuffix(string(names), "\n"), "\n")
	end := make([]int64, len(files))
	for i := 0; i+recSize <= len(recs); i += recSize {
		no := binary.BigEndian.Uint32(recs[i:])
		n := int64(binary.BigEndian.Uint32(recs[i+4:]))
		off := int64(binary.BigEndian.Uint64(recs[i+8:]))
		if int(no) >= len(files) {
			return true
		}
		end[no] = max(end[no], off+n)
	}
	for i, f := range files {
		if end[i] == 0 || written != nil && !written(f) {
			continue
		}
		fi, err := os.Stat(l.v.Abs(f))
		if err != nil || fi.Size() < end[i] {
			return true
		}
	}
	return false
}

// forgetHistory drops a playbook's history (rebuilt from the files on its
// next use) and marks its views to be folded again from the start.
func (l *Ledger) forgetHistory(playbook string) {
	l.histMu.Lock()
	delete(l.hist, playbook)
	l.histMu.Unlock()
	h := &history{playbook: playbook, dir: l.v.Abs(path.Join(vault.QuireDir, "history"))}
	os.Remove(h.seqPath())
	os.Remove(h.filesPath())
	os.Remove(l.v.Abs(path.Join(requestsDir, playbook+".filed")))
	l.views.mu.Lock()
	if l.views.stale == nil {
		l.views.stale = map[string]bool{}
	}
	l.views.stale[playbook] = true
	l.views.mu.Unlock()
}

// forgetViews throws away a playbook's views when its history was rebuilt:
// they were folded from events that may be gone. It runs outside the vault
// lock, as a keeper's folds take the history without it.
func (l *Ledger) forgetViews(playbook string) {
	v := &l.views
	v.mu.Lock()
	if !v.stale[playbook] {
		v.mu.Unlock()
		return
	}
	delete(v.stale, playbook)
	ko := v.keepers[playbook]
	v.mu.Unlock()
	if ko != nil {
		for id := range ko.ids {
			ko.k.Unregister(id)
		}
		v.mu.Lock()
		ko.ids, ko.stamp = map[string]bool{}, -1
		v.mu.Unlock()
	}
	os.RemoveAll(l.v.Abs(path.Join(vault.QuireDir, "views", playbook)))
}

// gitCommit is V.Commit keeping the histories' git stamp: it checks the
// histories first (four stats while git is as quire left it), so the stamp
// it writes after the commit is true. The caller holds the lock.
func (l *Ledger) gitCommit(paths []string, sig vault.Signature, msg string) (string, error) {
	if err := l.checkDerived(); err != nil {
		return "", err
	}
	id, err := l.v.Commit(paths, sig, msg)
	if err == nil {
		l.restamp()
		l.recordCommit(id) // the run's commits (runcommits.go)
	}
	return id, err
}

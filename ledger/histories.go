package ledger

import (
	"os"
	"path"
	"strings"
	"sync"

	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
)

// The playbooks' histories are package history's (the seq, the lines
// written by hand, the git stamp and the commits left pending). The ledger
// tells it where a playbook's files are and what is derived from a history
// (historySource), writes it only through the tx methods below, and reads
// it through its read methods.

// Record is one event of a playbook's history, as read back.
type Record = history.Record

// historySource is what package history asks of the ledger.
type historySource struct{ l *Ledger }

// Files lists the event files of a playbook's history: its events.jsonl,
// then its runs' run.jsonl in the index's order. The list is kept with the
// index's lines it was made from (eventFiles), and extended by the lines
// added since.
func (s historySource) Files(playbook string) ([]string, error) {
	all, err := s.l.v.Shared()
	if err != nil {
		return nil, err
	}
	return s.l.evFiles.of(playbook, all), nil
}

// eventFiles keeps each playbook's event files (historySource.Files) with
// the index's lines they were read from. A read of a playbook's whole
// history asks for them at every call: made anew, they were a copy of
// every line of the index and a path a run, some 40 ms at 100,000 runs.
// The lines the registry shares (vault.Shared) are never changed once
// shared, only appended to: while they are the same array, the lines past
// those read are the only new ones; another array is read whole.
type eventFiles struct {
	mu sync.Mutex
	by map[string]*playbookFiles
}

type playbookFiles struct {
	first *vault.Entry // the first of the lines read
	n     int          // how many were read
	files []string
}

// of answers the playbook's event files in the lines all, which the
// caller must not change.
func (c *eventFiles) of(playbook string, all []vault.Entry) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[string]*playbookFiles{}
	}
	pf := c.by[playbook]
	if pf == nil || len(all) == 0 || pf.first != &all[0] || len(all) < pf.n {
		pf = &playbookFiles{files: []string{path.Join(playbookDir(playbook), "events.jsonl")}}
		if len(all) > 0 {
			pf.first = &all[0]
		}
		c.by[playbook] = pf
	}
	for i := pf.n; i < len(all); i++ {
		if e := &all[i]; e.Type == "playbook-run" && e.Playbook == playbook {
			pf.files = append(pf.files, path.Join(e.Path, runfolder.LogFile))
		}
	}
	pf.n = len(all)
	return pf.files[:len(pf.files):len(pf.files)]
}

// Owner is the uid an event file's derived ids begin with: the run's id of
// a run.jsonl (by its folder's name <name>-<run_id>-<YYYY-MM-DD>), the
// playbook's uid of its events.jsonl; "" for any other file.
func (s historySource) Owner(file string) (uid string, run bool) {
	dir, base := path.Split(file)
	dir = strings.TrimSuffix(dir, "/")
	switch base {
	case runfolder.LogFile:
		folder := path.Base(dir)
		if len(folder) < 36+11 {
			return "", false
		}
		id := folder[len(folder)-11-36 : len(folder)-11]
		if !address.ValidLowerUUID(id) {
			return "", false
		}
		return id, true
	case "events.jsonl":
		p := path.Base(dir)
		if dir != playbookDir(p) {
			return "", false
		}
		es, err := s.l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook" && e.Playbook == p })
		if err != nil || len(es) == 0 {
			return "", false
		}
		return es[0].UID, false
	}
	return "", false
}

// Forget forgets what was derived from a playbook's history when git took
// its files back: the requests filed from it, and its views, marked to be
// folded again from the start (forgetViews, outside the lock).
func (s historySource) Forget(playbook string) {
	l := s.l
	os.Remove(l.v.Abs(path.Join(requestsDir, playbook+".filed")))
	l.views.mu.Lock()
	if l.views.stale == nil {
		l.views.stale = map[string]bool{}
	}
	l.views.stale[playbook] = true
	l.views.mu.Unlock()
}

// historyOf is the playbook's history, rebuilt from the files when
// .quire/history holds none: a write, under the lock.
func (t *tx) historyOf(playbook string) (*history.History, error) {
	h, err := t.l.hist.Of(playbook)
	return h, handEdit(err)
}

// readHistory is the playbook's history for a read, which holds no lock:
// one .quire/history does not hold yet (a fresh clone, a reindex, git
// taking lines back or bringing lines in) is built by a write of derived
// state first. Built without the lock, beside a write of this process,
// the rebuild's check of the files against HEAD met the write's state
// made anew under it (quire serve --follow's keeper: "assignment to entry
// in nil map").
func (l *Ledger) readHistory(playbook string) (*history.History, error) {
	for try := 0; ; try++ {
		h, ok, err := l.hist.Read(playbook)
		if err != nil || ok {
			return h, handEdit(err)
		}
		if l.v.WritesRefused() != nil || try == 2 {
			// A vault that takes no write now (read-only here, git's
			// merge not finished, HEAD detached) takes none from any
			// process, so the read builds the history without the
			// lock, which it could not take; so does one whose history
			// was taken away twice as this read built it.
			return (&tx{l: l}).historyOf(playbook)
		}
		if err := l.write(writeArgs{derived: true}, func(t *tx) error {
			_, err := t.historyOf(playbook)
			return err
		}); err != nil {
			return nil, err
		}
	}
}

// followGitForRead has the histories follow a git command that moved the
// files under them (git reset --hard, git revert) before a read operation
// reads them, as a write's transaction does before it writes: four stats
// while git is as quire left it. A vault that takes no write now (git's
// merge in the middle, say) is read as it is. The caller holds no lock.
func (l *Ledger) followGitForRead() {
	if l == nil {
		return // an operation that needs no vault (explain_address)
	}
	if l.hist.GitMoved() {
		_ = l.write(writeArgs{derived: true}, func(t *tx) error { return t.followGit() })
	}
}

// The writes of the history, each under the lock of the tx.

// history is the playbook's history ready to number an event: true to
// what git left (FollowGit), and with a record whose line was never
// written whole dropped.
func (t *tx) history(playbook string) (*history.History, error) {
	if h := t.ready[playbook]; h != nil {
		return h, nil
	}
	l := t.l
	if err := l.hist.FollowGit(); err != nil {
		return nil, err
	}
	h, err := t.historyOf(playbook)
	if err != nil {
		return nil, err
	}
	if err := h.Repair(); err != nil {
		return nil, err
	}
	if t.ready == nil {
		t.ready = map[string]*history.History{}
	}
	t.ready[playbook] = h
	return h, nil
}

// forgetReady forgets the histories made ready, before a write of the
// histories that may follow git (and forget one), number lines or move
// HEAD: the next history makes them ready again.
func (t *tx) forgetReady() { t.ready = nil }

// appendEvent writes one event of the playbook's history into file: it
// repairs the history, then runs write, which must call reserve exactly once
// with the line's offset and length before writing the line.
func (t *tx) appendEvent(playbook string, write func(reserve func(file string, off int64, n int) error) error) (int64, error) {
	h, err := t.history(playbook)
	if err != nil {
		return 0, err
	}
	var seq int64
	var line history.Span
	err = write(func(file string, off int64, n int) error {
		s, err := h.Reserve(file, off, n)
		seq, line = s, history.Span{File: file, Off: off, N: n}
		return err
	})
	if err == nil {
		t.l.hist.Appended(line.File, line.Off, line.N)
	}
	return seq, err
}

// nextSeq is the seq the next event of the playbook will take.
func (t *tx) nextSeq(playbook string) (int64, error) {
	h, err := t.history(playbook)
	if err != nil {
		return 0, err
	}
	return h.Len() + 1, nil
}

// adoptLines numbers, in the playbook's history, the lines written by hand
// at the end of file that it lacks.
func (t *tx) adoptLines(playbook, file string) error {
	t.forgetReady()
	return handEdit(t.l.hist.Adopt(playbook, file))
}

// followGit has the histories follow what a git command changed.
func (t *tx) followGit() error {
	t.forgetReady()
	return t.l.hist.FollowGit()
}

// commit commits paths after a write whose record is already durable, and
// says whether it could; a commit that fails leaves its paths in
// .quire/uncommitted for the next commit (history.Store.Commit). The
// commit is added to the runs' commits (runcommits.go), and the runs it
// commits to the runs' facts (runindex.go).
func (t *tx) commit(paths []string, sig vault.Signature, m vault.Message) bool {
	if err := t.settle(); err != nil {
		// Its answer cannot be kept: nothing is committed, and the
		// write fails (the next writer puts back what it wrote).
		t.err = err
		return false
	}
	t.forgetReady()
	id, ok := t.indexRuns(paths, func() (string, bool) { return t.l.hist.Commit(paths, sig, m) })
	if ok {
		t.l.recordCommit(id)
	}
	return ok
}

// willCommit says, before the write changes them, that paths are quire's
// to commit (history.Store.WillCommit).
func (t *tx) willCommit(paths ...string) {
	t.forgetReady()
	t.l.hist.WillCommit(paths)
}

// finishPending commits what earlier writes left uncommitted, for quire
// janitor. It returns the paths it committed.
func (t *tx) finishPending(sig vault.Signature) ([]string, error) {
	t.forgetReady()
	id, paths, err := t.l.hist.FinishPending(sig)
	if id != "" {
		t.l.recordCommit(id)
	}
	return paths, err
}

// The reads.

// History reads up to limit events of a playbook's history after seq, in
// order. It is how the page keeper reads the history.
func (l *Ledger) History(playbook string, after int64, limit int) ([]Record, error) {
	h, err := l.readHistory(playbook)
	if err != nil {
		return nil, err
	}
	return h.Page(after, limit)
}

// historyChain is the playbook's history's chain through record seq, as a
// receipt names it (history/chain.go).
func (l *Ledger) historyChain(playbook string, seq int64) (string, error) {
	h, err := l.readHistory(playbook)
	if err != nil {
		return "", err
	}
	c, err := h.Chain(seq)
	if err != nil {
		return "", err
	}
	return history.ChainString(c), nil
}

// HistoryLen is how many events the playbook's history holds.
func (l *Ledger) HistoryLen(playbook string) (int64, error) {
	h, err := l.readHistory(playbook)
	if err != nil {
		return 0, err
	}
	return h.Len(), nil
}

// adoptLinesOf is adoptLines for a reader: it takes the lock only when the
// file ends with a line written by hand that the history may lack, and
// only once for a file of the same size.
func (l *Ledger) adoptLinesOf(playbook, file string) error {
	return l.hist.AdoptFor(file, func() error { return l.adoptLines(playbook, file) })
}

// adoptLines numbers, under the lock, the lines written by hand at the end
// of file that the playbook's history lacks.
func (l *Ledger) adoptLines(playbook, file string) error {
	if l.v.WritesRefused() != nil {
		// A vault that takes no write now (HEAD detached, read-only
		// here) is read as it is: the lines the history lacks wait for
		// the next write, or the next read once it takes writes.
		return history.ErrNotNow
	}
	return l.write(writeArgs{derived: true}, func(t *tx) error { return t.adoptLines(playbook, file) })
}

// adoptAllOf is adoptLinesOf for every event file of a playbook: a stat of
// each, and a read of its last bytes when it changed since and does not
// end where the history's last line in it does (history.AdoptAllFor).
func (l *Ledger) adoptAllOf(playbook string) error {
	files, err := historySource{l}.Files(playbook)
	if err != nil {
		return err
	}
	return l.hist.AdoptAllFor(playbook, files, l.indexMonitorToken, func(file string) error { return l.adoptLines(playbook, file) })
}

// indexMonitorToken is the file system monitor's token git keeps in its
// index (vault.IndexMonitorToken), read between writes.
func (l *Ledger) indexMonitorToken() (token string) {
	l.readLocked(func() error {
		token = l.v.IndexMonitorToken()
		return nil
	})
	return token
}

// nthEvent reads the nth event of an event file, as reads present it: a
// line written by hand with its seq and derived id. It answers nil when
// the file has no such event.
func (l *Ledger) nthEvent(playbook, file string, want int) (*Event, error) {
	if err := l.adoptLinesOf(playbook, file); err != nil {
		return nil, err
	}
	ln, err := l.hist.NthEvent(playbook, file, want)
	if err != nil || ln == nil {
		return nil, err
	}
	ev := eventOf(playbook, ln)
	return &ev, nil
}

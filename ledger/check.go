package ledger

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"time"

	"quire/ledger/checker"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// The checker (check, check --history, repair) is package ledger/checker;
// these are its reports as the operations answer them.
type (
	Problem       = checker.Problem
	CheckReport   = checker.CheckReport
	HistoryReport = checker.HistoryReport
	RepairReport  = checker.RepairReport
)

// CheckArgs are check_vault's arguments.
type CheckArgs struct {
	History bool `json:"history,omitempty" jsonschema:"also prove the append-only rules from the vault's git history (the commits not proved by an earlier check)"`
	Views   bool `json:"views,omitempty" jsonschema:"also verify every page's views against their receipt"`
	Full    bool `json:"full,omitempty" jsonschema:"read every run, not only those changed since the last check that passed"`
}

// checker is the vault's checker, run by this ledger.
func (l *Ledger) checker() *checker.Checker { return checker.New(l.v, checkHost{l}) }

// Check validates the whole vault against the capsule, reading the runs
// changed since the last check that passed (checker.Check).
func (l *Ledger) Check() (*CheckReport, error) {
	l.followGitForRead()
	return l.checker().Check()
}

// CheckWith is Check, and with History the walk over the git history, its
// problems after the files' own.
func (l *Ledger) CheckWith(a CheckArgs) (*CheckReport, error) {
	l.followGitForRead() // as every read does: a git command moved the files
	c := l.checker()
	check := c.Check
	if a.Full {
		check = c.CheckAll
	}
	rep, err := check()
	if err != nil {
		return nil, err
	}
	if a.History {
		hist, problems, err := c.CheckHistory()
		if err != nil {
			return nil, err
		}
		rep.History = hist
		rep.Problems = append(rep.Problems, problems...)
	}
	if a.Views {
		if err := l.checkViews(context.Background(), rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// checkViews verifies the receipt of every page with data, each views'
// differences a problem at the page's document. A page whose history lies
// beyond the replay's reach is reported so, and is no problem.
func (l *Ledger) checkViews(ctx context.Context, rep *CheckReport) error {
	es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return err
	}
	for _, e := range es {
		subjects, err := l.pagedSubjects(e.Playbook)
		if err != nil {
			return err
		}
		for _, s := range subjects {
			if s.Page == nil || s.Page.Data == nil || s.Retired {
				continue
			}
			args := &VerifyPageArgs{Playbook: e.Playbook, Subject: s.ID}
			v, err := l.verifyPage(ctx, args)
			if r, ok := refusal.As(err); ok {
				v = &Verification{Verdict: Differs, Message: r.Message}
			} else if err != nil {
				return err
			}
			rep.Views = append(rep.Views, checker.PageCheck{Playbook: e.Playbook, Subject: s.ID, Verdict: v.Verdict, Message: v.Message})
			if v.Verdict == Differs {
				rep.Problems = append(rep.Problems, Problem{Path: l.docPath(s), Message: "the views differ from their receipt: " + v.Message})
			}
		}
	}
	return nil
}

// docPath is where a subject's page is written, for a problem.
func (l *Ledger) docPath(s *subject) string {
	if s.Type == "playbook" {
		return path.Join(playbookDir(s.Playbook), "playbook.md")
	}
	if d, err := l.definition(s.Playbook, s.Doc.Type, s.Doc.Name); err == nil {
		return d.latest().Path
	}
	return playbookDir(s.Playbook)
}

// CheckHistory walks the commits of HEAD's history not yet proved and
// answers the problems of the whole history (checker.CheckHistory).
func (l *Ledger) CheckHistory() (*HistoryReport, []Problem, error) { return l.checker().CheckHistory() }

// Repair is quire janitor's repair pass (repair_vault; checker.Repair).
func (l *Ledger) Repair() (*RepairReport, error) { return l.checker().Repair() }

// checkVault is the operation check_vault (ops.go).
func (l *Ledger) checkVault(ctx context.Context, a *CheckArgs) (*CheckReport, error) {
	return l.CheckWith(*a)
}

// repairVault is the operation repair_vault (ops.go).
func (l *Ledger) repairVault(ctx context.Context, a *struct{}) (*RepairReport, error) {
	return l.Repair()
}

// recoverVault is the vault's OnRecover: what the next writer does after
// one that stopped in the middle (checker.Recover).
func (l *Ledger) recoverVault() ([]string, error) { return l.checker().Recover() }

// checkHost is the ledger as the checker's host (checker.Host): its lock,
// its write transaction, its run folders and its playbooks' histories.
type checkHost struct{ l *Ledger }

func (h checkHost) ReadLocked(fn func() error) error { return h.l.readLocked(fn) }
func (h checkHost) Write(fn func() error) error {
	return h.l.write(writeArgs{}, func(*tx) error { return fn() })
}
func (h checkHost) Folder(rel string) runfolder.Folder { return runfolder.Folder{V: h.l.v, Rel: rel} }
func (h checkHost) Histories() checker.Histories       { return checkHistories(h) }
func (h checkHost) Reindex() error                     { return h.l.Reindex() }
func (h checkHost) Now() time.Time                     { return h.l.Now() }
func (h checkHost) RunWarnings(e vault.Entry, st *runfolder.State) []Problem {
	return h.l.runStepWarnings(e, st)
}
func (h checkHost) Progress(task, unit string, done, total int) {
	h.l.progress(task, unit, done, total)
}

// checkHistories are the playbooks' histories as the checker asks after
// them (checker.Histories).
type checkHistories struct{ l *Ledger }

func (h checkHistories) PointPast(size func(string) (int64, bool)) ([]string, error) {
	return h.l.hist.StaleSized(size)
}
func (h checkHistories) Disagrees(playbook string) string {
	msg, _ := h.l.historyStale(playbook, -1, history.Mark{}, nil)
	return msg
}
func (h checkHistories) DisagreesFrom(playbook string, lines int64, since history.Mark, held func(string) bool) (string, history.Mark) {
	return h.l.historyStale(playbook, lines, since, held)
}
func (h checkHistories) Pending() []string { return h.l.hist.Pending() }

// historyStale says how a playbook's history disagrees with its files, or
// "" when it agrees (or is not built yet): checker.Histories' Disagrees,
// read from the history's own records. lines is the count of the files'
// event lines when the caller counted them (quire check reads them all,
// or knows them from its record), else < 0; since and held are what a
// passing check proved of the history, and the files unchanged since
// (History.VerifyFrom). It answers what this one proved.
func (l *Ledger) historyStale(playbook string, lines int64, since history.Mark, held func(string) bool) (string, history.Mark) {
	h, ok, err := l.hist.Peek(playbook)
	if !ok {
		return "", history.Mark{}
	}
	if err != nil {
		return err.Error(), history.Mark{}
	}
	if lines < 0 {
		if lines, err = l.eventLines(playbook); err != nil {
			return err.Error(), history.Mark{}
		}
	}
	mark, err := h.VerifyFrom(since, held)
	if err != nil {
		return err.Error(), history.Mark{}
	}
	if lines != h.Len() {
		return fmt.Sprintf("it holds %d events; the files hold %d", h.Len(), lines), history.Mark{}
	}
	return "", mark
}

// eventLines counts the whole lines of a playbook's files that are events:
// its events.jsonl and its runs' logs.
func (l *Ledger) eventLines(playbook string) (int64, error) {
	files, err := historySource{l}.Files(playbook)
	if err != nil {
		return 0, err
	}
	var lines int64
	for _, file := range files {
		data, err := os.ReadFile(l.v.Abs(file))
		if err != nil {
			continue
		}
		lines += checker.EventLines(data)
	}
	return lines, nil
}

// Reindex throws away .quire/ (the history's index, the pages' views and
// the runs' facts) and rebuilds the history's index and the runs' facts
// from the files at once; the views are folded again from the start of
// the history on their next read.
func (l *Ledger) Reindex() error {
	return l.write(writeArgs{}, func(t *tx) error {
		l.hist.Reset()
		l.views.mu.Lock()
		l.views.keepers = map[string]*keeperOf{}
		l.views.mu.Unlock()
		for _, dir := range []string{"history", "views", "runs"} {
			if err := os.RemoveAll(l.v.Abs(path.Join(vault.QuireDir, dir))); err != nil {
				return err
			}
		}
		es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return err
		}
		for i, e := range es {
			if _, err := t.historyOf(e.Playbook); err != nil {
				return err
			}
			l.progress("reindex: rebuilding the playbooks' histories", "playbooks", i+1, len(es))
		}
		// The runs written without quire's derived files get them, as
		// quire janitor gives them.
		done, err := l.checker().WriteDerived()
		for _, d := range done {
			l.v.Logf("reindex: %s", d)
		}
		if err != nil {
			return err
		}
		// The facts of every run, which list_runs reads (runindex.go):
		// made here, the first read after a reindex does not read every
		// run under the lock (10 s and a fresh server's memory limit at
		// 100,000 runs).
		return t.catchUpRuns()
	})
}

type JanitorArgs struct {
	Now       string `json:"now,omitempty" jsonschema:"RFC 3339 time to judge idleness at; now when left out"`
	Days      int    `json:"days,omitempty" jsonschema:"idle days before an archive (default 90)"`
	RequestID string `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

type JanitorReport struct {
	Archived []string `json:"archived"`
	// Committed lists the paths earlier writes recorded but could not
	// commit, which the janitor committed.
	Committed []string `json:"committed,omitempty"`
}

// archiveIdleRuns is the operation archive_idle_runs (ops.go).
func (l *Ledger) archiveIdleRuns(ctx context.Context, a *JanitorArgs) (*JanitorReport, error) {
	now, err := l.when(a.Now, "/now")
	if err != nil {
		return nil, err
	}
	days := a.Days
	if days == 0 {
		days = 90
	}
	if days < 1 {
		return nil, refusal.Invalid("/days", "days is 1 or more")
	}
	rep := &JanitorReport{Archived: []string{}}
	if err := l.write(writeArgs{}, func(t *tx) error {
		rep.Committed, err = t.finishPending(vault.Signature{Name: janitor, When: now})
		return err
	}); err != nil {
		return nil, err
	}
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" })
	if err != nil {
		return nil, err
	}
	for i, e := range runs {
		l.progress("janitor: reading the runs for idle ones", "runs", i+1, len(runs))
		f := runfolder.Folder{V: l.v, Rel: e.Path}
		st, err := f.LoadState()
		if err != nil || (st.State != runfolder.Complete && st.State != runfolder.Failed) {
			continue
		}
		last, err := event.ParseTime(st.LastEventAt)
		if err != nil || now.Sub(last) < time.Duration(days)*24*time.Hour {
			continue
		}
		reason := fmt.Sprintf("idle for %d days since %s (vault-janitor)", int(now.Sub(last).Hours()/24), st.LastEventAt)
		ln := &event.Line{Event: event.Archived, Timestamp: event.FormatTime(now), Actor: janitor, Reason: reason, Detail: "Archived: " + reason}
		if _, _, err := l.appendRun(e, f, ln); err != nil {
			return nil, err
		}
		rep.Archived = append(rep.Archived, e.Playbook+"/runs/"+e.UID)
	}
	return rep, nil
}

// parseHash reads a commit id of 40 hex digits; zero when s is not one.
func parseHash(s string) vault.Hash {
	var h vault.Hash
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(h) {
		copy(h[:], b)
	}
	return h
}

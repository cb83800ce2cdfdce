package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"quire/internal/front"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// Problem is one thing quire check found wrong, at its path (and line).
type Problem struct {
	Commit  string `json:"commit,omitempty"` // the commit of a problem quire check --history found
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Commit != "" {
		return "commit " + short(p.Commit) + ": " + Problem{Path: p.Path, Line: p.Line, Message: p.Message}.String()
	}
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)
	}
	return p.Path + ": " + p.Message
}

type CheckReport struct {
	Runs     int       `json:"runs"`
	Events   int       `json:"events"`
	Problems []Problem `json:"problems"`
	// History is what the walk over the git history did (check --history).
	History *HistoryReport `json:"history,omitempty"`
}

// Check validates the whole vault against the capsule: every run folder's
// six entries, its front matter, member_of and playbook resolving in the
// index, every event line parsing, seq without gaps or repeats in each
// playbook's history, and run.state.json agreeing with the events.
func (l *Ledger) Check() (*CheckReport, error) {
	rep := &CheckReport{Problems: []Problem{}}
	add := func(p, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	entries, err := l.v.Entries()
	if r, ok := refusal.As(err); ok {
		add(vault.IndexFile, "%s", r.Message) // a link: reported, and the rest checked
	} else if err != nil {
		return nil, err
	}
	inIndex := map[string]vault.Entry{}
	for _, e := range entries {
		if _, err := l.v.Join(e.Path); err != nil {
			add(vault.IndexFile, "%s %s: its path %v", e.Type, e.UID, err)
			continue
		}
		if !l.v.Exists(e.Path) {
			add(vault.IndexFile, "%s %s: %s does not exist", e.Type, e.UID, e.Path)
		}
		if e.Type == "playbook-run" {
			inIndex[e.Path] = e
		}
	}
	dirs, err := os.ReadDir(l.v.Abs(vault.RunsDir))
	if err != nil {
		return nil, err
	}
	seqs := map[string]map[int64]string{} // playbook → seq → where
	unnumbered := map[string]int{}
	for _, d := range dirs {
		if !d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			continue
		}
		rel := path.Join(vault.RunsDir, d.Name())
		rep.Runs++
		e, ok := inIndex[rel]
		if !ok {
			add(rel, "the run folder is not in %s", vault.IndexFile)
		}
		l.checkRun(rel, e, ok, add, func(p string, line int, msg string) {
			rep.Problems = append(rep.Problems, Problem{Path: p, Line: line, Message: msg})
		}, func(ln *event.Line, where string) {
			rep.Events++
			if !ok {
				return
			}
			if ln.Seq == 0 {
				unnumbered[e.Playbook]++
				return
			}
			if seqs[e.Playbook] == nil {
				seqs[e.Playbook] = map[int64]string{}
			}
			if prev, dup := seqs[e.Playbook][ln.Seq]; dup {
				add(where, "seq %d of playbook %s repeats the seq of %s", ln.Seq, e.Playbook, prev)
			}
			seqs[e.Playbook][ln.Seq] = where
		})
	}
	for _, e := range entries {
		if e.Type != "playbook" {
			continue
		}
		file := path.Join(playbookDir(e.Playbook), "events.jsonl")
		data, err := os.ReadFile(l.v.Abs(file))
		if err != nil {
			continue
		}
		for i, raw := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if raw == "" {
				continue
			}
			ln, err := event.Parse([]byte(raw))
			if err != nil {
				rep.Problems = append(rep.Problems, Problem{Path: file, Line: i + 1, Message: err.Error()})
				continue
			}
			rep.Events++
			if ln.Seq == 0 {
				unnumbered[e.Playbook]++
				continue
			}
			if seqs[e.Playbook] == nil {
				seqs[e.Playbook] = map[int64]string{}
			}
			where := fmt.Sprintf("%s:%d", file, i+1)
			if prev, dup := seqs[e.Playbook][ln.Seq]; dup {
				add(where, "seq %d of playbook %s repeats the seq of %s", ln.Seq, e.Playbook, prev)
			}
			seqs[e.Playbook][ln.Seq] = where
		}
	}
	checkDerivedState(l, add)
	checkQuarantine(l, add)
	checkLinks(l, add)
	playbooks := make([]string, 0, len(seqs))
	for p := range seqs {
		playbooks = append(playbooks, p)
	}
	sort.Strings(playbooks)
	for _, p := range playbooks {
		n := int64(len(seqs[p]) + unnumbered[p])
		var missing []string
		for s := range seqs[p] {
			if s > n {
				missing = append(missing, strconv.FormatInt(s, 10))
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			add(playbookDir(p), "the history's seq has gaps: %d events, but seq %s beyond them", n, strings.Join(missing, ", "))
		}
	}
	vp, err := l.vaultProblems()
	if err != nil {
		return nil, err
	}
	rep.Problems = append(rep.Problems, vp...)
	return rep, nil
}

func (l *Ledger) checkRun(rel string, e vault.Entry, indexed bool, add func(string, string, ...any), addLine func(string, int, string), seen func(*event.Line, string)) {
	for _, name := range runfolder.Entries {
		fi, err := os.Stat(l.v.Abs(path.Join(rel, name)))
		if err != nil {
			add(rel, "rule 6: the run folder lacks %s", name)
			continue
		}
		if (name == runfolder.ArtifactsDir) != fi.IsDir() {
			add(path.Join(rel, name), "is a %s; the capsule wants a %s", kindOf(fi.IsDir()), kindOf(name == runfolder.ArtifactsDir))
		}
	}
	f := runfolder.Folder{V: l.v, Rel: rel}
	fm, err := f.ReadFront()
	defPath := path.Join(rel, runfolder.DefinitionFile)
	var fe *front.Error
	if errors.As(err, &fe) && fe.Line > 0 {
		addLine(defPath, fe.Line, err.Error())
	} else if err != nil {
		add(defPath, "%v", err)
	} else {
		l.checkFront(defPath, fm, add)
	}
	// Replay the log from the start.
	var replay runfolder.State
	logPath := path.Join(rel, runfolder.LogFile)
	lineNo, archivedAt := 0, 0
	err = f.ReadLines(func(off int64, raw []byte) error {
		lineNo++
		ln, err := event.Parse(raw)
		if err != nil {
			addLine(logPath, lineNo, err.Error())
			replay.LogBytes += int64(len(raw) + 1)
			return nil
		}
		for _, msg := range lineRules(raw, &ln, lineNo, &archivedAt) {
			addLine(logPath, lineNo, msg)
		}
		if lineNo == 1 && ln.Event != event.RunCreated {
			addLine(logPath, 1, "the first event is "+ln.Event+"; a run's log begins with run_created")
		}
		replay.Apply(&ln, len(raw)+1)
		seen(&ln, fmt.Sprintf("%s:%d", logPath, lineNo))
		return nil
	})
	if err != nil {
		add(logPath, "%v", err)
		return
	}
	if fi, err := os.Stat(l.v.Abs(logPath)); err == nil && fi.Size() > replay.LogBytes {
		addLine(logPath, lineNo+1, "a torn last line (a write cut short); the next write repairs it")
	}
	checkStateFile(f, add)
	if indexed && fm.UID != "" && fm.UID != e.UID {
		add(defPath, "uid %s differs from the index's %s", fm.UID, e.UID)
	}
}

// checkLinks lists the symbolic links in the vault: quire writes through
// none of them (a write that would is refused), and git may have carried
// them in from elsewhere.
func checkLinks(l *Ledger, add func(string, string, ...any)) {
	links, err := l.v.Links()
	if err != nil {
		add(".", "%v", err)
	}
	for _, p := range links {
		to, _ := os.Readlink(l.v.Abs(p))
		add(p, "is a symbolic link (to %s); quire writes nothing through links, so writes to what it stands for are refused: replace it with the file or folder itself", to)
	}
}

// checkQuarantine lists the torn tails cut from the vault's files, which
// are kept for a person to read (and delete).
func checkQuarantine(l *Ledger, add func(string, string, ...any)) {
	root := l.v.Abs(vault.QuarantineDir)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".torn") {
			return nil // .unacknowledged: a line no answer said was written
		}
		rel, _ := filepath.Rel(l.v.Root(), p)
		from, _ := filepath.Rel(root, p)
		from = strings.TrimSuffix(from, ".torn")
		if i := strings.LastIndexByte(from, '.'); i > 0 {
			from = from[:i] // the time's fraction
		}
		if i := strings.LastIndexByte(from, '.'); i > 0 {
			from = from[:i] // the time
		}
		add(filepath.ToSlash(rel), "a torn line cut from %s (a write cut short), kept for a person to read; delete it once read", filepath.ToSlash(from))
		return nil
	})
}

// checkDerivedState reports a history under .quire/ that points past the
// files it indexes (git took lines back); the next write rebuilds it.
func checkDerivedState(l *Ledger, add func(string, string, ...any)) {
	stale, err := l.staleHistories()
	if err != nil {
		add(vault.QuireDir+"/history", "%v", err)
	}
	for _, p := range stale {
		add(vault.QuireDir+"/history/"+p+".seq", "the history of %s points past the files it indexes (a git stash, reset or checkout took lines back); the next write, or quire reindex, rebuilds it", p)
	}
}

// checkStateFile reports a run.state.json that disagrees with definition.md
// and run.jsonl (a hand edit): quire derives the state again before it
// writes, but the file itself says something false until the next boundary.
func checkStateFile(f runfolder.Folder, add func(string, string, ...any)) {
	p := path.Join(f.Rel, runfolder.StateFile)
	msg, err := f.StateDisagrees()
	if err != nil {
		add(p, "%v", err)
	} else if msg != "" {
		add(p, "%s (a hand edit? quire derives the state from run.jsonl and definition.md, and rewrites this file at the run's next boundary)", msg)
	}
}

func kindOf(dir bool) string {
	if dir {
		return "folder"
	}
	return "file"
}

func (l *Ledger) checkFront(p string, f runfolder.Front, add func(string, string, ...any)) {
	missing := []string{}
	if f.Playbook == "" {
		missing = append(missing, "playbook")
	}
	if f.PlaybookVersion == "" {
		missing = append(missing, "playbook_version")
	}
	if len(f.MemberOf) == 0 {
		missing = append(missing, "member_of")
	}
	if f.Binding == "" {
		missing = append(missing, "binding")
	}
	if f.Started == "" {
		missing = append(missing, "started")
	}
	if f.Executor == "" {
		missing = append(missing, "executor")
	}
	if f.AuthorizedBy == "" {
		missing = append(missing, "authorized_by")
	}
	if len(missing) > 0 {
		add(p, "front matter lacks the required field(s) %s", strings.Join(missing, ", "))
	}
	if v, err := strconv.Atoi(f.PlaybookVersion); f.PlaybookVersion != "" && (err != nil || v < 1) {
		add(p, "playbook_version %q is not a version; rule 2 pins a concrete version", f.PlaybookVersion)
	}
	for i, uid := range f.MemberOf {
		e, ok, _ := l.v.Lookup(uid)
		if !ok || e.Type != "project" {
			add(p, "rule 1: member_of[%d] %q is not a project in the index", i, uid)
		}
	}
	if f.Playbook != "" {
		if e, ok, _ := l.v.Lookup(f.Playbook); !ok || e.Type != "definition" {
			add(p, "playbook %q is not a definition in the index", f.Playbook)
		}
	}
	if f.Started != "" {
		if _, err := event.ParseTime(f.Started); err != nil {
			if _, err := time.Parse("2006-01-02", f.Started); err != nil {
				add(p, "started %q is not an ISO 8601 date", f.Started)
			}
		}
	}
	if f.Binding != "" && !l.v.Exists(f.Binding) {
		add(p, "binding %s does not exist", f.Binding)
	}
}

// Reindex throws away .quire/ (the history's index and the pages' views)
// and rebuilds the history's index from the files at once; the views are
// folded again from the start of the history on their next read.
func (l *Ledger) Reindex() error {
	return l.write(writeArgs{}, func(*tx) error {
		l.hist.Reset()
		l.views.mu.Lock()
		l.views.keepers = map[string]*keeperOf{}
		l.views.mu.Unlock()
		for _, dir := range []string{"history", "views"} {
			if err := os.RemoveAll(l.v.Abs(path.Join(vault.QuireDir, dir))); err != nil {
				return err
			}
		}
		es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return err
		}
		for i, e := range es {
			if _, err := l.historyOf(e.Playbook); err != nil {
				return err
			}
			l.progress("reindex: rebuilding the playbooks' histories", "playbooks", i+1, len(es))
		}
		return nil
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

// checkVault is the operation check_vault (ops.go).
func (l *Ledger) checkVault(ctx context.Context, a *CheckArgs) (*CheckReport, error) {
	return l.CheckWith(*a)
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

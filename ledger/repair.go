package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"quire/internal/crashpoint"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// What a writer that stopped in the middle leaves, and what quire does with
// it. The next writer (when the writer's journal says it stopped; see
// vault/journal.go) and quire janitor (always) do the same:
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
//     .quire/quarantine/ (vault.RestoreCommitted). Restored.
//
// What needs a person is reported and left: another program's git lock, a
// HEAD whose objects are missing, a symbolic link, a file deleted or a run's
// context.md edited by hand.

// vaultScan is what inspectVault found and did.
type vaultScan struct {
	problems []Problem
	done     []string
}

// inspectVault looks at the work tree against .git/index and the index of
// things. With fix, it repairs what needs no person (and says what it
// did); without, it reports. The caller holds the lock: Locked with fix,
// LockedRead without.
func (l *Ledger) inspectVault(fix bool) (*vaultScan, error) {
	s := &vaultScan{}
	add := func(p, format string, args ...any) {
		s.problems = append(s.problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	changes, err := l.v.Status()
	if err != nil {
		return nil, err
	}
	entries, err := l.v.Entries()
	if _, refused := refusal.As(err); err != nil && refused {
		// The index of things cannot be read (a link in its place, which
		// quire check reports): nothing here can be judged against it.
		return s, nil
	} else if err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, e := range entries {
		registered[e.Path] = true
	}
	var commit []string // paths a commit should have taken
	runs := map[string][]vault.Change{}
	var runOrder []string
	for _, c := range changes {
		switch c.Kind {
		case "symlink":
			add(c.Path, "a symbolic link: quire never writes through one, and git can carry it out of the vault; replace it with the file it points at, or remove it")
			continue
		case "staging":
			if !fix {
				add(c.Path, "a staging folder a run_definition left when it stopped before the folder was complete; the run was never acknowledged, and quire janitor removes it")
				continue
			}
			crashHit()
			if err := os.RemoveAll(l.v.Abs(c.Path)); err != nil {
				return nil, err
			}
			s.done = append(s.done, "removed the staging folder "+c.Path+" of a run_definition that stopped before its folder was complete")
			continue
		case "temp":
			if !fix {
				add(c.Path, "a temporary file of a write that stopped before its rename; quire janitor removes it")
				continue
			}
			crashHit()
			if err := os.Remove(l.v.Abs(c.Path)); err != nil {
				return nil, err
			}
			s.done = append(s.done, "removed the temporary file "+c.Path+" of a write that stopped before its rename")
			continue
		case "deleted":
			add(c.Path, "deleted from the work tree but not from git; git checkout -- %s restores it, git rm records the deletion", c.Path)
			continue
		}
		if rest, ok := strings.CutPrefix(c.Path, vault.RunsDir+"/"); ok && strings.Contains(rest, "/") {
			dir := path.Join(vault.RunsDir, rest[:strings.IndexByte(rest, '/')])
			if runs[dir] == nil {
				runOrder = append(runOrder, dir)
			}
			runs[dir] = append(runs[dir], c)
			continue
		}
		if !fix {
			add(c.Path, "%s and not committed: a write whose commit did not happen; the next write to it or quire janitor commits it", c.Kind)
		}
		commit = append(commit, c.Path)
	}
	for _, dir := range runOrder {
		files := runs[dir]
		if !registered[dir] {
			if _, err := l.registerFolder(dir, fix); err != nil {
				add(dir, "not in %s, and cannot be added to it: %v", vault.IndexFile, err)
				continue
			}
			// quire check's run pass reports the folder outside the index.
			if fix {
				s.done = append(s.done, fmt.Sprintf("added the run folder %s to %s (a run_definition stopped between the folder and its index line)", dir, vault.IndexFile))
				commit = append(commit, dir, vault.IndexFile)
			}
			continue
		}
		uncommitted := l.boundaryPending(dir)
		for _, c := range files {
			name := strings.TrimPrefix(c.Path, dir+"/")
			switch {
			case name == runfolder.StateFile:
				// A state file quire wrote at a boundary that was not
				// committed; one that disagrees with its log is a hand
				// edit instead, which quire check reports on its own and
				// the run's next boundary writes over.
				if msg, err := (runfolder.Folder{V: l.v, Rel: dir}).StateDisagrees(); err == nil && msg == "" {
					uncommitted = true
				}
			case c.Kind == "untracked" && name == runfolder.DefinitionFile:
				uncommitted = true // the run's creation, not committed
			case (name == runfolder.DefinitionFile || name == runfolder.ContextFile) && c.Kind == "modified":
				add(c.Path, "edited by hand since its commit; quire writes it once. git checkout -- %s restores it", c.Path)
			}
		}
		if uncommitted {
			if !fix {
				add(dir, "changed at a boundary that was not committed; the run's next boundary or quire janitor commits it")
				continue
			}
			// The state as the log says, in case the writer stopped before
			// it rewrote run.state.json.
			f := runfolder.Folder{V: l.v, Rel: dir}
			st, err := f.LoadState()
			if err != nil {
				return nil, err
			}
			if err := f.WriteState(st); err != nil {
				return nil, err
			}
			commit = append(commit, dir)
		}
	}
	if fix && len(commit) > 0 {
		commit = dedupe(commit)
		msg := "vault-janitor: commit what a stopped writer left uncommitted\n\n" + strings.Join(commit, "\n")
		id, err := l.v.Commit(commit, vault.Signature{Name: janitor, When: l.Now()}, msg)
		if r, ok := refusal.As(err); ok && r.Code == refusal.Unavailable {
			// Another program holds git's lock: what is left stays for a
			// later writer (the journal is kept), and the write that found
			// it goes on, its own commit answering committed: false.
			s.done = append(s.done, fmt.Sprintf("left %s uncommitted for now: %s", strings.Join(commit, ", "), r.Message))
			return s, nil
		}
		if err != nil {
			return nil, err
		}
		if id != "" {
			s.done = append(s.done, fmt.Sprintf("committed %s, which a stopped writer left uncommitted (commit %.12s)", strings.Join(commit, ", "), id))
		}
	}
	return s, nil
}

// boundaryPending reports whether a run's log holds a boundary event after
// the bytes its run.state.json reflects: a boundary whose state write and
// commit did not happen.
func (l *Ledger) boundaryPending(dir string) bool {
	data, err := os.ReadFile(l.v.Abs(path.Join(dir, runfolder.StateFile)))
	if err != nil {
		return false
	}
	var st struct {
		LogBytes int64 `json:"log_bytes"`
	}
	if json.Unmarshal(data, &st) != nil {
		return false
	}
	log, err := os.ReadFile(l.v.Abs(path.Join(dir, runfolder.LogFile)))
	if err != nil || int64(len(log)) <= st.LogBytes {
		return false
	}
	for _, raw := range strings.Split(string(log[st.LogBytes:]), "\n") {
		if ln, err := event.Parse([]byte(raw)); err == nil && event.IsBoundary(ln.Event) {
			return true
		}
	}
	return false
}

func dedupe(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// registerFolder writes the index line of a whole run folder that has
// none, from its definition.md (with write; without, it only checks that it
// could). The caller holds the lock.
func (l *Ledger) registerFolder(dir string, write bool) (vault.Entry, error) {
	for _, name := range runfolder.Entries {
		if !l.v.Exists(path.Join(dir, name)) {
			return vault.Entry{}, fmt.Errorf("it lacks %s", name)
		}
	}
	f := runfolder.Folder{V: l.v, Rel: dir}
	fr, err := f.ReadFront()
	if err != nil {
		return vault.Entry{}, err
	}
	if fr.UID == "" || fr.QuirePlaybook == "" || fr.DefinitionName == "" || fr.DefinitionType == "" {
		return vault.Entry{}, fmt.Errorf("its definition.md lacks uid, quire_playbook, definition_type or definition_name")
	}
	if want := path.Base(dir); !strings.Contains(want, fr.UID) {
		return vault.Entry{}, fmt.Errorf("its name does not hold its uid %s", fr.UID)
	}
	if _, dup, err := l.v.Lookup(fr.UID); err != nil || dup {
		if err == nil {
			err = fmt.Errorf("its uid %s is already in the index", fr.UID)
		}
		return vault.Entry{}, err
	}
	e := vault.Entry{UID: fr.UID, Type: "playbook-run", Path: dir, Playbook: fr.QuirePlaybook, Name: fr.DefinitionName,
		DefType: fr.DefinitionType, Created: fr.Created}
	if write {
		return e, l.v.Register(e)
	}
	return e, nil
}

// recoverVault is the vault's OnRecover: what the next writer does after
// one that stopped in the middle.
func (l *Ledger) recoverVault() ([]string, error) {
	s, err := l.inspectVault(true)
	if err != nil {
		return nil, err
	}
	return s.done, nil
}

// vaultProblems is quire check's look at the vault's git state and work
// tree: git's locks, HEAD, .git/index, staging folders, temporary files,
// uncommitted changes, symbolic links and the history's derived state.
func (l *Ledger) vaultProblems() ([]Problem, error) {
	var out []Problem
	err := l.readLocked(func() error {
		for _, f := range l.v.InspectGit() {
			out = append(out, Problem{Path: f.Path, Message: f.Message})
		}
		edits, err := l.v.HandEdits()
		if err != nil {
			return err
		}
		for _, he := range edits {
			out = append(out, Problem{Path: he.Path, Line: he.Line, Message: handEditProblem(he)})
		}
		s, err := l.inspectVault(false)
		if err != nil {
			return err
		}
		out = append(out, s.problems...)
		stale, err := l.historyProblems()
		out = append(out, stale...)
		if _, refused := refusal.As(err); refused {
			return nil // the index of things is a link: quire check reports it
		}
		return err
	})
	return out, err
}

// historyProblems reports a playbook's history (.quire/history, derived)
// that no longer matches its files: a record that points at no whole line,
// or a count of records other than the count of event lines. A history
// that points past its files is reported by checkDerivedState already.
func (l *Ledger) historyProblems() ([]Problem, error) {
	pbs, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return nil, err
	}
	past, err := l.staleHistories()
	if err != nil {
		return nil, err
	}
	reported := map[string]bool{}
	for _, p := range past {
		reported[p] = true
	}
	var out []Problem
	for _, e := range pbs {
		if reported[e.Playbook] {
			continue
		}
		if msg := l.historyStale(e.Playbook); msg != "" {
			out = append(out, Problem{Path: path.Join(vault.QuireDir, "history", e.Playbook+".seq"),
				Message: msg + "; quire janitor (or quire reindex) rebuilds it from the files"})
		}
	}
	return out, nil
}

// historyStale says how a playbook's history disagrees with its files, or
// "" when it agrees (or is not built yet).
func (l *Ledger) historyStale(playbook string) string {
	h, ok, err := l.hist.Peek(playbook)
	if !ok {
		return ""
	}
	if err != nil {
		return err.Error()
	}
	lines := 0
	files := []string{path.Join(playbookDir(playbook), "events.jsonl")}
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" && e.Playbook == playbook })
	if err != nil {
		return err.Error()
	}
	for _, r := range runs {
		files = append(files, path.Join(r.Path, runfolder.LogFile))
	}
	for _, file := range files {
		data, err := os.ReadFile(l.v.Abs(file))
		if err != nil {
			continue
		}
		for _, raw := range strings.SplitAfter(string(data), "\n") {
			if strings.HasSuffix(raw, "\n") {
				if _, err := event.Parse([]byte(raw[:len(raw)-1])); err == nil {
					lines++
				}
			}
		}
	}
	if err := h.Verify(); err != nil {
		return err.Error()
	}
	if int64(lines) != h.Len() {
		return fmt.Sprintf("it holds %d events; the files hold %d", h.Len(), lines)
	}
	return ""
}

type RepairReport struct {
	// Repaired says what quire janitor did, one sentence each.
	Repaired []string `json:"repaired"`
	// Left lists what needs a person, with what to do.
	Left []Problem `json:"left"`
}

// repairVault is the operation repair_vault (ops.go).
func (l *Ledger) repairVault(ctx context.Context, a *struct{}) (*RepairReport, error) {
	return l.Repair()
}

// Repair is quire janitor's repair pass (repair_vault).
func (l *Ledger) Repair() (*RepairReport, error) {
	rep := &RepairReport{Repaired: []string{}, Left: []Problem{}}
	var stale []string
	err := l.write(writeArgs{}, func(*tx) error {
		rep.Repaired = append(rep.Repaired, l.v.Recovered()...)
		fixed, err := l.v.RepairGit()
		if err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, fixed...)
		// Hand edits of what was committed, before the derived state is
		// checked against the files they leave.
		edits, err := l.v.HandEdits()
		if err != nil {
			return err
		}
		for _, he := range edits {
			kept, err := l.v.RestoreCommitted(he)
			if err != nil {
				return err
			}
			rep.Repaired = append(rep.Repaired, fmt.Sprintf("%s: restored the committed part from HEAD (line %d had been changed by hand); the edited copy is %s", he.Path, he.Line, kept))
		}
		s, err := l.inspectVault(true)
		if err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, s.done...)
		rep.Left = append(rep.Left, s.problems...)
		for _, f := range l.v.InspectGit() {
			rep.Left = append(rep.Left, Problem{Path: f.Path, Message: f.Message})
		}
		pbs, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return err
		}
		for _, e := range pbs {
			if l.historyStale(e.Playbook) != "" {
				stale = append(stale, e.Playbook)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		if err := l.Reindex(); err != nil {
			return nil, err
		}
		rep.Repaired = append(rep.Repaired, "rebuilt the history of "+strings.Join(stale, ", ")+" from the files")
	}
	return rep, nil
}

// crashHit marks a file-changing step for the crash test's hook.
func crashHit() { crashpoint.Hit() }

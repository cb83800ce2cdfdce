package checker

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"quire/internal/crashpoint"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// vaultScan is what inspectVault found and did.
type vaultScan struct {
	problems []Problem
	done     []string
}

// inspectVault looks at the work tree against .git/index and the index of
// things. With fix, it repairs what needs no person (and says what it
// did); without, it reports. The caller holds the lock: the host's write
// transaction with fix, ReadLocked without. u leaves out the run folders
// the last passing check saw as they are (nil: none).
func (c *Checker) inspectVault(fix bool, u *vault.Unchanged, stamps vault.FolderStamps) (*vaultScan, error) {
	s := &vaultScan{}
	add := func(p, format string, args ...any) {
		s.problems = append(s.problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	changes, err := c.v.StatusStamped(u, stamps)
	if err != nil {
		return nil, err
	}
	entries, err := c.v.Entries()
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
	pending := map[string]bool{}
	for _, p := range c.h.Histories().Pending() {
		pending[p] = true
	}
	var commit []string // paths a commit should have taken
	runs := map[string][]vault.Change{}
	var runOrder []string
	for _, ch := range changes {
		switch ch.Kind {
		case "symlink":
			add(ch.Path, "a symbolic link: quire never writes through one, and git can carry it out of the vault; replace it with the file it points at, or remove it")
			continue
		case "staging":
			if !fix {
				add(ch.Path, "a staging folder a run_definition left when it stopped before the folder was complete; the run was never acknowledged, and quire janitor removes it")
				continue
			}
			crashpoint.Hit()
			if err := os.RemoveAll(c.v.Abs(ch.Path)); err != nil {
				return nil, err
			}
			s.done = append(s.done, "removed the staging folder "+ch.Path+" of a run_definition that stopped before its folder was complete")
			continue
		case "temp":
			if !fix {
				add(ch.Path, "a temporary file of a write that stopped before its rename; quire janitor removes it")
				continue
			}
			crashpoint.Hit()
			if err := os.Remove(c.v.Abs(ch.Path)); err != nil {
				return nil, err
			}
			s.done = append(s.done, "removed the temporary file "+ch.Path+" of a write that stopped before its rename")
			continue
		case "deleted":
			add(ch.Path, "deleted from the work tree but not from git; git checkout -- %s restores it, git rm records the deletion", ch.Path)
			continue
		}
		if rest, ok := strings.CutPrefix(ch.Path, vault.RunsDir+"/"); ok && strings.Contains(rest, "/") {
			dir := path.Join(vault.RunsDir, rest[:strings.IndexByte(rest, '/')])
			if runs[dir] == nil {
				runOrder = append(runOrder, dir)
			}
			runs[dir] = append(runs[dir], ch)
			continue
		}
		if !quiresOwn(ch.Path, pending) {
			// A person's edit: quire commits only what it wrote, under
			// its own name.
			add(ch.Path, "%s and not committed, and quire did not write it (a person's edit): commit it with git under your name (git commit %s), or take it back (git checkout -- %s); quire janitor leaves it to you",
				ch.Kind, ch.Path, ch.Path)
			continue
		}
		if !fix {
			add(ch.Path, "%s and not committed: a write whose commit did not happen; the next write to it or quire janitor commits it", ch.Kind)
		}
		commit = append(commit, ch.Path)
	}
	for _, dir := range runOrder {
		files := runs[dir]
		if !registered[dir] {
			if _, err := c.registerFolder(dir, fix); err != nil {
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
		uncommitted := c.boundaryPending(dir)
		for _, ch := range files {
			name := strings.TrimPrefix(ch.Path, dir+"/")
			switch {
			case name == runfolder.StateFile:
				// A state file quire wrote at a boundary that was not
				// committed; one that disagrees with its log is a hand
				// edit instead, which quire check reports on its own and
				// the run's next boundary writes over.
				msg, err := c.h.Folder(dir).StateDisagrees()
				switch {
				case err == nil && msg == "":
					uncommitted = true
				case err == nil && fix:
					// run.state.json is derived: one that disagrees with the
					// files it is derived from (a hand edit: a "state" made
					// "archived", say, which every write then trusted) is
					// made again from them.
					f := c.h.Folder(dir)
					st, err := f.Derive("")
					if err != nil {
						add(ch.Path, "disagrees with run.jsonl and cannot be made again from it: %v", err)
						continue
					}
					if err := f.WriteState(st); err != nil {
						return nil, err
					}
					s.done = append(s.done, fmt.Sprintf("made %s again from run.jsonl and definition.md: it %s (a hand edit; quire derives it)", ch.Path, msg))
				}
			case ch.Kind == "untracked" && name == runfolder.DefinitionFile:
				uncommitted = true // the run's creation, not committed
			case (name == runfolder.DefinitionFile || name == runfolder.ContextFile) && ch.Kind == "modified":
				add(ch.Path, "edited by hand since its commit; quire writes it once. git checkout -- %s restores it", ch.Path)
			}
		}
		if uncommitted {
			if !fix {
				add(dir, "changed at a boundary that was not committed; the run's next boundary or quire janitor commits it")
				continue
			}
			// The state as the log says, in case the writer stopped before
			// it rewrote run.state.json.
			f := c.h.Folder(dir)
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
		sig := vault.Signature{Name: runfolder.Janitor, When: c.h.Now()}
		id, err := c.v.Commit(commit, sig, msg)
		if r, ok := refusal.As(err); ok && r.Code == refusal.Unavailable {
			// Another program holds git's lock: what is left stays for a
			// later writer (the journal is kept), and the write that found
			// it goes on, its own commit answering committed: false.
			s.done = append(s.done, fmt.Sprintf("left %s uncommitted for now: %s", strings.Join(commit, ", "), r.Message))
			return s, nil
		}
		if err != nil && len(commit) > 1 {
			// One folder quire cannot commit (a symbolic link planted in
			// it, say) must not hold back the others, nor the write that
			// found them: each is committed alone, and what cannot be is
			// left, said, and reported by quire check.
			for _, dir := range commit {
				id, err := c.v.Commit([]string{dir}, sig, "vault-janitor: commit what a stopped writer left uncommitted\n\n"+dir)
				switch {
				case err != nil:
					s.done = append(s.done, fmt.Sprintf("left %s uncommitted: %v", dir, err))
				case id != "":
					s.done = append(s.done, fmt.Sprintf("committed %s, which a stopped writer left uncommitted (commit %.12s)", dir, id))
				}
			}
			return s, nil
		}
		if err != nil {
			s.done = append(s.done, fmt.Sprintf("left %s uncommitted: %v", strings.Join(commit, ", "), err))
			return s, nil
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
func (c *Checker) boundaryPending(dir string) bool {
	data, err := os.ReadFile(c.v.Abs(path.Join(dir, runfolder.StateFile)))
	if err != nil {
		return false
	}
	var st struct {
		LogBytes int64 `json:"log_bytes"`
	}
	if json.Unmarshal(data, &st) != nil {
		return false
	}
	log, err := os.ReadFile(c.v.Abs(path.Join(dir, runfolder.LogFile)))
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
func (c *Checker) registerFolder(dir string, write bool) (vault.Entry, error) {
	for _, name := range runfolder.Entries {
		if !c.v.Exists(path.Join(dir, name)) {
			return vault.Entry{}, fmt.Errorf("it lacks %s", name)
		}
	}
	f := c.h.Folder(dir)
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
	if _, dup, err := c.v.Lookup(fr.UID); err != nil || dup {
		if err == nil {
			err = fmt.Errorf("its uid %s is already in the index", fr.UID)
		}
		return vault.Entry{}, err
	}
	e := vault.Entry{UID: fr.UID, Type: "playbook-run", Path: dir, Playbook: fr.QuirePlaybook, Name: fr.DefinitionName,
		DefType: fr.DefinitionType, Created: fr.Created}
	if write {
		return e, c.v.Register(e)
	}
	return e, nil
}

// Recover is what the next writer does after one that stopped in the
// middle (the vault's OnRecover): it repairs what needs no person, and
// says what it did. The caller holds the lock.
func (c *Checker) Recover() ([]string, error) {
	s, err := c.inspectVault(true, nil, nil)
	if err != nil {
		return nil, err
	}
	return s.done, nil
}

// quiresOwn says whether a change beside the run folders is quire's to
// commit: one its writes left uncommitted (listed pending), or a file of
// the folders only quire writes in its own form (the index, playbooks,
// projects, the members' marks). Anything else (quire.yaml, which people
// edit too, unless quire's write listed it; a README a person keeps) is a
// person's.
func quiresOwn(p string, pending map[string]bool) bool {
	if pending[p] {
		return true
	}
	top, _, _ := strings.Cut(p, "/")
	switch top {
	case "vault", "playbooks", "projects", "org":
		return true
	}
	return false
}

// gitProblems are quire check's look at the vault's git state and work
// tree: git's locks, HEAD, .git/index, its objects, staging folders,
// temporary files, uncommitted changes and symbolic links (the history's
// derived state is historyProblems'). u leaves out what the last passing
// check saw unchanged since (nil: nothing). They read nothing of the run
// folders' checks, which go on beside them; the caller holds the lock as
// a reader (Check).
func (c *Checker) gitProblems(u *vault.Unchanged, stamps vault.FolderStamps) ([]Problem, error) {
	var out []Problem
	for _, f := range c.v.InspectGitFrom(u) {
		out = append(out, Problem{Path: f.Path, Message: f.Message})
	}
	if op := c.v.GitOperation(); op != nil {
		// git's own operation is in the middle: what differs from HEAD
		// is the person's to resolve, not a hand edit to restore.
		out = append(out, Problem{Path: ".git", Message: op.Words()})
	} else {
		edits, err := c.v.HandEditsFrom(u)
		if err != nil {
			return out, err
		}
		for _, he := range edits {
			out = append(out, Problem{Path: he.Path, Line: he.Line, Message: handEditProblem(he)})
		}
	}
	s, err := c.inspectVault(false, u, stamps)
	if err != nil {
		return out, err
	}
	return append(out, s.problems...), nil
}

// historyProblems reports a playbook's history (.quire/history, derived)
// that no longer matches its files: a record that points at no whole line,
// or a count of records other than the count of event lines. A history
// that points past its files is reported by checkDerivedState already.
func (c *Checker) historyProblems(hc *historyCheck) ([]Problem, error) {
	pbs, err := c.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return nil, err
	}
	past, err := hc.past, hc.pastErr // checkDerivedState's
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
		msg, mark := c.h.Histories().DisagreesFrom(e.Playbook, hc.lines[e.Playbook], hc.since[e.Playbook], hc.held)
		hc.proved[e.Playbook] = mark
		if msg != "" {
			out = append(out, Problem{Path: path.Join(vault.QuireDir, "history", e.Playbook+".seq"),
				Message: msg + "; quire janitor (or quire reindex) rebuilds it from the files"})
		}
	}
	return out, nil
}

// historyCheck is what quire check gives the check of the histories: the
// event lines it counted of each playbook's files (every one read, or
// known from its record), what the last passing check proved of each
// history (since) with the files unchanged since (held), and what this
// check proves (proved, filled by historyProblems).
type historyCheck struct {
	lines  map[string]int64
	since  map[string]history.Mark
	held   func(file string) bool
	proved map[string]history.Mark
	// past and pastErr are the histories that point past their files
	// (checkDerivedState's).
	past    []string
	pastErr error
}

// Repair is quire janitor's repair pass (repair_vault).
func (c *Checker) Repair() (*RepairReport, error) {
	rep := &RepairReport{Repaired: []string{}, Left: []Problem{}}
	var stale []string
	err := c.h.Write(func() error {
		rep.Repaired = append(rep.Repaired, c.v.Recovered()...)
		fixed, err := c.v.RepairGit()
		if err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, fixed...)
		// Hand edits of what was committed, before the derived state is
		// checked against the files they leave.
		edits, err := c.v.HandEdits()
		if err != nil {
			return err
		}
		for _, he := range edits {
			kept, err := c.v.RestoreCommitted(he)
			if err != nil {
				return err
			}
			rep.Repaired = append(rep.Repaired, fmt.Sprintf("%s: restored the committed part from HEAD (line %d had been changed by hand); the edited copy is %s", he.Path, he.Line, kept))
		}
		s, err := c.inspectVault(true, nil, nil)
		if err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, s.done...)
		rep.Left = append(rep.Left, s.problems...)
		derived, err := c.WriteDerived()
		if err != nil {
			return err
		}
		rep.Repaired = append(rep.Repaired, derived...)
		for _, f := range c.v.InspectGit() {
			rep.Left = append(rep.Left, Problem{Path: f.Path, Message: f.Message})
		}
		pbs, err := c.v.FindType("playbook", func(*vault.Entry) bool { return true })
		if err != nil {
			return err
		}
		for _, e := range pbs {
			if c.h.Histories().Disagrees(e.Playbook) != "" {
				stale = append(stale, e.Playbook)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		if err := c.h.Reindex(); err != nil {
			return nil, err
		}
		rep.Repaired = append(rep.Repaired, "rebuilt the history of "+strings.Join(stale, ", ")+" from the files")
	}
	return rep, nil
}

package checker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"quire/internal/front"
	"quire/internal/sidebyside"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// Check validates the whole vault against the capsule: every run folder's
// six entries, its front matter, member_of and playbook resolving in the
// index, every event line parsing, seq without gaps or repeats in each
// playbook's history, and run.state.json agreeing with the events; then
// the vault's git state and work tree (vaultProblems). A run folder that
// has not changed since the last check that passed is answered from its
// record (record.go); CheckAll reads every one.
//
// All of it is read holding the vault's lock as a reader (Host.ReadLocked),
// so that it sees the vault between two writes, never in the middle of
// one: a line being appended, a seq reserved whose line is not written
// yet, a history record ahead of its file. Writers wait for the check, as
// they wait for each other.
func (c *Checker) Check() (*CheckReport, error) { return c.checkLocked(false) }

// CheckAll is Check reading every run folder (quire check --full).
func (c *Checker) CheckAll() (*CheckReport, error) { return c.checkLocked(true) }

func (c *Checker) checkLocked(full bool) (*CheckReport, error) {
	var rep *CheckReport
	record := !c.v.ReadOnly() // asked before the lock, which it takes
	err := c.h.ReadLocked(func() (err error) {
		rep, err = c.check(full, record)
		return err
	})
	return rep, err
}

// check is Check (or CheckAll, when full), under the lock; record says
// whether a check that passes writes its record.
func (c *Checker) check(full, record bool) (*CheckReport, error) {
	rep := &CheckReport{Problems: []Problem{}}
	add := func(p, format string, args ...any) {
		rep.Problems = append(rep.Problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	var last *checkRecord
	if !full {
		last = c.loadRecord()
	}
	// git's state and the work tree against HEAD are looked at beside the
	// rest, which reads no part of .git/index: what HEAD changed since the
	// record, .git/index's entries as they are with the stamps just
	// taken, then the checks of both.
	type gitFound struct {
		digest    [32]byte
		digestErr error
		problems  []Problem
		err       error
	}
	gitDone := make(chan gitFound, 1)
	gitResult := sync.OnceValue(func() gitFound { return <-gitDone })
	started := false
	startGit := func(u *vault.Unchanged, stamps vault.FolderStamps) {
		started = true
		go func() {
			var g gitFound
			g.digest, g.digestErr = c.v.IndexDigest()
			g.problems, g.err = c.gitProblems(u, stamps)
			gitDone <- g
		}()
	}
	// Waited for however the check ends: it reads the vault under the
	// check's lock.
	defer func() {
		if started {
			gitResult()
		}
	}()
	// A check of the whole vault looks at all of git's state, whatever
	// the scan finds: it starts as soon as the scan has asked the file
	// system monitor (which reads .git/index), its serial reads of HEAD's
	// tree beside the scan's stats rather than behind them (at 100,000
	// runs, the git branch was the check's last 10 s). Its status of the
	// work tree takes the run folders' entries from the scan's stamps,
	// once the scan is done, rather than a listing and an lstat of each
	// again.
	var asked func()
	var s *scanned
	scanDone := make(chan struct{})
	if full {
		stamps := func(name string) ([]vault.Stamped, bool) {
			<-scanDone
			if s == nil {
				return nil, false
			}
			i, found := sort.Find(len(s.runs), func(i int) int { return strings.Compare(name, s.runs[i].name) })
			if !found || s.runs[i].entries == nil {
				return nil, false
			}
			return s.runs[i].entries, true
		}
		asked = func() { startGit(nil, stamps) }
	}
	scannedVault, err := c.scan(last, asked)
	s = scannedVault
	close(scanDone)
	if err != nil {
		return nil, err
	}
	if s.same {
		// The vault is the one the last check passed, stamp for stamp
		// (record.go): its answer stands, and git's locks and a writer's
		// journal, which no stamp covers, are looked at.
		rep.Runs, rep.Events, rep.Warnings = len(s.runs), last.Events, last.Warnings
		rep.Read = &ReadReport{}
		for _, f := range c.v.InspectGitState() {
			add(f.Path, "%s", f.Message)
		}
		if s.refreshed && record && len(rep.Problems) == 0 {
			// The stamps of .git/index as it is now, so that the next
			// check need not read it. Every other stamp is older than the
			// record's time (it held), so it may move on.
			last.At, last.Git, last.RunsDir = s.at, s.git, s.runsDir
			if s.token != "" {
				last.Token = s.token
			}
			c.writeRecord(last, nil)
		}
		return rep, nil
	}
	// What the last passing check saw and nothing changed since, which
	// the checks of the vault as a whole need not read again: HEAD's
	// files as they were at its commit, and the run folders whose stamps
	// held but for those HEAD changed.
	var since vault.Hash
	var look []string
	hc := &historyCheck{lines: map[string]int64{}, proved: map[string]history.Mark{}}
	if last != nil {
		have := make(map[string]bool, len(s.runs))
		for _, r := range s.runs {
			have[r.name] = r.held != nil
			if r.held == nil {
				look = append(look, r.name)
			}
		}
		hc.since, hc.held = last.Histories, last.heldFile(s, have)
		for _, r := range last.Runs {
			if _, ok := have[r.Name]; !ok {
				look = append(look, r.Name) // gone from the work tree
			}
		}
		// What stands beside the run folders, now or at the record.
		for _, es := range [][]entry{s.others, last.Others} {
			for _, e := range es {
				if rest, ok := strings.CutPrefix(e.Name, vault.RunsDir+"/"); ok {
					name, _, _ := strings.Cut(rest, "/")
					look = append(look, name)
				}
			}
		}
		since, _ = vault.ParseHash(last.Head)
	}
	if !started {
		var u *vault.Unchanged
		if !since.IsZero() {
			u = c.v.UnchangedSince(since, look)
			if s.namesHeld {
				u.HoldsNames()
			}
		}
		startGit(u, nil)
	}
	if last != nil && !c.runsHold(last) {
		for _, r := range s.runs {
			r.held = nil
		}
	}
	next := &checkRecord{At: s.at, Head: s.head, Others: s.others, Git: s.git, RunsDir: s.runsDir, Token: s.token}
	rep.Read = &ReadReport{Vault: true}
	// The lines as the registry holds them: the check changes none.
	entries, err := c.v.Shared()
	if r, ok := refusal.As(err); ok {
		add(vault.IndexFile, "%s", r.Message) // a link: reported, and the rest checked
	} else if err != nil {
		return nil, err
	}
	if bad, err := c.v.IndexProblems(); err == nil {
		for _, b := range bad {
			rep.Problems = append(rep.Problems, Problem{Path: vault.IndexFile, Line: b.Line, Message: b.Message +
				"; quire reads and writes past it, so what it may name is not seen: mend the line or remove it (quire never rewrites the index)"})
		}
	}
	// Each scanned run's index line (the last that names its folder), by
	// the run's place in s.runs: nil for none. A run folder the scan found
	// (a folder, by its own stat, in playbook-runs/, itself no link) is
	// there and reached through no link: 100,000 lstats of each path's
	// parts need not be taken again.
	inIndex := make([]*vault.Entry, len(s.runs))
	_, runsErr := c.v.Join(vault.RunsDir)
	for k := range entries {
		e := &entries[k]
		if name, ok := strings.CutPrefix(e.Path, vault.RunsDir+"/"); ok && runsErr == nil {
			if i, found := sort.Find(len(s.runs), func(i int) int { return strings.Compare(name, s.runs[i].name) }); found {
				if e.Type == "playbook-run" {
					inIndex[i] = e
				}
				continue
			}
		}
		if _, err := c.v.Join(e.Path); err != nil {
			add(vault.IndexFile, "%s %s: its path %v", e.Type, e.UID, err)
			continue
		}
		if !c.v.Exists(e.Path) {
			add(vault.IndexFile, "%s %s: %s does not exist", e.Type, e.UID, e.Path)
		}
	}
	seqs := map[string]*seqSet{} // each playbook's
	unnumbered := map[string]int{}
	count := func(playbook string, seq int64) {
		set := seqs[playbook]
		if set == nil {
			set = &seqSet{}
			seqs[playbook] = set
		}
		// A seq taken (two clones' lines merged, each numbered where it
		// was written) places its line as one without a seq, as the
		// history does (docs/vault-format.md).
		if seq == 0 || !set.add(seq) {
			unnumbered[playbook]++
		}
	}
	// The run folders are read side by side (readRuns) and their findings
	// taken here in the folders' order.
	reads := c.readRuns(s, inIndex, entries)
	for i, sr := range s.runs {
		rep.Runs++
		e := inIndex[i]
		ok := e != nil
		if !ok {
			add(path.Join(vault.RunsDir, sr.name), "the run folder is not in %s", vault.IndexFile)
		}
		rd := reads[i]
		run := rd.run
		if rd.read {
			rep.Read.Runs++
			rep.Problems = append(rep.Problems, rd.problems...)
		}
		rep.Events += run.Events
		if ok { // a run answered from its record is one in the index
			for _, s := range run.Seqs {
				count(e.Playbook, s)
			}
			for i := 0; i < run.Unnumbered; i++ {
				count(e.Playbook, 0)
			}
			hc.lines[e.Playbook] += int64(run.Events)
			rep.Warnings = append(rep.Warnings, run.Warnings...)
		}
		next.Runs = append(next.Runs, run)
	}
	// The record of a check that passes, most of it encoded beside the
	// checks left.
	var runsEncoded chan []byte
	if record && len(rep.Problems) == 0 {
		runsEncoded = make(chan []byte, 1)
		go func() { runsEncoded <- encodeRuns(next.Runs) }()
	}
	for _, e := range entries {
		if e.Type != "playbook" {
			continue
		}
		file := path.Join(playbookDir(e.Playbook), "events.jsonl")
		data, err := os.ReadFile(c.v.Abs(file))
		if err != nil {
			continue
		}
		hc.lines[e.Playbook] += EventLines(data)
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
			count(e.Playbook, ln.Seq)
		}
	}
	c.checkDerivedState(s, hc, add)
	c.checkQuarantine(add)
	c.checkLinks(s, add)
	playbooks := make([]string, 0, len(seqs))
	for p := range seqs {
		playbooks = append(playbooks, p)
	}
	sort.Strings(playbooks)
	for _, p := range playbooks {
		n := int64(seqs[p].n + unnumbered[p])
		missing := seqs[p].beyond(n)
		if len(missing) > 0 {
			add(playbookDir(p), "the history's seq has gaps: %d events, but seq %s beyond them", n, strings.Join(missing, ", "))
		}
	}
	// The histories are checked while the git branch goes on (at 100,000
	// runs, a check --full's runs are read some seconds before it ends);
	// their problems are reported after its.
	stale, err := c.historyProblems(hc)
	if _, refused := refusal.As(err); err != nil && !refused {
		return nil, err // a refusal: the index of things is a link, which is reported
	}
	g := gitResult()
	if g.err != nil {
		return nil, g.err
	}
	rep.Problems = append(rep.Problems, g.problems...)
	rep.Problems = append(rep.Problems, stale...)
	if len(rep.Problems) == 0 && runsEncoded != nil {
		next.Events, next.Warnings, next.Histories = rep.Events, rep.Warnings, hc.proved
		next.IndexDigest = g.digest
		if g.digestErr == nil {
			c.saveRecord(next, <-runsEncoded)
		}
	}
	return rep, nil
}

func playbookDir(p string) string { return path.Join("playbooks", p) }

// runRead is what checking one run folder found: its record, and the
// problems in the order found when it was read (read) rather than
// answered from the last check's record.
type runRead struct {
	run      *runRecord
	read     bool
	problems []Problem
}

// readRuns checks the run folders of the scan, on as many cores as there
// are (up to 4): a folder whose stamps held is answered from its record
// (its warnings judged again when the playbooks' files changed), the
// others read whole (checkRun). Each finding is the folder's own, taken
// in order by the caller, so the report is the same however the reads
// interleave.
func (c *Checker) readRuns(s *scanned, inIndex []*vault.Entry, entries []vault.Entry) []runRead {
	byUID := bindingsByUID(entries)
	now := c.h.Now()
	out := make([]runRead, len(s.runs))
	one := func(i int) {
		sr := s.runs[i]
		ie := inIndex[i]
		if run := sr.held; run != nil && ie != nil && run.Playbook == ie.Playbook {
			if !s.playbooks {
				run.Warnings = c.h.RunWarnings(*ie, nil)
			}
			out[i] = runRead{run: run}
			return
		}
		var e vault.Entry
		if ie != nil {
			e = *ie
		}
		ok := ie != nil
		rel := path.Join(vault.RunsDir, sr.name)
		run := &runRecord{Name: sr.name, Entries: sr.entries, Playbook: e.Playbook}
		problems, st := c.checkRun(rel, e, ok, byUID, now, run)
		if ok {
			run.Warnings = c.h.RunWarnings(e, st)
		}
		out[i] = runRead{run: run, read: true, problems: problems}
	}
	sidebyside.Each(len(out), one)
	return out
}

// entryIsDir says whether the run folder's entry name (at abs) is a
// folder, as a stat of it would (a link followed): from the scan's stamps
// of the folder's entries where they hold it, no link, else by a stat. A
// check of the whole vault asked 600,000 stats of the six names at
// 100,000 runs, each through the path's every part.
func entryIsDir(abs, name string, stamped []entry) (bool, error) {
	for _, e := range stamped {
		if e.Name == name && !e.S.IsSymlink() {
			return e.S.IsDir(), nil
		}
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return false, err
	}
	return fi.IsDir(), nil
}

// bindingsByUID is what a run's front matter may name, by uid: the index
// lines of projects and definitions, each where a lookup of its uid finds
// it (its last line) unless a later line of another type took the uid.
func bindingsByUID(entries []vault.Entry) map[string]vault.Entry {
	byUID := map[string]vault.Entry{}
	for _, e := range entries {
		switch {
		case e.Type == "project" || e.Type == "definition":
			byUID[e.UID] = e
		case len(byUID) > 0:
			delete(byUID, e.UID)
		}
	}
	return byUID
}

// checkRun checks one run folder, filling in run (its binding, events and
// seqs), and answers its problems and the state its log derives (nil when
// the log could not be read).
func (c *Checker) checkRun(rel string, e vault.Entry, indexed bool, byUID map[string]vault.Entry, now time.Time, run *runRecord) ([]Problem, *runfolder.State) {
	var problems []Problem
	add := func(p, format string, args ...any) {
		problems = append(problems, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
	}
	addLine := func(p string, line int, msg string) {
		problems = append(problems, Problem{Path: p, Line: line, Message: msg})
	}
	for _, name := range runfolder.Entries {
		isDir, err := entryIsDir(c.v.Abs(path.Join(rel, name)), name, run.Entries)
		if err != nil {
			switch name {
			case runfolder.StateFile:
				// A folder another tool wrote in the capsule's form, or a
				// state file deleted: derived state, which quire makes.
				add(rel, "rule 6: the run folder lacks %s; quire janitor (or quire reindex) derives it from run.jsonl and definition.md and commits it", name)
			case runfolder.ArtifactsDir:
				// git keeps no empty folder: a clone of a run written
				// elsewhere lacks it.
				add(rel, "rule 6: the run folder lacks %s/; quire janitor (or quire reindex) makes it, with artifacts/.gitkeep so that git keeps it", name)
			default:
				add(rel, "rule 6: the run folder lacks %s", name)
			}
			continue
		}
		if (name == runfolder.ArtifactsDir) != isDir {
			add(path.Join(rel, name), "is a %s; the capsule wants a %s", kindOf(isDir), kindOf(name == runfolder.ArtifactsDir))
		}
	}
	f := c.h.Folder(rel)
	fm, err := f.ReadFront()
	frontRead := err == nil
	defPath := path.Join(rel, runfolder.DefinitionFile)
	var fe *front.Error
	if errors.As(err, &fe) && fe.Line > 0 {
		addLine(defPath, fe.Line, err.Error())
	} else if err != nil {
		add(defPath, "%v", err)
	} else {
		c.checkFront(defPath, fm, byUID, add)
	}
	run.Binding = fm.Binding
	// Replay the log from the start, once: its lines' rules, the state
	// file against it, and the steps it saw.
	replay := f.Replay(fm)
	logPath := path.Join(rel, runfolder.LogFile)
	lineNo, archivedAt := 0, 0
	err = f.ReadLines(func(off int64, raw []byte) error {
		lineNo++
		ln, err := event.Parse(raw)
		if err != nil {
			addLine(logPath, lineNo, err.Error())
			replay.Line(raw, nil)
			return nil
		}
		for _, msg := range lineRules(raw, &ln, lineNo, &archivedAt) {
			addLine(logPath, lineNo, msg)
		}
		if t, err := event.ParseTime(ln.Timestamp); err == nil && t.Sub(now) > event.MaxAhead {
			addLine(logPath, lineNo, fmt.Sprintf("dated %s, more than %d minutes ahead of the clock (%s): the events after it are timed by the clock, and may be dated before it",
				ln.Timestamp, int(event.MaxAhead/time.Minute), event.FormatTime(now)))
		}
		if lineNo == 1 && ln.Event != event.RunCreated {
			addLine(logPath, 1, "the first event is "+ln.Event+"; a run's log begins with run_created")
		}
		replay.Line(raw, &ln)
		run.Events++
		if ln.Seq == 0 {
			run.Unnumbered++
		} else {
			run.Seqs = append(run.Seqs, ln.Seq)
		}
		return nil
	})
	if err != nil {
		add(logPath, "%v", err)
		return problems, nil
	}
	if fi, err := os.Stat(c.v.Abs(logPath)); err == nil && fi.Size() > replay.LogBytes {
		addLine(logPath, lineNo+1, "a torn last line (a write cut short); the next write repairs it")
	}
	if c.v.Exists(path.Join(rel, runfolder.StateFile)) {
		// A missing one is rule 6's, above; with definition.md unread,
		// the state file is compared as quire reads it alone.
		p := path.Join(rel, runfolder.StateFile)
		var msg string
		if frontRead {
			msg, err = replay.StateDisagrees()
		} else {
			msg, err = f.StateDisagrees()
		}
		if err != nil {
			add(p, "%v", err)
		} else if msg != "" {
			add(p, "%s (a hand edit? quire derives the state from run.jsonl and definition.md, and rewrites this file at the run's next boundary)", msg)
		}
	}
	if indexed && fm.UID != "" && fm.UID != e.UID {
		add(defPath, "uid %s differs from the index's %s", fm.UID, e.UID)
	}
	return problems, &replay.State
}

// checkLinks lists the symbolic links in the vault: quire writes through
// none of them (a write that would is refused), and git may have carried
// them in from elsewhere. They are the scan's: it stamped every entry of
// the work tree but .git (a link by its own stat), and the checks' own
// records, looked at here.
func (c *Checker) checkLinks(s *scanned, add func(string, string, ...any)) {
	var links []string
	for _, e := range s.others {
		if e.S.IsSymlink() {
			links = append(links, e.Name)
		}
	}
	for _, r := range s.runs {
		for _, e := range r.entries {
			if e.S.IsSymlink() {
				links = append(links, path.Join(vault.RunsDir, r.name, e.Name))
			}
		}
	}
	for name := range ownRecords {
		if fi, err := os.Lstat(c.v.Abs(path.Join(vault.QuireDir, name))); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			links = append(links, path.Join(vault.QuireDir, name))
		}
	}
	sort.Strings(links)
	for _, p := range links {
		to, _ := os.Readlink(c.v.Abs(p))
		add(p, "is a symbolic link (to %s); quire writes nothing through links, so writes to what it stands for are refused: replace it with the file or folder itself", to)
	}
}

// checkQuarantine lists the torn tails cut from the vault's files, which
// are kept for a person to read (and delete).
func (c *Checker) checkQuarantine(add func(string, string, ...any)) {
	root := c.v.Abs(vault.QuarantineDir)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".torn") {
			return nil // .unacknowledged: a line no answer said was written
		}
		rel, _ := filepath.Rel(c.v.Root(), p)
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
func (c *Checker) checkDerivedState(s *scanned, hc *historyCheck, add func(string, string, ...any)) {
	stale, err := c.h.Histories().PointPast(s.size)
	if err != nil {
		add(vault.QuireDir+"/history", "%v", err)
	}
	hc.past, hc.pastErr = stale, err
	for _, p := range stale {
		add(vault.QuireDir+"/history/"+p+".seq", "the history of %s points past the files it indexes (a git stash, reset or checkout took lines back); the next write, or quire reindex, rebuilds it", p)
	}
}

func kindOf(dir bool) string {
	if dir {
		return "folder"
	}
	return "file"
}

// checkFront checks a run's front matter: the capsule's required fields,
// a concrete playbook_version (rule 2), member_of and playbook resolving
// in the index (rule 1), started a date, binding a file of the vault.
func (c *Checker) checkFront(p string, f runfolder.Front, byUID map[string]vault.Entry, add func(string, string, ...any)) {
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
		e, ok := byUID[uid]
		if !ok || e.Type != "project" {
			add(p, "rule 1: member_of[%d] %q is not a project in the index", i, uid)
		}
	}
	if f.Playbook != "" {
		if e, ok := byUID[f.Playbook]; !ok || e.Type != "definition" {
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
	if f.Binding != "" && !c.v.Exists(f.Binding) {
		add(p, "binding %s does not exist", f.Binding)
	}
}

package checker

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"quire/internal/fsys"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
)

// What the last check that passed read, so that the next check reads only
// what changed since (issue 28: a check read every run, 83 s at 100,000
// runs, and then the whole vault's git state and work tree, 21 s).
//
// The record stamps (size, modification and change times, inode, mode:
// fsys.Stamp) every file and folder of the vault's work tree and the files
// of .git that say what HEAD and .git/index are, and keeps what the check
// read of each run folder (its binding, its events and their seqs) and
// the warnings it gave. The next check takes the stamps again first:
//
//   - playbook-runs/ with the record's stamp holds the entries the record
//     names, which are not listed again (reading and sorting 100,000
//     names was a tenth of a check with nothing changed).
//   - A run folder whose folder stamp is the record's has the same entries
//     (a folder's times change when an entry is made, removed or renamed
//     into it): only its recorded entries are stamped, a stat each
//     relative to the open playbook-runs/, not read. When they are all the
//     record's, the folder is answered from its record; else it is read
//     again. Every folder is read again when the index of things is not
//     the one recorded with lines appended (what a run's front matter
//     resolves against) or a binding the runs name is gone.
//   - Everything else of the work tree (the index of things, playbooks,
//     projects, .quire/ but the check's own records) is walked and
//     stamped whole: a few hundred files.
//   - .git: HEAD, the branches, packed-refs, .git/index and its shared
//     index, and the folders of the objects and the packs.
//
// When every stamp is the record's and none was taken too soon after its
// file changed to tell (racy, as git's index entries are: within 100 ms
// of the record), and HEAD is the recorded commit, the vault is the one
// the last check passed: the check answers from the record, after the
// few stats of git's lock files, a writer's journal and git's own
// operation in the middle, which it always looks at. Otherwise the checks
// of the vault as a whole (the index of things, the seqs, HEAD's tree and
// blobs, .git/index, the work tree against it, the committed parts, the
// links, the histories, the warnings) are done, reading only what changed
// since the record: HEAD's tree against the record's commit, the run
// folders whose stamps or trees changed (vault.Unchanged), the histories'
// records not proved by the record's marks (history.VerifyFrom); the run
// folders whose stamps hold are answered from their record. A record is
// written only by a check that found no problem, so what it holds had
// none. quire check --full reads every folder, and
// writes the record anew when it passes.
//
// It is derived state (.quire/check-record): deleting it costs one full
// check.
const recordFile = vault.QuireDir + "/check-record"

// recordMagic begins the record, with its form's version: another is not
// read.
const recordMagic = "quire check-record 7\n"

// racyRecord is how close to the record's time a stamp is too new to
// trust: a write in the same tick of the file system's clock leaves the
// same times behind.
const racyRecord = 100 * time.Millisecond

type stamp = fsys.Stamp

// entry is a file or folder's path (relative to what holds it) and stamp.
type entry = vault.Stamped

// runRecord is what a passing check read of one run folder.
type runRecord struct {
	Name       string  // the folder's name in playbook-runs/
	Entries    []entry // the folder itself (""), then all below it
	Playbook   string  // the playbook its index line names
	Binding    string
	Events     int
	Seqs       []int64 // the lines' own seqs, in order
	Unnumbered int     // lines without one
	Warnings   []Problem
}

type checkRecord struct {
	At time.Time // when the stamps were taken
	// IndexSize and IndexSum are the index of things' size and the
	// SHA-256 of its bytes.
	IndexSize int64
	IndexSum  [32]byte
	Head      string // HEAD's commit
	// IndexDigest is .git/index's (vault.IndexDigest): a .git/index
	// rewritten with the same entries (a git status refreshing their
	// stat data) is the recorded one.
	IndexDigest [32]byte
	Runs        []*runRecord // by Name
	Others      []entry      // the rest of the work tree, from the root
	Git         []entry      // from .git
	RunsDir     stamp        // playbook-runs/'s own
	// Token is the vault's file system monitor's token, asked for before
	// the stamps were taken (askMonitor); "" when it has none.
	Token    string
	Events   int // the check's count of events
	Warnings []Problem
	// Histories are what the check proved of each playbook's history
	// (history.VerifyFrom), by playbook.
	Histories map[string]history.Mark
}

// runsDirNames are the names in playbook-runs/ the record saw, in order:
// its run folders' and what stood beside them.
func (r *checkRecord) runsDirNames() []string {
	var beside []string
	for _, e := range r.Others {
		if rest, ok := strings.CutPrefix(e.Name, vault.RunsDir+"/"); ok && !strings.Contains(rest, "/") {
			beside = append(beside, rest)
		}
	}
	names := make([]string, 0, len(r.Runs)+len(beside))
	for _, run := range r.Runs {
		names = append(names, run.Name)
	}
	names = append(names, beside...)
	if len(beside) > 0 {
		sort.Strings(names)
	}
	return names
}

// heldFile says whether a file (from the vault's root) is as the record
// saw it, by the stamps s took: a run's log whose folder held (held, by
// the run's name), or a file outside the run folders with its recorded
// stamp, not racy.
func (r *checkRecord) heldFile(s *scanned, held map[string]bool) func(string) bool {
	trusted := r.At.Add(-racyRecord).UnixNano()
	was := make(map[string]stamp, len(r.Others))
	for _, e := range r.Others {
		was[e.Name] = e.S
	}
	return func(file string) bool {
		if rest, ok := strings.CutPrefix(file, vault.RunsDir+"/"); ok {
			name, f, _ := strings.Cut(rest, "/")
			return f == runfolder.LogFile && held[name]
		}
		st, ok := s.other(file)
		return ok && st == was[file] && st.MTime < trusted && st.CTime < trusted
	}
}

// scanned is the stamps a check took before it read anything.
type scanned struct {
	at     time.Time
	runs   []*scannedRun
	others []entry
	git    []entry
	head   string
	// namesHeld: playbook-runs/ has the record's stamp, so it holds the
	// record's entries (vault.Unchanged.HoldsNames).
	namesHeld bool
	// runsDir is playbook-runs/'s own stamp, taken before its entries
	// were listed.
	runsDir stamp
	// token is the monitor's, asked for before the stamps ("": none).
	token string
	// same: every stamp is the record's, none racy, and HEAD is its.
	same bool
	// refreshed: .git/index's stamps are not the record's, but its
	// entries are (same holds).
	refreshed bool
	// playbooks: the playbooks' files are the record's (the documents
	// the runs' warnings are judged against).
	playbooks bool
	othersAt  map[string]stamp // others by name, made by size
}

// size is a file's size (from the vault's root) as its stamp says, for a
// plain file the scan stamped: a run's file, or one outside the run
// folders.
func (s *scanned) size(file string) (int64, bool) {
	if rest, ok := strings.CutPrefix(file, vault.RunsDir+"/"); ok {
		name, f, _ := strings.Cut(rest, "/")
		i, found := sort.Find(len(s.runs), func(i int) int { return strings.Compare(name, s.runs[i].name) })
		if !found {
			return 0, false
		}
		for _, e := range s.runs[i].entries {
			if e.Name == f {
				return e.S.Size, e.S.IsRegular()
			}
		}
		return 0, false
	}
	st, ok := s.other(file)
	return st.Size, ok && st.IsRegular()
}

// other is the stamp the scan took of a path outside the run folders.
func (s *scanned) other(rel string) (stamp, bool) {
	if s.othersAt == nil {
		s.othersAt = make(map[string]stamp, len(s.others))
		for _, e := range s.others {
			s.othersAt[e.Name] = e.S
		}
	}
	st, ok := s.othersAt[rel]
	return st, ok
}

type scannedRun struct {
	name    string
	entries []entry
	held    *runRecord // the record's, when every stamp is its
}

// ownRecords are the files of .quire/ the checks write for themselves,
// which the stamps leave out.
var ownRecords = map[string]bool{"check-record": true, "check-record.new": true, historyStateFile: true, historyMarkFile: true}

// volatile are the files of .quire/ quire rewrites as it opens the vault
// or follows git, whose content no check reads: what .git/index was made
// true to (index-stamp), what the histories were (history/git.stamp) and
// the writer's journal (writing, which the check reads every time). Only
// their kind is stamped (a link in place of one is seen).
var volatile = map[string]bool{vault.QuireDir + "/index-stamp": true, vault.QuireDir + "/history/git.stamp": true, vault.QuireDir + "/writing": true}

func isOwnRecord(rel string) bool {
	dir, name := path.Split(rel)
	if dir != vault.QuireDir+"/" {
		return false
	}
	if ownRecords[name] {
		return true
	}
	// WriteAtomic's temporary files of the history's records.
	return strings.HasPrefix(name, ".check-history.") && strings.Contains(name, ".tmp")
}

// scan stamps the vault, against last (nil: no record, or --full), and
// calls asked (unless nil) once it has asked the file system monitor, the
// last of its reads of .git/index.
func (c *Checker) scan(last *checkRecord, asked func()) (*scanned, error) {
	s := &scanned{at: time.Now()}
	changed := c.askMonitor(s, last)
	if asked != nil {
		asked()
	}
	var trusted int64 // stamps at or after it are racy
	if last != nil {
		trusted = last.At.Add(-racyRecord).UnixNano()
	}
	ok := func(st stamp) bool { return st.MTime < trusted && st.CTime < trusted }
	same := last != nil
	runsAbs := c.v.Abs(vault.RunsDir)
	dir, err := fsys.OpenDir(runsAbs)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	// playbook-runs/ with the record's stamp holds the record's entries
	// (a folder's times change when an entry is made, removed or renamed
	// into it): they are not listed again, 100,000 names read and sorted.
	st, found := dir.Stamp()
	s.runsDir = st
	var names []string
	if found && last != nil && last.RunsDir == st && ok(st) {
		names = last.runsDirNames()
		s.namesHeld = true
	} else {
		lister, err := os.Open(runsAbs)
		if err != nil {
			return nil, err
		}
		names, err = lister.Readdirnames(-1)
		lister.Close()
		if err != nil {
			return nil, err
		}
		sort.Strings(names)
	}
	var others []string // entries of playbook-runs/ beside the run folders
	s.runs = make([]*scannedRun, 0, len(names))
	recs := make([]*runRecord, 0, len(names))
	k := 0 // the next of last.Runs
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			others = append(others, name)
			continue
		}
		var rec *runRecord
		if last != nil {
			for k < len(last.Runs) && last.Runs[k].Name < name {
				k++
			}
			if k < len(last.Runs) && last.Runs[k].Name == name {
				rec = last.Runs[k]
			}
		}
		s.runs = append(s.runs, &scannedRun{name: name})
		recs = append(recs, rec)
	}
	// The stats, on as many cores as there are: they are most of a check
	// with nothing changed (700,000 at 100,000 runs).
	workers := min(runtime.GOMAXPROCS(0), 4)
	chunk := (len(s.runs) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	for w := 0; w*chunk < len(s.runs); w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(s.runs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				if rec := recs[i]; changed != nil && rec != nil && !changed[s.runs[i].name] {
					// Nothing in it changed since the record, says the
					// monitor: its stamps are the record's.
					s.runs[i].entries, s.runs[i].held = rec.Entries, rec
					continue
				}
				c.stampRun(dir, s.runs[i], recs[i], ok)
			}
		}()
	}
	wg.Wait()
	runs := s.runs[:0]
	for _, r := range s.runs {
		switch {
		case r.entries == nil:
			same = false // gone since the listing
		case !r.entries[0].S.IsDir():
			others = append(others, r.name)
		default:
			if r.held == nil {
				same = false
			}
			runs = append(runs, r)
		}
	}
	s.runs = runs
	if last != nil && len(runs) != len(last.Runs) {
		same = false // a folder gone (every one held is one of the record's)
	}
	sort.Strings(others)
	s.others, err = c.walkOthers(others)
	if err != nil {
		return nil, err
	}
	s.git = c.gitStamps()
	head, err := c.v.HeadCommit()
	if err != nil {
		return nil, err
	}
	s.head = head.String()
	if last != nil {
		s.playbooks = sameEntries(under(s.others, "playbooks"), under(last.Others, "playbooks"), ok)
	}
	if same {
		same = s.head == last.Head && sameEntries(s.others, last.Others, ok)
	}
	if same && !sameEntries(s.git, last.Git, ok) {
		// .git/index rewritten (a git status refreshing its stat data) is
		// the recorded one when its entries are.
		same = sameEntries(withoutIndex(s.git), withoutIndex(last.Git), ok)
		if same {
			d, err := c.v.IndexDigest()
			same = err == nil && d == last.IndexDigest
			s.refreshed = same
		}
	}
	s.same = same
	return s, nil
}

// askMonitor asks the vault's file system monitor, when .git/config names
// one, what changed since the record's token, before any stamp is taken
// (what changes after is in the next answer), and keeps the answer's
// token for the record this check writes. It answers the run folders in
// which a path changed: the others are the record's without a stat, as
// git status trusts the entries the monitor does not name (with
// Watchman's hook at 100,000 runs, a check with nothing changed took
// some 0.2 s against a second of stats). nil, every run folder stamped:
// no monitor, or it failed, no token in the record to ask with (the first
// check after one is set, and --full), or it knows nothing of what
// changed.
func (c *Checker) askMonitor(s *scanned, last *checkRecord) map[string]bool {
	token := ""
	if last != nil {
		token = last.Token
	}
	ask := token
	if ask == "" {
		// Asked with no token, Watchman's hook lists every path of the
		// work tree (43 s at 100,000 runs): the token git keeps in its
		// index is asked with where there is one, for a token of now.
		ask = c.v.IndexMonitorToken()
	}
	a, ok := c.v.AskMonitor(ask)
	if !ok {
		return nil
	}
	s.token = a.Token
	if token == "" || a.All {
		return nil
	}
	changed := map[string]bool{}
	for _, p := range a.Paths {
		if rest, ok := strings.CutPrefix(p, vault.RunsDir+"/"); ok {
			name, _, _ := strings.Cut(rest, "/")
			changed[name] = true
		}
	}
	return changed
}

// stampRun stamps one entry of playbook-runs/: from its record's entries
// when the folder's stamp is the record's (its entries are the same),
// else by a walk of it; r.held is the record when every stamp is its.
// A file beside the run folders gets its stamp alone.
func (c *Checker) stampRun(dir fsys.Dir, r *scannedRun, rec *runRecord, ok func(stamp) bool) {
	rd, isDir := dir.At(r.name)
	if !isDir {
		if st, found := dir.Lstat(r.name); found {
			r.entries = []entry{{S: st}}
		}
		return
	}
	defer rd.Close()
	st, found := rd.Stamp()
	if !found {
		return
	}
	if rec != nil && len(rec.Entries) > 0 && rec.Entries[0].S == st && ok(st) {
		held := true
		for _, e := range rec.Entries[1:] {
			if unstamped(e.S) {
				continue
			}
			if es, found := rd.Lstat(e.Name); !found || es != e.S || !ok(es) {
				held = false
				break
			}
		}
		if held {
			r.entries, r.held = rec.Entries, rec
			return
		}
	}
	r.entries = c.walkRun(rd, r.name, st)
}

// unstamped is the stamp of a file kept only by its kind: an artifact's
// content is no check's (the artifacts/ folder's own stamp says when one
// is added, removed or replaced).
func unstamped(s stamp) bool { return s.MTime == 0 && s.CTime == 0 && !s.IsDir() }

// walkRun stamps a run folder and everything below it.
func (c *Checker) walkRun(rd fsys.Dir, name string, st stamp) []entry {
	out := []entry{{Name: "", S: st}}
	var walk func(rel string)
	walk = func(rel string) {
		f, err := os.Open(filepath.Join(c.v.Abs(vault.RunsDir), name, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		sort.Strings(names)
		for _, n := range names {
			p := path.Join(rel, n)
			es, found := rd.Lstat(p)
			if !found {
				continue
			}
			if es.IsRegular() && strings.HasPrefix(p, runfolder.ArtifactsDir+"/") {
				es = stamp{Mode: es.Mode}
			}
			out = append(out, entry{Name: p, S: es})
			if es.IsDir() {
				walk(p)
			}
		}
	}
	walk("")
	return out
}

// walkOthers stamps the work tree outside the run folders (and .git), and
// the entries beside the run folders, named. A folder's own times are
// left out (its entries are listed): .quire's change with each record
// written.
func (c *Checker) walkOthers(beside []string) ([]entry, error) {
	root := c.v.Root()
	rootF, err := fsys.OpenDir(root)
	if err != nil {
		return nil, err
	}
	defer rootF.Close()
	var out []entry
	add := func(rel string) (stamp, bool) {
		st, found := rootF.Lstat(rel)
		if !found {
			return st, false
		}
		if st.IsDir() || volatile[rel] {
			st = stamp{Mode: st.Mode}
		}
		out = append(out, entry{Name: rel, S: st})
		return st, true
	}
	var walk func(rel string)
	walk = func(rel string) {
		f, err := os.Open(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		sort.Strings(names)
		for _, n := range names {
			p := path.Join(rel, n)
			switch {
			case rel == "" && (n == ".git" || n == vault.RunsDir):
				continue
			case isOwnRecord(p):
				continue
			}
			if st, found := add(p); found && st.IsDir() {
				walk(p)
			}
		}
	}
	walk("")
	for _, n := range beside {
		p := path.Join(vault.RunsDir, n)
		if st, found := add(p); found && st.IsDir() {
			walk(p)
		}
	}
	return out, nil
}

// gitStamps stamps what in .git says what HEAD, the branches and
// .git/index are, and where the objects are.
func (c *Checker) gitStamps() []entry {
	gitDir := c.v.GitDir()
	g, err := fsys.OpenDir(gitDir)
	if err != nil {
		return nil
	}
	defer g.Close()
	var out []entry
	add := func(rel string) (stamp, bool) {
		st, found := g.Lstat(rel)
		if found {
			out = append(out, entry{Name: rel, S: st})
		}
		return st, found
	}
	list := func(rel string) []string {
		f, err := os.Open(filepath.Join(gitDir, filepath.FromSlash(rel)))
		if err != nil {
			return nil
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		sort.Strings(names)
		return names
	}
	// git's own operation in the middle (gitop.go) marks itself with
	// these; a conflict's stages are in .git/index.
	for _, n := range []string{"HEAD", "index", "packed-refs", "commondir", "objects/info/alternates",
		"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply"} {
		add(n)
	}
	for _, n := range list("") {
		if strings.HasPrefix(n, "sharedindex.") {
			add(n)
		}
	}
	var refs func(rel string)
	refs = func(rel string) {
		for _, n := range list(rel) {
			p := rel + "/" + n
			if st, found := add(p); found && st.IsDir() {
				refs(p)
			}
		}
	}
	refs("refs/heads")
	// A loose object removed changes its folder's times; a pack added or
	// removed, the pack folder's.
	for _, n := range list("objects") {
		add("objects/" + n)
	}
	for _, n := range list("objects/pack") {
		add("objects/pack/" + n)
	}
	return out
}

// under is the stamps of es below the folder dir.
func under(es []entry, dir string) []entry {
	var out []entry
	for _, e := range es {
		if strings.HasPrefix(e.Name, dir+"/") {
			out = append(out, e)
		}
	}
	return out
}

// withoutIndex is the stamps of .git but .git/index's and its shared
// index's.
func withoutIndex(es []entry) []entry {
	out := make([]entry, 0, len(es))
	for _, e := range es {
		if e.Name != "index" && !strings.HasPrefix(e.Name, "sharedindex.") {
			out = append(out, e)
		}
	}
	return out
}

// sameEntries says whether a's stamps are b's, none of them racy.
func sameEntries(a, b []entry, ok func(stamp) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] || !ok(a[i].S) {
			return false
		}
	}
	return true
}

// stampOfFile stamps one file.
func stampOfFile(abs string) (stamp, bool) {
	d, err := fsys.OpenDir(filepath.Dir(abs))
	if err != nil {
		return stamp{}, false
	}
	defer d.Close()
	return d.Lstat(filepath.Base(abs))
}

// loadRecord reads the last passing check's record; nil when there is
// none or it is not of this form.
func (c *Checker) loadRecord() *checkRecord {
	data, err := os.ReadFile(c.v.Abs(recordFile))
	if err != nil {
		return nil
	}
	r, err := decodeRecord(data)
	if err != nil {
		return nil
	}
	return r
}

// runsHold says whether the record's run folders may be answered from it
// at all: the index of things is the one recorded, with lines appended,
// and every binding the runs name is there.
func (c *Checker) runsHold(r *checkRecord) bool {
	if size, sum, ok := c.indexSum(r.IndexSize); !ok || size < r.IndexSize || sum != r.IndexSum {
		return false
	}
	bindings := map[string]bool{}
	for _, run := range r.Runs {
		if run.Binding != "" && !bindings[run.Binding] {
			if !c.v.Exists(run.Binding) {
				return false
			}
			bindings[run.Binding] = true
		}
	}
	return true
}

// indexSum answers the index's size and the SHA-256 of its first n bytes
// (all of it, with n of -1).
func (c *Checker) indexSum(n int64) (int64, [32]byte, bool) {
	var sum [32]byte
	f, err := os.Open(c.v.Abs(vault.IndexFile))
	if err != nil {
		return 0, sum, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, sum, false
	}
	if n < 0 || n > fi.Size() {
		n = fi.Size()
	}
	h := sha256.New()
	if _, err := io.CopyN(h, f, n); err != nil {
		return 0, sum, false
	}
	copy(sum[:], h.Sum(nil))
	return fi.Size(), sum, true
}

// saveRecord writes the record of a check that passed, its runs encoded
// already (encodeRuns) or nil.
func (c *Checker) saveRecord(r *checkRecord, runs []byte) {
	size, sum, ok := c.indexSum(-1)
	if !ok {
		return
	}
	r.IndexSize, r.IndexSum = size, sum
	c.writeRecord(r, runs)
}

// writeRecord writes r as the record, its runs encoded already
// (encodeRuns) or nil.
func (c *Checker) writeRecord(r *checkRecord, runs []byte) {
	abs := c.v.Abs(recordFile)
	if os.MkdirAll(filepath.Dir(abs), 0o755) != nil || os.WriteFile(abs+".new", encodeRecord(r, runs), 0o644) != nil {
		return
	}
	os.Rename(abs+".new", abs)
}

// The record's form: recordMagic, then varints and strings (a varint
// length and the bytes), the names of the runs' entries as numbers into a
// table of them, and each time as its difference from the one before (a
// run's files are written together). 100,000 runs take about 29 MB.

type recWriter struct {
	b     []byte
	names map[string]uint64
	last  int64
}

func (w *recWriter) uint(x uint64) { w.b = binary.AppendUvarint(w.b, x) }
func (w *recWriter) int(x int64)   { w.b = binary.AppendVarint(w.b, x) }
func (w *recWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *recWriter) time(t int64)  { w.int(t - w.last); w.last = t }
func (w *recWriter) stamp(s stamp) {
	w.int(s.Size)
	w.time(s.MTime)
	w.time(s.CTime)
	w.uint(s.Ino)
	w.uint(uint64(s.Mode))
}
func (w *recWriter) entries(es []entry, table bool) {
	w.uint(uint64(len(es)))
	for _, e := range es {
		if table {
			n, ok := w.names[e.Name]
			if !ok {
				n = uint64(len(w.names))
				w.names[e.Name] = n
				w.uint(0)
				w.str(e.Name)
			} else {
				w.uint(n + 1)
			}
		} else {
			w.str(e.Name)
		}
		w.stamp(e.S)
	}
}
func (w *recWriter) problems(ps []Problem) {
	w.uint(uint64(len(ps)))
	for _, p := range ps {
		w.str(p.Commit)
		w.str(p.Path)
		w.uint(uint64(p.Line))
		w.str(p.Message)
	}
}

// encodeRecord encodes r, its runs already encoded by encodeRuns (nil:
// encoded here).
func encodeRecord(r *checkRecord, runs []byte) []byte {
	if runs == nil {
		runs = encodeRuns(r.Runs)
	}
	w := &recWriter{b: append(make([]byte, 0, len(runs)+4096), recordMagic...)}
	w.int(r.At.UnixNano())
	w.int(r.IndexSize)
	w.b = append(w.b, r.IndexSum[:]...)
	w.str(r.Head)
	w.b = append(w.b, r.IndexDigest[:]...)
	w.uint(uint64(r.Events))
	w.problems(r.Warnings)
	w.entries(r.Others, false)
	w.entries(r.Git, false)
	w.stamp(r.RunsDir)
	w.str(r.Token)
	w.b = append(w.b, runs...)
	pbs := slices.Sorted(maps.Keys(r.Histories))
	w.uint(uint64(len(pbs)))
	for _, p := range pbs {
		m := r.Histories[p]
		w.str(p)
		w.int(m.Records)
		w.int(m.FilesSize)
		w.b = append(w.b, m.Sum[:]...)
	}
	return w.b
}

// encodeRuns encodes the runs of a record, the most of it, which a check
// does beside its last steps.
func encodeRuns(runs []*runRecord) []byte {
	w := &recWriter{b: make([]byte, 0, 256*len(runs)+64), names: map[string]uint64{}}
	w.uint(uint64(len(runs)))
	for _, run := range runs {
		w.str(run.Name)
		w.str(run.Playbook)
		w.str(run.Binding)
		w.uint(uint64(run.Events))
		w.uint(uint64(run.Unnumbered))
		w.uint(uint64(len(run.Seqs)))
		var prev int64
		for _, s := range run.Seqs {
			w.int(s - prev)
			prev = s
		}
		w.entries(run.Entries, true)
		w.problems(run.Warnings)
	}
	return w.b
}

var errRecord = errors.New("checker: a record cut short or of another form")

type recReader struct {
	b     []byte
	err   error
	names []string
	last  int64
	// whole is the record's bytes as one string, of which every string
	// read is a part: 700,000 names at 100,000 runs, not as many copies.
	whole string
	// The runs' entries and seqs are cut from larger slices, made a few
	// times rather than 100,000.
	entrySlab []entry
	seqSlab   []int64
}

// slab cuts n from *from, made anew at 8,192 (or n) when too short.
func slab[T any](from *[]T, n int) []T {
	if n > len(*from) {
		*from = make([]T, max(n, 8192))
	}
	out := (*from)[:n:n]
	*from = (*from)[n:]
	return out
}

func (r *recReader) uint() uint64 {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}
func (r *recReader) int() int64 {
	x, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return x
}
func (r *recReader) fail() {
	if r.err == nil {
		r.err = errRecord
	}
	r.b = nil
}
func (r *recReader) bytes(n uint64) []byte {
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}
func (r *recReader) str() string {
	n := r.uint()
	at := len(r.whole) - len(r.b)
	if r.bytes(n) == nil {
		return ""
	}
	return r.whole[at : at+int(n)]
}
func (r *recReader) time() int64 { r.last += r.int(); return r.last }
func (r *recReader) stamp() stamp {
	var s stamp
	s.Size = r.int()
	s.MTime = r.time()
	s.CTime = r.time()
	s.Ino = r.uint()
	s.Mode = uint32(r.uint())
	return s
}
func (r *recReader) entries(table bool) []entry {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.b)) { // an entry takes bytes
		r.err = errRecord
		return nil
	}
	var out []entry
	if table {
		out = slab(&r.entrySlab, int(n))
	} else {
		out = make([]entry, n)
	}
	for i := range out {
		if table {
			k := r.uint()
			switch {
			case k == 0:
				r.names = append(r.names, r.str())
				out[i].Name = r.names[len(r.names)-1]
			case k <= uint64(len(r.names)):
				out[i].Name = r.names[k-1]
			default:
				r.err = errRecord
				return nil
			}
		} else {
			out[i].Name = r.str()
		}
		out[i].S = r.stamp()
		if r.err != nil {
			return nil
		}
	}
	return out
}
func (r *recReader) problems() []Problem {
	n := r.uint()
	if r.err != nil || n > 1<<24 {
		r.err = errRecord
		return nil
	}
	out := make([]Problem, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		out = append(out, Problem{Commit: r.str(), Path: r.str(), Line: int(r.uint()), Message: r.str()})
	}
	return out
}

func decodeRecord(data []byte) (*checkRecord, error) {
	if !bytes.HasPrefix(data, []byte(recordMagic)) {
		return nil, errRecord
	}
	r := &recReader{b: data[len(recordMagic):], whole: string(data[len(recordMagic):])}
	rec := &checkRecord{}
	rec.At = time.Unix(0, r.int())
	rec.IndexSize = r.int()
	copy(rec.IndexSum[:], r.bytes(32))
	rec.Head = r.str()
	copy(rec.IndexDigest[:], r.bytes(32))
	rec.Events = int(r.uint())
	rec.Warnings = r.problems()
	rec.Others = r.entries(false)
	rec.Git = r.entries(false)
	rec.RunsDir = r.stamp()
	rec.Token = r.str()
	r.last = 0 // the runs are encoded on their own (encodeRuns)
	n := r.uint()
	if r.err != nil || n > uint64(len(r.b)) { // a run takes bytes
		return nil, errRecord
	}
	rec.Runs = make([]*runRecord, 0, n)
	runs := make([]runRecord, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		run := &runs[i]
		*run = runRecord{Name: r.str(), Playbook: r.str(), Binding: r.str(), Events: int(r.uint()), Unnumbered: int(r.uint())}
		m := r.uint()
		if r.err != nil || m > uint64(len(r.b)) {
			return nil, errRecord
		}
		if m > 0 {
			run.Seqs = slab(&r.seqSlab, int(m))
			var prev int64
			for j := range run.Seqs {
				prev += r.int()
				run.Seqs[j] = prev
			}
		}
		run.Entries = r.entries(true)
		if run.Warnings = r.problems(); len(run.Warnings) == 0 {
			run.Warnings = nil
		}
		rec.Runs = append(rec.Runs, run)
	}
	n = r.uint()
	if r.err != nil || n > 1<<24 {
		return nil, errRecord
	}
	rec.Histories = make(map[string]history.Mark, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		p := r.str()
		m := history.Mark{Records: r.int(), FilesSize: r.int()}
		copy(m.Sum[:], r.bytes(32))
		rec.Histories[p] = m
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, errRecord
	}
	for i := 1; i < len(rec.Runs); i++ {
		if rec.Runs[i-1].Name >= rec.Runs[i].Name {
			return nil, errRecord
		}
	}
	return rec, nil
}

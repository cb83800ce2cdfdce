package ledger

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"quire/internal/fsys"
	"quire/runfolder"
	"quire/vault"
	"quire/words/address"
)

// The runs' facts that list_runs filters by and the index of the vault
// does not hold (status, state, executor: they change, and the index
// holds only what a thing is made with), kept under .quire/runs/ so that
// a filter reads only the runs it answers. Reading every run's
// run.state.json was 3.3 s a list at 100,000 runs (issue 28).
//
//	.quire/runs/head        the commit the facts are complete through: they
//	                        are every run's as its files were at that commit,
//	                        and as quire's writes since left them
//	.quire/runs/facts.jsonl a nonce line, then one line a change of a run:
//	                        {"uid","status","state","executor","sum"}; a
//	                        uid's last line holds; "unread" for a run whose
//	                        files could not be read (list_runs reads it, and
//	                        says why); sum names the state the line was
//	                        read from (stateSum). Among them, headline lines
//	                        {"uid","sum","page","headline"}: the run's
//	                        headline as the page of key page renders the
//	                        state of that sum (headlines.go); it holds while
//	                        both still are the run's.
//
// Every write of a run's files is a boundary's, and commits the run's
// folder: the tx appends the run's facts as it commits (indexRuns), and
// moves head along when the facts were complete through the commit's
// parent. A read finds head behind HEAD when git moved it by hand (a
// commit, a reset, a pull, a merge): the run folders that differ between
// the two commits' trees are read again (catchUpRuns, under the lock); a
// head whose commit is gone, or no facts at all, are made again from every
// run's files. It is derived state: nothing in it is synced, and deleting
// it costs one read of every run. What it does not see is a change a
// person makes to a run's files without committing it (an edit, git
// checkout -- <file>): list_runs answers from the facts until that change
// is committed or quire next writes the run (docs/vault-format.md).
const runsIndexDir = vault.QuireDir + "/runs"

// runFacts are a run's facts as list_runs filters them.
type runFacts struct {
	Status, State, Executor string
}

// factsLine is one line of facts.jsonl.
type factsLine struct {
	UID      string `json:"uid,omitempty"`
	Status   string `json:"status,omitempty"`
	State    string `json:"state,omitempty"`
	Executor string `json:"executor,omitempty"`
	Sum      string `json:"sum,omitempty"`
	Page     string `json:"page,omitempty"` // a headline line's
	Headline string `json:"headline,omitempty"`
	Unread   bool   `json:"unread,omitempty"`
	Nonce    string `json:"nonce,omitempty"`
	V        int    `json:"v,omitempty"` // the nonce line's: factsVersion
}

// factsVersion is the form of facts.jsonl this quire writes, said on its
// nonce line; facts of another form are made again.
const factsVersion = 2

var errFactsForm = errors.New("the facts are of another form")

// runIndex is what this process holds of facts.jsonl, read again only
// where it grew (fsys.Grown).
type runIndex struct {
	mu    sync.Mutex
	grown fsys.Grown
	// rs are the runs' facts and kept headlines, small and with nothing
	// to follow, and recs their places in rs by the run's id as 16 bytes:
	// with the ids and facts as strings, in two maps, looking up each of
	// 100,000 runs was 80 % of a list that filters or searches them.
	recs map[runKey]int32
	rs   []runRec
	// gen counts the times recs and rs were made anew: a place in rs is
	// good only in its gen, and rs only grows within one.
	gen int
	// aligned is where the runs of the index's lines are in rs, line by
	// line, for the list that last asked (align).
	aligned alignment
	// names are the words of the facts and the pages' keys, each once;
	// runRec holds their places. heads are the headlines kept, a run's
	// last the one its runRec names.
	names  []string
	nameNo map[string]int32
	heads  []keptHeadline
	// The lines taken of each kind, to tell when the file is worth
	// rewriting.
	lines, headLines int
}

func (l *Ledger) runsPath(name string) string { return l.v.Abs(path.Join(runsIndexDir, name)) }

// runsHead reads the commit the facts are complete through (zero when
// there are none, or it is unreadable).
func (l *Ledger) runsHead() vault.Hash {
	b, err := os.ReadFile(l.runsPath("head"))
	if err != nil {
		return vault.ZeroHash
	}
	return parseHash(strings.TrimSpace(string(b)))
}

// runKey is a run's id, the UUID's 16 bytes.
type runKey [16]byte

// keyOf is the key of a run's id; false for an id that is not a UUID in
// lowercase (its run is read). One pass over the id, by a table: a
// search of list_runs looks up every run of the playbook (100,000), and
// checking the id first and then parsing it was a fifth of it.
func keyOf(uid string) (runKey, bool) {
	var k runKey
	if len(uid) != 36 || uid[8] != '-' || uid[13] != '-' || uid[18] != '-' || uid[23] != '-' {
		return k, false
	}
	bad := byte(0)
	for n, i := range uuidPairs {
		hi, lo := hexVal[uid[i]], hexVal[uid[i+1]]
		bad |= hi | lo
		k[n] = hi<<4 | lo&0x0f
	}
	return k, bad&0xf0 == 0
}

// uuidPairs are where the 16 bytes of a UUID's text begin.
var uuidPairs = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// hexVal is a lowercase hex digit's value, 0xff for any other byte.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
	}
	return t
}()

// runRec is what the index holds of a run: its facts' places in names,
// the sum of its state, and its headline kept (head, 1 + its place in
// heads; 0 for none).
type runRec struct {
	status, state, executor int32
	head                    int32
	sum                     [8]byte
	known                   bool // the facts are the run's: false for a run unread
}

// keptHeadline is a headline as a page (the place of its key in names)
// rendered it from a state of sum.
type keptHeadline struct {
	text, lower string
	page        int32
	sum         [8]byte
}

// name is the place of a word in names, added when new. The caller holds
// ri.mu.
func (ri *runIndex) name(w string) int32 {
	if n, ok := ri.nameNo[w]; ok {
		return n
	}
	ri.names = append(ri.names, w)
	ri.nameNo[w] = int32(len(ri.names) - 1)
	return int32(len(ri.names) - 1)
}

// sumOf reads a sum as facts.jsonl writes it (stateSum).
func sumOf(h string) (s [8]byte, ok bool) {
	if len(h) != 16 {
		return s, false
	}
	_, err := hex.Decode(s[:], []byte(h))
	return s, err == nil
}

// runLookup looks a run's facts up, and the headline last rendered of it.
type runLookup struct{ ri *runIndex }

// runView is what a lookup answers of a run: its facts, whether they are
// known, and, asked for, the headline kept for the state they are of
// (page, the key of the page it was rendered by; "" when none is kept
// for that state).
type runView struct {
	runFacts
	known       bool
	page, lower string
}

// alignment is where the runs of the index's lines (vault.Shared, whose
// lines stay as they are while its first line does: a line changed is
// changed in a copy) are in rs: at holds a line's place in rs, or
// notRun or unknown. A list of 100,000 runs looked each run up in recs by
// its id, and those lookups (a miss of the cache or three each) were most
// of a search that matched nothing.
type alignment struct {
	first   *vault.Entry // the lines' first, held so that its memory is not used again
	gen     int
	known   int     // len(ri.rs) when the unknown lines were last looked up
	at      []int32 // by line
	unknown []int32 // the lines of runs recs did not have
}

const (
	notRun  = -1 // a line that is not a run's
	unknown = -2 // a run recs did not have when its line was aligned
)

// align answers where the runs of all, the index's lines, are in rs,
// looking up only the lines it has not (past those it did for the same
// lines, and those recs did not have then, when it took keys since). The
// answer is all's: read it with at.
func (k runLookup) align(all []vault.Entry) alignment {
	ri := k.ri
	ri.mu.Lock()
	defer ri.mu.Unlock()
	a := &ri.aligned
	if len(all) == 0 || a.first != &all[0] || a.gen != ri.gen || len(a.at) > len(all) {
		*a = alignment{gen: ri.gen, known: len(ri.rs)}
		if len(all) > 0 {
			a.first = &all[0]
		}
	}
	if a.known != len(ri.rs) {
		still := a.unknown[:0:0]
		for _, i := range a.unknown {
			if a.at[i] = ri.place(all[i].UID); a.at[i] == unknown {
				still = append(still, i)
			}
		}
		a.unknown, a.known = still, len(ri.rs)
	}
	for i := len(a.at); i < len(all); i++ {
		p := int32(notRun)
		if all[i].Type == "playbook-run" {
			if p = ri.place(all[i].UID); p == unknown {
				a.unknown = append(a.unknown, int32(i))
			}
		}
		a.at = append(a.at, p)
	}
	// The caller's own: a list after it appends to at or looks its unknown
	// lines up again, under ri.mu, as at reads it.
	return alignment{gen: a.gen, at: a.at[:len(all):len(all)]}
}

// place is where a run's facts are in rs, or unknown. The caller holds
// ri.mu.
func (ri *runIndex) place(uid string) int32 {
	if key, ok := keyOf(uid); ok {
		if p, ok := ri.recs[key]; ok {
			return p
		}
	}
	return unknown
}

// at looks up the run of line i of the lines a was aligned for (its id
// uid): its facts, and with heads its headline kept.
func (k runLookup) at(a alignment, i int, uid string, heads bool) runView {
	ri := k.ri
	ri.mu.Lock()
	defer ri.mu.Unlock()
	p := a.at[i]
	if a.gen != ri.gen || p == unknown {
		p = ri.place(uid) // made anew since, or learnt since
	}
	if p < 0 {
		return runView{}
	}
	return ri.view(&ri.rs[p], heads)
}

// view is what a lookup answers of r. The caller holds ri.mu.
func (ri *runIndex) view(r *runRec, heads bool) (v runView) {
	if !r.known {
		return v
	}
	v.known = true
	v.runFacts = runFacts{ri.names[r.status], ri.names[r.state], ri.names[r.executor]}
	if heads && r.head > 0 && r.sum != ([8]byte{}) {
		if h := &ri.heads[r.head-1]; h.sum == r.sum {
			v.page, v.lower = ri.names[h.page], h.lower
		}
	}
	return v
}

// runFactsOf answers how to look a run's facts up, complete through HEAD;
// nil when they cannot be had (a vault that takes no write now, or a
// failure): the caller reads every run, as it would without them.
func (l *Ledger) runFactsOf() *runLookup {
	head, err := l.v.HeadCommit()
	if err != nil || head.IsZero() {
		return nil
	}
	ri := &l.runIdx
	for try := 0; ; try++ {
		if l.runsHead() != head {
			if l.v.WritesRefused() != nil {
				return nil
			}
			if err := l.write(writeArgs{derived: true}, func(t *tx) error { return t.catchUpRuns() }); err != nil {
				l.v.Logf("%s: %v; list_runs reads every run", runsIndexDir, err)
				return nil
			}
		}
		ri.mu.Lock()
		err := ri.refresh(l.runsPath("facts.jsonl"))
		ri.mu.Unlock()
		if err == nil {
			return &runLookup{ri}
		}
		os.Remove(l.runsPath("head")) // made again, now or by the next read
		if try == 1 || !errors.Is(err, errFactsForm) {
			return nil
		}
	}
}

// refresh takes what was appended to facts.jsonl since the last read, or
// the whole file when it was made anew. The caller holds ri.mu.
func (ri *runIndex) refresh(abs string) error {
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	from, data, err := ri.grown.Next(f)
	if err != nil {
		return err
	}
	if from == 0 {
		ri.recs, ri.rs, ri.lines, ri.headLines = map[runKey]int32{}, nil, 0, 0
		ri.gen++
		ri.names, ri.nameNo, ri.heads = nil, map[string]int32{}, nil
		var first factsLine
		nl := bytes.IndexByte(data, '\n')
		if nl < 0 || json.Unmarshal(data[:nl], &first) != nil || first.V != factsVersion {
			return errFactsForm
		}
	}
	end := bytes.LastIndexByte(data, '\n') + 1 // a torn last line waits
	for rest := data[:end]; len(rest) > 0; {
		nl := bytes.IndexByte(rest, '\n')
		var ln factsLine
		if json.Unmarshal(rest[:nl], &ln) == nil {
			if k, ok := keyOf(ln.UID); ok {
				p, ok := ri.recs[k]
				if !ok {
					p = int32(len(ri.rs))
					ri.rs = append(ri.rs, runRec{})
					ri.recs[k] = p
				}
				r := &ri.rs[p]
				switch {
				case ln.Page != "":
					if sum, ok := sumOf(ln.Sum); ok {
						ri.heads = append(ri.heads, keptHeadline{ln.Headline, strings.ToLower(ln.Headline), ri.name(ln.Page), sum})
						r.head = int32(len(ri.heads))
					}
					ri.headLines++
				case ln.Unread:
					r.known = false
				default:
					r.status, r.state, r.executor = ri.name(ln.Status), ri.name(ln.State), ri.name(ln.Executor)
					r.sum, _ = sumOf(ln.Sum)
					r.known = true
				}
			}
		}
		ri.lines++
		rest = rest[nl+1:]
	}
	ri.grown.Took(from, data, end)
	return nil
}

// stale says whether most of the lines taken are no longer read: a
// uid's earlier lines, made void by its last.
func (ri *runIndex) stale() bool {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	return ri.lines-ri.headLines > 2*len(ri.recs)+10000 || len(ri.heads) > 2*len(ri.recs)+10000
}

// factsOfRun reads a run's facts from its files, as list_runs reads them
// (readRun), into its line.
func (l *Ledger) factsOfRun(uid string) []byte {
	e, ok, err := l.v.Lookup(uid)
	if err != nil || !ok || e.Type != "playbook-run" {
		return factsOf(factsLine{UID: uid, Unread: true})
	}
	return l.factsOfEntry(e)
}

func (l *Ledger) factsOfEntry(e vault.Entry) []byte { return factsOf(l.factsLineOf(e)) }

func (l *Ledger) factsLineOf(e vault.Entry) factsLine {
	st, err := runfolder.Folder{V: l.v, Rel: e.Path}.LoadState()
	if err != nil {
		return factsLine{UID: e.UID, Unread: true}
	}
	return factsLine{UID: e.UID, Status: st.Status, State: st.State, Executor: st.Executor, Sum: stateSum(st)}
}

// stateSum names a run's state as read: what its headline is rendered
// from (a run's state changes only by its files, and every change of its
// files writes its facts again).
func stateSum(st *runfolder.State) string {
	b, _ := json.Marshal(st)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// factsOf is a line of facts.jsonl.
func factsOf(ln factsLine) []byte {
	b, _ := json.Marshal(ln)
	return append(b, '\n')
}

// indexRuns is the tx's commit of paths (commit, run by it) with the runs
// among them noted in the facts: their lines appended before it, whether
// it is made or not, and head moved to it after when the facts were
// complete through its parent. Nothing is noted before the first read
// makes the facts.
func (t *tx) indexRuns(paths []string, commit func() (string, bool)) (string, bool) {
	l := t.l
	through := l.runsHead()
	if through.IsZero() {
		return commit()
	}
	var lines []byte
	for _, p := range paths {
		if uid := runOfPath(p); uid != "" {
			lines = append(lines, l.factsOfRun(uid)...)
		}
	}
	if appendDerived(l.runsPath("facts.jsonl"), lines) != nil {
		os.Remove(l.runsPath("head")) // made again on the next read
		return commit()
	}
	parent, err := l.v.HeadCommit()
	id, ok := commit()
	if ok && err == nil && parent == through {
		writeRunsHead(l.runsPath("head"), parseHash(id))
	}
	return id, ok
}

// runOfPath is the run id of a run folder's path, or of a path inside it
// (<runs dir>/<name>-<run_id>-<YYYY-MM-DD>[/...]); "" for any other path.
func runOfPath(p string) string {
	rest, ok := strings.CutPrefix(p, vault.RunsDir+"/")
	if !ok {
		return ""
	}
	folder, _, _ := strings.Cut(rest, "/")
	return runOfFolder(folder)
}

// runOfFolder is the run id in a run folder's name.
func runOfFolder(folder string) string {
	if len(folder) < 36+11 {
		return ""
	}
	id := folder[len(folder)-11-36 : len(folder)-11]
	if !address.ValidLowerUUID(id) {
		return ""
	}
	return id
}

func writeRunsHead(abs string, head vault.Hash) error {
	tmp := abs + ".new"
	if err := os.WriteFile(tmp, []byte(head.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, abs)
}

// catchUpRuns brings the facts up to HEAD: the runs whose folders differ
// between the commit they are complete through and HEAD are read again;
// with no facts, or that commit gone, every run is.
func (t *tx) catchUpRuns() error {
	l := t.l
	head, err := l.v.HeadCommit()
	if err != nil || head.IsZero() {
		return err
	}
	through := l.runsHead()
	if through == head {
		return nil // another caught up while this one waited
	}
	facts := l.runsPath("facts.jsonl")
	if _, err := os.Stat(facts); through.IsZero() || err != nil {
		return l.rebuildRuns(head)
	}
	h := l.v.History()
	defer h.Close()
	changed, err := changedRuns(h, through, head)
	if err != nil {
		return l.rebuildRuns(head) // the commit is gone (a gc after a reset)
	}
	var lines []byte
	for _, uid := range changed {
		lines = append(lines, l.factsOfRun(uid)...)
	}
	if err := appendDerived(facts, lines); err != nil {
		return err
	}
	if l.runIdx.stale() {
		return l.rebuildRuns(head) // mostly lines no longer read
	}
	return writeRunsHead(l.runsPath("head"), head)
}

// changedRuns lists the runs whose folders differ between two commits'
// trees of the runs' folder.
func changedRuns(h *vault.History, a, b vault.Hash) ([]string, error) {
	ta, err := runsTreeOf(h, a)
	if err != nil {
		return nil, err
	}
	tb, err := runsTreeOf(h, b)
	if err != nil {
		return nil, err
	}
	var out []string
	err = vault.DiffTrees(ta, tb, func(old, new *vault.TreeEntry) error {
		e := new
		if e == nil {
			e = old
		}
		if uid := runOfFolder(e.Name); uid != "" {
			out = append(out, uid)
		}
		return nil
	})
	return out, err
}

// runsTreeOf is the raw tree of the runs' folder at a commit (nil when it
// has none).
func runsTreeOf(h *vault.History, c vault.Hash) ([]byte, error) {
	tree, _, err := h.Commit(c)
	if err != nil {
		return nil, err
	}
	root, err := h.Tree(tree)
	if err != nil {
		return nil, err
	}
	e, ok, err := vault.TreeFind(root, vault.RunsDir)
	if err != nil || !ok || !e.Dir {
		return nil, err
	}
	return h.Tree(e.Hash)
}

// rebuildRuns makes the facts again from every run's files, complete
// through head, keeping the headlines still rendered from the runs'
// states.
func (l *Ledger) rebuildRuns(head vault.Hash) error {
	runs, err := l.v.Find(func(e *vault.Entry) bool { return e.Type == "playbook-run" })
	if err != nil {
		return err
	}
	// What a read may change meanwhile is copied; heads and names only
	// grow past what is copied of them.
	ri := &l.runIdx
	ri.mu.Lock()
	recs, rs, heads, names := maps.Clone(ri.recs), slices.Clone(ri.rs), ri.heads, ri.names
	ri.mu.Unlock()
	if err := os.MkdirAll(l.runsPath(""), 0o755); err != nil {
		return err
	}
	// The lines are written as they are made, not held: at 100,000 runs
	// the file is 13 MB, and a buffer of it grown by doubling held twice
	// that beside the garbage of reading every run.
	abs := l.runsPath("facts.jsonl")
	f, err := os.Create(abs + ".new")
	if err != nil {
		return err
	}
	defer os.Remove(abs + ".new") // gone once renamed
	w := bufio.NewWriterSize(f, 1<<16)
	nonce := make([]byte, 8)
	rand.Read(nonce)
	w.Write(factsOf(factsLine{Nonce: hex.EncodeToString(nonce), V: factsVersion}))
	for i, e := range runs {
		ln := l.factsLineOf(e)
		w.Write(factsOf(ln))
		k, _ := keyOf(e.UID)
		if p, ok := recs[k]; ok && rs[p].head > 0 && !ln.Unread {
			r := rs[p]
			if h := heads[r.head-1]; hex.EncodeToString(h.sum[:]) == ln.Sum {
				w.Write(factsOf(factsLine{UID: e.UID, Sum: ln.Sum, Page: names[h.page], Headline: h.text}))
			}
		}
		l.progress("list_runs: reading every run's state once", "runs", i+1, len(runs))
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(abs+".new", abs); err != nil {
		return err
	}
	return writeRunsHead(l.runsPath("head"), head)
}

package checker

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"quire/runfolder"
	"quire/vault"
	"quire/words/event"
)

// The walk of quire check --history (see the package's doc for the rules
// it proves and what it keeps in .quire/check-history.json).

// historyState is .quire/check-history.json.
type historyState struct {
	Head     string    `json:"head"`
	Proved   string    `json:"proved"` // base64 of the proved commits' 20-byte ids
	Problems []Problem `json:"problems"`
	// Digest binds the record to what it covers: the SHA-256 of the
	// commit it ended at, the commits it proved and the problems it found
	// (digestOf). A record whose digest does not match (its problems
	// emptied by hand, a commit added to what it proved) is not trusted:
	// the whole history is proved again, and what it hid is found again.
	Digest string `json:"digest"`
}

// digestOf is the digest a record of head, proved and problems carries.
func digestOf(st historyState) string {
	problems, _ := json.Marshal(st.Problems)
	sum := sha256.Sum256([]byte("quire check-history 1\n" + st.Head + "\n" + st.Proved + "\n" + string(problems)))
	return hex.EncodeToString(sum[:])
}

const historyStateFile = "check-history.json"

// historyMarkFile marks a record that found no problem with the commit it
// ended at and its file's stamp, so that a check with nothing new reads a
// line and a stat, not the record of every commit proved (43 s with
// nothing new at 50,000 runs, issue 28). A record changed or deleted since
// (its stamp differs) is read, or the whole history proved, as before.
const historyMarkFile = "check-history.head"

type historyMark struct {
	Head   string `json:"head"`
	Proved int    `json:"proved"`
	Record stamp  `json:"record"` // check-history.json's
}

// markedClean answers the report of a history the mark says was proved
// to head without a problem, when the record it marks is still the one
// on disk.
func (ck *Checker) markedClean(head vault.Hash, statePath string) (*HistoryReport, bool) {
	data, err := os.ReadFile(ck.v.Abs(path.Join(vault.QuireDir, historyMarkFile)))
	var m historyMark
	if err != nil || json.Unmarshal(data, &m) != nil || m.Head != head.String() {
		return nil, false
	}
	if s, ok := stampOfFile(statePath); !ok || s != m.Record {
		return nil, false
	}
	return &HistoryReport{Head: m.Head, Proved: m.Proved}, true
}

// mark writes the mark of a record that found no problem.
func (ck *Checker) mark(head vault.Hash, proved int, statePath string) {
	s, ok := stampOfFile(statePath)
	if !ok {
		return
	}
	data, _ := json.Marshal(historyMark{Head: head.String(), Proved: proved, Record: s})
	vault.WriteAtomic(ck.v.Abs(path.Join(vault.QuireDir, historyMarkFile)), data)
}

type commitInfo struct {
	tree    vault.Hash
	parents []vault.Hash
}

// CheckHistory walks the commits of HEAD's history not yet proved and
// answers the problems of the whole history (those found before, still in
// it, then the new ones).
func (ck *Checker) CheckHistory() (*HistoryReport, []Problem, error) {
	rep := &HistoryReport{}
	head, err := ck.v.HeadCommit()
	if err != nil || head.IsZero() {
		return rep, []Problem{}, err
	}
	rep.Head = head.String()
	statePath := ck.v.Abs(path.Join(vault.QuireDir, historyStateFile))
	if marked, ok := ck.markedClean(head, statePath); ok {
		return marked, []Problem{}, nil
	}
	var st historyState
	proved := map[vault.Hash]bool{}
	if data, err := os.ReadFile(statePath); err == nil {
		ids, err2 := []byte(nil), json.Unmarshal(data, &st)
		if err2 == nil {
			ids, err2 = base64.StdEncoding.DecodeString(st.Proved)
		}
		switch {
		case err2 != nil || len(ids)%20 != 0:
			st = historyState{}
			rep.Note = fmt.Sprintf("%s was unreadable; proved the whole history again", path.Join(vault.QuireDir, historyStateFile))
		case st.Digest != digestOf(st):
			st = historyState{}
			rep.Note = fmt.Sprintf("%s does not match what it says it covers (edited, or written by an older quire); proved the whole history again", path.Join(vault.QuireDir, historyStateFile))
		default:
			for i := 0; i < len(ids); i += 20 {
				var h vault.Hash
				copy(h[:], ids[i:i+20])
				proved[h] = true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	h := ck.v.History()
	defer h.Close()

	// The commits to prove: HEAD's ancestors, up to the ones proved before.
	info := map[vault.Hash]*commitInfo{}
	var todo []vault.Hash
	lastHead := vault.ZeroHash
	if st.Head != "" {
		lastHead = parseHash(st.Head)
	}
	metLast := head == lastHead
	stack := []vault.Hash{head}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c == lastHead {
			metLast = true
		}
		if proved[c] || info[c] != nil {
			continue
		}
		tree, parents, err := h.Commit(c)
		if err != nil {
			return nil, nil, err
		}
		info[c] = &commitInfo{tree: tree, parents: parents}
		todo = append(todo, c)
		stack = append(stack, parents...)
	}
	old := st.Problems
	if st.Head != "" && !metLast {
		// The last walk's end is not behind HEAD by the commits walked now:
		// HEAD was reset or rewritten (or it is reached some other way).
		// Keep the problems of commits HEAD's history still holds.
		reach, err := ancestors(h, head)
		if err != nil {
			return nil, nil, err
		}
		kept := []Problem{}
		for _, p := range old {
			if reach[parseHash(p.Commit)] {
				kept = append(kept, p)
			}
		}
		old = kept
		// Forget the commits left behind too, so that they are proved
		// (and their problems found) again should HEAD come back to them.
		for c := range proved {
			if !reach[c] {
				delete(proved, c)
			}
		}
		if !reach[lastHead] {
			rep.Note = fmt.Sprintf("commit %s, where the last check ended, is no longer in HEAD's history (a reset or a rewrite?): proved the %d commits since where the two histories meet", short(st.Head), len(todo))
		}
	}

	w := &historyWalk{h: h, info: info, trees: map[vault.Hash][]byte{}, problems: []Problem{}}
	// Oldest first, so that a commit's large trees are the next one's
	// parent's, read once.
	for i := len(todo) - 1; i >= 0; i-- {
		if err := w.commit(todo[i]); err != nil {
			return nil, nil, err
		}
		proved[todo[i]] = true
		ck.h.Progress("check --history: proving the commits", "commits", len(todo)-i, len(todo))
	}
	rep.Commits = len(todo)
	rep.Proved = len(proved)
	rep.Reads = h.Reads
	all := append(append([]Problem{}, old...), w.problems...)

	if len(todo) == 0 && len(old) == len(st.Problems) && head == lastHead {
		if len(all) == 0 && !ck.v.ReadOnly() {
			ck.mark(head, rep.Proved, statePath)
		}
		return rep, all, nil // nothing learnt: the file stands
	}
	ids := make([]byte, 0, 20*len(proved))
	for c := range proved {
		ids = append(ids, c[:]...)
	}
	if ck.v.ReadOnly() {
		return rep, all, nil // a vault read-only here: reported, not recorded
	}
	rec := historyState{Head: head.String(), Proved: base64.StdEncoding.EncodeToString(ids), Problems: all}
	rec.Digest = digestOf(rec)
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, nil, err
	}
	if err := vault.WriteAtomic(statePath, data); err != nil {
		return nil, nil, err
	}
	if len(all) == 0 {
		ck.mark(head, rep.Proved, statePath)
	}
	return rep, all, nil
}

func parseHash(s string) vault.Hash {
	var h vault.Hash
	if b, err := hex.DecodeString(s); err == nil && len(b) == len(h) {
		copy(h[:], b)
	}
	return h
}

// ancestors is every commit of c's history, c included.
func ancestors(h *vault.History, c vault.Hash) (map[vault.Hash]bool, error) {
	seen := map[vault.Hash]bool{}
	stack := []vault.Hash{c}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		_, parents, err := h.Commit(c)
		if err != nil {
			return nil, err
		}
		stack = append(stack, parents...)
	}
	return seen, nil
}

type historyWalk struct {
	h        *vault.History
	info     map[vault.Hash]*commitInfo
	trees    map[vault.Hash][]byte // the large trees lately read
	order    []vault.Hash
	problems []Problem
	commitID string
	merge    bool // the commit being proved is a merge (two parents or more)
}

// add records a problem of the commit being proved; a merge's problem found
// against both parents is recorded once.
func (w *historyWalk) add(file string, line int, format string, args ...any) {
	p := Problem{Commit: w.commitID, Path: file, Line: line, Message: fmt.Sprintf(format, args...)}
	for i := len(w.problems) - 1; i >= 0 && w.problems[i].Commit == p.Commit; i-- {
		if w.problems[i] == p {
			return
		}
	}
	w.problems = append(w.problems, p)
}

// tree reads a tree, keeping the last few: the folder of runs read as a
// commit's is read again as its child's parent's.
func (w *historyWalk) tree(id vault.Hash) ([]byte, error) {
	if t, ok := w.trees[id]; ok {
		return t, nil
	}
	t, err := w.h.Tree(id)
	if err != nil {
		return nil, err
	}
	w.trees[id] = t
	w.order = append(w.order, id)
	if len(w.order) > 8 {
		delete(w.trees, w.order[0])
		w.order = w.order[1:]
	}
	return t, nil
}

// runsTree is the id of the playbook-runs folder in a commit's tree.
func (w *historyWalk) runsTree(commit vault.Hash) (vault.Hash, error) {
	if commit.IsZero() {
		return vault.ZeroHash, nil
	}
	ci := w.info[commit]
	if ci == nil {
		tree, parents, err := w.h.Commit(commit)
		if err != nil {
			return vault.ZeroHash, err
		}
		ci = &commitInfo{tree: tree, parents: parents}
		w.info[commit] = ci
	}
	root, err := w.tree(ci.tree)
	if err != nil {
		return vault.ZeroHash, err
	}
	e, ok, err := vault.TreeFind(root, vault.RunsDir)
	if err != nil || !ok || !e.Dir {
		return vault.ZeroHash, err
	}
	return e.Hash, nil
}

// commit proves one commit against each of its parents.
func (w *historyWalk) commit(c vault.Hash) error {
	w.commitID = c.String()
	mine, err := w.runsTree(c)
	if err != nil {
		return err
	}
	parents := w.info[c].parents
	if len(parents) == 0 {
		parents = []vault.Hash{vault.ZeroHash}
	}
	w.merge = len(parents) > 1
	for _, p := range parents {
		theirs, err := w.runsTree(p)
		if err != nil {
			return err
		}
		if theirs == mine {
			continue
		}
		a, err := w.tree(theirs)
		if err != nil {
			return err
		}
		b, err := w.tree(mine)
		if err != nil {
			return err
		}
		err = vault.DiffTrees(a, b, func(o, n *vault.TreeEntry) error {
			if (o != nil && !o.Dir) || (n != nil && !n.Dir) {
				return nil // a file beside the run folders, such as AGENTS.md
			}
			return w.runFolder(o, n)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// runFolder proves one run folder that differs from the parent's.
func (w *historyWalk) runFolder(o, n *vault.TreeEntry) error {
	var name string
	var oldT, newT []byte
	var err error
	if o != nil {
		name = o.Name
		if oldT, err = w.h.Tree(o.Hash); err != nil {
			return err
		}
	}
	if n != nil {
		name = n.Name
		if newT, err = w.h.Tree(n.Hash); err != nil {
			return err
		}
	}
	rel := path.Join(vault.RunsDir, name)
	logPath := path.Join(rel, runfolder.LogFile)
	oldLog, err := w.file(oldT, runfolder.LogFile)
	if err != nil {
		return err
	}
	// Rule 5: the parent's log ends the run with archived.
	archivedAt := 0
	forEachLine(oldLog, func(i int, raw []byte) bool {
		if bytes.Contains(raw, []byte(`"archived"`)) {
			if ln, err := event.Parse(raw); err == nil && ln.Event == event.Archived {
				archivedAt = i
				return false
			}
		}
		return true
	})
	return vault.DiffTrees(oldT, newT, func(fo, fn *vault.TreeEntry) error {
		var fname string
		if fo != nil {
			fname = fo.Name
		} else {
			fname = fn.Name
		}
		file := path.Join(rel, fname)
		if (fo != nil && fo.Dir) || (fn != nil && fn.Dir) {
			// artifacts/: name the first file that differs in it.
			if archivedAt > 0 {
				w.add(path.Join(file, w.firstDiffer(fo, fn)), 0, "rule 5: the run was archived (run.jsonl line %d) and this commit changes it; archived runs are read-only", archivedAt)
			}
			return nil
		}
		var oldB, newB []byte
		if fo != nil {
			if fname == runfolder.LogFile {
				oldB = oldLog
			} else if oldB, err = w.h.Blob(fo.Hash); err != nil {
				return err
			}
		}
		if fn != nil {
			if newB, err = w.h.Blob(fn.Hash); err != nil {
				return err
			}
		}
		line := vault.FirstDifferentLine(oldB, newB)
		if archivedAt > 0 {
			w.add(file, line, "rule 5: the run was archived (run.jsonl line %d) and this commit changes %s; archived runs are read-only", archivedAt, fname)
		}
		switch fname {
		case runfolder.DefinitionFile:
			if o != nil {
				what := "changed"
				if fn == nil {
					what = "removed"
				}
				w.add(file, line, "rule 2: definition.md %s after its run began; it pins the run's definition and version and is written once", what)
			}
		case runfolder.LogFile:
			w.log(logPath, oldB, newB, fn == nil)
		}
		return nil
	})
}

// file reads a file of a raw run folder tree; nil when it has none.
func (w *historyWalk) file(tree []byte, name string) ([]byte, error) {
	e, ok, err := vault.TreeFind(tree, name)
	if err != nil || !ok || e.Dir {
		return nil, err
	}
	return w.h.Blob(e.Hash)
}

// firstDiffer names the first file that differs between two versions of a
// folder, relative to it.
func (w *historyWalk) firstDiffer(o, n *vault.TreeEntry) string {
	var a, b []byte
	if o != nil && o.Dir {
		a, _ = w.h.Tree(o.Hash)
	}
	if n != nil && n.Dir {
		b, _ = w.h.Tree(n.Hash)
	}
	name := ""
	vault.DiffTrees(a, b, func(fo, fn *vault.TreeEntry) error {
		e := fo
		if e == nil {
			e = fn
		}
		name = e.Name
		if e.Dir {
			name = path.Join(name, w.firstDiffer(fo, fn))
		}
		return errStop
	})
	return name
}

// log proves one run.jsonl against its parent's version: only grown (rule
// 3), and the lines it adds in seq order.
func (w *historyWalk) log(file string, old, cur []byte, removed bool) {
	if w.merge && !removed {
		w.mergedLog(file, old, cur)
		return
	}
	// Rule 3 is the write guard's rule of an append-only file: the old
	// version's complete lines (a torn last line, a write cut short, was
	// never a committed line) a byte prefix of the new.
	n := countLines(vault.CommittedLines(old))
	from := n + 1 // the first line this commit adds
	if line := vault.KeptLines(old, cur); line > 0 {
		from = line
		switch {
		case removed:
			w.add(file, 1, "rule 3: run.jsonl was removed, and with it its %d committed lines", n)
			return
		case from > countLines(cur) && from == n:
			w.add(file, from, "rule 3: committed line %d of run.jsonl was removed; run.jsonl is append-only", from)
		case from > countLines(cur):
			w.add(file, from, "rule 3: committed lines %d to %d of run.jsonl were removed; run.jsonl is append-only", from, n)
		default:
			w.add(file, from, "rule 3: committed line %d of run.jsonl was changed; run.jsonl is append-only (append a correction instead)", from)
		}
	}
	// Seq order: the lines from the first this commit wrote, after the
	// last seq before it (looked for backwards, so that a long log is not
	// read whole at every commit).
	off := 0
	for i := 1; i < from; i++ {
		off += bytes.IndexByte(cur[off:], '\n') + 1
	}
	var prev int64
	prevLine := 0
	for i, end := from-1, off; i >= 1 && end > 0; i-- {
		start := bytes.LastIndexByte(cur[:end-1], '\n') + 1
		if s := seqOf(cur[start : end-1]); s > 0 {
			prev, prevLine = s, i
			break
		}
		end = start
	}
	forEachLine(cur[off:], func(j int, raw []byte) bool {
		i := from + j - 1
		if s := seqOf(raw); s > 0 {
			if s <= prev {
				w.add(file, i, "seq %d comes after seq %d (line %d); a run's lines are in seq order", s, prev, prevLine)
			}
			prev, prevLine = s, i
		}
		return true
	})
}

// mergedLog proves a merge's run.jsonl against one of its parents': git's
// union of two clones' lines keeps each side's committed lines, in their
// order, with the other side's among them (after the lines both had). So
// every complete line of the parent's must be in the merge's, in order;
// their seqs were given on the clone that wrote them, so they are not
// proved in order against each other (the history places a repeated seq
// as a line without one).
func (w *historyWalk) mergedLog(file string, old, cur []byte) {
	var have [][]byte
	forEachLine(cur, func(_ int, raw []byte) bool { have = append(have, raw); return true })
	k := 0
	forEachLine(vault.CommittedLines(old), func(i int, raw []byte) bool {
		for k < len(have) && !bytes.Equal(have[k], raw) {
			k++
		}
		if k == len(have) {
			w.add(file, i, "rule 3: the merge does not keep committed line %d of a parent's run.jsonl in its place; a merge keeps both sides' lines, in their order", i)
			return false
		}
		k++
		return true
	})
}

// seqOf is a line's seq; 0 when it has none (or is not JSON).
func seqOf(raw []byte) int64 {
	if !bytes.Contains(raw, []byte(`"seq"`)) {
		return 0
	}
	var s struct {
		Seq int64 `json:"seq"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return 0
	}
	return s.Seq
}

// forEachLine calls fn with each complete line and its number, from 1,
// until fn answers false.
func forEachLine(data []byte, fn func(i int, raw []byte) bool) {
	for i := 1; ; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			return
		}
		if !fn(i, data[:j]) {
			return
		}
		data = data[j+1:]
	}
}

func countLines(data []byte) int { return bytes.Count(data, []byte{'\n'}) }

// errStop ends a walk of a tree's entries early.
var errStop = errors.New("stop")

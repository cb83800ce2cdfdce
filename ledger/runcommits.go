package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"quire/vault"
	"quire/words/address"
)

// The commits of each run, kept under .quire/commits/ so that a run's page
// lists them without walking the history (git log -- <folder> walked all
// of it: 0.3 to 0.9 s a page at 1,000 runs, growing with every commit).
// A commit is a run's when its message's trailers name the run (Run-Id,
// runTrailers): every commit quire makes of a run does, and so does one
// another program makes that keeps them (a cherry-pick, a rebase).
//
//	.quire/commits/head        the commit the index is complete through:
//	                           every commit of its history is in it
//	.quire/commits/seen        those commits' ids, 20 bytes each
//	.quire/commits/runs/<xx>/<run_id>.jsonl
//	                           a run's commits, oldest first, one JSON
//	                           object a line: commit, author, time, subject
//	                           (xx: the run id's last two characters)
//
// Each commit quire makes is added as it is made (recordCommit, under the
// lock), when the index is complete through its parent. A read finds the
// index behind HEAD when another program committed (git commit, a merge,
// a pull), or quire's commit could not be added, and adds the commits from
// the last one indexed to HEAD first (catchUpCommits, under the lock); a
// HEAD whose history does not hold the last one indexed (a reset, a
// rewrite), and an index that is gone or unreadable, is rebuilt from the
// whole history. It is derived state: nothing in it is synced, and
// deleting it costs one walk of the history.
const commitsDir = vault.QuireDir + "/commits"

// RunCommit is one commit of a run.
type RunCommit struct {
	Commit  string `json:"commit" jsonschema:"the commit's id (40 hex digits)"`
	Author  string `json:"author" jsonschema:"the author's name"`
	Time    string `json:"time" jsonschema:"the author's time, RFC 3339 in UTC"`
	Subject string `json:"subject" jsonschema:"the message's first line"`
}

func (l *Ledger) commitsPath(name string) string { return l.v.Abs(path.Join(commitsDir, name)) }

func runCommitsFile(runID string) string {
	return path.Join("runs", runID[len(runID)-2:], runID+".jsonl")
}

// commitsHead reads the commit the index is complete through (zero when
// there is no index, or it is unreadable).
func (l *Ledger) commitsHead() vault.Hash {
	b, err := os.ReadFile(l.commitsPath("head"))
	if err != nil {
		return vault.ZeroHash
	}
	return parseHash(strings.TrimSpace(string(b)))
}

// runCommitsOf answers a run's commits, oldest first, once the index is
// complete through HEAD.
func (l *Ledger) runCommitsOf(runID string) ([]RunCommit, error) {
	head, err := l.v.HeadCommit()
	if err != nil {
		return nil, err
	}
	if head.IsZero() {
		return nil, nil
	}
	if l.commitsHead() != head {
		if err := l.write(writeArgs{derived: true}, func(t *tx) error { return t.catchUpCommits() }); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(l.commitsPath(runCommitsFile(runID)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunCommit
	seen := map[string]bool{}
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		var c RunCommit
		// A line a crash cut is skipped; a commit added twice (a crash
		// between its line and the head) is answered once.
		if json.Unmarshal(line, &c) != nil || c.Commit == "" || seen[c.Commit] {
			continue
		}
		seen[c.Commit] = true
		out = append(out, c)
	}
	return out, nil
}

// indexed is one commit as the index keeps it.
type indexed struct {
	id   vault.Hash
	runs []string
	line []byte
}

func indexedOf(id vault.Hash, m vault.CommitMeta) indexed {
	subject, _, _ := strings.Cut(m.Message, "\n")
	c := RunCommit{Commit: id.String(), Author: m.Author, Time: m.When.UTC().Format(time.RFC3339), Subject: strings.TrimSpace(subject)}
	line, _ := json.Marshal(c)
	return indexed{id: id, runs: runIDsOf(m.Message), line: append(line, '\n')}
}

// runIDsOf reads the runs a commit message names in its trailers (the
// lines of its last paragraph), each once.
func runIDsOf(msg string) []string {
	msg = strings.TrimRight(msg, "\n")
	last := msg
	if i := strings.LastIndex(msg, "\n\n"); i >= 0 {
		last = msg[i+2:]
	} else if !strings.Contains(msg, "\n") {
		return nil // a subject alone has no trailers
	}
	var out []string
	for _, ln := range strings.Split(last, "\n") {
		k, v, ok := strings.Cut(ln, ":")
		if !ok || k != "Run-Id" {
			continue
		}
		v = strings.TrimSpace(v)
		if address.ValidLowerUUID(v) && !containsString(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// recordCommit adds the commit quire just made to the index, if the index
// is complete through its parent; otherwise the next read catches up. It
// fails quietly: the index is derived, and a read makes it whole again.
// The caller holds the lock.
func (l *Ledger) recordCommit(id string) {
	h := parseHash(id)
	if h.IsZero() {
		return
	}
	// The pushes to remotes take it along once the branch shows it: a
	// pusher told while the write was under way looked, found the branch
	// as it had pushed it, and slept until its next look (2 s).
	l.v.AfterCommits(l.mirrors.kick)
	through := l.commitsHead()
	if through.IsZero() {
		return // no index yet: the first read builds it
	}
	m, err := l.v.ReadCommit(h)
	if err != nil || len(m.Parents) != 1 || m.Parents[0] != through {
		return
	}
	l.addCommits(l.commitsPath(""), []indexed{indexedOf(h, m)}, h)
}

// addCommits appends commits (oldest first) to the index in dir and marks
// it complete through head: each run's lines, the ids seen, then the head.
func (l *Ledger) addCommits(dir string, cs []indexed, head vault.Hash) error {
	byRun := map[string][]byte{}
	var order []string
	ids := make([]byte, 0, 20*len(cs))
	for _, c := range cs {
		for _, r := range c.runs {
			if _, ok := byRun[r]; !ok {
				order = append(order, r)
			}
			byRun[r] = append(byRun[r], c.line...)
		}
		ids = append(ids, c.id[:]...)
	}
	for _, r := range order {
		if err := appendDerived(filepath.Join(dir, filepath.FromSlash(runCommitsFile(r))), byRun[r]); err != nil {
			return err
		}
	}
	if err := appendDerived(filepath.Join(dir, "seen"), ids); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "head.new")
	if err := os.WriteFile(tmp, []byte(head.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "head"))
}

// appendDerived appends to a file of derived state, not synced; a line
// that a crash cut is ended first, so that it spoils no line after it.
func appendDerived(abs string, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && strings.HasSuffix(abs, ".jsonl") {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			data = append([]byte{'\n'}, data...)
		}
	}
	_, err = f.Write(data)
	return err
}

// catchUpCommits brings the index up to HEAD: the commits from the last
// one indexed to HEAD are added, or, when HEAD's history does not hold it
// (or there is no index), the index is made again from the whole history.
func (t *tx) catchUpCommits() error {
	l := t.l
	head, err := l.v.HeadCommit()
	if err != nil || head.IsZero() {
		return err
	}
	through := l.commitsHead()
	if through == head {
		return nil // another caught up while this one waited
	}
	h := l.v.History()
	defer h.Close()

	// The common case, a line of commits on top of the last one indexed,
	// is walked without reading the ids seen.
	var line []indexed
	for c := head; !through.IsZero(); {
		m, err := vault.ReadCommitOf(h, c)
		if err != nil {
			return err
		}
		line = append(line, indexedOf(c, m))
		if len(m.Parents) == 0 {
			// The whole history, a line that does not hold the last one
			// indexed (a reset, a rewrite).
			reverse(line)
			return l.rebuildCommits(line, head)
		}
		if len(m.Parents) > 1 {
			break // a merge: walk the general way
		}
		if c = m.Parents[0]; c == through {
			reverse(line)
			return l.addCommits(l.commitsPath(""), line, head)
		}
	}

	// Otherwise every commit of HEAD's history not seen yet. The ids seen
	// are exactly the history of the last one indexed, so the walk meets
	// it if HEAD's history holds it.
	var seen map[vault.Hash]bool
	if !through.IsZero() {
		if b, err := os.ReadFile(l.commitsPath("seen")); err == nil && len(b)%20 == 0 {
			seen = make(map[vault.Hash]bool, len(b)/20)
			for i := 0; i < len(b); i += 20 {
				seen[vault.Hash(b[i:i+20])] = true
			}
		}
		if !seen[through] {
			seen = nil // unreadable: made again
		}
	}
	cs, met, err := walkUnseen(h, head, seen, through)
	if err != nil {
		return err
	}
	if seen != nil && met {
		return l.addCommits(l.commitsPath(""), cs, head)
	}
	if seen != nil {
		// HEAD's history does not hold the last commit indexed: walk all
		// of it.
		if cs, _, err = walkUnseen(h, head, nil, vault.ZeroHash); err != nil {
			return err
		}
	}
	return l.rebuildCommits(cs, head)
}

// walkUnseen lists the commits of head's history that are not in seen,
// parents before children, and says whether the walk met through.
func walkUnseen(h *vault.History, head vault.Hash, seen map[vault.Hash]bool, through vault.Hash) ([]indexed, bool, error) {
	type frame struct {
		id      vault.Hash
		c       indexed
		parents []vault.Hash
	}
	var out []indexed
	met := false
	visited := map[vault.Hash]bool{head: true}
	push := func(stack []frame, id vault.Hash) ([]frame, error) {
		m, err := vault.ReadCommitOf(h, id)
		if err != nil {
			return stack, err
		}
		return append(stack, frame{id: id, c: indexedOf(id, m), parents: m.Parents}), nil
	}
	if seen[head] {
		return nil, head == through, nil
	}
	stack, err := push(nil, head)
	if err != nil {
		return nil, false, err
	}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.parents) == 0 {
			out = append(out, top.c)
			stack = stack[:len(stack)-1]
			continue
		}
		p := top.parents[0]
		top.parents = top.parents[1:]
		if p == through {
			met = true
		}
		if visited[p] || seen[p] {
			continue
		}
		visited[p] = true
		if stack, err = push(stack, p); err != nil {
			return nil, false, err
		}
	}
	return out, met, nil
}

// rebuildCommits makes the index again from cs, the whole history, in a
// folder of its own that then takes the old one's place.
func (l *Ledger) rebuildCommits(cs []indexed, head vault.Hash) error {
	dir := l.commitsPath("")
	tmp := dir + ".new"
	os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	// Each run's file written once, not a line at a time.
	if err := l.addCommits(tmp, cs, head); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	old := dir + ".old"
	os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// pageCommits pages a run's commits newest first: cursor is the next of
// the page before ("" the newest), limit at most how many.
func pageCommits(all []RunCommit, cursor string, limit int) ([]RunCommit, string, error) {
	start := len(all)
	if cursor != "" {
		c, err := strconv.Atoi(cursor)
		if err != nil || c < 0 || c > len(all) {
			return nil, "", fmt.Errorf("bad cursor")
		}
		start = c
	}
	out := []RunCommit{}
	for i := start - 1; i >= 0; i-- {
		if len(out) == limit {
			return out, strconv.Itoa(i + 1), nil
		}
		out = append(out, all[i])
	}
	return out, "", nil
}

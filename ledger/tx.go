package ledger

import (
	"encoding/json"
	"errors"
	"path"
	"strings"

	"quire/ledger/checker"
	"quire/ledger/history"
	"quire/runfolder"
	"quire/vault"
	"quire/words/refusal"
)

// A tx is one write of the ledger, whatever door it came through (an
// operation, a token, a comment, a definition's save, the janitor). It is
// the only code that takes the vault's lock, and it does, in this order:
//
//  1. takes the lock (vault.Locked: what a writer that died holding it left
//     half done is finished or rolled back first);
//  2. looks the request id up again under the lock: a call repeating an id
//     that another process wrote while this one waited answers the first
//     answer and writes nothing (requests.go); a write whose effect records
//     no run event line is made undoable until it keeps its answer (see
//     settle below), so its answer and its effect are kept together;
//  3. checks that every file the write will commit (writeArgs.Keeps, or
//     t.keep where that is known only under the lock) still holds what
//     HEAD holds of it (keepOf: HEAD's complete lines a prefix of an
//     append-only file, a file written once unchanged) and that its folder
//     holds no symbolic link, and refuses, with conflict naming the file
//     and the line, before anything is written;
//  4. runs the write, which numbers (nextSeq, appendEvent) and appends
//     through the tx, and commits through it: the vault holds the same
//     guard on the exact bytes committed, and a commit that cannot be made
//     is recorded in .quire/uncommitted for the next writer (package
//     history, whose writes only the tx's methods call: histories.go);
//  5. after the lock: notifies the keeper and the watchers of the events it
//     recorded.
//
// Everything that needs the lock takes a *tx, so it cannot be called
// without one.
type tx struct {
	l *Ledger
	// notified: playbook → the last seq recorded, told after the lock.
	notified map[string]int64
	// req is the call's request id of a write that records no line of its
	// own (writeArgs.Request), and answer makes its answer, kept when the
	// write settles.
	req    *request
	answer func() (any, error)
	err    error // a settle that failed inside a commit
	// ready holds the histories history made ready in this tx (nextSeq
	// then appendEvent made every append follow git, refresh and repair
	// twice: a quarter of its CPU), until a write of the histories other
	// than a record reserved may change them (forgetReady).
	ready map[string]*history.History
}

// writeArgs say what a write is about before it starts.
type writeArgs struct {
	// Playbook scopes the request id ("" for the organization's).
	Playbook string
	// RequestID, when set, is looked up again under the lock.
	RequestID string
	// Keeps are the files or folders the write will commit, checked
	// against HEAD before it writes (a write that commits nothing names
	// none: its commit, later, is checked then).
	Keeps []string
	// Request, when set, is the request id of a write whose effect
	// records no event line to find it by (requestIn): its answer is
	// kept in the transaction, with its effect (see settle).
	Request *request
	// derived says the write changes only what is derived (.quire/, or
	// git's own move of a replica's branch), which a replica makes too;
	// every other write of a replica is refused (replica.go).
	derived bool
}

// write runs fn as one write transaction (see tx).
func (l *Ledger) write(w writeArgs, fn func(t *tx) error) error {
	if !w.derived {
		if err := l.replicaRefusal(); err != nil {
			return err
		}
	}
	t := &tx{l: l}
	err := l.v.Locked(func() error {
		if w.RequestID != "" {
			if err := t.repeatUnderLock(w.Playbook, w.RequestID); err != nil {
				return err
			}
		}
		if r := w.Request; r != nil {
			if s, ok := l.lookupRequest(r.scope, r.id); ok {
				return &repeated{s}
			}
			if err := l.v.Undoable(l.requestRel(r.scope, r.id)); err != nil {
				return err
			}
			t.req = r
		}
		if err := t.keep(w.Keeps...); err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
		if t.err != nil {
			return t.err
		}
		return t.settle()
	})
	if err != nil {
		return err
	}
	for p, seq := range t.notified {
		l.notify(p, seq)
	}
	return nil
}

// A write with a request id that records no line of its own is undoable
// (vault.Undoable) until it settles: the files it changes are touched
// first (t.touch), so that a writer that dies before its answer is kept
// is undone by the next, and the retry makes it once. It settles once its
// effect is written and before it commits: settle keeps the answer (made
// by t.answer's function, under the lock), then marks the write as one
// that stands. So a kept answer and the effect are there together, or
// neither is: request_id is exactly-once at every point a writer can stop.
//
// answerWith names the function that makes the answer: the handler calls
// it before the write's commit.
func (t *tx) answerWith(fn func() (any, error)) { t.answer = fn }

// touch says, before an undoable write changes the file rel, how to put it
// back (an append-only file by its size, any other by a copy).
func (t *tx) touch(rel string, appendOnly bool) error {
	if t.req == nil {
		return nil
	}
	return t.l.v.Touch(rel, appendOnly)
}

// settle keeps the answer of the write's request and marks the write as
// one that stands (nothing for a write without a request, or settled).
func (t *tx) settle() error {
	if t.req == nil || t.l.v.Settled() {
		return nil
	}
	if t.answer == nil {
		return errors.New("ledger: a write with a request id settles without an answer")
	}
	out, err := t.answer()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := t.l.keepRequest(t.req.scope, t.req.id, stored{Op: t.req.op, Digest: t.req.digest, Answer: raw}, false); err != nil {
		return err
	}
	t.req.kept = raw
	return t.l.v.Settle()
}

// keep checks that the files or folders at paths still hold what HEAD
// holds of them (and hold no symbolic link), before the write writes
// what it will commit.
func (t *tx) keep(paths ...string) error {
	if err := t.l.v.Kept(paths); err != nil {
		return handEdit(err)
	}
	return nil
}

// readLocked runs fn holding the lock as a reader that must see the vault
// between writes (quire check): fn changes nothing.
func (l *Ledger) readLocked(fn func() error) error { return l.v.LockedRead(fn) }

// notify tells the playbook's keeper and the watchers of the event of seq
// once the write is over.
func (t *tx) notify(playbook string, seq int64) {
	if seq <= 0 {
		return
	}
	if t.notified == nil {
		t.notified = map[string]int64{}
	}
	if seq > t.notified[playbook] {
		t.notified[playbook] = seq
	}
}

// handEdit words a file whose committed part a person changed as the
// refusal every door shows.
func handEdit(err error) error {
	var he *vault.HandEdit
	if !errors.As(err, &he) {
		return err
	}
	return refusal.New(refusal.Conflict, "%s: line %d differs from the commit (HEAD), and quire commits no change to what was committed: %s. "+
		"Run quire janitor to restore the committed part from HEAD (it keeps the edited copy in %s/ and the lines appended after it)",
		he.Path, he.Line, checker.KeepWords(he.Keep), vault.QuarantineDir)
}

// playbookKeeps are the files a write to a playbook's history keeps: its
// events.jsonl (none for the organization's own writes, playbook "").
func playbookKeeps(playbook string) []string {
	if playbook == "" {
		return nil
	}
	return []string{path.Join(playbookDir(playbook), "events.jsonl")}
}

// keepOf says what a file of the vault keeps of what HEAD holds of it
// (the vault's guard): a run's run.jsonl and thread.md and a playbook's
// events.jsonl are append-only (rule 3 of the capsule), a run's
// definition.md is written once (rule 2). The rest quire rewrites or
// replaces. What Prefix asks (vault.KeptLines) is also the rule 3 that
// quire check --history proves of every commit's run.jsonl (ledger/checker).
func keepOf(rel string) vault.Keep {
	dir, name := path.Split(rel)
	dir = strings.TrimSuffix(dir, "/")
	switch top, _, _ := strings.Cut(dir, "/"); {
	case top == vault.RunsDir && strings.Count(rel, "/") == 2:
		switch name {
		case runfolder.LogFile, runfolder.ThreadFile:
			return vault.Prefix
		case runfolder.DefinitionFile:
			return vault.Whole
		}
	case top == "playbooks" && strings.Count(rel, "/") == 2 && name == "events.jsonl":
		return vault.Prefix
	}
	return vault.Free
}

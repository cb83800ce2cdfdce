package ledger

import (
	"encoding/json"
	"fmt"
	"path"
	"sync"
	"time"

	"github.com/google/uuid"

	"quire/fold"
	"quire/ledger/history"
	"quire/vault"
	"quire/words/event"
	"quire/words/refusal"
)

// Ledger is the runtime over one open vault.
type Ledger struct {
	v *vault.Vault
	// Now is the clock; tests set it.
	Now func() time.Time

	// hist is the playbooks' histories (histories.go).
	hist *history.Store

	reads    reads // readsonce.go
	views    views
	watch    watchers
	requests requestLocks // requests.go
	mirrors  mirrors      // the pushes to remotes (remotes.go)
	homes    sync.Map     // playbook → its home as last read (remotes.go)
	replica  replica      // the remote a replica follows (replica.go)
	runIdx   runIndex     // the runs' facts list_runs filters by (runindex.go)
	evFiles  eventFiles   // each playbook's event files (histories.go)

	// OnEvent, when set before the ledger is used, is called after every
	// event the ledger records, outside the lock, with the playbook and its
	// new last seq.
	OnEvent func(playbook string, seq int64)

	// OnCatchUp, when set before the ledger is used, is told how a read
	// without a server folds what is new for a page's views (the page is
	// its subject, such as "workflow/morning-social-content"), after every
	// page of records. The CLI prints progress from it.
	OnCatchUp func(playbook string, p fold.Progress)

	// OnProgress, when set before the ledger is used, is told how long
	// work goes, after each of its units: reindex (playbooks), check's
	// walk of the git history (commits), the janitor (runs). task names
	// the work; done of total units are through.
	OnProgress func(task, unit string, done, total int)
}

// progress tells OnProgress, when it is set.
func (l *Ledger) progress(task, unit string, done, total int) {
	if l.OnProgress != nil {
		l.OnProgress(task, unit, done, total)
	}
}

// Open opens the vault at dir.
func Open(dir string) (*Ledger, error) {
	v, err := vault.Open(dir)
	if err != nil {
		return nil, err
	}
	return New(v), nil
}

// New wraps an open vault.
func New(v *vault.Vault) *Ledger {
	l := &Ledger{v: v, Now: time.Now}
	l.hist = history.New(v, historySource{l})
	l.views.keepers = map[string]*keeperOf{}
	l.views.programs = map[string]*fold.Program{}
	v.OnRecover = l.recoverVault
	v.SetGuard(keepOf)
	return l
}

// Close stops the fold's workers and waits for the vault's background work.
func (l *Ledger) Close() error {
	l.views.mu.Lock()
	pool, tryPool := l.views.pool, l.views.tryPool
	l.views.pool, l.views.tryPool = nil, nil
	l.views.mu.Unlock()
	if pool != nil && pool != poolForTests {
		pool.Close()
	}
	if tryPool != nil {
		tryPool.Close()
	}
	return l.v.Close()
}

func playbookDir(p string) string { return path.Join("playbooks", p) }

// newID is a lowercase UUID of version 7.
func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		panic(err)
	}
	return id.String()
}

// when reads an optional RFC 3339 time argument, or the clock.
func (l *Ledger) when(arg string, field string) (time.Time, error) {
	if arg == "" {
		return l.Now().UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, arg)
	if err != nil {
		return t, refusal.Invalid(field, "%q is not an RFC 3339 time such as 2026-11-01T09:30:00Z", arg)
	}
	return t, nil
}

// MaxAhead is how far ahead of the server's clock an event's time may be
// (event.MaxAhead).
const MaxAhead = event.MaxAhead

// eventTime reads the optional time of an event: the zero time when left
// out, for the writer to take the clock under the vault's lock (so that
// writers queued on the lock never go back in time). A time more than
// MaxAhead ahead of the clock is refused.
func (l *Ledger) eventTime(arg, field string) (time.Time, error) {
	if arg == "" {
		return time.Time{}, nil
	}
	t, err := l.when(arg, field)
	if err != nil {
		return t, err
	}
	if t.Before(time.Unix(0, 0)) {
		// The zero time (0001-01-01T00:00:00Z) among them: it was taken
		// for a time left out, and the clock written in its place.
		return t, refusal.Invalid(field, "%s is before 1970-01-01T00:00:00Z; an event's time is when it happened (git dates commits from 1970 on), or is left out for the server's clock", arg)
	}
	now := l.Now()
	if ahead := t.Sub(now); ahead > MaxAhead {
		return t, refusal.Invalid(field, "%s is %s ahead of the server's clock (%s); an event's time may be at most %d minutes ahead",
			arg, aboutDuration(ahead), event.FormatTime(now), int(MaxAhead/time.Minute))
	}
	return t, nil
}

// aboutDuration says a duration the way a person would, to the second
// below two hours, in hours below two days, in days beyond.
func aboutDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	}
	return d.Round(time.Second).String()
}

// stamp is the timestamp of an event at t, or "" for the writer to take
// the clock under the lock when t is zero (see eventTime).
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return event.FormatTime(t)
}

// recordPlaybookEvent appends an event to playbooks/<p>/events.jsonl. The
// caller holds the lock and commits.
func (t *tx) recordPlaybookEvent(playbook string, ln *event.Line) error {
	l := t.l
	// Lines written by hand at the end of events.jsonl are numbered first.
	if err := t.adoptLines(playbook, path.Join(playbookDir(playbook), "events.jsonl")); err != nil {
		return err
	}
	seq, err := t.nextSeq(playbook)
	if err != nil {
		return err
	}
	ln.Seq = seq
	if ln.ID == "" {
		ln.ID = newID()
	}
	raw, err := ln.Marshal()
	if err != nil {
		return err
	}
	file := path.Join(playbookDir(playbook), "events.jsonl")
	abs, err := l.v.WritePath(file)
	if err != nil {
		return err
	}
	if _, err := vault.RepairTail(abs); err != nil && !isNotExist(err) {
		return err
	}
	if err := t.touch(file, true); err != nil {
		return err
	}
	off := fileSize(abs)
	if _, err := t.appendEvent(playbook, func(reserve func(string, int64, int) error) error {
		if err := reserve(file, off, len(raw)); err != nil {
			return err
		}
		_, err := vault.AppendLine(abs, raw)
		return err
	}); err != nil {
		return err
	}
	return nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("ledger: %v", err))
	}
	return b
}

// notify tells the keeper of the playbook's views (while quire serve keeps
// them) and the OnEvent hook of a new event.
func (l *Ledger) notify(playbook string, seq int64) {
	if seq <= 0 {
		return
	}
	l.wake(playbook)
	if l.OnEvent != nil {
		l.OnEvent(playbook, seq)
	}
	l.tell(playbook, WatchEvent)
}

// What a watcher is told of (Watch).
const (
	WatchEvent = "event" // the playbook recorded an event through this ledger
	WatchViews = "views" // a page's views read further, caught up or stalled
)

type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(playbook, what string)
}

// Watch calls fn, until cancel is called, after every event this ledger
// records (WatchEvent) and whenever the views of one of the playbook's
// pages move while quire serve keeps them (WatchViews). fn runs on the
// writer's goroutine, outside the vault's lock: it must return at once.
func (l *Ledger) Watch(fn func(playbook, what string)) (cancel func()) {
	w := &l.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fns == nil {
		w.fns = map[int]func(string, string){}
	}
	w.next++
	id := w.next
	w.fns[id] = fn
	return func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	}
}

func (l *Ledger) tell(playbook, what string) {
	w := &l.watch
	w.mu.Lock()
	fns := make([]func(string, string), 0, len(w.fns))
	for _, fn := range w.fns {
		fns = append(fns, fn)
	}
	w.mu.Unlock()
	for _, fn := range fns {
		fn(playbook, what)
	}
}

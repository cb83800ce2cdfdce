package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"sync"
	"time"

	"quire/fold"
	"quire/fold/module"
	"quire/vault"
	"quire/words/event"
	"quire/words/filter"
	"quire/words/page"
)

// The views of every page with data are kept by one fold.Keeper per
// playbook, over that playbook's history, in .quire/views/<playbook>/.
// A page is known to its keeper by its subject (<type>/<name>, or
// "playbook" for the playbook's own page).
//
// quire serve keeps them in the background (Keep): woken by every event
// the ledger records, and once a second for events other processes wrote.
// Without a server, a read first folds what is new (CatchUp), within the
// same limits, so the CLI answers with live views when it can.

type views struct {
	mu       sync.Mutex
	pool     *fold.Pool
	tryPool  *fold.Pool    // try_code's, whose one view has no shape
	tryCalls chan struct{} // try_code's calls running or waiting (agentrun_ops.go)
	keepers  map[string]*keeperOf
	programs map[string]*fold.Program // by data hash
	serving  bool
	ctx      context.Context
	// stale names the playbooks whose history was rebuilt under their
	// views (historySource.Forget).
	stale    map[string]bool
	pageSize int // records a keeper reads at once; 0 for the page format's 1,000 (tests set it)
	// replayPages is how many pages of 1,000 records a replay reaches; 0
	// for the page format's 10 (tests set it, to reach past it cheaply).
	replayPages int
	digests     digests // of the views, for their receipts (receipts.go)
}

type keeperOf struct {
	k     *fold.Keeper
	stamp int64 // the playbook's events.jsonl size and playbook.md's mtime when its pages were registered
	// reg is held while its pages are registered: two callers that find
	// the stamp stale (a write's wake and a read) register one at a time
	// (ids is read and replaced there; the race detector found it).
	reg sync.Mutex
	ids map[string]bool
	// running is set once its Run goroutine is started (under views.mu):
	// by the first keeper call while serving, whether the keeper was made
	// then or by a read before Keep.
	running bool
}

// playbookHistory is what a keeper reads: the playbook's history in
// CloudEvents form. A page is a page of the history's records, of every
// kind; the events a fold never sees (steps, tool calls,
// playbook_page_saved) are left out of its events, and the page says how
// far it read and whether the history holds more, so a page of records no
// fold sees moves the views on like any other.
type playbookHistory struct {
	l        *Ledger
	playbook string
}

// unseen tells the events no fold sees: the steps and call records of a
// run, and playbook_page_saved (the page format: "which no fold sees").
func unseen(typ string) bool {
	switch typ {
	case event.StepStarted, event.StepCompleted, event.StepFailed, event.StepRetrying, event.StepDeadLetter,
		event.StepInDoubt, event.StepSkipped, event.CallRecord, event.CompensationStepCompleted, event.CompensationStepFailed,
		event.PlaybookPageSaved:
		return true
	}
	return false
}

func (h playbookHistory) Page(ctx context.Context, after int64, limit int) (fold.HistoryPage, error) {
	recs, err := h.l.History(h.playbook, after, limit)
	if err != nil {
		return fold.HistoryPage{}, err
	}
	newest, newestAt, err := h.l.historyEnd(h.playbook)
	if err != nil {
		return fold.HistoryPage{}, err
	}
	hp, err := historyPage(h.playbook, recs, after, limit, newest, newestAt)
	if err == nil && len(recs) > 0 {
		// A chain this process cannot keep (a vault read-only to it)
		// leaves the views without a receipt, never without their fold.
		hp.Chain, _ = h.l.historyChain(h.playbook, hp.Through)
	}
	return hp, err
}

// historyPage is a keeper's page of the records recs read after after (at
// most limit), in a history whose newest record is newest.
func historyPage(playbook string, recs []Record, after int64, limit int, newest int64, newestAt time.Time) (fold.HistoryPage, error) {
	hp := fold.HistoryPage{Through: after, Newest: newest, NewestAt: newestAt, Events: make([]fold.Event, 0, len(recs))}
	for i := range recs {
		r := &recs[i]
		ev, seen, err := foldEvent(playbook, r)
		if err != nil {
			return fold.HistoryPage{}, err
		}
		hp.Through, hp.ThroughAt, hp.ThroughID = r.Seq, ev.Time, r.Line.ID
		if seen {
			hp.Events = append(hp.Events, ev)
		}
	}
	// A page cut short by a record still being written ends the history
	// for now: its writer wakes the keeper once it is whole.
	hp.More = len(recs) == limit && hp.Through < newest
	return hp, nil
}

// foldEvent is a record of the history as a fold reads it, in CloudEvents
// form, and whether a fold sees it at all (unseen). Ev.Time is when the
// playbook recorded it, for one it does not see too.
func foldEvent(playbook string, r *Record) (ev fold.Event, seen bool, err error) {
	t, _ := event.ParseTime(r.Line.Timestamp)
	ev = fold.Event{Seq: r.Seq, Time: t}
	if unseen(r.Line.Event) {
		return ev, false, nil
	}
	ev.JSON, err = json.Marshal(r.Line.ToCloud(playbook))
	return ev, err == nil, err
}

// historyEnd is the seq of the playbook's newest whole record and when it
// was recorded (zero before the first).
func (l *Ledger) historyEnd(playbook string) (int64, time.Time, error) {
	n, err := l.HistoryLen(playbook)
	if err != nil || n == 0 {
		return 0, time.Time{}, err
	}
	recs, err := l.History(playbook, n-1, 1)
	if err == nil && len(recs) == 0 && n > 1 {
		// The newest record is being written: the newest whole one is
		// the one before it.
		n--
		recs, err = l.History(playbook, n-1, 1)
	}
	if err != nil || len(recs) == 0 {
		return n, time.Time{}, err
	}
	t, _ := event.ParseTime(recs[0].Line.Timestamp)
	return n, t, nil
}

// Keep runs the keepers of every playbook until ctx ends: quire serve's
// background folding. Reads then answer at once with the standing as it is.
func (l *Ledger) Keep(ctx context.Context) error {
	l.views.mu.Lock()
	l.views.serving, l.views.ctx = true, ctx
	l.views.mu.Unlock()
	es, err := l.v.FindType("playbook", func(*vault.Entry) bool { return true })
	if err != nil {
		return err
	}
	for _, e := range es {
		if _, err := l.keeper(e.Playbook); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

// wake tells a playbook's keeper, while serving, that its history grew.
func (l *Ledger) wake(playbook string) {
	l.views.mu.Lock()
	serving := l.views.serving
	l.views.mu.Unlock()
	if !serving {
		return
	}
	if k, err := l.keeper(playbook); err == nil {
		k.k.Wake()
	}
}

// poolForTests, set by this package's tests alone, is one pool that
// every Ledger of the test binary borrows, its workers kept warm from test
// to test (a worker costs some half a second of CPU to start); a Ledger
// does not close it.
var poolForTests *fold.Pool

// compiledCache is where the fold pools keep wazero's compiled QuickJS:
// the user's, shared by every vault (fold.CompiledCache), or the vault's
// .quire/qjs-cache when there is none to write.
func (l *Ledger) compiledCache() string {
	return fold.CompiledCache(l.v.Abs(path.Join(vault.QuireDir, "qjs-cache")))
}

func (l *Ledger) foldPool() (*fold.Pool, error) {
	v := &l.views
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pool == nil && poolForTests != nil {
		v.pool = poolForTests
	}
	if v.pool == nil {
		p, err := fold.NewPool(fold.PoolOptions{CacheDir: l.compiledCache()})
		if err != nil {
			return nil, err
		}
		v.pool = p
	}
	return v.pool, nil
}

// forgetViews throws away a playbook's views when its history was rebuilt:
// they were folded from events that may be gone. It runs outside the vault
// lock, as a keeper's folds take the history without it.
func (l *Ledger) forgetViews(playbook string) {
	v := &l.views
	v.mu.Lock()
	if !v.stale[playbook] {
		v.mu.Unlock()
		return
	}
	delete(v.stale, playbook)
	ko := v.keepers[playbook]
	v.mu.Unlock()
	if ko != nil {
		// Under reg, and the stamp made stale before the first page is
		// unregistered: a read that meets its page unregistered asks for
		// the keeper again (registered), finds the stamp stale and waits
		// here for the pages to be registered anew. With the stamp made
		// stale last, a read's three tries could all fall between the
		// two, and render_page on a replica answered 503, "the page is
		// not registered" (TestAReplicasPageViewsFollow in CI's long
		// run, on a loaded machine).
		ko.reg.Lock()
		defer ko.reg.Unlock()
		v.mu.Lock()
		ids := ko.ids
		ko.ids, ko.stamp = map[string]bool{}, -1
		v.mu.Unlock()
		for id := range ids {
			ko.k.Unregister(id)
		}
	}
	// The folder is the keeper's, which made it once and goes on
	// writing into it: it is emptied and made again, not left gone.
	dir := l.v.Abs(path.Join(vault.QuireDir, "views", playbook))
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
}

// keeper answers the playbook's keeper, registering its pages anew when the
// playbook's events or playbook.md changed since.
func (l *Ledger) keeper(playbook string) (*keeperOf, error) {
	l.forgetViews(playbook)
	pool, err := l.foldPool()
	if err != nil {
		return nil, err
	}
	stamp := fileSize(l.v.Abs(path.Join(playbookDir(playbook), "events.jsonl")))
	if fi, err := os.Stat(l.v.Abs(path.Join(playbookDir(playbook), "playbook.md"))); err == nil {
		stamp = stamp*31 + fi.ModTime().UnixNano()
	}
	v := &l.views
	v.mu.Lock()
	ko := v.keepers[playbook]
	if ko == nil {
		cfg, err := l.v.Config()
		if err != nil {
			v.mu.Unlock()
			return nil, err
		}
		k, err := fold.NewKeeper(fold.KeeperOptions{
			Dir: l.v.Abs(path.Join(vault.QuireDir, "views", playbook)), History: playbookHistory{l, playbook},
			Pool: pool, MaxRebuilds: cfg.PageMaxRebuilds, PageSize: v.pageSize, ReplayPages: v.replayPages,
			Moved: func(string) { l.tell(playbook, WatchViews) },
			Log:   l.v.Logger(),
			Progress: func(p fold.Progress) {
				if l.OnCatchUp != nil {
					l.OnCatchUp(playbook, p)
				}
			},
		})
		if err != nil {
			v.mu.Unlock()
			return nil, err
		}
		ko = &keeperOf{k: k, stamp: -1, ids: map[string]bool{}}
		v.keepers[playbook] = ko
	}
	// A keeper a read made before Keep (quire serve answers as soon as it
	// listens, Keep starts beside it) is run by the first call after:
	// started only with the keeper, it was never run, and its pages
	// stayed as that read left them.
	if v.serving && !ko.running {
		ko.running = true
		go ko.k.Run(v.ctx)
	}
	fresh := ko.stamp == stamp
	v.mu.Unlock()
	if fresh {
		return ko, nil
	}
	ko.reg.Lock()
	defer ko.reg.Unlock()
	v.mu.Lock()
	fresh = ko.stamp == stamp // registered meanwhile by another caller
	v.mu.Unlock()
	if fresh {
		return ko, nil
	}
	if err := l.registerPages(playbook, ko); err != nil {
		return nil, err
	}
	v.mu.Lock()
	ko.stamp = stamp
	v.mu.Unlock()
	return ko, nil
}

// registerPages registers every page with data of the playbook (in the
// order their subjects were made, so rebuilds wait in save order), and
// unregisters those gone or retired.
func (l *Ledger) registerPages(playbook string, ko *keeperOf) error {
	subjects, err := l.pagedSubjects(playbook)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, s := range subjects {
		if s.Page == nil || s.Page.Data == nil || s.Retired {
			continue
		}
		prog, err := l.program(s.Page, s.DataHash)
		if err != nil {
			continue // a page saved before its checks: it keeps no views
		}
		if err := ko.k.Register(foldPage(s, prog)); err != nil {
			return err
		}
		seen[s.ID] = true
	}
	for id := range ko.ids {
		if !seen[id] {
			ko.k.Unregister(id)
		}
	}
	ko.ids = seen
	return nil
}

// foldPage is the subject's page as a keeper keeps its views.
func foldPage(s *subject, prog *fold.Program) fold.Page {
	return fold.Page{ID: s.ID, Version: s.Version, DataHash: s.DataHash, Program: prog, Filters: pageFilters(s.Page)}
}

// pageFilters are a page's data.source.events as the keeper matches them.
func pageFilters(p *page.Page) filter.Filters {
	filters := make(filter.Filters, len(p.Data.Filters))
	for i, f := range p.Data.Filters {
		filters[i] = f.Match
	}
	return filters
}

func (l *Ledger) program(p *page.Page, hash string) (*fold.Program, error) {
	v := &l.views
	v.mu.Lock()
	prog := v.programs[hash]
	v.mu.Unlock()
	if prog != nil {
		return prog, nil
	}
	js, lines, err := module.TranspileMapped(p.Data.Module)
	if err != nil {
		return nil, fmt.Errorf("transpiling the module: %w", err)
	}
	prog = fold.NewProgram(js, lines, p.Data.ModuleLine, p.ViewMap())
	v.mu.Lock()
	v.programs[hash] = prog
	v.mu.Unlock()
	return prog, nil
}

// awaitFold is how long a read through a server waits for its keeper to
// fold what the history holds beyond the views (the event it just
// recorded, such as end_run's): then it answers the views as they are,
// behind and so not live.
const awaitFold = 2 * time.Second

// viewsOf answers a subject's views and standing. Without a server, a
// read first folds everything that is new (CatchUp), every page of it,
// telling OnCatchUp how it goes. While serving, the keeper folds in the
// background: a read whose views have not read the history to its newest
// record wakes it and waits for it, at most awaitFold.
func (l *Ledger) viewsOf(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error) {
	views, st, err := l.foldedViews(ctx, s)
	if err == nil && st.State == fold.StateLive {
		// The histories followed git before this read (followGitForRead):
		// views that folded to the newest record reflect HEAD.
		if head, herr := l.v.HeadCommit(); herr == nil && !head.IsZero() {
			st.Commit = head.String()
		}
	}
	return views, st, err
}

// foldedViews is viewsOf without the commit. A read that meets its page
// unregistered (another read is registering the playbook's pages anew
// after its history was rebuilt: a replica's fetch, a reindex) asks the
// keeper again (registered).
func (l *Ledger) foldedViews(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error) {
	return registered(func() (json.RawMessage, fold.Standing, error) { return l.keptViews(ctx, s) })
}

// registered runs a read of a page's views again when it met the page
// unregistered, as its playbook's pages were registered anew: the read
// asks l.keeper again, which registers them (at most three tries).
func registered(read func() (json.RawMessage, fold.Standing, error)) (json.RawMessage, fold.Standing, error) {
	for try := 1; ; try++ {
		views, st, err := read()
		if !errors.Is(err, fold.ErrNotRegistered) || try == 3 {
			return views, st, err
		}
	}
}

func (l *Ledger) keptViews(ctx context.Context, s *subject) (json.RawMessage, fold.Standing, error) {
	ko, err := l.keeper(s.Playbook)
	if err != nil {
		return nil, fold.Standing{}, err
	}
	l.views.mu.Lock()
	serving := l.views.serving
	l.views.mu.Unlock()
	if serving {
		newest, newestAt, err := l.historyEnd(s.Playbook)
		if err != nil {
			return nil, fold.Standing{}, err
		}
		return ko.k.Await(ctx, s.ID, newest, newestAt, awaitFold)
	}
	if _, err := ko.k.CatchUp(ctx, s.ID); err != nil {
		return nil, fold.Standing{}, err
	}
	return ko.k.Views(s.ID)
}

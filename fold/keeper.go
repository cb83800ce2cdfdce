package fold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	// Named so: the package's tests have a helper called event.
	runline "quire/words/event"
	"quire/words/filter"
)

// History is the playbook's history as the keeper reads it; the caller
// (package ledger) implements it over the vault.
type History interface {
	// Page reads up to limit records of the history with seq > after, in
	// seq order: every record the playbook recorded, whether a fold may
	// see it or not. It answers the events among them a fold may see, and
	// how far it read in the history and whether there is more: the page
	// and its end are the raw history's, never what was left of it.
	Page(ctx context.Context, after int64, limit int) (HistoryPage, error)
}

// HistoryPage is one page of records read from the history.
type HistoryPage struct {
	// Events are the records read that a fold may see, in seq order; the
	// others (steps, call records, playbook_page_saved) are left out.
	Events []Event
	// Through is the seq of the last record read (after, when none was
	// read), and ThroughAt when the playbook recorded it.
	Through   int64
	ThroughAt time.Time
	// ThroughID is the id of the record Through, and Chain the history's
	// chain over its records 1 to Through (a view receipt names both).
	ThroughID string
	Chain     string
	// More tells whether the history holds records after Through.
	More bool
	// Newest is the seq of the history's newest record, and NewestAt when
	// the playbook recorded it.
	Newest   int64
	NewestAt time.Time
}

// Page is a page with data, as the keeper keeps its views.
type Page struct {
	// ID names the page (its subject, such as "workflow/morning-social-content").
	ID string
	// Version is the subject's version the page is of.
	Version int
	// DataHash is the hash of the page's data: a page registered again
	// with another hash is rebuilt from the start; with the same hash it
	// keeps its views.
	DataHash string
	Program  *Program
	Filters  filter.Filters
}

// States of the standing.
const (
	StateLive       = "live"
	StateRebuilding = "rebuilding"
	StateWaiting    = "waiting"
	StateStalled    = "stalled"
	StateOutOfReach = "out_of_reach"
)

// LastEvent is the last event the views folded.
type LastEvent struct {
	ID   string `json:"id"`
	Time string `json:"time"`
}

// Standing is the page format's standing of the views.
type Standing struct {
	State          string     `json:"state"`
	Version        int        `json:"version"`
	Checkpoint     *string    `json:"checkpoint"`
	CheckpointAt   *time.Time `json:"checkpoint_at"`
	LastEvent      *LastEvent `json:"last_event"`
	Folded         int64      `json:"folded"`
	LagMs          int64      `json:"lag_ms"`
	NewestRecordAt *time.Time `json:"newest_record_at"`
	Stalled        *Stall     `json:"stalled,omitempty"`
	// Commit is the vault's commit (HEAD) the views reflect, once they
	// have folded the history to its newest record; the ledger sets it.
	Commit string `json:"commit,omitempty"`
	// From is what the views were folded from, for their receipt.
	From Checkpoint `json:"-"`
}

// Checkpoint is what views were folded from: the history's records 1 to
// Seq, ThroughID the id of record Seq and Chain the history's chain over
// them (HistoryPage).
type Checkpoint struct {
	Seq       int64
	ThroughID string
	Chain     string
}

// KeeperOptions configure a Keeper.
type KeeperOptions struct {
	// Dir is the folder (under .quire/) the views are kept in.
	Dir     string
	History History
	Pool    *Pool
	// MaxRebuilds is PAGE_MAX_REBUILDS: how many pages are built at once (4).
	MaxRebuilds int
	// PageSize is how many records are read and folded at once (1,000).
	PageSize int
	// ReplayPages is how many pages of 1,000 records of the history a
	// replay as of a run may read (10): records of every kind count, those
	// no fold sees among them. The replay reads them PageSize at a time.
	ReplayPages int
	// Pass is how often Run looks for records another server wrote (1 s).
	Pass time.Duration
	// Progress, when not nil, is told how a CatchUp goes, after every
	// page of records it reads.
	Progress func(Progress)
	// Moved, when not nil, is told (outside the keeper's lock) whenever a
	// page's views read further, catch up or stall: a server pushes it to
	// the pages open in browsers.
	Moved func(pageID string)
	// PassedOver is told, once for each, of an event the filters take but
	// the fold cannot read (not JSON, or nesting deeper than 512 levels);
	// the views go on without it. nil: nobody is told.
	PassedOver func(pageID string, ev Event, why string)
	// Log is told when Run cannot advance a page's views (the history
	// cannot be read, a fold worker fails): once for each error, not at
	// each pass that meets it again. nil: standard error.
	Log *slog.Logger
}

// Keeper keeps the views of registered pages in Dir, advancing them page
// by page from their checkpoints.
type Keeper struct {
	opts KeeperOptions

	mu    sync.Mutex
	pages map[string]*pageState
	reg   int64
	wake  chan struct{}
	// shared is the history the newest pass of Run reads through.
	shared *sharedHistory
	// changed is closed, and made anew, whenever a page's views move.
	changed chan struct{}

	toldMu sync.Mutex
	told   map[int64]bool
}

// skippedBy answers the history of the newest pass of Run when that pass
// skipped the page while it ran (nil when none did), and forgets it: the
// page reads what woke that pass as the pages of that pass read it.
func (k *Keeper) skippedBy(ps *pageState) History {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !ps.skipped {
		return nil
	}
	ps.skipped = false
	if !ps.st.Live {
		return k.opts.History // see Run: a page being built reads its own way
	}
	return k.shared
}

// sharedHistory reads each page of the history once for every page that
// asks for it during one pass of Run; concurrent askers wait for the one
// read. It lives for one pass alone: the history grows between passes.
type sharedHistory struct {
	h  History
	mu sync.Mutex
	m  map[[2]int64]*sharedPage
}

type sharedPage struct {
	done chan struct{}
	hp   HistoryPage
	err  error
}

func newSharedHistory(h History) *sharedHistory {
	return &sharedHistory{h: h, m: map[[2]int64]*sharedPage{}}
}

func (s *sharedHistory) Page(ctx context.Context, after int64, limit int) (HistoryPage, error) {
	key := [2]int64{after, int64(limit)}
	s.mu.Lock()
	p, ok := s.m[key]
	if !ok {
		p = &sharedPage{done: make(chan struct{})}
		s.m[key] = p
	}
	s.mu.Unlock()
	if !ok {
		p.hp, p.err = s.h.Page(ctx, after, limit)
		for i := range p.hp.Events {
			p.hp.Events[i].match = filter.NewEvent(p.hp.Events[i].JSON)
		}
		close(p.done)
	}
	select {
	case <-p.done:
		return p.hp, p.err
	case <-ctx.Done():
		return HistoryPage{}, ctx.Err()
	}
}

type pageState struct {
	fold sync.Mutex // held while the views advance

	// guarded by Keeper.mu
	page    Page
	reg     int64
	gen     int64 // bumped when the data changes: a fold of an older gen is dropped
	st      kept
	running bool
	skipped bool   // a pass of Run found it running
	failed  string // the error Run last logged for this page, "" once it advanced
}

// NewKeeper makes a keeper; Dir is made if it is not there.
func NewKeeper(opts KeeperOptions) (*Keeper, error) {
	if opts.Dir == "" || opts.History == nil || opts.Pool == nil {
		return nil, errors.New("fold: a keeper needs a folder, a history and a pool")
	}
	if opts.MaxRebuilds <= 0 {
		opts.MaxRebuilds = 4
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 1000
	}
	if opts.ReplayPages <= 0 {
		opts.ReplayPages = 10
	}
	if opts.Pass <= 0 {
		opts.Pass = time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("fold: the views' folder: %w", err)
	}
	return &Keeper{opts: opts, pages: map[string]*pageState{}, wake: make(chan struct{}, 1), changed: make(chan struct{})}, nil
}

// Register adds a page, or saves a new version of one. Views kept for the
// same data hash (in memory or in Dir) are kept; otherwise, and whenever
// the data changed, the views are built from the start of the history,
// replacing views being built, waiting or stalled.
func (k *Keeper) Register(p Page) error {
	if p.ID == "" || p.Program == nil {
		return errors.New("fold: a page needs an id and a program")
	}
	p.Program.init()
	k.mu.Lock()
	ps, ok := k.pages[p.ID]
	if ok && ps.st.DataHash == p.DataHash {
		ps.page = p
		ps.st.Version = p.Version
		k.mu.Unlock()
		k.Wake()
		return nil
	}
	k.mu.Unlock()

	var st kept
	if !ok {
		if disk, err := readKept(k.opts.Dir, p.ID); err != nil {
			return err
		} else if disk != nil && disk.DataHash == p.DataHash {
			st = *disk
		}
	}
	if st.Views == nil {
		st = kept{ID: p.ID, DataHash: p.DataHash, Views: json.RawMessage(`{}`)}
	}
	st.Version = p.Version

	k.mu.Lock()
	if ps, ok = k.pages[p.ID]; ok {
		ps.page, ps.st = p, st
		ps.gen++
	} else {
		k.reg++
		k.pages[p.ID] = &pageState{page: p, reg: k.reg, st: st}
	}
	k.changedLocked()
	k.mu.Unlock()
	k.Wake()
	return nil
}

// Unregister stops keeping a page's views (a retired definition) and
// removes them from Dir.
func (k *Keeper) Unregister(id string) error {
	k.mu.Lock()
	ps, ok := k.pages[id]
	if ok {
		ps.gen++
		delete(k.pages, id)
		k.changedLocked()
	}
	k.mu.Unlock()
	if !ok {
		return nil
	}
	ps.fold.Lock() // let a page being folded finish
	defer ps.fold.Unlock()
	if err := os.Remove(keptPath(k.opts.Dir, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	k.Wake()
	return nil
}

// ErrNotRegistered is a read of a page the keeper does not keep (now): a
// page unregistered while its playbook's pages are registered anew (a
// history rebuilt under them) is registered again by the next read.
var ErrNotRegistered = errors.New("fold: the page is not registered")

// Wake tells the keeper a new event was recorded; Run folds it.
func (k *Keeper) Wake() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// Run keeps the views until ctx ends: on every Wake and every pass it
// advances each page that is live (liveWorkers at a time) or has its turn
// to be built (each in a goroutine of its own).
func (k *Keeper) Run(ctx context.Context) error {
	t := time.NewTicker(k.opts.Pass)
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	var live []*pageState
	for {
		k.mu.Lock()
		// The pages of one pass read the history through one memo: a
		// thousand live pages at one checkpoint read its new records once.
		h := newSharedHistory(k.opts.History)
		k.shared = h
		for _, ps := range k.pages {
			if ps.running {
				// What woke this pass may be past what the page read:
				// it looks again once it is done.
				ps.skipped = true
				continue
			}
			if ps.st.Stalled != nil || (!ps.st.Live && !k.grantedLocked(ps)) {
				continue
			}
			ps.running = true
			if !ps.st.Live {
				// A page being built reads its own way through the
				// history: a memo of all it reads would hold the
				// history in memory.
				wg.Add(1)
				go func() { defer wg.Done(); k.runPage(ctx, ps, k.opts.History) }()
				continue
			}
			live = append(live, ps)
		}
		// The live pages of the pass are advanced by a few goroutines,
		// not one each: most find nothing they take, and a thousand
		// goroutines a pass spent more growing their stacks than
		// advancing.
		if len(live) > 0 {
			work := make(chan *pageState, len(live))
			for _, ps := range live {
				work <- ps
			}
			close(work)
			for range min(len(live), liveWorkers) {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ps := range work {
						k.runPage(ctx, ps, h)
					}
				}()
			}
			live = live[:0]
		}
		k.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-k.wake:
		case <-t.C:
		}
	}
}

// liveWorkers is how many goroutines advance a pass's live pages.
const liveWorkers = 4

// runPage advances a page of a pass (marked running) through hist, and
// again as long as a pass skipped it meanwhile.
func (k *Keeper) runPage(ctx context.Context, ps *pageState, hist History) {
	k.mu.Lock()
	before := ps.st.Seq
	wasLive := ps.st.Live
	k.mu.Unlock()
	err := k.advance(ctx, ps, hist, nil)
	for again := k.skippedBy(ps); err == nil && again != nil; again = k.skippedBy(ps) {
		err = k.advance(ctx, ps, again, nil)
	}
	k.mu.Lock()
	ps.running = false
	// The next pass tries again; an error is logged once, not at every
	// pass that meets it.
	tell := ""
	switch {
	case err == nil:
		ps.failed = ""
	case ctx.Err() != nil:
	case err.Error() != ps.failed:
		ps.failed = err.Error()
		tell = ps.failed
	}
	id := ps.page.ID
	// Wake the loop only when this page's turn may pass to another: a
	// page being built moved, went live or stalled. Waking after a pass
	// that found nothing would spin, and so would a live page that read a
	// new record: each of a thousand pages ending its step would start
	// another pass over all of them.
	moved := (!wasLive && ps.st.Seq != before) || ps.st.Live != wasLive || ps.st.Stalled != nil
	k.mu.Unlock()
	if tell != "" {
		k.opts.Log.Error("fold: a page's views cannot advance; the keeper tries again at each pass", "page", id, "err", tell)
	}
	if moved {
		k.Wake()
	}
}

// grantedLocked tells whether a page being built has its turn: it is
// among the first MaxRebuilds pages being built, in registration order.
func (k *Keeper) grantedLocked(ps *pageState) bool {
	building := make([]*pageState, 0, len(k.pages))
	for _, o := range k.pages {
		if !o.st.Live && o.st.Stalled == nil {
			building = append(building, o)
		}
	}
	sort.Slice(building, func(i, j int) bool { return building[i].reg < building[j].reg })
	for i, o := range building {
		if o == ps {
			return i < k.opts.MaxRebuilds
		}
	}
	return false
}

// Progress is how a CatchUp goes: the page, the checkpoint it began at,
// the seq of the last record its views have read and of the history's
// newest record, the time it has taken, and whether it is done.
type Progress struct {
	ID                    string
	From, Through, Newest int64
	Elapsed               time.Duration
	Done                  bool
}

// CatchUp folds everything that is new for the page, synchronously and
// within the same limits, page after page until the views have read to
// the history's newest record, and answers its standing. A page waiting
// for its turn to be built, or stalled, is left as it is.
func (k *Keeper) CatchUp(ctx context.Context, id string) (Standing, error) {
	k.mu.Lock()
	ps, ok := k.pages[id]
	k.mu.Unlock()
	if !ok {
		return Standing{}, fmt.Errorf("%w: %q", ErrNotRegistered, id)
	}
	var progress func(through, newest int64, done bool)
	if k.opts.Progress != nil {
		start := time.Now()
		k.mu.Lock()
		from := ps.st.Seq
		k.mu.Unlock()
		progress = func(through, newest int64, done bool) {
			k.opts.Progress(Progress{ID: id, From: from, Through: through, Newest: newest, Elapsed: time.Since(start), Done: done})
		}
	}
	if err := k.advance(ctx, ps, k.opts.History, progress); err != nil {
		return Standing{}, err
	}
	_, s, err := k.Views(id)
	return s, err
}

// Views answers the page's views as JSON text (keys in the order the fold
// wrote them) and their standing.
func (k *Keeper) Views(id string) (json.RawMessage, Standing, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	ps, ok := k.pages[id]
	if !ok {
		return nil, Standing{}, fmt.Errorf("%w: %q", ErrNotRegistered, id)
	}
	return ps.st.Views, k.standingLocked(ps), nil
}

func (k *Keeper) standingLocked(ps *pageState) Standing {
	s := standingOf(&ps.st)
	switch {
	case ps.st.Stalled != nil:
		s.State = StateStalled
	case ps.st.Live:
		s.State = StateLive
	case k.grantedLocked(ps):
		s.State = StateRebuilding
	default:
		s.State = StateWaiting
	}
	return s
}

func standingOf(st *kept) Standing {
	s := Standing{Version: st.Version, Folded: st.Folded, LastEvent: st.LastEvent, Stalled: st.Stalled,
		From: Checkpoint{Seq: st.Seq, ThroughID: st.SeqID, Chain: st.Chain}}
	if st.Seq > 0 {
		c := strconv.FormatInt(st.Seq, 10)
		s.Checkpoint = &c
		at := st.SeqAt
		s.CheckpointAt = &at
	}
	if !st.NewestAt.IsZero() {
		n := st.NewestAt
		s.NewestRecordAt = &n
		if st.Seq > 0 && n.After(st.SeqAt) {
			s.LagMs = n.Sub(st.SeqAt).Milliseconds()
		}
	}
	return s
}

// advance folds the page until it has read the history to its newest
// record, stalls, loses its turn or its data changes. progress, when not
// nil, is told after every page of records how far the views have read
// and where the history ends.
func (k *Keeper) advance(ctx context.Context, ps *pageState, h History, progress func(through, newest int64, done bool)) error {
	ps.fold.Lock()
	defer ps.fold.Unlock()
	for {
		k.mu.Lock()
		if _, ok := k.pages[ps.page.ID]; !ok || ps.st.Stalled != nil || (!ps.st.Live && !k.grantedLocked(ps)) {
			k.mu.Unlock()
			return nil
		}
		gen, page, st := ps.gen, ps.page, ps.st
		k.mu.Unlock()

		more, newest, err := k.step(ctx, h, page, &st)
		if err != nil {
			return err
		}
		k.mu.Lock()
		if ps.gen != gen {
			k.mu.Unlock()
			continue // the data changed while this page folded: start over
		}
		st.Version = ps.st.Version
		prev := ps.st
		ps.st = st
		k.changedLocked()
		k.mu.Unlock()
		if k.opts.Moved != nil && (st.Seq != prev.Seq || st.Live != prev.Live || (st.Stalled == nil) != (prev.Stalled == nil)) {
			k.opts.Moved(page.ID)
		}
		if progress != nil {
			progress(st.Seq, newest, !more)
		}
		if !more {
			return nil
		}
	}
}

// changedLocked tells those waiting in Await that a page's views moved.
func (k *Keeper) changedLocked() {
	if k.changed != nil {
		close(k.changed)
	}
	k.changed = make(chan struct{})
}

// step reads one page of records of the history after st's checkpoint
// and folds the events the filters take. more tells whether the history
// holds records beyond the page, as the history says: a page whose
// records no fold sees is a page like any other. The views are live once
// they have read to the newest record. The views are written when the
// page folded an event, stalled or made them live, and when the history
// has nothing more and the checkpoint moved unwrittenRecords past the one
// on disk: a restart so folds at most one page again, and reads again at
// most unwrittenRecords records none of its filters take.
func (k *Keeper) step(ctx context.Context, h History, page Page, st *kept) (more bool, newest int64, err error) {
	hp, err := h.Page(ctx, st.Seq, k.opts.PageSize)
	if err != nil {
		return false, 0, fmt.Errorf("fold: reading the history: %w", err)
	}
	st.NewestAt = hp.NewestAt
	if hp.Through <= st.Seq {
		// Nothing after the checkpoint: the views have read to the
		// newest record.
		if !st.Live {
			st.Live = true
			return false, hp.Newest, writeKept(k.opts.Dir, st)
		}
		return false, hp.Newest, nil
	}
	folded, wasLive := st.Folded, st.Live
	stall, err := k.foldRecords(ctx, page, st, hp)
	if err != nil {
		return false, 0, err
	}
	more = stall == nil && hp.More
	if stall == nil && !more {
		st.Live = true
	}
	if st.Folded != folded || stall != nil || st.Live != wasLive || (!more && st.Seq-st.written >= unwrittenRecords) {
		err = writeKept(k.opts.Dir, st)
	}
	return more, hp.Newest, err
}

// foldRecords folds the events of a page of the history that the filters
// take over st, moving its checkpoint: to the page's last record, or to
// the record before the event the views stalled at.
func (k *Keeper) foldRecords(ctx context.Context, page Page, st *kept, hp HistoryPage) (*Stall, error) {
	events := page.take(hp.Events, func(r Event, why string) { k.passOver(page.ID, r, why) })
	res, err := k.opts.Pool.Fold(ctx, page.Program, st.Views, events)
	if err != nil {
		return nil, err
	}
	st.Views = res.Views
	st.Folded += int64(res.Folded)
	if res.Folded > 0 {
		id, _, t := eventHead(events[res.Folded-1])
		st.LastEvent = &LastEvent{ID: id, Time: t}
	}
	if res.Stall != nil {
		st.Stalled = res.Stall
		// The views have read to the record before the event they
		// stalled at, whichever page it ends: one record read for it.
		if before := res.Stall.Seq - 1; before > st.Seq {
			p, err := k.opts.History.Page(ctx, before-1, 1)
			if err != nil {
				return nil, fmt.Errorf("fold: reading the history: %w", err)
			}
			if p.Through == before {
				st.Seq, st.SeqAt, st.SeqID, st.Chain = p.Through, p.ThroughAt, p.ThroughID, p.Chain
			}
		}
		return res.Stall, nil
	}
	st.Seq, st.SeqAt, st.SeqID, st.Chain = hp.Through, hp.ThroughAt, hp.ThroughID, hp.Chain
	return nil, nil
}

// take answers the events of a page of records the page's filters take,
// telling passOver of those the fold cannot read.
func (p Page) take(recs []Event, passOver func(ev Event, why string)) []Event {
	events := make([]Event, 0, len(recs))
	for _, r := range recs {
		if !r.matches(p.Filters) {
			continue
		}
		if d := jsonDepth(r.JSON); d > runline.MaxDepth+1 { // the event's own object, then its data's MaxDepth levels
			passOver(r, fmt.Sprintf("it nests %d levels deep", d))
			continue
		}
		events = append(events, r)
	}
	return events
}

func (k *Keeper) passOver(id string, ev Event, why string) {
	k.toldMu.Lock()
	defer k.toldMu.Unlock()
	if k.told == nil {
		k.told = map[int64]bool{}
	}
	if k.told[ev.Seq] || k.opts.PassedOver == nil {
		return
	}
	k.told[ev.Seq] = true
	k.opts.PassedOver(id, ev, why)
}

// Await answers the page's views and standing once its views have read
// the history through the record seq, once they are stalled or not live,
// or after d, whichever comes first; it wakes Run to fold what is new.
// newestAt is when the playbook recorded that record: the standing's
// newest_record_at and lag are reckoned from it. Views kept live that have
// not read through seq within d are answered as what they are, behind
// the history: rebuilding, never live.
func (k *Keeper) Await(ctx context.Context, id string, seq int64, newestAt time.Time, d time.Duration) (json.RawMessage, Standing, error) {
	k.Wake()
	timer := time.NewTimer(d)
	defer timer.Stop()
	timedOut := false
	for {
		k.mu.Lock()
		ps, ok := k.pages[id]
		if !ok {
			k.mu.Unlock()
			return nil, Standing{}, fmt.Errorf("%w: %q", ErrNotRegistered, id)
		}
		if timedOut || ps.st.Seq >= seq || ps.st.Stalled != nil || !ps.st.Live {
			views, s := ps.st.Views, k.standingLocked(ps)
			behind := ps.st.Seq < seq
			k.mu.Unlock()
			if behind && !newestAt.IsZero() {
				n := newestAt
				s.NewestRecordAt = &n
				s.LagMs = 0
				if s.CheckpointAt != nil && n.After(*s.CheckpointAt) {
					s.LagMs = n.Sub(*s.CheckpointAt).Milliseconds()
				}
				if s.State == StateLive {
					s.State = StateRebuilding
				}
			}
			return views, s, nil
		}
		ch := k.changed
		k.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			timedOut = true
		case <-ctx.Done():
			return nil, Standing{}, ctx.Err()
		}
	}
}

// replayPageRecords is the page format's page of a replay: "10 pages of
// up to 1,000 records". The reach of a replay is so the same whatever
// PageSize the keeper reads in.
const replayPageRecords = 1000

// Reach is how many records of the history a replay may read: ReplayPages
// pages of 1,000 records.
func (k *Keeper) Reach() int64 { return int64(k.opts.ReplayPages) * replayPageRecords }

// AsOf folds the page's history again from its start up to and with the
// record lastSeq, with the same fold and limits, one page of the history
// at a time (pages of PageSize records, whether a fold sees them or not),
// and writes nothing. A record past ReplayPages pages of 1,000 records of
// the history is out of reach: the standing out_of_reach, with the
// version alone, and no views.
func (k *Keeper) AsOf(ctx context.Context, id string, lastSeq int64) (json.RawMessage, Standing, error) {
	k.mu.Lock()
	ps, ok := k.pages[id]
	var page Page
	if ok {
		page = ps.page
	}
	k.mu.Unlock()
	if !ok {
		return nil, Standing{}, fmt.Errorf("%w: %q", ErrNotRegistered, id)
	}
	return k.Replay(ctx, page, lastSeq)
}

// Replay is AsOf of a page that need not be registered: a page's dry run
// folds a module not saved yet over the history, with the same fold and
// limits, keeping its views in memory alone (never in Dir, where they
// could be taken for the page's own).
func (k *Keeper) Replay(ctx context.Context, page Page, lastSeq int64) (json.RawMessage, Standing, error) {
	if page.Program == nil {
		return nil, Standing{}, errors.New("fold: a page needs a program")
	}
	page.Program.init()
	st := kept{ID: page.ID, Version: page.Version, Views: json.RawMessage(`{}`)}
	outOfReach := Standing{State: StateOutOfReach, Version: page.Version}
	if lastSeq > k.Reach() {
		return nil, outOfReach, nil
	}
	for st.Seq < lastSeq {
		hp, err := k.opts.History.Page(ctx, st.Seq, int(min(int64(k.opts.PageSize), lastSeq-st.Seq)))
		if err != nil {
			return nil, Standing{}, fmt.Errorf("fold: reading the history: %w", err)
		}
		st.NewestAt = hp.NewestAt
		if hp.Through <= st.Seq {
			break // the history ends before lastSeq
		}
		stall, err := k.foldRecords(ctx, page, &st, hp)
		if err != nil {
			if ctx.Err() != nil {
				return nil, Standing{}, err
			}
			return nil, outOfReach, nil // no worker can fold it
		}
		if stall != nil {
			s := standingOf(&st)
			s.State = StateStalled
			return st.Views, s, nil
		}
	}
	s := standingOf(&st)
	s.State = StateLive
	return st.Views, s, nil
}

// eventHead reads an event's id, type and time.
func eventHead(ev Event) (id, typ, at string) {
	var head struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Time string `json:"time"`
	}
	_ = json.Unmarshal(ev.JSON, &head)
	if head.Time == "" && !ev.Time.IsZero() {
		head.Time = ev.Time.UTC().Format(time.RFC3339Nano)
	}
	return head.ID, head.Type, head.Time
}

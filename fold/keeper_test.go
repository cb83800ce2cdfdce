package fold

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	runline "quire/words/event"
	"quire/words/filter"
)

// memHistory is a history in memory. A record without JSON stands for
// one no fold sees (a step, a call record): it is read, but left out of
// a page's events.
type memHistory struct {
	mu    sync.Mutex
	recs  []Event
	reads int // records read
	calls int
}

func (h *memHistory) add(evs ...Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, evs...)
}

func (h *memHistory) Page(ctx context.Context, after int64, limit int) (HistoryPage, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls++
	i := sort.Search(len(h.recs), func(i int) bool { return h.recs[i].Seq > after })
	j := min(i+limit, len(h.recs))
	hp := HistoryPage{Through: after, More: j < len(h.recs)}
	if n := len(h.recs); n > 0 {
		hp.Newest, hp.NewestAt = h.recs[n-1].Seq, h.recs[n-1].Time
	}
	h.reads += j - i
	for _, r := range h.recs[i:j] {
		hp.Through, hp.ThroughAt = r.Seq, r.Time
		if r.JSON != nil {
			hp.Events = append(hp.Events, r)
		}
	}
	return hp, nil
}

func newTestKeeper(t testing.TB, h History, o KeeperOptions) *Keeper {
	t.Helper()
	if o.Pool == nil {
		o.Pool = newTestPool(t, Limits{})
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	o.History = h
	k, err := NewKeeper(o)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func morningFilters(t testing.TB) filter.Filters {
	t.Helper()
	fs, issues := filter.Parse([]any{map[string]any{"type": "run_succeeded", "subject": "workflow/morning-social-content"}})
	if issues != nil {
		t.Fatal(issues)
	}
	return fs
}

func registerMorning(t testing.TB, k *Keeper, prog *Program, version int, hash string) {
	t.Helper()
	registerAs(t, k, "morning", prog, version, hash)
}

func registerAs(t testing.TB, k *Keeper, id string, prog *Program, version int, hash string) {
	t.Helper()
	if err := k.Register(Page{ID: id, Version: version, DataHash: hash, Program: prog, Filters: morningFilters(t)}); err != nil {
		t.Fatal(err)
	}
}

func TestKeeperSpecRunsAndStanding(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(specRuns()...)
	k := newTestKeeper(t, h, KeeperOptions{})
	registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 3, "h1")
	s, err := k.CatchUp(context.Background(), "morning")
	if err != nil {
		t.Fatal(err)
	}
	views, _, _ := k.Views("morning")
	if string(views) != specViews {
		t.Fatalf("views %s", views)
	}
	b, _ := json.Marshal(s)
	want := `{"state":"live","version":3,"checkpoint":"3","checkpoint_at":"2026-11-01T07:30:00Z","last_event":{"id":"ev-3","time":"2026-11-01T07:30:00Z"},"folded":3,"lag_ms":0,"newest_record_at":"2026-11-01T07:30:00Z"}`
	if string(b) != want {
		t.Fatalf("standing\n got %s\nwant %s", b, want)
	}
}

func TestKeeperRestartFoldsAtMostOnePage(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(generatedHistory(2500)...)
	dir := t.TempDir()
	prog := tsProgram(t, morningTS, 1, morningViews)
	k := newTestKeeper(t, h, KeeperOptions{Dir: dir})
	registerMorning(t, k, prog, 1, "h1")
	if _, err := k.CatchUp(context.Background(), "morning"); err != nil {
		t.Fatal(err)
	}
	want, _, _ := k.Views("morning")

	// A restart after the views were written reads nothing again.
	h.reads = 0
	k2 := newTestKeeper(t, h, KeeperOptions{Dir: dir})
	registerMorning(t, k2, prog, 2, "h1") // a new version, the same data
	if _, err := k2.CatchUp(context.Background(), "morning"); err != nil {
		t.Fatal(err)
	}
	got, s, _ := k2.Views("morning")
	if string(got) != string(want) || h.reads != 0 || s.Version != 2 {
		t.Fatalf("restart read %d records, version %d", h.reads, s.Version)
	}

	// A crash in the middle of a page: the views of the page before stay,
	// and that one page is folded again.
	st, _ := readKept(dir, "morning")
	st.Seq, st.Folded = 2000, 0
	h3 := &memHistory{}
	h3.add(h.recs[:2000]...)
	k3 := newTestKeeper(t, h3, KeeperOptions{Dir: t.TempDir()})
	registerMorning(t, k3, prog, 1, "h1")
	k3.CatchUp(context.Background(), "morning")
	mid, _, _ := k3.Views("morning")
	st.Views = mid
	if err := writeKept(dir, st); err != nil {
		t.Fatal(err)
	}
	h.reads = 0
	k4 := newTestKeeper(t, h, KeeperOptions{Dir: dir})
	registerMorning(t, k4, prog, 1, "h1")
	k4.CatchUp(context.Background(), "morning")
	got, _, _ = k4.Views("morning")
	if string(got) != string(want) || h.reads > 1000 {
		t.Fatalf("after a crash: read %d records; views equal: %v", h.reads, string(got) == string(want))
	}
}

func TestKeeperRebuildOnDataChange(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(specRuns()...)
	k := newTestKeeper(t, h, KeeperOptions{})
	registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 1, "h1")
	k.CatchUp(context.Background(), "morning")
	other := jsProgram(`export function fold(view, event) { return { n: { text: String(Number(view.n?.text ?? 0) + 1) } } }`, map[string]string{"n": "text"})
	registerMorning(t, k, other, 2, "h2")
	_, s, _ := k.Views("morning")
	if s.State != StateRebuilding || s.Folded != 0 || s.Checkpoint != nil {
		t.Fatalf("standing after the data changed: %+v", s)
	}
	k.CatchUp(context.Background(), "morning")
	views, s, _ := k.Views("morning")
	if string(views) != `{"n":{"text":"3"}}` || s.Version != 2 || s.State != StateLive {
		t.Fatalf("rebuilt views %s, standing %+v", views, s)
	}
}

func TestKeeperWaitsBeyondMaxRebuilds(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(specRuns()...)
	k := newTestKeeper(t, h, KeeperOptions{MaxRebuilds: 2})
	prog := tsProgram(t, morningTS, 1, morningViews)
	for _, id := range []string{"a", "b", "c", "d"} {
		registerAs(t, k, id, prog, 1, "h1")
	}
	states := func() []string {
		var out []string
		for _, id := range []string{"a", "b", "c", "d"} {
			_, s, _ := k.Views(id)
			out = append(out, s.State)
		}
		return out
	}
	if got := states(); got[0] != StateRebuilding || got[1] != StateRebuilding || got[2] != StateWaiting || got[3] != StateWaiting {
		t.Fatalf("states %v", got)
	}
	// A waiting page is not built by CatchUp before its turn.
	if s, _ := k.CatchUp(context.Background(), "c"); s.State != StateWaiting {
		t.Fatalf("c: %v", s.State)
	}
	k.CatchUp(context.Background(), "a")
	if got := states(); got[0] != StateLive || got[2] != StateRebuilding || got[3] != StateWaiting {
		t.Fatalf("states after a caught up: %v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { k.Run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := states(); got[0] == StateLive && got[1] == StateLive && got[2] == StateLive && got[3] == StateLive {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Run folds a new event on Wake.
	h.add(event(4, time.Date(2026, 11, 2, 7, 0, 0, 0, time.UTC), morningOutput("2026-11-02", "X")))
	k.Wake()
	for time.Now().Before(deadline) {
		if _, s, _ := k.Views("d"); s.Folded == 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if got := states(); got[3] != StateLive {
		t.Fatalf("states at the end: %v", got)
	}
	if _, s, _ := k.Views("d"); s.Folded != 4 {
		t.Fatalf("d folded %d", s.Folded)
	}
}

// As of a record: the replay reads the history's pages, records no fold
// sees among them, and gives the views and standing a keeper whose history
// ended at that record has (but for the lag, reckoned from the newest
// record); past 10 pages of 1,000 records it is out of reach. It writes
// nothing.
func TestKeeperAsOf(t *testing.T) {
	t.Parallel()
	// 10 pages of 1,000 records reach 10,000; in short mode, 2 pages of
	// 1,000 over 2,500 records.
	n, pages, seqs := 2500, 2, []int64{10, 999, 1000, 1001, 2000}
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n, pages, seqs = 12000, 10, []int64{10, 999, 1000, 1001, 2500, 10000}
	}
	hist := mostlySteps(n, 10)
	h := &memHistory{}
	h.add(hist...)
	k := newTestKeeper(t, h, KeeperOptions{Dir: t.TempDir(), ReplayPages: pages})
	prog := tsProgram(t, morningTS, 1, morningViews)
	registerMorning(t, k, prog, 1, "h1")
	newest := hist[len(hist)-1].Time
	for _, seq := range seqs {
		views, s, err := k.AsOf(context.Background(), "morning", seq)
		if err != nil {
			t.Fatal(err)
		}
		ref := &memHistory{}
		ref.add(hist[:seq]...)
		rk := newTestKeeper(t, ref, KeeperOptions{})
		registerMorning(t, rk, prog, 1, "h1")
		rs, err := rk.CatchUp(context.Background(), "morning")
		if err != nil {
			t.Fatal(err)
		}
		rviews, _, _ := rk.Views("morning")
		rs.NewestRecordAt, rs.LagMs = &newest, newest.Sub(*rs.CheckpointAt).Milliseconds()
		got, _ := json.Marshal(s)
		want, _ := json.Marshal(rs)
		if string(views) != string(rviews) || string(got) != string(want) || *s.Checkpoint != strconv.FormatInt(seq, 10) {
			t.Fatalf("as of %d:\n%s\n%s\nwant\n%s\n%s", seq, views, got, rviews, want)
		}
	}
	entries, _ := os.ReadDir(k.opts.Dir)
	if len(entries) != 0 {
		t.Fatalf("AsOf wrote %d files", len(entries))
	}
	_, s, _ := k.AsOf(context.Background(), "morning", int64(pages*1000+1))
	if b, _ := json.Marshal(s); string(b) != `{"state":"out_of_reach","version":1}` {
		t.Fatalf("as of %d: %s", pages*1000+1, b)
	}
}

// A page's dry run replays a page no keeper registered: it gives the
// views a keeper of that page would have, and leaves the keeper's own
// pages and folder as they were.
func TestKeeperReplaysAnUnregisteredPage(t *testing.T) {
	t.Parallel()
	hist := mostlySteps(300, 10)
	h := &memHistory{}
	h.add(hist...)
	k := newTestKeeper(t, h, KeeperOptions{Dir: t.TempDir()})
	prog := tsProgram(t, morningTS, 1, morningViews)
	registerMorning(t, k, prog, 1, "h1")
	if _, err := k.CatchUp(context.Background(), "morning"); err != nil {
		t.Fatal(err)
	}
	kept, _, _ := k.Views("morning")
	before, _ := os.ReadDir(k.opts.Dir)

	tried := Page{ID: "morning", Version: 2, DataHash: "h2", Program: tsProgram(t, morningTS, 1, morningViews), Filters: morningFilters(t)}
	views, s, err := k.Replay(context.Background(), tried, int64(len(hist)))
	if err != nil {
		t.Fatal(err)
	}
	if s.State != StateLive || s.Version != 2 || string(views) != string(kept) {
		t.Fatalf("replayed %s (%+v), want live version 2 with %s", views, s, kept)
	}
	after, _ := os.ReadDir(k.opts.Dir)
	if now, _, _ := k.Views("morning"); string(now) != string(kept) || len(after) != len(before) {
		t.Fatalf("the replay changed the keeper: views %s, %d files (was %d)", now, len(after), len(before))
	}
}

func TestKeeperPassesOverDeepEvents(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	runs := specRuns()
	deep := strings.Repeat(`{"a":`, 520) + `1` + strings.Repeat(`}`, 520)
	bad := event(2, runs[1].Time, `{"output":`+deep+`}`)
	h.add(runs[0], bad, Event{Seq: 3, JSON: runs[2].JSON, Time: runs[2].Time})
	var told []string
	k := newTestKeeper(t, h, KeeperOptions{PassedOver: func(id string, ev Event, why string) { told = append(told, id+" "+why) }})
	registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 1, "h1")
	s, err := k.CatchUp(context.Background(), "morning")
	if err != nil || s.State != StateLive || s.Folded != 2 || len(told) != 1 || !strings.Contains(told[0], "nests 522 levels") {
		t.Fatalf("%v %+v %v", err, s, told)
	}
}

// A keeper that has caught up waits for a wake or its pass: it does not
// spin reading the history.
func TestKeeperIdlesWhenLive(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(specRuns()...)
	k := newTestKeeper(t, h, KeeperOptions{Pass: time.Second})
	registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 3, "h1")
	if _, err := k.CatchUp(context.Background(), "morning"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { k.Run(ctx); close(done) }()
	time.Sleep(100 * time.Millisecond)
	h.mu.Lock()
	before := h.calls
	h.mu.Unlock()
	time.Sleep(500 * time.Millisecond)
	h.mu.Lock()
	calls := h.calls - before
	h.mu.Unlock()
	cancel()
	<-done
	if calls > 2 {
		t.Fatalf("an idle keeper read the history %d times in half a second", calls)
	}
}

// A replay that stalls before the run's last event answers the stalled
// standing; one that ends before the stall replays as usual.
func TestKeeperAsOfStalled(t *testing.T) {
	t.Parallel()
	h := &memHistory{}
	h.add(specRuns()...)
	k := newTestKeeper(t, h, KeeperOptions{})
	prog := jsProgram("export function fold(view, event) {\n  if (event.id === 'ev-2') throw new Error('second');\n  return { out: { text: event.id } };\n}", textView)
	registerMorning(t, k, prog, 1, "h1")
	views, s, err := k.AsOf(context.Background(), "morning", 3)
	if err != nil || s.State != StateStalled || s.Stalled.Event.ID != "ev-2" || string(views) != `{"out":{"text":"ev-1"}}` {
		t.Fatalf("%v %s %+v", err, views, s)
	}
	views, s, _ = k.AsOf(context.Background(), "morning", 1)
	if s.State != StateLive || string(views) != `{"out":{"text":"ev-1"}}` || s.LagMs != 2*24*3600*1000 {
		t.Fatalf("%s %+v", views, s)
	}
}

// scriptedHistory answers, at each call of Page, the error its script
// gives for that call (1, 2, ...), or its records when the script gives
// none.
type scriptedHistory struct {
	memHistory
	fail func(call int) error
}

func (h *scriptedHistory) Page(ctx context.Context, after int64, limit int) (HistoryPage, error) {
	h.mu.Lock()
	h.calls++
	n := h.calls
	h.mu.Unlock()
	if err := h.fail(n); err != nil {
		return HistoryPage{}, err
	}
	h.mu.Lock()
	h.calls-- // memHistory counts it again
	h.mu.Unlock()
	return h.memHistory.Page(ctx, after, limit)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// An error Run meets when it advances a page in the background is logged,
// once for each error rather than at every pass that meets it again, and
// again when it comes back after the page advanced.
func TestKeeperLogsBackgroundErrorsOnce(t *testing.T) {
	t.Parallel()
	gone, denied := errors.New("the disk is gone"), errors.New("permission denied")
	h := &scriptedHistory{fail: func(n int) error {
		switch {
		case n <= 5:
			return gone
		case n <= 10:
			return denied
		case n <= 12:
			return nil
		case n <= 16:
			return gone
		}
		return nil
	}}
	var log lockedBuffer
	k := newTestKeeper(t, h, KeeperOptions{Pass: 5 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&log, nil))})
	registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 1, "h1")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { k.Run(ctx); close(done) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		h.mu.Lock()
		calls := h.calls
		h.mu.Unlock()
		if calls >= 20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the keeper read the history %d times in 30 s", calls)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	var errs []string
	for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		if !strings.Contains(l, `level=ERROR msg="fold: a page's views cannot advance; the keeper tries again at each pass" page=morning`) {
			t.Fatalf("log line %q", l)
		}
		_, e, _ := strings.Cut(l, " err=")
		errs = append(errs, e)
	}
	want := []string{`"fold: reading the history: the disk is gone"`, `"fold: reading the history: permission denied"`, `"fold: reading the history: the disk is gone"`}
	if strings.Join(errs, "|") != strings.Join(want, "|") {
		t.Fatalf("logged %q\nwant %q", errs, want)
	}
}

// An event whose data nests event.MaxDepth levels is folded; one level
// more and it is passed over.
func TestKeeperPassesOverEventsPastMaxDepth(t *testing.T) {
	t.Parallel()
	nest := func(n int) string { return strings.Repeat(`[`, n) + strings.Repeat(`]`, n) }
	for _, c := range []struct {
		levels int // of the event's data
		told   string
	}{
		{runline.MaxDepth, ""},
		{runline.MaxDepth + 1, "nests 514 levels"},
	} {
		h := &memHistory{}
		runs := specRuns()
		deep := event(2, runs[1].Time, `{"output":`+nest(c.levels-1)+`}`)
		h.add(runs[0], deep, runs[2])
		var told []string
		k := newTestKeeper(t, h, KeeperOptions{PassedOver: func(id string, ev Event, why string) { told = append(told, why) }})
		registerMorning(t, k, tsProgram(t, morningTS, 1, morningViews), 1, "h1")
		s, err := k.CatchUp(context.Background(), "morning")
		if err != nil || s.State != StateLive || c.told == "" && (s.Folded != 3 || len(told) != 0) ||
			c.told != "" && (s.Folded != 2 || len(told) != 1 || !strings.Contains(told[0], c.told)) {
			t.Fatalf("data of %d levels: %v %+v %v", c.levels, err, s, told)
		}
	}
}

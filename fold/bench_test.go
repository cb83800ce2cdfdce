package fold

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFoldMorning folds 100,000 generated records (about 86,000
// runs of morning-social-content, the rest of another workflow) through
// the whole keeper: the history in memory, the filters, the sandbox, the
// checks and the views kept on disk once a page. It reports events/s (the
// records read), folds/s (the events the filters take, about 6 in 7), and
// the time of CatchUp for one new event after the 100,000 (one incremental
// fold, not a rebuild) beside the time of the first CatchUp, which folds
// all 100,000 from the start (rebuild-ms). The time of b.Elapsed includes
// both.
func BenchmarkFoldMorning(b *testing.B) {
	const n = 100_000
	hist := generatedHistory(n + 1)
	prog := tsProgram(b, morningTS, 1, morningViews)
	pool := newTestPool(b, Limits{})
	b.ResetTimer()
	var incr, rebuild time.Duration
	for range b.N {
		h := &memHistory{}
		h.add(hist[:n]...)
		k := newTestKeeper(b, h, KeeperOptions{Pool: pool})
		registerMorning(b, k, prog, 1, "h1")
		t0 := time.Now()
		s, err := k.CatchUp(context.Background(), "morning")
		if err != nil || s.State != StateLive {
			b.Fatalf("%v %+v", err, s)
		}
		rebuild += time.Since(t0)
		h.add(hist[n])
		reads := h.reads
		t0 = time.Now()
		if _, err := k.CatchUp(context.Background(), "morning"); err != nil {
			b.Fatal(err)
		}
		incr += time.Since(t0)
		if h.reads-reads != 1 {
			b.Fatalf("CatchUp read %d records, not one", h.reads-reads)
		}
	}
	folds := 0
	fs := morningFilters(b)
	for _, e := range hist[:n] {
		if fs.MatchJSON(e.JSON) {
			folds++
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(folds)*float64(b.N)/b.Elapsed().Seconds(), "folds/s")
	b.ReportMetric(float64(incr.Microseconds())/float64(b.N), "catchup-µs")
	b.ReportMetric(float64(rebuild.Milliseconds())/float64(b.N), "rebuild-ms")
}

// BenchmarkSandboxPage is one page of 1,000 morning events in one call,
// without the keeper.
func BenchmarkSandboxPage(b *testing.B) {
	evs := generatedHistory(1000)
	fs := morningFilters(b)
	var events []Event
	for _, e := range evs {
		if fs.MatchJSON(e.JSON) {
			events = append(events, e)
		}
	}
	prog := tsProgram(b, morningTS, 1, morningViews)
	pool := newTestPool(b, Limits{})
	b.ResetTimer()
	for range b.N {
		r, err := pool.Fold(context.Background(), prog, nil, events)
		if err != nil || r.Stall != nil {
			b.Fatal(err, r.Stall)
		}
	}
	b.ReportMetric(float64(len(events))*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

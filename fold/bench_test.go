package fold

import (
	"context"
	"encoding/json"
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

// BenchmarkShapeCheckCost measures what checking the shapes after every
// fold costs, and what the fused walk saves of it: the spec's three
// example pages, 20,000 events each in pages of 1,000, each page folded by
// three pools in turn, so that they share whatever else the machine runs:
// shapes checked in the copy's walk (what ships: events/s), after it in
// a walk of their own (as issue 11 first shipped: unfused-events/s), and
// in Go once a page, as quire did before (page-check-events/s).
func BenchmarkShapeCheckCost(b *testing.B) {
	const n = 20_000
	for _, name := range []string{"morning-social-content", "close-the-month", "fulfill-order"} {
		b.Run(name, func(b *testing.B) {
			pg := examplePage(b, name)
			prog := tsProgram(b, pg.ts, 1, pg.views)
			events := make([]Event, n)
			start := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
			for i := range n {
				at := start.Add(time.Duration(i/3) * 24 * time.Hour).Add(time.Duration(i%3) * time.Minute)
				events[i] = event(int64(i+1), at, pg.output(i, at))
			}
			perFold := newTestPool(b, Limits{})
			perPage, err := NewPool(PoolOptions{shapesOncePerPage: true})
			if err != nil {
				b.Fatal(err)
			}
			defer perPage.Close()
			unfused, err := NewPool(PoolOptions{unfused: true})
			if err != nil {
				b.Fatal(err)
			}
			defer unfused.Close()
			fold := func(p *Pool, views json.RawMessage, page []Event) (json.RawMessage, time.Duration) {
				t0 := time.Now()
				r, err := p.Fold(context.Background(), prog, views, page)
				if err != nil || r.Stall != nil || r.Folded != len(page) {
					b.Fatalf("%v %+v", err, r.Stall)
				}
				return r.Views, time.Since(t0)
			}
			fold(perFold, nil, events[:10]) // the workers started and the module loaded
			fold(perPage, nil, events[:10])
			fold(unfused, nil, events[:10])
			b.ResetTimer()
			var inFold, inPage, inUnfused time.Duration
			for range b.N {
				var a, c, u json.RawMessage
				for i := 0; i < n; i += 1000 {
					var d time.Duration
					a, d = fold(perFold, a, events[i:i+1000])
					inFold += d
					u, d = fold(unfused, u, events[i:i+1000])
					inUnfused += d
					c, d = fold(perPage, c, events[i:i+1000])
					inPage += d
				}
				if string(a) != string(c) || string(a) != string(u) {
					b.Fatalf("the pools fold other views:\n%.300s\n%.300s\n%.300s", a, u, c)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/inFold.Seconds(), "events/s")
			b.ReportMetric(float64(n)*float64(b.N)/inUnfused.Seconds(), "unfused-events/s")
			b.ReportMetric(float64(n)*float64(b.N)/inPage.Seconds(), "page-check-events/s")
		})
	}
}

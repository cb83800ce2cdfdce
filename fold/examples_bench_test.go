package fold

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/words/filter"
)

// examplePages are the spec's three example pages, each with the output
// of its i-th generated run.
var examplePages = []struct {
	name   string
	views  map[string]string
	output func(i int, at time.Time) string
}{
	{"morning-social-content", morningViews, func(i int, at time.Time) string {
		var cs []string
		for j := range i%4 + 1 {
			cs = append(cs, []string{"LinkedIn", "X", "Instagram", "Mastodon"}[(i+j)%4])
		}
		return morningOutput(at.Format("2006-01-02"), cs...)
	}},
	{"close-the-month", map[string]string{"revenue": "series"}, func(i int, at time.Time) string {
		return fmt.Sprintf(`{"output":{"month":"%04d-%02d","revenue":%d}}`, 2000+(i/12)%50, i%12+1, 100000+i%9973)
	}},
	{"fulfill-order", map[string]string{"figures": "categories", "revenue": "series", "channels": "categories", "sizes": "categories", "latest": "table"},
		func(i int, at time.Time) string {
			return fmt.Sprintf(`{"output":{"order":"A-%d","channel":%q,"total":%d.25}}`, i, []string{"Web", "Marketplace", "Phone"}[i%3], 5+i%180)
		}},
}

type examplePageOf struct {
	ts     string
	views  map[string]string
	output func(i int, at time.Time) string
}

// examplePage is the example page name: its module's TypeScript, its
// views and its outputs.
func examplePage(b testing.TB, name string) examplePageOf {
	b.Helper()
	for _, pg := range examplePages {
		if pg.name == name {
			ts, err := os.ReadFile(filepath.Join("module", "testdata", name+".ts"))
			if err != nil {
				b.Fatal(err)
			}
			return examplePageOf{ts: string(ts), views: pg.views, output: pg.output}
		}
	}
	b.Fatalf("no example page %s", name)
	return examplePageOf{}
}

// BenchmarkFoldExamples folds the spec's three example pages, each over
// 100,000 generated run_succeeded events of its workflow, through the
// whole keeper path, and the same module over the same events in Node.js
// (when node is on the PATH) side by side, with the views passed through
// JSON between folds there too. It reports events/s of each and checks
// that both end with the same views.
func BenchmarkFoldExamples(b *testing.B) {
	const n = 100_000
	const engineEvents = 20_000
	for _, pg := range examplePages {
		b.Run(pg.name, func(b *testing.B) {
			prog, filters := exampleProgram(b, pg.name, pg.views)
			hist, texts := exampleEvents(pg.name, pg.output, n)
			var lines strings.Builder
			for _, j := range texts {
				lines.WriteString(j + "\n")
			}
			pool := newTestPool(b, Limits{})
			b.ResetTimer()
			var views string
			for range b.N {
				views = keptViews(b, pool, prog, filters, hist)
			}
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
			// The ceiling: the engine alone over the first engineEvents of
			// the same events, the views through JSON between folds or not.
			bare, withJSON, engineViews := engineRates(b, prog.JS, texts[:engineEvents])
			b.ReportMetric(bare, "engine-events/s")
			b.ReportMetric(withJSON, "engine-json-events/s")
			if want := keptViews(b, pool, prog, filters, hist[:engineEvents]); engineViews != want {
				b.Fatalf("the engine alone folds other views than the keeper:\n%.300s\n%.300s", engineViews, want)
			}
			node, err := exec.LookPath("node")
			if err != nil {
				return
			}
			dir := b.TempDir()
			for name, text := range map[string]string{"module.mjs": prog.JS, "run.mjs": nodeRunner, "events.jsonl": lines.String()} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			out, err := exec.Command(node, filepath.Join(dir, "run.mjs")).Output()
			if err != nil {
				b.Fatalf("node: %v", err)
			}
			parts := strings.Split(strings.TrimSpace(string(out)), "\n")
			ms, _ := strconv.ParseFloat(parts[1], 64)
			b.ReportMetric(float64(n)/(ms/1000), "node-events/s")
			if parts[0] != views {
				b.Fatalf("Node's views differ from the sandbox's:\n%.300s\n%.300s", parts[0], views)
			}
		})
	}
}

// keptViews folds events through a keeper of their own, from the start,
// and answers the views it keeps.
func keptViews(b testing.TB, pool *Pool, prog *Program, filters filter.Filters, events []Event) string {
	b.Helper()
	h := &memHistory{}
	h.add(events...)
	k := newTestKeeper(b, h, KeeperOptions{Pool: pool})
	if err := k.Register(Page{ID: "ceiling", Version: 1, DataHash: "h", Program: prog, Filters: filters}); err != nil {
		b.Fatal(err)
	}
	if s, err := k.CatchUp(context.Background(), "ceiling"); err != nil || s.State != StateLive {
		b.Fatalf("%v %+v", err, s)
	}
	views, _, _ := k.Views("ceiling")
	return string(views)
}

// exampleEvents makes n run_succeeded events of the example page name's
// workflow, three a day, each with output(i) as its data: as history and
// as their JSON texts.
func exampleEvents(name string, output func(int, time.Time) string, n int) ([]Event, []string) {
	start := time.Date(2026, 1, 1, 6, 0, 0, 0, time.UTC)
	hist := make([]Event, n)
	texts := make([]string, n)
	for i := range n {
		at := start.Add(time.Duration(i/3) * 24 * time.Hour).Add(time.Duration(i%3) * time.Minute)
		texts[i] = fmt.Sprintf(`{"specversion":"1.0","id":"ev-%d","type":"run_succeeded","source":"playbooks/ops","subject":"workflow/%s","time":%q,"data":%s}`,
			i+1, name, at.Format(time.RFC3339Nano), output(i, at))
		hist[i] = Event{Seq: int64(i + 1), JSON: []byte(texts[i]), Time: at}
	}
	return hist, texts
}

// BenchmarkFoldRatio measures the ratio issue 15 sets a target for (at
// least 0.75): the whole keeper path to the engine alone with the views
// through JSON between folds, for each example page. The machine's speed
// wanders by a third over a minute, so a ratio of two long runs taken one
// after the other says little: each of ratioRounds rounds folds the first
// ratioEvents events both ways, one after the other, and the median of
// the rounds' ratios is reported (path-per-ceiling).
func BenchmarkFoldRatio(b *testing.B) {
	const ratioEvents, ratioRounds = 2_000, 11
	for _, pg := range examplePages {
		b.Run(pg.name, func(b *testing.B) {
			prog, filters := exampleProgram(b, pg.name, pg.views)
			hist, texts := exampleEvents(pg.name, pg.output, ratioEvents)
			pool := newTestPool(b, Limits{})
			ceiling := newEngine(b, prog.JS, texts)
			defer ceiling(false, true)
			keptViews(b, pool, prog, filters, hist[:10]) // the worker started and the module loaded
			b.ResetTimer()
			var ratios []float64
			for range b.N * ratioRounds {
				t0 := time.Now()
				keptViews(b, pool, prog, filters, hist)
				path := ratioEvents / time.Since(t0).Seconds()
				eng, _ := ceiling(true, false)
				ratios = append(ratios, path/eng)
			}
			sort.Float64s(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "path-per-ceiling")
		})
	}
}

// exampleProgram is the example page name's module, compiled, and the
// filter of its workflow's run_succeeded events.
func exampleProgram(b testing.TB, name string, views map[string]string) (*Program, filter.Filters) {
	ts, err := os.ReadFile(filepath.Join("module", "testdata", name+".ts"))
	if err != nil {
		b.Fatal(err)
	}
	filters, issues := filter.Parse([]any{map[string]any{"type": "run_succeeded", "subject": "workflow/" + name}})
	if issues != nil {
		b.Fatal(issues)
	}
	return tsProgram(b, string(ts), 1, views), filters
}

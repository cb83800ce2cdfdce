package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"quire/ledger"
	"quire/serve"
)

// BenchmarkDefinitionPageFulfillOrder: the definition page of
// fulfill-order with 1,000 runs (its page over live views, its versions
// and its latest 50 runs with their headlines), answered by the server's
// handler (issue 16: under 20 ms median). QUIRE_BENCH_RUNS sets the runs
// (1,000); making them through the operations takes minutes, so
// QUIRE_BENCH_VAULT=<folder> keeps the vault there for the next run.
func BenchmarkDefinitionPageFulfillOrder(b *testing.B) {
	runs := 1000
	if n, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_RUNS")); err == nil && n > 0 {
		runs = n
	}
	var d *demo
	if dir := os.Getenv("QUIRE_BENCH_VAULT"); dir != "" {
		// A vault made by an earlier run of the benchmark, kept to time
		// the page again without making the runs again.
		d = openDemo(b, dir)
	} else {
		d = newDemo(b, serve.Options{Open: true}, "fulfill-order")
	}
	if n := d.runsOf("fulfill-order"); n < runs {
		start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
		for i := n; i < runs; i++ {
			day := start.Add(time.Duration(i) * 2 * time.Hour).Format("2006-01-02")
			d.run("fulfill-order", day, fmt.Sprintf(`{"order":"A-%d","channel":"%s","total":%d.25}`, 1000+i, []string{"Web", "Marketplace", "Phone"}[i%3], 10+i%190))
		}
	}
	d.live("fulfill-order")
	medianGet(b, d.srv.Config.Handler, "/p/operations/workflow/fulfill-order")
	b.ReportMetric(float64(runs), "runs")
}

// openDemo opens (or makes) the benchmark's vault in dir, kept after.
func openDemo(b *testing.B, dir string) *demo {
	if _, err := os.Stat(dir + "/quire.yaml"); err != nil {
		return makeDemo(b, dir, b.Cleanup, serve.Options{Open: true}, "fulfill-order")
	}
	l, err := ledger.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	go l.Keep(ctx)
	d := &demo{t: b, l: l}
	raw, _ := l.Call(context.Background(), "list_projects", nil)
	d.project = raw.([]ledger.Project)[0].UID
	d.srv = httptest.NewServer(serve.Handler(l, serve.Options{Open: true}))
	b.Cleanup(d.srv.Close)
	return d
}

// runsOf counts a workflow's runs.
func (d *demo) runsOf(name string) int {
	raw, err := d.l.Call(context.Background(), "list_runs", json.RawMessage(`{"playbook":"operations","type":"workflow","name":"`+name+`","limit":1000}`))
	if err != nil {
		d.t.Fatal(err)
	}
	return len(raw.(*ledger.RunPage).Runs)
}

// BenchmarkListPagesWithDefinitions: the home page and a playbook's page
// with 1,000 workflows in one playbook (QUIRE_BENCH_DEFINITIONS), each
// with a page and a glance (issue 28: each under 100 ms, no call per
// definition).
func BenchmarkListPagesWithDefinitions(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("QUIRE_BENCH_DEFINITIONS")); err == nil && v > 0 {
		n = v
	}
	d := newDemo(b, serve.Options{Open: true})
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("w-%04d", i)
		d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": name, "actor": "ana",
			"source": "document:\n  name: " + name + "\npage:\n  result: |\n    {{ output.text }}\n  glance:\n    headline: '{{ output.text }}'\n    runs: '{{ run.status }}'\n"})
	}
	d.run("w-0000", "2026-11-01", `{"text":"The first."}`)
	h := d.srv.Config.Handler
	for _, pg := range []struct{ name, page string }{{"home", "/"}, {"playbook", "/p/operations"}} {
		page := pg.page
		b.Run(pg.name, func(b *testing.B) {
			medianGet(b, h, page)
		})
	}
}

// medianGet times b.N GETs of path through the server's handler (one
// before, untimed) and reports their median as median-ms.
func medianGet(b *testing.B, h http.Handler, path string) {
	get := func() time.Duration {
		req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
		rec := httptest.NewRecorder()
		t := time.Now()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		return time.Since(t)
	}
	get()
	var times []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		times = append(times, get())
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
}

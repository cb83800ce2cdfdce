package ledger

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"quire/fold"
	"quire/vault"
)

// BenchmarkTryPageFulfillOrder: a dry run of fulfill-order's page
// (try_page, the document checked and folded over the whole history) over
// a history of 10,000 records, the most a dry run reaches, beside
// rebuilding the page's views from the start (a keeper of its own folding
// to live, as a save that changes the page's data makes the keeper do),
// in turns, each the median of its rounds (issue 26: within 2x).
func BenchmarkTryPageFulfillOrder(b *testing.B) {
	f := newFixture(b)
	f.call("create_definition", saveArgs("workflow", "fulfill-order", source(b, "fulfill-order.yaml")))
	r := f.runAt("fulfill-order", "2026-11-01", `{"order":"A-1","channel":"Web","total":20.25}`)
	records, runs := copyRuns(b, f, r, 10_000)
	if err := f.l.Reindex(); err != nil {
		b.Fatal(err)
	}
	s, err := f.l.subjectOf("finance", "workflow", "fulfill-order")
	if err != nil {
		b.Fatal(err)
	}
	prog, err := f.l.program(s.Page, s.DataHash)
	if err != nil {
		b.Fatal(err)
	}
	pool, err := f.l.foldPool()
	if err != nil {
		b.Fatal(err)
	}
	rebuild := func() time.Duration {
		k, err := fold.NewKeeper(fold.KeeperOptions{Dir: b.TempDir(), History: playbookHistory{f.l, "finance"}, Pool: pool})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := k.Register(fold.Page{ID: s.ID, Version: s.Version, DataHash: s.DataHash, Program: prog, Filters: pageFilters(s.Page)}); err != nil {
			b.Fatal(err)
		}
		st, err := k.CatchUp(context.Background(), s.ID)
		if err != nil || st.State != fold.StateLive || st.Folded != int64(runs) {
			b.Fatalf("rebuilt: %+v %v", st, err)
		}
		return time.Since(t0)
	}
	args, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": "fulfill-order",
		"source": strings.Replace(source(b, "fulfill-order.yaml"), "{ name: 'Orders', value: orders }", "{ name: 'Orders placed', value: orders }", 1)})
	try := func() time.Duration {
		t0 := time.Now()
		res, err := f.l.Call(context.Background(), "try_page", args)
		if err != nil {
			b.Fatal(err)
		}
		if st := res.(*TriedPage).Page.Standing; st == nil || st.State != fold.StateLive || st.Folded != int64(runs) {
			b.Fatalf("tried: %+v", st)
		}
		return time.Since(t0)
	}
	rebuild() // the workers started and the module loaded, for both
	try()
	var rebuilds, tries []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for round := 0; round < 5; round++ {
			rebuilds = append(rebuilds, rebuild())
			tries = append(tries, try())
		}
	}
	b.StopTimer()
	med := func(ds []time.Duration) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	rb, tr := med(rebuilds), med(tries)
	b.ReportMetric(tr, "try-ms")
	b.ReportMetric(rb, "rebuild-ms")
	b.ReportMetric(tr/rb, "try-per-rebuild")
	b.ReportMetric(float64(records), "records")
}

// copyRuns copies the ended run r (its folder and index line) until the
// playbook's history holds total records, each copy with an id, seqs and
// an order of its own, and answers the records the history holds and the
// runs.
func copyRuns(b testing.TB, f *fixture, r *Run, total int) (records, runs int) {
	b.Helper()
	base, err := f.l.HistoryLen("finance")
	if err != nil {
		b.Fatal(err)
	}
	tmpl := map[string]string{}
	folder := filepath.Join(f.dir, r.Path)
	filepath.WalkDir(folder, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(folder, p)
			tmpl[rel] = string(data)
		}
		return nil
	})
	idx, err := os.ReadFile(filepath.Join(f.dir, vault.IndexFile))
	if err != nil {
		b.Fatal(err)
	}
	var runLine string
	for _, ln := range strings.SplitAfter(string(idx), "\n") {
		if strings.Contains(ln, r.RunID) {
			runLine = ln
		}
	}
	out, err := os.OpenFile(filepath.Join(f.dir, vault.IndexFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(out)
	seq0 := base - 1 // the template's first line
	n := (total - int(base)) / 2
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("019a4012-7c3e-7d10-9b2a-%012x", i)
		dir := strings.Replace(folder, r.RunID, id, 1)
		for rel, text := range tmpl {
			text = strings.ReplaceAll(text, r.RunID, id)
			if rel == "run.jsonl" {
				text = strings.Replace(text, fmt.Sprintf(`"seq":%d,`, seq0), fmt.Sprintf(`"seq":%d,`, base+int64(2*i-1)), 1)
				text = strings.Replace(text, fmt.Sprintf(`"seq":%d,`, seq0+1), fmt.Sprintf(`"seq":%d,`, base+int64(2*i)), 1)
				text = strings.Replace(text, `"order":"A-1"`, fmt.Sprintf(`"order":"A-%d"`, i+1), 1)
				text = strings.Replace(text, `"total":20.25`, fmt.Sprintf(`"total":%d.25`, 10+i%190), 1)
			}
			p := filepath.Join(dir, rel)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		w.WriteString(strings.ReplaceAll(runLine, r.RunID, id))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	out.Close()
	return int(base) + 2*n, n + 1
}

package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The benchmarks of the packages each print one line a run (go test
// -bench -count N); summarize takes those lines and prints, for each
// benchmark and metric, the median of its runs, then the ratios the issues
// ask for, against each target.

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

type target struct {
	bench, metric string
	max, min      float64
	what          string
}

var targets = []target{
	{bench: "BenchmarkCheckFulfillOrderWithTemplates", metric: "ms/op", max: 400, what: "issue 3: checking the fulfill-order page, module type check included"},
	{bench: "BenchmarkCheckSeries2000", metric: "ms/op", max: 5, what: "issue 3: a shape check of a 2,000-point series"},
	{bench: "BenchmarkFoldExamples/morning-social-content", metric: "events/s", min: 20000, what: "issue 4: morning-social-content, 100,000 events, whole keeper path"},
	{bench: "BenchmarkFoldExamples/morning-social-content", metric: "node-events/s", what: "issue 4: the same in Node.js (V8), views through JSON per fold"},
	{bench: "BenchmarkFoldExamples/morning-social-content", metric: "engine-json-events/s", what: "issue 4: ceiling: the fold alone in qjs v0.0.6, views through JSON per fold"},
	{bench: "BenchmarkFoldExamples/morning-social-content", metric: "engine-events/s", what: "issue 4: ceiling: the fold alone in qjs v0.0.6, no JSON between folds", min: 20000},
	{bench: "BenchmarkFoldExamples/close-the-month", metric: "events/s", what: "issue 4: close-the-month, 100,000 events, whole keeper path"},
	{bench: "BenchmarkFoldExamples/close-the-month", metric: "node-events/s", what: "issue 4: the same in Node.js"},
	{bench: "BenchmarkFoldExamples/fulfill-order", metric: "events/s", what: "issue 4: fulfill-order, 100,000 events, whole keeper path"},
	{bench: "BenchmarkFoldExamples/fulfill-order", metric: "node-events/s", what: "issue 4: the same in Node.js"},
	{bench: "BenchmarkShapeCheckCost/morning-social-content", metric: "events/s", what: "issue 11: pages of 1,000 folded, shapes checked after every fold in the sandbox, in the copy's walk"},
	{bench: "BenchmarkShapeCheckCost/morning-social-content", metric: "unfused-events/s", what: "issue 15: the same pages, shapes checked after the copy, in a walk of their own"},
	{bench: "BenchmarkShapeCheckCost/morning-social-content", metric: "page-check-events/s", what: "issue 11: the same pages, shapes checked in Go once a page (as before)"},
	{bench: "BenchmarkShapeCheckCost/close-the-month", metric: "events/s", what: "issue 11: the same, shapes after every fold"},
	{bench: "BenchmarkShapeCheckCost/close-the-month", metric: "unfused-events/s", what: "issue 15: the same, shapes after the copy"},
	{bench: "BenchmarkShapeCheckCost/close-the-month", metric: "page-check-events/s", what: "issue 11: the same, shapes once a page"},
	{bench: "BenchmarkShapeCheckCost/fulfill-order", metric: "events/s", what: "issue 11: the same, shapes after every fold"},
	{bench: "BenchmarkShapeCheckCost/fulfill-order", metric: "unfused-events/s", what: "issue 15: the same, shapes after the copy"},
	{bench: "BenchmarkShapeCheckCost/fulfill-order", metric: "page-check-events/s", what: "issue 11: the same, shapes once a page"},
	{bench: "BenchmarkFoldMorning", metric: "catchup-µs", what: "issue 4: one new event after 100,000 events: one incremental fold (CatchUp)"},
	{bench: "BenchmarkFoldMorning", metric: "rebuild-ms", what: "issue 4: the same views folded from the start of the 100,000 events"},
	{bench: "BenchmarkGetDefinitionFulfillOrder", metric: "ms/op", max: 2, what: "issue 5: get_definition of fulfill-order over live views"},
	{bench: "BenchmarkGetRunFulfillOrder", metric: "ms/op", max: 1, what: "issue 5: get_run of a fulfill-order run"},
	{bench: "BenchmarkHTTPAppend", metric: "events/s", what: "issue 7: 16 clients x 1,000 events over HTTP"},
	{bench: "BenchmarkListRunCommits50000", metric: "ms/op", max: 50, what: "issue 23: list_run_commits, a run page's commits, at 50,000 runs and 250,000 commits"},
	{bench: "BenchmarkListRunCommits50000", metric: "build-s", what: "issue 23: the same index of commits made from the whole history (once, or after a reset)"},
	{bench: "BenchmarkListRunCommits50000", metric: "catchup-ms", what: "issue 23: the same index taking 100 commits made beside quire"},
	{bench: "BenchmarkTryPageFulfillOrder", metric: "try-per-rebuild", max: 2, what: "issue 26: a dry run of fulfill-order's page (try_page, check and fold) over 10,000 records, per rebuilding its views, side by side"},
	{bench: "BenchmarkTryPageFulfillOrder", metric: "try-ms", what: "issue 26: the same dry run"},
	{bench: "BenchmarkTryPageFulfillOrder", metric: "rebuild-ms", what: "issue 26: the same views rebuilt from the start"},
	{bench: "BenchmarkRenderPageAtFulfillOrder", metric: "at-per-plain", max: 2, what: "issue 29: render_page at a recent commit, its views kept / the plain render, medians taken in turn"},
	{bench: "BenchmarkRenderPageAtFulfillOrder", metric: "at-ms", what: "issue 29: render_page at HEAD by its full id, its views kept"},
	{bench: "BenchmarkRenderPageAtFulfillOrder", metric: "plain-ms", what: "issue 29: render_page over live views, as quire serve keeps them"},
	{bench: "BenchmarkRenderPageAtFulfillOrder", metric: "at-first-ms", what: "issue 29: the first render at that commit, folding its history into views kept for it"},
	{bench: "BenchmarkReceiptMorning", metric: "receipt-pct", max: 5, what: "issue 29: keeping a receipt (chain links over every record, the views' digest), in % of the views' rebuild"},
	{bench: "BenchmarkReceiptMorning", metric: "verify-per-rebuild", max: 1.25, what: "issue 29: quire page verify's time / the views' rebuild from nothing (at the fold's rebuild rate)"},
	{bench: "BenchmarkReceiptMorning", metric: "rebuild-ms", what: "issue 29: the views of morning-social-content rebuilt over some 2,000 records"},
	{bench: "BenchmarkReceiptMorning", metric: "verify-ms", what: "issue 29: quire page verify of the same views"},
	{bench: "BenchmarkDefinitionPageFulfillOrder", metric: "median-ms", max: 20, what: "issue 16: the definition page of fulfill-order with 1,000 runs, answered by the server"},
	{bench: "BenchmarkBoundaryWithPages/pages=1", metric: "p50-ms", what: "issue 28: a run's two boundaries (started, succeeded) with one page live, through the ledger"},
	{bench: "BenchmarkBoundaryWithPages/pages=1", metric: "cpu-ms/op", what: "issue 28: the same, CPU of the process (the fold workers apart)"},
	{bench: "BenchmarkBoundaryWithPages/pages=1000", metric: "p50-ms", what: "issue 28: the same with 1,000 pages live in the playbook, one of them taking the run's events"},
	{bench: "BenchmarkBoundaryWithPages/pages=1000", metric: "cpu-ms/op", what: "issue 28: the same, CPU of the process"},
	{bench: "BenchmarkBoundaryWithPages/pages=1000", metric: "idle-%core", max: 1, what: "issue 28: what the keeper of 1,000 live pages spends while nothing is written, in % of a core"},
	{bench: "BenchmarkLongRunBoundary", metric: "per-hash-object", max: 3, what: "issue 28: a boundary on a run whose run.jsonl is 130 MB / git hash-object of that file, medians taken in turn"},
	{bench: "BenchmarkLongRunBoundary", metric: "boundary-ms", what: "issue 28: the same boundary, through the ledger"},
	{bench: "BenchmarkLongRunBoundary", metric: "hash-object-ms", what: "issue 28: git hash-object of the 130 MB run.jsonl"},
	{bench: "BenchmarkLongRunBoundary", metric: "first-ms", what: "issue 28: the first boundary after the log grew by another tool and a git commit (its lines numbered, its state derived)"},
	{bench: "BenchmarkListPagesWithDefinitions/home", metric: "median-ms", max: 100, what: "issue 28: the home page with 1,000 workflows (pages and glances) in one playbook"},
	{bench: "BenchmarkListPagesWithDefinitions/playbook", metric: "median-ms", max: 100, what: "issue 28: the playbook's page listing the same 1,000 workflows"},
	{bench: "BenchmarkRunPage50000", metric: "median-ms", max: 50, what: "issue 26: a run's page (result, events, thread, artifacts, state, commits) at 50,000 runs, answered by the server"},
	{bench: "BenchmarkDrawFulfillOrder", metric: "drawn-ms", max: 500, what: "issue 16: the same page drawn in headless Chromium, from the navigation's start to every chart's SVG in the DOM"},
	{bench: "BenchmarkDrawFulfillOrder", metric: "after-html-ms", what: "issue 16: the same, from the end of the server's answer (scripts and drawing)"},
}

func summarize(r io.Reader, w io.Writer) {
	values := map[string]map[string][]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			unit := f[i+1]
			if unit == "ns/op" {
				v, unit = v/1e6, "ms/op"
			}
			if values[m[1]] == nil {
				values[m[1]] = map[string][]float64{}
			}
			values[m[1]][unit] = append(values[m[1]][unit], v)
		}
	}
	fmt.Fprintln(w, "== Medians of the package benchmarks (runs in brackets)")
	for _, t := range targets {
		vs := values[t.bench][t.metric]
		if len(vs) == 0 {
			fmt.Fprintf(w, "%-36s %-11s %s: not measured (skipped: see above)\n", t.bench, t.metric, t.what)
			continue
		}
		med := median(vs)
		verdict := ""
		switch {
		case t.max > 0 && med <= t.max:
			verdict = fmt.Sprintf("  target <= %g: met", t.max)
		case t.max > 0:
			verdict = fmt.Sprintf("  target <= %g: NOT met", t.max)
		case t.min > 0 && med >= t.min:
			verdict = fmt.Sprintf("  target >= %g: met", t.min)
		case t.min > 0:
			verdict = fmt.Sprintf("  target >= %g: NOT met", t.min)
		}
		fmt.Fprintf(w, "%-36s %12.3f %-11s [%d]  %s%s\n", t.bench, med, t.metric, len(vs), t.what, verdict)
	}
	for _, pg := range []string{"morning-social-content", "close-the-month", "fulfill-order"} {
		if c := values["BenchmarkShapeCheckCost/"+pg]; len(c["events/s"]) > 0 && len(c["page-check-events/s"]) > 0 {
			q, p := median(c["events/s"]), median(c["page-check-events/s"])
			fmt.Fprintf(w, "fold ratio %-24s shapes after every fold / once a page = %.3f (%.0f vs %.0f events/s)\n", pg, q/p, q, p)
			if u := c["unfused-events/s"]; len(u) > 0 {
				fmt.Fprintf(w, "fold ratio %-24s shapes in the copy's walk / after it = %.3f (%.0f vs %.0f events/s)\n", pg, q/median(u), q, median(u))
			}
		}
		m := values["BenchmarkFoldExamples/"+pg]
		if q, n := m["events/s"], m["node-events/s"]; len(q) > 0 && len(n) > 0 {
			fmt.Fprintf(w, "fold ratio %-24s QuickJS sandbox / Node.js = %.3f (%.0f vs %.0f events/s)\n", pg, median(q)/median(n), median(q), median(n))
		}
		if r, e, b := values["BenchmarkFoldRatio/"+pg]["path-per-ceiling"], m["engine-json-events/s"], m["engine-events/s"]; len(r) > 0 && len(e) > 0 && len(b) > 0 {
			fmt.Fprintf(w, "fold ratio %-24s whole path / the engine alone with JSON between folds = %.3f (BenchmarkFoldRatio: the median of rounds taken in turn; target at least 0.75 %s); the engine alone: %.0f events/s with JSON, %.0f without\n",
				pg, median(r), targetText(median(r), 0.75), median(e), median(b))
		}
	}
	if one, many := values["BenchmarkBoundaryWithPages/pages=1"]["p50-ms"], values["BenchmarkBoundaryWithPages/pages=1000"]["p50-ms"]; len(one) > 0 && len(many) > 0 {
		r := median(many) / median(one)
		verdict := "met"
		if r > 2 {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "pages ratio a boundary with 1,000 pages / with one = %.2f (%.1f vs %.1f ms; target at most 2: %s)\n", r, median(many), median(one), verdict)
	}
	var rest []string
	for b := range values {
		known := false
		for _, t := range targets {
			known = known || t.bench == b
		}
		if !known {
			rest = append(rest, b)
		}
	}
	sort.Strings(rest)
	for _, b := range rest {
		fmt.Fprintf(w, "%-36s", b)
		units := make([]string, 0, len(values[b]))
		for u := range values[b] {
			units = append(units, u)
		}
		sort.Strings(units)
		for _, u := range units {
			fmt.Fprintf(w, " %10.3f %s", median(values[b][u]), u)
		}
		fmt.Fprintln(w)
	}
}

func median(vs []float64) float64 {
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

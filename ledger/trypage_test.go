package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"quire/fold"
	"quire/render"
	"quire/words/page"
)

// tryArgs are try_page's arguments for close-the-month with src.
func tryArgs(src string) string {
	b, _ := json.Marshal(map[string]string{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": src})
	return string(b)
}

// Past a replay's reach the dry run folds nothing: out_of_reach with the
// version alone, no views, runs or changes; the result is still rendered.
func TestTryPagePastItsReachIsOutOfReach(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.l.views.replayPages = 1 // a reach of 1,000 records
	src := source(t, "close-the-month.yaml")
	f.call("update_definition", tryArgs(src))
	f.runAt("close-the-month", "2026-11-01", `{"month":"2026-10","revenue":182450}`)
	// Lines written by hand into a run's log in one write, each a record
	// of the history once it is rebuilt, take it past 1,000 records.
	going := f.start()
	log := filepath.Join(f.dir, going.Path, "run.jsonl")
	line := fmt.Sprintf(`{"event": "milestone_fired", "timestamp": %q}`+"\n", f.l.Now().UTC().Format("2006-01-02T15:04"))
	if err := os.WriteFile(log, append(readFile(t, log), strings.Repeat(line, 1000)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.l.Reindex(); err != nil { // the history numbers them at once
		t.Fatal(err)
	}
	if n, _ := f.l.HistoryLen("finance"); n <= 1000 {
		t.Fatalf("the history holds %d records", n)
	}
	tried := f.call("try_page", tryArgs(strings.Replace(src, "of revenue.", "of revenue, counted twice.", 1))).(*TriedPage)
	got, _ := json.Marshal(tried.Page.Standing)
	if string(got) != `{"state":"out_of_reach","version":3}` || tried.Views != nil || tried.Changes != nil || tried.Page.Runs != "" {
		t.Errorf("past its reach: %s, views %s, changes %v, runs %q", got, tried.Views, tried.Changes, tried.Page.Runs)
	}
	if tried.Page.Result != "Closing the month…" { // over the latest run, still going
		t.Errorf("the result past its reach: %q", tried.Page.Result)
	}
}

// A module that throws stalls the dry run as it would stall the views:
// the standing says at which event and why, and runs is the line for
// stalled views; today's views go on as they were.
func TestTryPageOfAModuleThatThrowsStalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	src := source(t, "close-the-month.yaml")
	f.call("update_definition", tryArgs(src))
	f.runAt("close-the-month", "2026-11-01", `{"month":"2026-10","revenue":182450}`)
	throws := strings.Replace(src, "const output = fieldOf(event.data, 'output');", "const output = fieldOf(event.data, 'output');\n        if (output !== undefined) throw new Error('no output wanted');", 1)
	tried := f.call("try_page", tryArgs(throws)).(*TriedPage)
	st := tried.Page.Standing
	if st == nil || st.State != fold.StateStalled || st.Stalled == nil || !strings.Contains(st.Stalled.Error, "no output wanted") || tried.Page.Runs != render.LineStalled {
		t.Fatalf("a module that throws: %+v, runs %q", st, tried.Page.Runs)
	}
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month"}`).(*Definition)
	if d.Page.Standing.State != fold.StateLive || !strings.Contains(d.Page.Runs, `"value":182450`) {
		t.Errorf("today's page after the dry run: %+v", d.Page)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each view's changes are listed in the tried page's order, then the views
// only today's page has; a view added or dropped is changed as a whole
// (the pointer ""), and a view the same has no changes.
func TestChangesAreGroupedByView(t *testing.T) {
	pageOf := func(views string) *page.Page {
		p, issues := page.Parse([]byte("page:\n  data:\n    language: typescript\n    source:\n      events:\n        - type: run_succeeded\n    views:\n"+views+
			"    module: |\n      export function fold(view: View, event: Event): View { return view; }\n  runs: x\n"), page.Where{Form: page.InWorkflow, Subject: "workflow"})
		if p == nil || p.Data == nil {
			t.Fatalf("the page does not parse: %v", issues)
		}
		return p
	}
	today := pageOf("      total: categories\n      gone: text\n      same: text\n")
	tried := pageOf("      same: text\n      total: categories\n      added: text\n")
	got, err := changesByView(json.RawMessage(`{"total":{"values":[{"name":"a","value":1}]},"gone":{"text":"x"},"same":{"text":"y"}}`),
		json.RawMessage(`{"same":{"text":"y"},"total":{"values":[{"name":"a","value":2}]},"added":{"text":"z"}}`), tried, today)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `[{"view":"same","changes":[]},{"view":"total","changes":[{"pointer":"/values/0/value","old":1,"new":2}]},` +
		`{"view":"added","changes":[{"pointer":"","new":{"text":"z"}}]},{"view":"gone","changes":[{"pointer":"","old":{"text":"x"}}]}]`
	if string(b) != want {
		t.Errorf("changes:\n%s\nwant\n%s", b, want)
	}
}

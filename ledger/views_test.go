package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"quire/fold"
	"quire/vault"
)

// morningFixture is a fixture with the playbook social and the workflow
// morning-social-content, with its page, saved in it.
func morningFixture(t testing.TB) *fixture {
	t.Helper()
	f := newFixture(t)
	doc, err := os.ReadFile(filepath.Join("..", "testdata", "vault", "morning-social-content.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f.call("create_playbook", `{"playbook":"social","name":"Social"}`)
	args, _ := json.Marshal(map[string]string{"playbook": "social", "type": "workflow", "name": "morning-social-content", "source": string(doc)})
	f.call("create_definition", string(args))
	return f
}

// morningRuns records runs of morning-social-content, each with steps
// step records (which no fold sees) before it ends, until the playbook's
// history holds at least n records. It answers the runs' ids in order.
func morningRuns(t testing.TB, f *fixture, n int64, steps int) []string {
	t.Helper()
	var runs []string
	for i := 0; ; i++ {
		if have, err := f.l.HistoryLen("social"); err != nil {
			t.Fatal(err)
		} else if have >= n {
			return runs
		}
		r := f.call("run_definition", fmt.Sprintf(`{"playbook":"social","type":"workflow","name":"morning-social-content","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
		for j := range steps {
			typ := []string{"step_started", "step_completed"}[j%2]
			f.call("record_event", fmt.Sprintf(`{"playbook":"social","run_id":%q,"event":%q,"step":"draft-%d","actor":"agent-7"}`, r.RunID, typ, j/2))
		}
		channels := []string{"LinkedIn", "X", "Instagram"}
		f.call("end_run", fmt.Sprintf(`{"playbook":"social","run_id":%q,"status":"succeeded","output":{"date":"2026-11-%02d","posts":[{"channel":%q,"title":"Post %d","url":"https://example.com/%d"}]},"actor":"agent-7"}`,
			r.RunID, 1+i%28, channels[i%3], i, i))
		runs = append(runs, r.RunID)
	}
}

// readsWithPageSize opens the vault anew, its views built from nothing,
// with the keeper reading pages of size records, and answers what
// get_definition carries of the page and what render_page carries as of
// each run given.
func readsWithPageSize(t *testing.T, dir string, size int, asOf []string) (string, []string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, vault.QuireDir, "views")); err != nil {
		t.Fatal(err)
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	l := New(v)
	defer l.Close()
	l.views.pageSize = size
	call := func(op string, args any) json.RawMessage {
		a, _ := json.Marshal(args)
		res, err := l.Call(context.Background(), op, a)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		b, _ := json.Marshal(res)
		var page struct {
			Page json.RawMessage `json:"page"`
		}
		json.Unmarshal(b, &page)
		return page.Page
	}
	subject := map[string]any{"playbook": "social", "type": "workflow", "name": "morning-social-content"}
	def := call("get_definition", subject)
	var pages []string
	for _, run := range asOf {
		subject["run_id"] = run
		pages = append(pages, string(call("render_page", subject)))
	}
	return string(def), pages
}

// Views past the first page of history: a history whose records are
// mostly steps, read in pages of 1,000 (or 100), 7 and 1 records, gives
// the same page.runs and page.standing byte for byte, live at the newest
// record with every run folded; render_page as of runs across the pages
// gives the same, each at its run's last event with the runs ended by
// then. Every record_event commits, so a history of 2,500 records takes
// a minute to record on a loaded machine: that one runs with
// QUIRE_TEST_LONG, and make test's reads 300 records in pages of 100
// (fold's TestPageBoundsDoNotMatter holds 2,500 records to the same in
// make test, in memory).
func TestViewsPastTheFirstPage(t *testing.T) {
	t.Parallel()
	n, steps, sizes := int64(300), 20, []int{100, 7, 1}
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n, steps, sizes = 2500, 60, []int{1000, 7, 1}
	}
	f := morningFixture(t)
	runs := morningRuns(t, f, n, steps)
	total, err := f.l.HistoryLen("social")
	if err != nil {
		t.Fatal(err)
	}
	at := []int{0, len(runs) / 2, len(runs) - 1}
	asOf := []string{runs[at[0]], runs[at[1]], runs[at[2]]}
	var want string
	var wantAsOf []string
	for _, size := range sizes {
		def, pages := readsWithPageSize(t, f.dir, size, asOf)
		var p struct {
			Runs     string        `json:"runs"`
			Standing fold.Standing `json:"standing"`
		}
		if err := json.Unmarshal([]byte(def), &p); err != nil {
			t.Fatal(err)
		}
		if p.Standing.State != fold.StateLive || *p.Standing.Checkpoint != strconv.FormatInt(total, 10) ||
			p.Standing.Folded != int64(len(runs)) || p.Standing.LagMs != 0 {
			t.Fatalf("pages of %d: %s", size, def)
		}
		for i, page := range pages {
			var q struct {
				Standing fold.Standing `json:"standing"`
			}
			json.Unmarshal([]byte(page), &q)
			_, st, err := f.l.runState("social", asOf[i])
			if err != nil {
				t.Fatal(err)
			}
			if q.Standing.State != fold.StateLive || *q.Standing.Checkpoint != strconv.FormatInt(st.LastSeq, 10) ||
				q.Standing.Folded != int64(at[i]+1) || q.Standing.LastEvent == nil || q.Standing.LastEvent.Time != st.Ended {
				t.Fatalf("pages of %d, as of run %d: %s", size, i, page)
			}
		}
		if want == "" {
			want, wantAsOf = def, pages
			continue
		}
		if def != want {
			t.Fatalf("pages of %d: get_definition's page\n%s\nnot\n%s", size, def, want)
		}
		for i := range pages {
			if pages[i] != wantAsOf[i] {
				t.Fatalf("pages of %d: render_page as of run %d\n%s\nnot\n%s", size, i, pages[i], wantAsOf[i])
			}
		}
	}
}

// Right after end_run, a read through the server that recorded it never
// says live without the run: it waits for the keeper to fold it.
func TestServedReadAfterEndRun(t *testing.T) {
	t.Parallel()
	f := morningFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.l.Keep(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for i := range 2 {
		r := f.call("run_definition", fmt.Sprintf(`{"playbook":"social","type":"workflow","name":"morning-social-content","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
		ended := f.call("end_run", fmt.Sprintf(`{"playbook":"social","run_id":%q,"status":"succeeded","output":{"date":"2026-11-0%d","posts":[{"channel":"X","title":"T","url":"https://example.com/"}]},"actor":"agent-7"}`, r.RunID, i+1)).(*Run)
		d := f.call("get_definition", `{"playbook":"social","type":"workflow","name":"morning-social-content"}`).(*Definition)
		s := d.Page.Standing
		b, _ := json.Marshal(s)
		if s.State == fold.StateLive {
			endedAt, _ := time.Parse(time.RFC3339Nano, ended.Ended)
			if s.Folded != int64(i+1) || s.NewestRecordAt == nil || s.NewestRecordAt.Before(endedAt) || s.LastEvent == nil || s.LastEvent.Time != ended.Ended {
				t.Fatalf("run %d ended at %s: live without it: %s", i, ended.Ended, b)
			}
			continue
		}
		// Honest, when the keeper could not fold it in time.
		if s.State != fold.StateRebuilding || d.Page.Runs != "Building this page's figures from the playbook's history…" {
			t.Fatalf("run %d: %s %q", i, b, d.Page.Runs)
		}
	}
}

// A read that comes before quire serve keeps the views (the server
// answers as soon as it listens, and starts Keep beside it) folds what
// it needs itself, and the keeper it made is kept by Keep all the same:
// the next run's end is folded in the background, and the page goes on
// reading live. A replica's first render met exactly this and stayed
// rebuilding, folded 0, for good.
func TestAReadBeforeKeepLeavesTheViewsKept(t *testing.T) {
	t.Parallel()
	f := morningFixture(t)
	get := `{"playbook":"social","type":"workflow","name":"morning-social-content"}`
	end := func(i int) {
		r := f.call("run_definition", fmt.Sprintf(`{"playbook":"social","type":"workflow","name":"morning-social-content","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
		f.call("end_run", fmt.Sprintf(`{"playbook":"social","run_id":%q,"status":"succeeded","output":{"date":"2026-11-0%d","posts":[{"channel":"X","title":"T","url":"https://example.com/"}]},"actor":"agent-7"}`, r.RunID, i))
	}
	end(1)
	if s := f.call("get_definition", get).(*Definition).Page.Standing; s.State != fold.StateLive || s.Folded != 1 {
		b, _ := json.Marshal(s)
		t.Fatalf("before serving, the read does not fold the run itself: %s", b)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.l.Keep(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	end(2)
	var s *fold.Standing
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if s = f.call("get_definition", get).(*Definition).Page.Standing; s.State == fold.StateLive && s.Folded == 2 {
			return
		}
	}
	b, _ := json.Marshal(s)
	t.Fatalf("served, the keeper a read made before Keep never folds the next run: %s", b)
}

// No fold sees playbook_page_saved, as the page format says: a playbook
// page whose filter names it folds nothing, however often it is saved.
func TestPlaybookPageSavedReachesNoFold(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	pg := "data:\n  language: typescript\n  source:\n    events:\n      - type: playbook_page_saved\n      - type: run_created\n  views:\n    seen: text\n  module: |\n    export function fold(view: View, event: Event): View {\n      return { seen: { text: (view.seen?.text ?? '') + event.type + ';' } };\n    }\nruns: |\n  {{ views.seen.text }}\n"
	for range 3 {
		args, _ := json.Marshal(map[string]any{"playbook": "finance", "page": pg})
		f.call("update_playbook", string(args))
	}
	f.start()
	p := f.call("render_playbook_page", `{"playbook":"finance"}`).(*RenderedPlaybook)
	if p.Page.Standing == nil || p.Page.Standing.State != fold.StateLive || p.Page.Standing.Folded != 1 || p.Page.Runs != "run_created;" {
		b, _ := json.Marshal(p.Page)
		t.Fatalf("%s", b)
	}
}

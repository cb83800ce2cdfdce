package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/fold"
	"quire/ledger"
)

// quire page status and quire page render, as a person reads them: the
// standing of a page's views once runs are folded, and once a new version
// of the module stalls them.
func TestCLIPageStatusAndRender(t *testing.T) {
	t.Parallel()
	_, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"social","name":"Social"}`)
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vault", "morning-social-content.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	save := func(op, source string) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"playbook": "social", "type": "workflow", "name": "morning-social-content", "source": source})
		if code, out, errs := quire(t, string(args), v, "call", op, "--args", "-"); code != 0 {
			t.Fatalf("%s: %d %s %s", op, code, out, errs)
		}
	}
	save("create_definition", string(doc))
	status := []string{v, "page", "status", "--playbook", "social", "--name", "morning-social-content"}
	// The history's first records (the playbook's, the definition's) are
	// passed over: nothing to fold, and the checkpoint past them.
	checkpoint := `  checkpoint \d+ \(recorded \d{4}-\d\d-\d\dT[0-9:]+Z\), \d+ (second|seconds|minute|minutes) behind the newest record\n` +
		`  receipt: records 1 to \d+ \(chain sha256:[0-9a-f]{64}\), views sha256:[0-9a-f]{64}\n` +
		`  check it, here or on any clone: quire page verify --playbook social --type workflow --name morning-social-content\n$`
	empty := regexp.MustCompile(`^workflow/morning-social-content, views of version 1: live\n  folded 0 events\n` + checkpoint)
	if code, out, _ := quire(t, "", status...); code != 0 || !empty.MatchString(out) {
		t.Fatalf("status before any run: %d %q", code, out)
	}

	var last string
	for i, posts := range []string{
		`[{"channel":"LinkedIn","title":"One","url":"https://example.com/1"},{"channel":"X","title":"Two","url":"https://example.com/2"}]`,
		`[{"channel":"LinkedIn","title":"Three","url":"https://example.com/3"}]`,
	} {
		code, out, _ := quire(t, "", v, "run", "start", "--playbook", "social", "--name", "morning-social-content", "--member-of", project,
			"--executor", "agent-7", "--authorized-by", "ana", "--json")
		var r struct {
			RunID string `json:"run_id"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run start: %d %s", code, out)
		}
		output := `{"date":"2026-11-0` + string(rune('1'+i)) + `","posts":` + posts + `}`
		if code, out, errs := quire(t, "", v, "run", "end", "succeeded", "--playbook", "social", "--run", r.RunID, "--output", output, "--actor", "agent-7"); code != 0 {
			t.Fatalf("run end: %d %s %s", code, out, errs)
		}
		last = r.RunID
	}
	// The CLI folds what is new before it answers.
	code, out, _ := quire(t, "", status...)
	live := regexp.MustCompile(`^workflow/morning-social-content, views of version 1: live\n` +
		`  folded 2 events, the last ` + regexp.QuoteMeta(last) + `_\d+ at \d{4}-\d\d-\d\dT[0-9:.]+Z\n` +
		checkpoint)
	if code != 0 || !live.MatchString(out) {
		t.Fatalf("status when live: %d %q", code, out)
	}
	code, out, _ = quire(t, "", v, "page", "render", "--playbook", "social", "--name", "morning-social-content", "--text")
	if code != 0 || !strings.Contains(out, "Since it began, the workflow has drafted 3 posts across 2 channels.") {
		t.Fatalf("render: %d %s", code, out)
	}

	// A new version whose fold raises: its data changed, so its views are
	// built again from the start, and stall at the first event.
	const at = "      export function fold(view: View, event: Event): View {\n"
	broken := strings.Replace(string(doc), at, at+"        if (event.id !== '') throw new RangeError('no more posts');\n", 1)
	if broken == string(doc) {
		t.Fatal("the module's first line was not found")
	}
	save("update_definition", broken)
	code, out, errs := quire(t, "", status...)
	stalled := regexp.MustCompile(`^workflow/morning-social-content, views of version 2: stalled\n  folded 0 events\n` +
		strings.TrimSuffix(checkpoint, "$") +
		`  stalled at event [0-9a-f-]+_\d+ \(run_succeeded at [0-9T:.-]+Z\), raised: RangeError: no more posts\n` +
		`  at line 26 of the definition's document\n$`)
	// Stalled views exit 1, saying so on standard error.
	if code != 1 || !stalled.MatchString(out) || !strings.Contains(errs, "quire: the views of workflow/morning-social-content are stalled: mend the page's module") {
		t.Fatalf("status when stalled: %d %q %q", code, out, errs)
	}
}

// A read without a server that folds for more than a second says how it
// goes on standard error: events read of the history's, and the rate;
// before a second it says nothing.
func TestCatchUpProgress(t *testing.T) {
	var errb strings.Builder
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	p := catchUpProgress(&errb, func() time.Time { return at })
	p("social", fold.Progress{ID: "workflow/morning-social-content", From: 0, Through: 1000, Newest: 12000, Elapsed: 500 * time.Millisecond})
	if errb.Len() != 0 {
		t.Fatalf("before a second: %q", errb.String())
	}
	at = at.Add(2 * time.Second)
	p("social", fold.Progress{ID: "workflow/morning-social-content", From: 0, Through: 3000, Newest: 12000, Elapsed: 1500 * time.Millisecond})
	p("social", fold.Progress{ID: "workflow/morning-social-content", From: 0, Through: 4000, Newest: 12000, Elapsed: 1700 * time.Millisecond})
	p("social", fold.Progress{ID: "workflow/morning-social-content", From: 0, Through: 12000, Newest: 12000, Elapsed: 4 * time.Second, Done: true})
	want := "quire: folding the history of social for the views of workflow/morning-social-content: 3,000 of 12,000 events, 2,000 events/s, about 5s left\n" +
		"quire: folded the history of social for the views of workflow/morning-social-content: 12,000 of 12,000 events, 3,000 events/s\n"
	if errb.String() != want {
		t.Fatalf("progress\n%q\nwant\n%q", errb.String(), want)
	}
}

// A CLI read folds everything that is new before it answers, whatever the
// number of pages of records: runs with steps between them (records no
// fold sees), and get_definition's page.standing is live at the newest
// record with every run folded; standard output holds the JSON answer
// alone. With QUIRE_TEST_LONG the history holds 1,200 records, past the
// first page of 1,000; make test's holds 50 (every record_event commits,
// so recording is what takes the time).
func TestCLIReadFoldsEverything(t *testing.T) {
	t.Parallel()
	n := int64(50)
	if os.Getenv("QUIRE_TEST_LONG") != "" {
		n = 1200
	}
	dir, v, project := newCLIVault(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "testdata", "vault", "morning-social-content.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	call := func(op string, args any) any {
		t.Helper()
		a, _ := json.Marshal(args)
		res, err := l.Call(context.Background(), op, a)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return res
	}
	call("create_playbook", map[string]any{"playbook": "social", "name": "Social"})
	call("create_definition", map[string]any{"playbook": "social", "type": "workflow", "name": "morning-social-content", "source": string(doc)})
	runs := 0
	for {
		if have, err := l.HistoryLen("social"); err != nil || have >= n {
			break
		}
		r := call("run_definition", map[string]any{"playbook": "social", "type": "workflow", "name": "morning-social-content",
			"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana"}).(*ledger.Run)
		for j := range 20 {
			call("record_event", map[string]any{"playbook": "social", "run_id": r.RunID, "event": "step_started", "step": fmt.Sprintf("draft-%d", j), "actor": "agent-7"})
		}
		call("end_run", map[string]any{"playbook": "social", "run_id": r.RunID, "status": "succeeded", "actor": "agent-7",
			"output": map[string]any{"date": "2026-11-01", "posts": []any{map[string]any{"channel": "X", "title": "T", "url": "https://example.com/"}}}})
		runs++
	}
	total, _ := l.HistoryLen("social")
	l.Close()

	code, out, _ := quire(t, "", v, "call", "get_definition", "--args", `{"playbook":"social","type":"workflow","name":"morning-social-content"}`)
	var d struct {
		Page struct {
			Standing fold.Standing `json:"standing"`
		} `json:"page"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("get_definition: %d %q", code, out)
	}
	s := d.Page.Standing
	if s.State != fold.StateLive || *s.Checkpoint != strconv.FormatInt(total, 10) || s.Folded != int64(runs) {
		t.Fatalf("%d runs, %d records: %s", runs, total, out)
	}
}

// A lag is said in words, to its largest unit.
func TestLagsInWords(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 seconds", time.Second: "1 second", 59 * time.Second: "59 seconds", 90 * time.Second: "1 minute",
		3 * time.Hour: "3 hours", 702*time.Hour + 38*time.Minute: "29 days",
	} {
		if got := inWords(d); got != want {
			t.Errorf("inWords(%s) = %q, want %q", d, got, want)
		}
	}
}

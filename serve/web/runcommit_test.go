package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"quire/internal/browser"
	"quire/serve"
)

// closeSource is a workflow of one step, /do/0/work at line 8, whose
// page has a result and no views (no module to check).
const closeSource = `document:
  dsl: '1.0.3'
  namespace: examples
  name: close
  version: '1.0.0'
  summary: Closes a month's books.
do:
  - work:
      call: run_definition
      with:
        type: computation
        name: close-the-month-step
page:
  result: |
    {% if run.status == "started" %}
    Closing the month…
    {% else %}
    {{ output.month }} closed with {{ output.revenue | money }} of revenue.
    {% endif %}
`

// closeRun starts a run of close by bea, authorized by ana, that appends
// to its thread and completes its step /do/0/work (a boundary, so a
// commit), and answers its id.
func closeRun(d *demo) string {
	d.t.Helper()
	d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "close", "source": closeSource, "actor": "ana"})
	r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "close",
		"member_of": []string{d.project}, "executor": "bea", "authorized_by": "ana"})
	id := r["run_id"].(string)
	d.call("append_thread", map[string]any{"playbook": "operations", "run_id": id, "text": "Reconciled **412** entries.", "actor": "bea"})
	d.call("record_event", map[string]any{"playbook": "operations", "run_id": id, "event": "step_completed", "step": "do/0/work",
		"detail": "Closed October", "actor": "bea"})
	return id
}

// eventsOf is a run's events as list_playbook_events answers them, as JSON.
func eventsOf(d *demo, id string) string {
	d.t.Helper()
	raw, err := d.l.Call(context.Background(), "list_playbook_events", json.RawMessage(`{"playbook":"operations","run_id":"`+id+`","limit":100}`))
	if err != nil {
		d.t.Fatal(err)
	}
	b, _ := json.Marshal(raw)
	return string(b)
}

// The end of a run from its page: offered to its executor and
// authorizer alone, refused without the form's CSRF value and with an
// output that is not JSON (naming /output, nothing written), and
// recorded through end_run under the token's principal.
func TestARunIsEndedFromItsPage(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{})
	id := closeRun(d)
	login := func(who string) {
		tok, err := serve.CreateToken(d.l, who, []string{"playbook:write"})
		if err != nil {
			t.Fatal(err)
		}
		d.post("/logout", url.Values{"csrf": {d.csrf()}})
		if resp, _ := d.post("/login", url.Values{"csrf": {d.csrf()}, "token": {tok}, "next": {"/"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("login as %s: %d", who, resp.StatusCode)
		}
	}
	page := "/p/operations/runs/" + id
	action := `action="/p/operations/runs/` + id + `/end"`
	login("cy")
	if _, body := d.get(page); strings.Contains(body, action) {
		t.Error("a person who may not end the run is offered to")
	}
	login("bea")
	if _, body := d.get(page); strings.Count(body, action) != 3 || !strings.Contains(body, ">End: rejected</button>") {
		t.Fatalf("the run's executor is not offered to end it:\n%s", body)
	}
	if resp, _ := d.post(page+"/end", url.Values{"status": {"failed"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an end without its CSRF value: %d", resp.StatusCode)
	}
	resp, body := d.post(page+"/end", url.Values{"csrf": {d.csrf()}, "status": {"succeeded"}, "output": {"{month: 2026-10"}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "/output: the output is not JSON") {
		t.Errorf("an output that is not JSON: %d %s", resp.StatusCode, body)
	}
	if resp, body := d.post(page+"/end", url.Values{"csrf": {d.csrf()}, "status": {"rejected"}}); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "reason") {
		t.Errorf("a rejection without its reason: %d %s", resp.StatusCode, body)
	}
	if strings.Contains(eventsOf(d, id), "run_rejected") {
		t.Fatal("a refused end was written")
	}
	resp, _ = d.post(page+"/end", url.Values{"csrf": {d.csrf()}, "status": {"rejected"}, "reason": {"the bank statement is missing"}, "kind": {"missing_input"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != page {
		t.Fatalf("end: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if evs := eventsOf(d, id); !regexp.MustCompile(`"type":"run_rejected"[^}]*"caller":"bea"[^}]*"data":\{"kind":"missing_input","reason":"the bank statement is missing"\}`).MatchString(evs) {
		t.Fatalf("no run_rejected by bea with its reason and kind: %s", evs)
	}
	if _, body := d.get(page); strings.Contains(body, action) {
		t.Error("the ended run's page still offers to end it")
	}
	if resp, body := d.get(page + "/commits/" + strings.Repeat("0", 40)); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "has no commit") {
		t.Errorf("a commit the run does not have: %d", resp.StatusCode)
	}
}

// In a real browser, as the run's executor logged in with a token: each
// step of the run's events links to its line in the definition's source
// at the pinned version; each commit links to its changes (the events it
// added, the thread it appended, the state's fields before and after);
// and the run ended from its page is recorded under the token's
// principal.
func TestBrowserRunPageCommitsStepsAndEnd(t *testing.T) {
	d := newDemo(t, serve.Options{})
	id := closeRun(d)
	tok, err := serve.CreateToken(d.l, "bea", []string{"playbook:write"})
	if err != nil {
		t.Fatal(err)
	}
	p := browser.NewPage(t)
	// The tabs of the shared browser share its cookies, whatever the
	// port: the token's cookie would follow the next test to its server.
	t.Cleanup(func() { chromedp.Call(p.Context(), network.ClearBrowserCookies, cdp.Empty{}) })
	if err := p.Open(d.srv.URL + "/login?next=/p/operations/runs/" + id); err != nil {
		t.Fatal(err)
	}
	if err := p.Eval(`(() => { const f = document.querySelector("form input[name=token]").form;
	  f.token.value = `+jsQuote(tok)+`; f.querySelector("button[type=submit]").click(); return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(".q-timeline", 5*time.Second); err != nil {
		t.Fatal(err)
	}

	// The step's link opens the source on the step's line.
	var step struct {
		Href, Line string
		Open       bool
	}
	if err := p.Eval(`(async () => { const a = document.querySelector(".q-event-step_completed a.q-step"); a.click();
	  await new Promise(r => setTimeout(r, 100));
	  const t = document.querySelector(".q-line:target");
	  return {Href: a.getAttribute("href"), Line: t ? t.textContent : "", Open: document.querySelector("details.q-source").open}; })()`, &step); err != nil {
		t.Fatal(err)
	}
	if step.Href != "#L8" || step.Line != "  - work:" || !step.Open {
		t.Errorf("the step's link %q shows line %q, the source open: %v", step.Href, step.Line, step.Open)
	}
	dir := browser.ScreenshotDir(t)
	p.Screenshot(filepath.Join(dir, "run-page-steps-and-commits.png"))

	// The newest commit, the step's, and its changes.
	if err := p.Eval(`(() => { document.querySelector(".q-commits tbody a").click(); return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(".q-commit-events", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var seen struct {
		Events, Thread, Strong string
		State                  [][]string
	}
	if err := p.Eval(`(() => ({Events: document.querySelector(".q-commit-events ol").innerText,
	  Thread: document.querySelector(".q-commit-thread .q-threadmd").innerText,
	  Strong: (document.querySelector(".q-commit-thread strong") || {}).textContent || "",
	  State: [...document.querySelectorAll(".q-state-changes tbody tr")].map(tr => [...tr.cells].map(c => c.innerText.trim()))}))()`, &seen); err != nil {
		t.Fatal(err)
	}
	if evs := strings.Join(strings.Fields(seen.Events), " "); !strings.Contains(evs, "step_completed do/0/work by bea Closed October") || strings.Contains(evs, "run_created") {
		t.Errorf("the commit's events: %q", evs)
	}
	if !strings.Contains(seen.Thread, "Reconciled 412 entries.") || seen.Strong != "412" {
		t.Errorf("the commit's thread: %q", seen.Thread)
	}
	state := map[string]string{}
	for _, row := range seen.State {
		state[row[0]] = row[1] + " → " + row[2]
	}
	if state["current_step"] != "none → do/0/work" || state["events"] != "1 → 2" {
		t.Errorf("the commit's state: %v", seen.State)
	}
	p.Screenshot(filepath.Join(dir, "run-commit.png"))

	// Back on the run's page, bea ends it.
	if err := p.Open(d.srv.URL + "/p/operations/runs/" + id); err != nil {
		t.Fatal(err)
	}
	if err := p.Eval(`(() => { const f = document.querySelector("form input[name=status][value=succeeded]").form;
	  f.closest("details").open = true; f.output.value = '{"month":"2026-10","revenue":182450}';
	  f.querySelector("button[type=submit]").click(); return true; })()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(".q-status-succeeded", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if evs := eventsOf(d, id); !regexp.MustCompile(`"type":"run_succeeded"[^}]*"caller":"bea"`).MatchString(evs) {
		t.Fatalf("no run_succeeded by bea: %s", evs)
	}
	if h1, _ := p.Text("h1"); h1 != "2026-10 closed with $182,450 of revenue." {
		t.Errorf("the ended run's headline: %q", h1)
	}
	t.Logf("screenshots in %s", dir)
}

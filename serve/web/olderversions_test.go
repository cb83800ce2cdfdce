package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"quire/ledger"
	"quire/serve"
)

// A comment made on a block of version 1 stays on that block after any
// new version (a change to the summary alone), marked "on version 1",
// and a comment on the version the page shows carries no mark.
func TestCommentsStayOnNewerVersions(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true}, "close-the-month")
	src, err := os.ReadFile("../../testdata/vault/close-the-month.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/definitions/workflow/close-the-month/1/parts/runs-1", "text": "Is the chart right?", "author": "ana"})
	d.call("update_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "close-the-month", "actor": "ana",
		"source": strings.Replace(string(src), "summary: Closes a month's books.", "summary: Closes the books of a month.", 1)})
	d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/definitions/workflow/close-the-month/2/parts/runs-1", "text": "Now it is.", "author": "ben"})
	_, body := d.get("/p/operations/workflow/close-the-month")
	thread := func(addr string) string {
		i := strings.Index(body, `id="t-`+addr+`"`)
		if i < 0 {
			t.Fatalf("no thread for %s in:\n%s", addr, body)
		}
		return body[i : i+strings.Index(body[i:], "</details>")]
	}
	got := thread("operations/definitions/workflow/close-the-month/2/parts/runs-1")
	older, newer := strings.Index(got, "Is the chart right?"), strings.Index(got, "Now it is.")
	if older < 0 || newer < older || !strings.Contains(got[:newer], `<span class="q-badge">on version 1</span>`) ||
		strings.Contains(got[newer:], "on version") || !strings.Contains(got, `<span class="q-count">2</span>`) {
		t.Fatalf("the block's thread on version 2:\n%s", got)
	}
}

// A comment on a run's row is drawn on that row of the definition's runs
// list alone, and one on a playbook's card on its card on the home page.
func TestCommentsOnRowsAndCardsAreDrawnThere(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	one := d.run("echo", "2026-11-01", `{"text":"one"}`)
	two := d.run("echo", "2026-11-02", `{"text":"two"}`)
	d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/runs/" + one + "/parts/row", "text": "Why so slow?", "author": "ana"})
	d.call("make_comment", map[string]any{"playbook": "operations", "address": "playbooks/operations/parts/card", "text": "Who owns this playbook?", "author": "ben"})
	// Open comments are counted: one's result has one open and one
	// resolved, beside the one on its row; two has none.
	d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/runs/" + one + "/result/1", "text": "Typo?", "author": "ana"})
	done := d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/runs/" + one + "/result/1", "text": "Fixed.", "author": "ana"})
	d.call("resolve_comment", map[string]any{"playbook": "operations", "id": done["id"], "how": "acted"})
	_, body := d.get("/p/operations/workflow/echo")
	row := func(id string) string {
		i := strings.Index(body, `data-address="operations/runs/`+id+`"`)
		if i < 0 {
			t.Fatalf("no row for %s", id)
		}
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	if r := row(one); !strings.Contains(r, "Why so slow?") || !strings.Contains(r, `id="t-operations/runs/`+one+`/parts/row"`) {
		t.Errorf("the row's comment is not on its row:\n%s", r)
	}
	if strings.Contains(row(two), "Why so slow?") || strings.Contains(row(two), "open comment") {
		t.Error("the row's comment is on another row")
	}
	if r := row(one); !strings.Contains(r, `<span class="q-open" title="comments on the run not resolved yet">2 open comments</span>`) {
		t.Errorf("the row does not count its run's 2 open comments:\n%s", r)
	}
	_, home := d.get("/")
	i := strings.Index(home, `data-address="playbooks/operations"`)
	if i < 0 {
		t.Fatalf("no card:\n%s", home)
	}
	if card := home[i : i+strings.Index(home[i:], "</article>")]; !strings.Contains(card, "Who owns this playbook?") || !strings.Contains(card, `id="t-playbooks/operations/parts/card"`) ||
		!strings.Contains(card, `<span class="q-open">3 open comments</span>`) {
		t.Errorf("the card's comment is not on its card:\n%s", card)
	}
}

// A comment is resolved from the page it is drawn on, saying how: the
// form carries the CSRF value (a form without it is refused), the person
// gives their name on a server without tokens, and the page then shows
// the comment resolved, with no form to resolve it again.
func TestACommentIsResolvedFromThePage(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	page := "/p/operations/runs/" + id
	cm := d.call("make_comment", map[string]any{"playbook": "operations", "address": "operations/runs/" + id + "/result/1", "text": "Is this right?", "author": "ana"})
	_, body := d.get(page)
	action := `action="/p/operations/comments/` + cm["id"].(string) + `/resolve"`
	if !strings.Contains(body, action) {
		t.Fatalf("no form to resolve the comment:\n%s", body)
	}
	resolve := "/p/operations/comments/" + cm["id"].(string) + "/resolve"
	form := url.Values{"how": {"acted"}, "back": {page}, "author": {"Ben"}}
	if resp, _ := d.post(resolve, form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form without its CSRF value: %d", resp.StatusCode)
	}
	form.Set("csrf", d.csrf())
	form.Del("author")
	if resp, body := d.post(resolve, form); resp.StatusCode == http.StatusSeeOther || !strings.Contains(body, "give your name to resolve the comment") {
		t.Errorf("a resolve without a name: %d %s", resp.StatusCode, body)
	}
	form.Set("author", "Ben")
	form.Set("how", "maybe")
	if resp, body := d.post(resolve, form); resp.StatusCode == http.StatusSeeOther || !strings.Contains(body, "/how") {
		t.Errorf("a how resolve_comment does not take: %d %s", resp.StatusCode, body)
	}
	form.Set("how", "acted")
	resp, _ := d.post(resolve, form)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != page+"#c-"+cm["id"].(string) {
		t.Fatalf("resolve: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	raw, _ := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"operations/runs/`+id+`/result/1"}`))
	if got := raw.([]*ledger.Comment); len(got) != 1 || !got[0].Resolved || got[0].How != "acted" || got[0].ResolvedBy != "Ben" {
		t.Fatalf("the comment after: %+v", got)
	}
	if _, body := d.get(page); !strings.Contains(body, `<span class="q-badge">resolved: acted</span>`) || strings.Contains(body, action) {
		t.Errorf("the page does not show it resolved, or offers to resolve it again")
	}
}

// A paused run's page offers its executor or authorizer to resume it
// (and to archive it): on a server with tokens, the resume is recorded
// as pause_resumed under the token's principal; a person who is neither
// is offered nothing.
func TestAPausedRunIsResumedFromItsPage(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{})
	r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "echo",
		"member_of": []string{d.project}, "executor": "bea", "authorized_by": "ana"})
	id := r["run_id"].(string)
	d.call("transition_run", map[string]any{"playbook": "operations", "run_id": id, "to": "paused", "reason": "waiting for the bank", "actor": "bea"})
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
	action := `action="/p/operations/runs/` + id + `/transition"`
	login("cy") // neither the executor nor the authorizer
	if _, body := d.get(page); strings.Contains(body, action) {
		t.Error("a person who may not move the run is offered to")
	}
	login("bea")
	_, body := d.get(page)
	if !strings.Contains(body, "waiting for the bank") || !strings.Contains(body, ">Resume</button>") || !strings.Contains(body, ">Archive</button>") {
		t.Fatalf("the paused run's page offers no resume:\n%s", body)
	}
	if resp, _ := d.post(page+"/transition", url.Values{"to": {"active"}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a resume without its CSRF value: %d", resp.StatusCode)
	}
	resp, _ := d.post(page+"/transition", url.Values{"csrf": {d.csrf()}, "to": {"active"}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != page {
		t.Fatalf("resume: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	raw, err := d.l.Call(context.Background(), "list_playbook_events", json.RawMessage(`{"playbook":"operations","run_id":"`+id+`","limit":100}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(raw)
	if !regexp.MustCompile(`"type":"pause_resumed"[^}]*"caller":"bea"`).Match(b) {
		t.Fatalf("no pause_resumed by bea: %s", b)
	}
	if _, body := d.get(page); strings.Contains(body, ">Resume</button>") || !strings.Contains(body, ">Archive</button>") {
		t.Error("the resumed run's page still offers a resume, or no archive")
	}
}

// A run's small CSV, Markdown and text artifacts are shown on its page
// (a table, the page's safe Markdown, the text as it is), each still a
// download; HTML and anything large are a download alone.
func TestArtifactsAreShownInline(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	put := func(name, content string) {
		d.call("put_artifact", map[string]any{"playbook": "operations", "run_id": id, "name": name, "content": content, "actor": "agent-7"})
	}
	put("orders.csv", "order,total\nA-1041,86.50\n\"B-7, late\",12\n")
	put("notes.md", "# Notes\n\nReconciled **412** entries. <script>alert(1)</script>\n")
	put("log.txt", "line one\n<b>line two</b>\n")
	put("report.html", "<p>hello</p>")
	put("big.csv", "a\n"+strings.Repeat("1\n", 40<<10))
	_, page := d.get("/p/operations/runs/" + id)
	for _, want := range []string{
		`<thead><tr><th>order</th><th>total</th></tr></thead><tbody><tr><td>A-1041</td><td>86.50</td></tr><tr><td>B-7, late</td><td>12</td></tr></tbody>`,
		`<strong>412</strong>`,
		"line one\n&lt;b&gt;line two&lt;/b&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert(1)", "<p>hello</p>", "<h1>Notes</h1>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the run page shows %q", bad)
		}
	}
	if strings.Count(page, `<table class="q-artifact-csv">`) != 1 {
		t.Error("a large CSV is shown inline")
	}
}

// A definition's page shows what changed between two of its versions:
// each version links the changes from the one before, lines taken away
// and put in marked, and a version that is not one is said.
func TestADefinitionsVersionsAreCompared(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true}, "close-the-month")
	src, err := os.ReadFile("../../testdata/vault/close-the-month.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d.call("update_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "close-the-month", "actor": "ana",
		"source": strings.Replace(string(src), "summary: Closes a month's books.", "summary: Closes the books of a month.", 1)})
	_, page := d.get("/p/operations/workflow/close-the-month")
	link := `href="/p/operations/workflow/close-the-month?from=1&amp;to=2#changes"`
	if !strings.Contains(page, link) {
		t.Fatalf("version 2 does not link its changes:\n%s", page)
	}
	_, page = d.get("/p/operations/workflow/close-the-month?from=1&to=2")
	for _, want := range []string{
		`<h3 id="changes">Changes from version 1 to 2</h3>`,
		`<span class="q-diff-del">-   summary: Closes a month&#39;s books.</span>`,
		`<span class="q-diff-add">&#43;   summary: Closes the books of a month.</span>`,
		`<span class="q-diff-same">    name: close-the-month</span>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the changes lack %q", want)
		}
	}
	if strings.Count(page, `class="q-diff-add"`) != 1 || strings.Count(page, `class="q-diff-del"`) != 1 {
		t.Error("the changes are more than the one line")
	}
	if _, page := d.get("/p/operations/workflow/close-the-month?from=7"); !strings.Contains(page, `/from: &#34;7&#34; is not a version of the document: 1 to 2`) {
		t.Error("a version that is not one is not said")
	}
}

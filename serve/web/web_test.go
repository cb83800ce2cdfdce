package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"quire/fold"
	"quire/ledger"
	"quire/render"
	"quire/serve"
	"quire/vault"
)

// demo is a vault with the three example workflows of testdata/vault and
// a few runs of each, served as quire serve serves it.
type demo struct {
	t       testing.TB
	l       *ledger.Ledger
	srv     *httptest.Server
	project string
	c       *http.Client
}

func newDemo(t testing.TB, opts serve.Options, workflows ...string) *demo {
	t.Helper()
	return makeDemo(t, t.TempDir(), t.Cleanup, opts, workflows...)
}

func makeDemo(t testing.TB, dir string, cleanup func(func()), opts serve.Options, workflows ...string) *demo {
	t.Helper()
	v, err := vault.Init(dir, "acme", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l := ledger.New(v)
	cleanup(func() { l.Close() })
	d := &demo{t: t, l: l}
	d.project = d.call("create_project", map[string]any{"name": "Operations"})["uid"].(string)
	d.call("create_playbook", map[string]any{"playbook": "operations", "name": "Operations", "description": "Posts, the close and orders."})
	// echo's page writes its output's text as Markdown, whatever it holds.
	d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "echo", "actor": "ana",
		"source": "document:\n  name: echo\npage:\n  result: |\n    {{ output.text }}\n"})
	for _, w := range workflows {
		src, err := os.ReadFile("../../testdata/vault/" + w + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": w, "source": string(src), "actor": "ana"})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cleanup(cancel)
	go l.Keep(ctx)
	d.srv = httptest.NewServer(serve.Handler(l, opts))
	cleanup(d.close)
	jar, _ := cookiejar.New(nil)
	d.c = &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return d
}

// close stops the server: a page's live stream ends only with its
// connection (quire serve's Run ends them at shutdown), and
// httptest.Server.Close waits for every request.
func (d *demo) close() {
	d.srv.CloseClientConnections()
	d.srv.Close()
}

func (d *demo) call(op string, args any) map[string]any {
	d.t.Helper()
	raw, _ := json.Marshal(args)
	res, err := d.l.Call(context.Background(), op, raw)
	if err != nil {
		d.t.Fatalf("%s %s: %v", op, raw, err)
	}
	b, _ := json.Marshal(res)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

// run records a run of a workflow that ends with output.
func (d *demo) run(name, day, output string) string {
	d.t.Helper()
	r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": name,
		"member_of": []string{d.project}, "executor": "agent-7", "authorized_by": "ana", "time": day + "T07:00:00Z"})
	id := r["run_id"].(string)
	d.call("end_run", map[string]any{"playbook": "operations", "run_id": id, "status": "succeeded", "actor": "agent-7",
		"time": day + "T08:00:00Z", "output": json.RawMessage(output)})
	return id
}

func (d *demo) get(path string) (*http.Response, string) {
	d.t.Helper()
	resp, err := d.c.Get(d.srv.URL + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func (d *demo) post(path string, form url.Values) (*http.Response, string) {
	d.t.Helper()
	resp, err := d.c.PostForm(d.srv.URL+path, form)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const brokenPage = `document:
  name: broken
page:
  data:
    language: typescript
    source:
      events:
        - type: run_succeeded
          subject: workflow/broken
    views:
      count: categories
    module: |
      export function fold(view: View, event: Event): View {
        if (event.type === 'run_succeeded') throw new Error('no such order');
        return view;
      }
  runs: |
    ` + "```chart figure\n    {{ views.count | json }}\n    ```" + `
`

var examples = []string{"morning-social-content", "close-the-month", "fulfill-order"}

// live waits until a workflow's views have caught up.
func (d *demo) live(name string) {
	d.t.Helper()
	for i := 0; i < 300; i++ {
		raw, err := d.l.Call(context.Background(), "get_definition", json.RawMessage(`{"playbook":"operations","type":"workflow","name":"`+name+`"}`))
		if err != nil {
			d.t.Fatal(err)
		}
		if p := raw.(*ledger.Definition).Page; p != nil && p.Standing != nil && p.Standing.State == "live" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.t.Fatalf("the views of %s are not live after 15 s", name)
}

// csrf is the CSRF value the forms of this browser's pages carry now: the
// one of the login page's form.
func (d *demo) csrf() string {
	d.t.Helper()
	_, body := d.get("/login")
	return csrfOf(d.t, body)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// csrfOf is the CSRF value of a page's forms.
func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(body)
	if m == nil || m[1] == "" {
		t.Fatal("the page has no form with a CSRF value")
	}
	return m[1]
}

// another is another browser on the same server: cookies of its own.
func (d *demo) another() *demo {
	e := *d
	jar, _ := cookiejar.New(nil)
	e.c = &http.Client{Jar: jar, CheckRedirect: d.c.CheckRedirect}
	return &e
}

func setCookie(resp *http.Response, name string) *http.Cookie {
	for _, ck := range resp.Cookies() {
		if ck.Name == name {
			return ck
		}
	}
	return nil
}

// atExit is run after the tests, last first: the shared demo's cleanup.
var atExit []func()

func TestMain(m *testing.M) {
	fold.ServeIfWorker()
	code := m.Run()
	for i := len(atExit) - 1; i >= 0; i-- {
		atExit[i]()
	}
	os.Exit(code)
}

var shared struct {
	once sync.Once
	d    *demo
	run  string // a run of echo
}

// examplePages are the example workflows the shared demo holds:
// fulfill-order alone (the one with every layout: figures, a row, a
// table) in short mode, all three in the long one. Folding their views
// in the sandbox costs seconds, so the tests that read them share one
// vault.
func examplePages() []string {
	if os.Getenv("QUIRE_TEST_LONG") == "" {
		return []string{"fulfill-order"}
	}
	return examples
}

// sharedDemo is the vault of the example pages, their views live, and a
// page whose fold raises.
func sharedDemo(t testing.TB) *demo {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "quire-web-")
		if err != nil {
			t.Fatal(err)
		}
		atExit = append(atExit, func() { os.RemoveAll(dir) })
		pages := examplePages()
		d := makeDemo(t, dir, func(f func()) { atExit = append(atExit, f) }, serve.Options{Open: true}, pages...)
		d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "broken", "actor": "ana", "source": brokenPage})
		d.run("broken", "2026-11-03", `{}`)
		d.run("fulfill-order", "2026-10-30", `{"order":"A-1041","channel":"Web","total":86.5}`)
		shared.run = d.run("echo", "2026-11-02", `{"text":"2026-10 closed."}`)
		if len(pages) == len(examples) {
			d.run("close-the-month", "2026-11-02", `{"month":"2026-10","revenue":182450}`)
			d.run("morning-social-content", "2026-11-01", `{"date":"2026-11-01","posts":[{"channel":"X","title":"One","url":"https://example.com/1"}]}`)
		}
		for _, p := range pages {
			d.live(p)
		}
		shared.d = d
	})
	if shared.d == nil {
		t.Fatal("the shared demo could not be made")
	}
	shared.d.t = t
	return shared.d
}

func TestEveryDemoPage(t *testing.T) {
	d := sharedDemo(t)
	run := shared.run
	paths := []string{"/", "/p/operations", "/p/operations/workflow/echo", "/p/operations/runs/" + run,
		"/p/operations/comments?address=operations/runs/" + run, "/p/operations/workflow/nothing", "/p/nothing"}
	for _, p := range examplePages() {
		paths = append(paths, "/p/operations/workflow/"+p)
	}
	// A page whose fold raises: its standing says at which event, of what
	// kind, the fold's error and its line, and links the event's run.
	for i := 0; ; i++ {
		_, body := d.get("/p/operations/workflow/broken")
		if strings.Contains(body, `data-state="stalled"`) {
			link := regexp.MustCompile(`Stalled at the event <a href="/p/operations/runs/([0-9a-f-]{36})"><code>([0-9a-f-]{36})_[0-9]+</code></a>`).FindStringSubmatch(body)
			if link == nil || link[1] != link[2] || !strings.Contains(body, "run_succeeded") ||
				!strings.Contains(body, "raised: ") || !strings.Contains(body, "no such order") || !strings.Contains(body, "on line 14 of the document") {
				t.Errorf("the stalled standing:\n%s", body)
			}
			break
		}
		if i == 200 {
			t.Fatalf("the broken page never stalled:\n%s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range paths {
		resp, body := d.get(p)
		want := 200
		if strings.Contains(p, "nothing") {
			want = 404
		}
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d\n%s", p, resp.StatusCode, want, body)
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, must := range []string{"default-src 'none'", "script-src 'self'", "img-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, must) {
				t.Errorf("%s: CSP %q lacks %s", p, csp, must)
			}
		}
		if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: CSP %q, nosniff %q", p, csp, resp.Header.Get("X-Content-Type-Options"))
		}
		// No inline script: every script element loads a file of this
		// server, or is a chart's data (not run).
		for _, tag := range strings.Split(body, "<script")[1:] {
			if !strings.HasPrefix(tag, ` src="/assets/`) && !strings.HasPrefix(tag, ` type="application/json"`) {
				t.Errorf("%s: an inline script: <script%.60s", p, tag)
			}
		}
	}
	// fulfill-order's runs: a figure block, a row of three charts, a table.
	_, body := d.get("/p/operations/workflow/fulfill-order")
	for _, want := range []string{`data-kind="figure"`, `class="q-row q-cells-3"`, `data-kind="line"`, `data-kind="share"`, `data-kind="histogram"`, `data-kind="table"`,
		`data-address="operations/definitions/workflow/fulfill-order/1/parts/runs-2-3"`, `<details class="q-chart-table" open><summary>Data</summary>`,
		`<td>Revenue (USD)</td>`, "Order A-1041 fulfilled: $86.50, ordered through Web.", `q-state-live`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page of fulfill-order lacks %s", want)
		}
	}
	// The page gives charts.js render's table of chart kinds, the one the
	// server checked its blocks against.
	const open = `<script type="application/json" id="q-chart-kinds">`
	_, after, ok := strings.Cut(body, open)
	table, _, closed := strings.Cut(after, "</script>")
	var got map[string]render.ChartKind
	if !ok || !closed || json.Unmarshal([]byte(table), &got) != nil {
		t.Errorf("the page of fulfill-order gives no table of chart kinds:\n%s", body)
	}
	for _, k := range render.ChartKinds() {
		if g := got[k.Name]; !slices.Equal(g.Reads, k.Reads) || !slices.Equal(g.Needs, k.Needs) || !slices.Equal(g.Optional, k.Optional) {
			t.Errorf("the page's table gives %s as %+v, render has %+v", k.Name, g, k)
		}
	}
	if len(got) != len(render.ChartKinds()) {
		t.Errorf("the page's table has %d kinds, render %d", len(got), len(render.ChartKinds()))
	}
	resp, _ := d.get("/assets/quire.css")
	if resp.StatusCode != 200 || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("quire.css: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestMarkdownNotHTML: what an output, a thread or an event carries never
// adds markup to a page: raw HTML is text, a javascript: link its text,
// an image a link that is never loaded.
func TestMarkdownNotHTML(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	evil := "<script>alert(1)</script>\n\nHello <img src=x onerror=alert(2)> and [click](javascript:alert(3)) and ![a chart](https://example.com/i.png) and [ok](https://example.com/ok)" +
		" and [rel](/secret) and <b onmouseover=alert(4)>bold</b>\n\n<iframe src=\"https://example.com\"></iframe>"
	out, _ := json.Marshal(map[string]string{"text": evil})
	id := d.run("echo", "2026-11-01", string(out))
	d.call("append_thread", map[string]any{"playbook": "operations", "run_id": id, "actor": "agent-7", "text": "<script>alert(5)</script>\n\n![x](https://example.com/t.png)"})
	resp, body := d.get("/p/operations/runs/" + id)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for _, bad := range []string{"<script>alert", "<img", "<iframe", `href="javascript:`, "<b onmouseover", `href="/secret"`} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(2)&gt;", "click",
		`<a href="https://example.com/i.png" rel="noopener noreferrer nofollow" class="q-image">Image: a chart</a>`,
		`<a href="https://example.com/ok" rel="noopener noreferrer nofollow">ok</a>`, "&lt;iframe", "&lt;script&gt;alert(5)",
		`class="q-image">Image: x</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestArtifactsAreAttachments(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	d.call("put_artifact", map[string]any{"playbook": "operations", "run_id": id, "name": "reports/q3.html", "content": "<script>alert(1)</script>", "actor": "agent-7"})
	d.call("put_artifact", map[string]any{"playbook": "operations", "run_id": id, "name": "data.csv", "content": "a,b\n1,2\n", "actor": "agent-7"})
	_, page := d.get("/p/operations/runs/" + id)
	if !strings.Contains(page, `href="/p/operations/runs/`+id+`/artifacts/reports/q3.html" download`) || !strings.Contains(page, "text/html") {
		t.Errorf("the run page does not list the artifact:\n%s", page)
	}
	for name, typ := range map[string]string{"reports/q3.html": "text/html; charset=utf-8", "data.csv": "text/csv; charset=utf-8"} {
		resp, body := d.get("/p/operations/runs/" + id + "/artifacts/" + name)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, body)
		}
		h := resp.Header
		if h.Get("Content-Type") != typ || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") ||
			h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("%s: %v", name, h)
		}
	}
	for _, bad := range []string{"../run.jsonl", "..%2Frun.jsonl", "nothing.txt"} {
		if resp, _ := d.get("/p/operations/runs/" + id + "/artifacts/" + bad); resp.StatusCode == 200 {
			t.Errorf("%s: 200", bad)
		}
	}
}

// TestCommentsInPlace: a comment made through a page's form is
// make_comment's, with the name given (remembered in a cookie); a form
// without the CSRF value is refused.
func TestCommentsInPlace(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	page := "/p/operations/runs/" + id
	resp, body := d.get(page)
	ck := setCookie(resp, "quire_session")
	if ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the session's cookie: %+v", ck)
	}
	block := "operations/runs/" + id + "/result/1"
	if !strings.Contains(body, `name="address" value="`+block+`"`) {
		t.Fatalf("the page has no form for %s", block)
	}
	form := url.Values{"address": {block}, "text": {"Is <this> right?"}, "author": {"Ana"}, "back": {page}}
	if resp, _ := d.post("/p/operations/comments", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form without its CSRF value: %d", resp.StatusCode)
	}
	other := []byte(d.csrf())
	other[0] ^= 1 // another value, whatever the first character was
	form.Set("csrf", string(other))
	if resp, _ := d.post("/p/operations/comments", form); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a form with another CSRF value: %d", resp.StatusCode)
	}
	form.Set("csrf", d.csrf())
	resp, body = d.post("/p/operations/comments", form)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), page+"#c-") {
		t.Fatalf("comment: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if ck := setCookie(resp, "quire_name"); ck == nil || ck.Value != "Ana" || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Errorf("the name's cookie: %+v", ck)
	}
	list := d.call("list_comments", map[string]any{"playbook": "operations", "address": block})
	_ = list
	raw, _ := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`))
	cs := raw.([]*ledger.Comment)
	if len(cs) != 1 || cs[0].Author != "Ana" || cs[0].Text != "Is <this> right?" {
		t.Fatalf("list_comments: %+v", cs)
	}
	_, body = d.get(page)
	if !strings.Contains(body, "Is &lt;this&gt; right?") || !strings.Contains(body, `value="Ana"`) {
		t.Errorf("the page does not show the comment, or forgot the name")
	}
	// A "back" elsewhere stays on this server.
	form.Set("back", "https://evil.example/")
	if resp, _ := d.post("/p/operations/comments", form); !strings.HasPrefix(resp.Header.Get("Location"), "/#c-") {
		t.Errorf("back to another site: %s", resp.Header.Get("Location"))
	}
}

// TestTokensAndLogin: on a server with tokens a page needs one; logging
// in keeps it in an HttpOnly, SameSite=Strict cookie, and a comment is
// the token's principal's.
func TestTokensAndLogin(t *testing.T) {
	d := newDemo(t, serve.Options{})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	tok, err := serve.CreateToken(d.l, "bea", []string{"playbook:write"})
	if err != nil {
		t.Fatal(err)
	}
	resp, _ := d.get("/")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("a page without a token: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := d.get("/login?next=/p/operations"); resp.StatusCode != 200 {
		t.Fatalf("login page: %d", resp.StatusCode)
	}
	if resp, _ := d.post("/login", url.Values{"csrf": {d.csrf()}, "token": {"quire_nope"}}); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token the vault does not know: %d", resp.StatusCode)
	}
	if resp, _ := d.post("/login", url.Values{"token": {tok}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a login without its CSRF value: %d", resp.StatusCode)
	}
	resp, _ = d.post("/login", url.Values{"csrf": {d.csrf()}, "token": {tok}, "next": {"/p/operations"}})
	ck := setCookie(resp, "quire_token")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/p/operations" || ck == nil || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Value != tok {
		t.Fatalf("login: %d %s %+v", resp.StatusCode, resp.Header.Get("Location"), ck)
	}
	resp, body := d.get("/p/operations/runs/" + id)
	if resp.StatusCode != 200 || !strings.Contains(body, "bea") || strings.Contains(body, `name="author"`) {
		t.Fatalf("a page with the token: %d", resp.StatusCode)
	}
	block := "operations/runs/" + id + "/result/1"
	resp, _ = d.post("/p/operations/comments", url.Values{"csrf": {d.csrf()}, "address": {block}, "text": {"Fine."}, "back": {"/"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("comment: %d", resp.StatusCode)
	}
	raw, _ := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`))
	if cs := raw.([]*ledger.Comment); len(cs) != 1 || cs[0].Author != "bea" {
		t.Fatalf("the comment's author: %+v", cs)
	}
	// A token that may only read cannot comment.
	ro, _ := serve.CreateToken(d.l, "cy", []string{"playbook:read"})
	d.post("/logout", url.Values{"csrf": {d.csrf()}})
	d.post("/login", url.Values{"csrf": {d.csrf()}, "token": {ro}})
	if resp, _ := d.post("/p/operations/comments", url.Values{"csrf": {d.csrf()}, "address": {block}, "text": {"No."}}); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a comment with a read token: %d", resp.StatusCode)
	}
}

// TestCSRFBoundToSession: a form's CSRF value is good only in the session
// whose page showed it. Two browsers logged in with the same token each
// have their own: the one's value is refused with the other's cookies, as
// is the value shown before the login (a login starts a new session);
// each browser's own is taken. And a session planted in a browser (the
// cookies of another browser's, set by a sibling site) does not make the
// planter's value good there: the value is also the token's.
func TestCSRFBoundToSession(t *testing.T) {
	d := newDemo(t, serve.Options{})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	tok, err := serve.CreateToken(d.l, "bea", []string{"playbook:write"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := d, d.another()
	before := b.csrf()
	for _, br := range []*demo{a, b} {
		if resp, body := br.post("/login", url.Values{"csrf": {br.csrf()}, "token": {tok}, "next": {"/"}}); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("login: %d %s", resp.StatusCode, body)
		}
	}
	page := "/p/operations/runs/" + id
	_, bodyA := a.get(page)
	_, bodyB := b.get(page)
	valueA, valueB := csrfOf(t, bodyA), csrfOf(t, bodyB)
	if valueA == valueB {
		t.Fatalf("two sessions of one token show the same CSRF value %q", valueA)
	}
	block := "operations/runs/" + id + "/result/1"
	comment := func(br *demo, value string) (*http.Response, string) {
		return br.post("/p/operations/comments", url.Values{"csrf": {value}, "address": {block}, "text": {"Checked."}, "back": {page}})
	}
	const stale = "this form was not sent from one of this server's pages (its CSRF value is missing or stale); reload the page and send it again"
	refused := func(what string, br *demo, value string) {
		t.Helper()
		resp, body := comment(br, value)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, html.EscapeString(stale)) {
			t.Errorf("a form with %s: %d %s", what, resp.StatusCode, body)
		}
	}
	refused("the other session's value", b, valueA)
	refused("the value shown before login", b, before)
	// The planter's session: its cookies but the token's, put into b.
	planter := d.another()
	planted := planter.csrf()
	u, _ := url.Parse(d.srv.URL)
	for _, ck := range planter.c.Jar.Cookies(u) {
		if ck.Name != "quire_token" {
			b.c.Jar.SetCookies(u, []*http.Cookie{{Name: ck.Name, Value: ck.Value, Path: "/"}})
		}
	}
	refused("a planted session's value", b, planted)
	if raw, _ := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`)); len(raw.([]*ledger.Comment)) != 0 {
		t.Fatalf("a refused form made comments: %v", raw)
	}
	_, bodyB = b.get(page)
	valueB = csrfOf(t, bodyB)
	for _, c := range []struct {
		br    *demo
		value string
	}{{b, valueB}, {a, valueA}} {
		if resp, body := comment(c.br, c.value); resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("a form with its own session's value: %d %s", resp.StatusCode, body)
		}
	}
	raw, _ := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`))
	if cs := raw.([]*ledger.Comment); len(cs) != 2 {
		t.Fatalf("%d comments, not 2", len(cs))
	}
}

// stream opens a page's live stream and answers what it says, until it
// has said want or ctx ends.
func (d *demo) stream(ctx context.Context, want string) <-chan string {
	d.t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.srv.URL+"/live?playbook=operations", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		d.t.Fatalf("stream: %v", resp.Header)
	}
	got := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		b := make([]byte, 4096)
		var all string
		for {
			n, err := resp.Body.Read(b)
			all += string(b[:n])
			if strings.Contains(all, want) || err != nil {
				got <- all
				return
			}
		}
	}()
	return got
}

// TestLiveStream: a page's stream says so within two seconds when a run
// is recorded through the API.
func TestLiveStream(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	want := `data: {"playbook":"operations","what":"event"}`
	got := d.stream(ctx, want)
	start := time.Now()
	body := `{"type":"workflow","name":"echo","member_of":["` + d.project + `"],"executor":"agent-7","authorized_by":"ana"}`
	r, err := http.Post(d.srv.URL+"/v1/orgs/acme/playbooks/operations/definitions/workflow/echo/runs", "application/json", strings.NewReader(body))
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("run_definition over HTTP: %v %v", err, r.Status)
	}
	select {
	case all := <-got:
		if !strings.Contains(all, want) {
			t.Fatalf("stream: %q", all)
		}
		t.Logf("told after %s", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Fatal("no change within 2 s")
	}
}

// TestLiveViews: caught-up views are told too, once the keeper folded a
// new run.
func TestLiveViews(t *testing.T) {
	d := sharedDemo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	views := d.stream(ctx, `"what":"views"`)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	d.run("fulfill-order", "2026-10-31", `{"order":"A-1042","channel":"Marketplace","total":24}`)
	select {
	case all := <-views:
		if !strings.Contains(all, `data: {"playbook":"operations","what":"views"}`) {
			t.Errorf("stream: %q", all)
		}
		t.Logf("views told after %s", time.Since(start))
	case <-time.After(2 * time.Second):
		t.Error("the views' move not told within 2 s")
	}
}

// A playbook's card shows the glances of its first workflows alone, and
// says how many more there are, linked to the playbook.
func TestACardShowsTheGlancesOfItsFirstWorkflows(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("w-%04d", i)
		d.call("create_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": name, "actor": "ana",
			"source": "document:\n  name: " + name + "\npage:\n  result: |\n    {{ output.text }}\n  glance:\n    runs: '{{ run.status }}'\n"})
		d.run(name, "2026-11-01", `{"text":"Done."}`)
	}
	_, body := d.get("/")
	// echo and the first five: six workflows asked, five with a glance.
	if n := strings.Count(body, `class="q-glance"`); n != 5 {
		t.Errorf("%d glances drawn, want 5:\n%s", n, body)
	}
	if !strings.Contains(body, `<a href="/p/operations">3 more workflows</a>`) {
		t.Errorf("no link to the 3 more workflows:\n%s", body)
	}
}

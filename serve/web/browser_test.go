package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/browser"
	"quire/ledger"
	"quire/serve"
)

func init() { atExit = append(atExit, browser.CloseShared) }

// In a real browser: an output's <script>, <img onerror> and
// javascript: link never run, and an image in Markdown is never loaded.
func TestBrowserNothingRuns(t *testing.T) {
	d := sharedDemo(t)
	evil := "<script>alert(1)</script>\n\nHello <img src=/x.png onerror=alert(2)> and [click](javascript:alert(3)) and ![pic](https://example.com/i.png)\n\n<img src=/y.png onerror=alert(4)>"
	out, _ := json.Marshal(map[string]string{"text": evil})
	id := d.run("echo", "2026-11-01", string(out))
	p := browser.NewPage(t)
	if err := p.Open(d.srv.URL + "/p/operations/runs/" + id); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if ds := p.Dialogs(); len(ds) > 0 {
		t.Errorf("dialogs: %q", ds)
	}
	for _, r := range p.Requests() {
		if strings.Contains(r, "example.com") || strings.Contains(r, "/x.png") || strings.Contains(r, "/y.png") {
			t.Errorf("the page requested %s", r)
		}
	}
	for sel, want := range map[string]int{"img": 0, `a[href^="javascript"]`: 0, "script:not([src]):not([type])": 0, `a.q-image[href="https://example.com/i.png"]`: 1} {
		if n, err := p.Count(sel); err != nil || n != want {
			t.Errorf("%s: %d (%v), want %d", sel, n, err, want)
		}
	}
	var text string
	if err := p.Eval(`document.querySelector(".q-result").textContent`, &text); err != nil || !strings.Contains(text, "<script>alert(1)</script>") || !strings.Contains(text, "onerror=alert(2)") {
		t.Errorf("the result's text: %q %v", text, err)
	}
}

// A comment made in the page is list_comments', and is still there after
// the server and the ledger start again.
func TestBrowserCommentSurvivesRestart(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	id := d.run("echo", "2026-11-01", `{"text":"Checked."}`)
	page := d.srv.URL + "/p/operations/runs/" + id
	p := browser.NewPage(t)
	if err := p.Open(page); err != nil {
		t.Fatal(err)
	}
	block := "operations/runs/" + id + "/result/1"
	script := `(() => {
	  const f = [...document.querySelectorAll("form.q-comment-form")].find(f => f.address.value === ` + jsQuote(block) + `);
	  f.closest("details").open = true;
	  f.author.value = "Ana"; f.text.value = "Is <b>this</b> right?";
	  f.querySelector("button[type=submit]").click();
	  return true;
	})()`
	var ok bool
	if err := p.Eval(script, &ok); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(".q-comments li", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	raw, err := d.l.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if cs := raw.([]*ledger.Comment); len(cs) != 1 || cs[0].Author != "Ana" || cs[0].Text != "Is <b>this</b> right?" {
		t.Fatalf("list_comments: %+v", cs)
	}
	// A restart: the server and the ledger go, a new ledger opens the vault.
	root := d.l.Root()
	d.close()
	d.l.Close()
	l2, err := ledger.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	srv2 := httptest.NewServer(serve.Handler(l2, serve.Options{Open: true}))
	defer func() { srv2.CloseClientConnections(); srv2.Close() }()
	if err := p.Open(srv2.URL + "/p/operations/runs/" + id); err != nil {
		t.Fatal(err)
	}
	var shown string
	if err := p.Eval(`document.querySelector(".q-comments li .q-text").textContent`, &shown); err != nil || shown != "Is <b>this</b> right?" {
		t.Errorf("after the restart the page shows %q (%v)", shown, err)
	}
	raw, _ = l2.Call(context.Background(), "list_comments", json.RawMessage(`{"playbook":"operations","address":"`+block+`"}`))
	if cs := raw.([]*ledger.Comment); len(cs) != 1 {
		t.Errorf("list_comments after the restart: %+v", cs)
	}
}

// A run recorded through the API appears on an open page within two
// seconds, without a reload.
func TestBrowserLiveRun(t *testing.T) {
	d := sharedDemo(t)
	p := browser.NewPage(t)
	if err := p.Open(d.srv.URL + "/p/operations/workflow/echo"); err != nil {
		t.Fatal(err)
	}
	var marker bool
	p.Eval(`(window.__same = true)`, &marker) // gone if the page reloads
	time.Sleep(200 * time.Millisecond)        // the stream is open
	start := time.Now()
	run := postEchoRun(t, d)
	if err := p.Wait(`tr.q-run[data-address="operations/runs/`+run.RunID+`"]`, 2*time.Second); err != nil {
		t.Fatalf("the new run is not on the page within 2 s: %v", err)
	}
	t.Logf("shown after %s", time.Since(start))
	if err := p.Eval(`window.__same === true`, &marker); err != nil || !marker {
		t.Error("the page reloaded")
	}
}

// postEchoRun starts a run of echo through the HTTP API, as an agent
// would beside an open page.
func postEchoRun(t *testing.T, d *demo) ledger.Run {
	t.Helper()
	body := `{"type":"workflow","name":"echo","member_of":["` + d.project + `"],"executor":"agent-7","authorized_by":"ana"}`
	r, err := http.Post(d.srv.URL+"/v1/orgs/acme/playbooks/operations/definitions/workflow/echo/runs", "application/json", strings.NewReader(body))
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("run_definition: %v %v", err, r)
	}
	defer r.Body.Close()
	var run ledger.Run
	json.NewDecoder(r.Body).Decode(&run)
	return run
}

func jsQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Every page of the demo opens in the browser without an error, every
// figure draws an SVG, the page fits 360 px, and the example pages'
// screenshots (light, dark, 360 px) go to the folder the test prints.
func TestBrowserExamplePages(t *testing.T) {
	d := sharedDemo(t)
	dir := browser.ScreenshotDir(t)
	p := browser.NewPage(t)
	paths := []string{"/", "/p/operations", "/p/operations/workflow/broken", "/p/operations/runs/" + shared.run}
	for _, name := range examplePages() {
		paths = append(paths, "/p/operations/workflow/"+name)
	}
	for _, path := range paths {
		p.Reset()
		if err := p.Viewport(1280, 900); err != nil {
			t.Fatal(err)
		}
		if err := p.Open(d.srv.URL + path); err != nil {
			t.Fatal(err)
		}
		figures, _ := p.Count("figure.q-chart")
		var draws bool
		p.Eval(`typeof window.quireCharts === "object"`, &draws)
		if figures > 0 && !draws {
			t.Logf("%s: charts.js draws nothing yet", path)
		}
		if figures > 0 && draws {
			if err := p.Wait("figure.q-chart:last-of-type .q-chart-draw svg", 5*time.Second); err != nil {
				t.Errorf("%s: %v", path, err)
			}
			var drawn int
			p.Eval(`[...document.querySelectorAll("figure.q-chart")].filter(f => f.querySelector(".q-chart-draw svg, .q-chart-draw .q-figure, .q-chart-draw table, .q-chart-draw *")).length`, &drawn)
			if drawn != figures {
				t.Errorf("%s: %d of %d figures drawn", path, drawn, figures)
			}
		}
		if errs := p.Errors(); len(errs) > 0 {
			t.Errorf("%s: console errors %q", path, errs)
		}
		if ds := p.Dialogs(); len(ds) > 0 {
			t.Errorf("%s: dialogs %q", path, ds)
		}
		name, ok := strings.CutPrefix(path, "/p/operations/workflow/")
		if !ok || name == "broken" {
			continue
		}
		for _, scheme := range []string{"light", "dark"} {
			p.ColorScheme(scheme)
			if err := p.Screenshot(filepath.Join(dir, name+"-"+scheme+".png")); err != nil {
				t.Error(err)
			}
		}
		p.ColorScheme("light")
		p.Viewport(360, 800)
		time.Sleep(200 * time.Millisecond)
		var width int
		p.Eval(`document.documentElement.scrollWidth`, &width)
		if width > 360 {
			t.Errorf("%s at 360 px is %d px wide", path, width)
		}
		p.Screenshot(filepath.Join(dir, name+"-360.png"))
	}
	t.Logf("screenshots in %s", dir)
}

// A part of the page is swapped only when the server's HTML of it
// changed: a change elsewhere in the playbook (a run of another
// definition) leaves the drawn charts of this page as they are.
func TestBrowserLiveKeepsUnchangedParts(t *testing.T) {
	d := sharedDemo(t)
	p := browser.NewPage(t)
	if err := p.Open(d.srv.URL + "/p/operations/workflow/fulfill-order"); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(`[data-live="page"] .q-chart-draw svg`, 5*time.Second); err != nil {
		t.Fatalf("no chart drawn on the page: %v", err)
	}
	var ok bool
	p.Eval(`(document.querySelector('[data-live="page"] .q-chart-draw svg').__kept = true)`, &ok)
	time.Sleep(200 * time.Millisecond) // the stream is open
	postEchoRun(t, d)
	if err := p.Wait(`body[data-live-at]`, 3*time.Second); err != nil {
		t.Fatalf("the page did not follow the change: %v", err)
	}
	if err := p.Eval(`!!(document.querySelector('[data-live="page"] .q-chart-draw svg') || {}).__kept`, &ok); err != nil || !ok {
		t.Error("the page's part was swapped (its charts drawn again) though the server's HTML of it had not changed")
	}
}

// While a person types a comment on a run's row, the runs table and the
// figures keep following: a new run appears within two seconds, and the
// comment's text, its open thread and the focus are kept.
func TestBrowserTypingACommentKeepsThePageLive(t *testing.T) {
	d := sharedDemo(t)
	p := browser.NewPage(t)
	if err := p.Open(d.srv.URL + "/p/operations/workflow/echo"); err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := p.Eval(`(() => {
	  const th = document.querySelector("tr.q-run details.q-thread");
	  if (!th) return false;
	  th.open = true;
	  const ta = th.querySelector("textarea");
	  ta.focus();
	  ta.value = "Half a thought";
	  ta.setSelectionRange(4, 4);
	  window.__thread = th.id;
	  return document.activeElement === ta;
	})()`, &ok); err != nil || !ok {
		t.Fatalf("no row thread to type in: %v", err)
	}
	time.Sleep(200 * time.Millisecond) // the stream is open
	run := postEchoRun(t, d)
	if err := p.Wait(`tr.q-run[data-address="operations/runs/`+run.RunID+`"]`, 2*time.Second); err != nil {
		t.Fatalf("the runs table stopped following while a comment was typed: %v", err)
	}
	if err := p.Eval(`(() => {
	  const th = document.getElementById(window.__thread);
	  const ta = th && th.querySelector("textarea");
	  return !!ta && th.open && ta.value === "Half a thought" && document.activeElement === ta && ta.selectionStart === 4;
	})()`, &ok); err != nil || !ok {
		t.Fatalf("the comment being typed was lost: %v", err)
	}
}

package web_test

import (
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"quire/internal/browser"
	"quire/serve"
)

// gitOf answers a git command's output in the demo's vault.
func (d *demo) gitOf(args ...string) string {
	d.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", d.l.Root()}, args...)...).Output()
	if err != nil {
		d.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// In a browser: "Try a change" on a definition's page posts the changed
// document, and the answer shows today's page and the tried one side by
// side, the tried figures drawn from the new module's views, and each
// view's changes; nothing of the vault changes (no commit, git status
// and check --history as they were, today's page as it was). The shared
// demo's fulfill-order is tried: this test is not parallel, so no other
// writes to the vault meanwhile.
func TestBrowserTryAChangedPage(t *testing.T) {
	d := sharedDemo(t)
	const page = "/p/operations/workflow/fulfill-order"
	head, status := d.gitOf("rev-parse", "HEAD"), d.gitOf("status", "--porcelain")
	_, before := d.get(page)

	p := browser.NewPage(t)
	if err := p.Viewport(1280, 900); err != nil {
		t.Fatal(err)
	}
	if err := p.Open(d.srv.URL + page); err != nil {
		t.Fatal(err)
	}
	// The definition's page follows the playbook: its stream is opened
	// before the form is sent, so any other is the dry run's page's.
	for i := 0; i < 100 && streams(p) == 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	opened := streams(p)
	var ok bool
	if err := p.Eval(`(() => {
	  const f = document.querySelector("form.q-try-form");
	  if (!f || !f.source.value.includes("{ name: 'Orders', value: orders }")) return false;
	  f.closest("details").open = true;
	  f.source.value = f.source.value.replace("{ name: 'Orders', value: orders }", "{ name: 'Orders placed', value: orders }").replace(" fulfilled: ", " fulfilled and checked: ");
	  f.querySelector("button[type=submit]").click();
	  return true;
	})()`, &ok); err != nil || !ok {
		t.Fatalf("no form to try a change in, prefilled with the document: %v", err)
	}
	if err := p.Wait("#tried figure.q-chart:last-of-type .q-chart-draw *", 10*time.Second); err != nil {
		t.Fatalf("the tried page's figures are not drawn: %v", err)
	}
	var seen struct{ Today, Tried, Changes, Note string }
	if err := p.Eval(`(() => {
	  const text = s => (document.querySelector(s) || {}).innerText || "";
	  return {Today: text("#today"), Tried: text("#tried"), Changes: text(".q-changes tbody"), Note: text(".q-tried-note")};
	})()`, &seen); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(seen.Today, " fulfilled: ") || strings.Contains(seen.Today, "Orders placed") {
		t.Errorf("today's side: %q", seen.Today)
	}
	if !strings.Contains(seen.Tried, " fulfilled and checked: ") || !strings.Contains(seen.Tried, "Orders placed") {
		t.Errorf("the tried side: %q", seen.Tried)
	}
	want := `figures /values/0/name "Orders" "Orders placed" revenue unchanged channels unchanged sizes unchanged latest unchanged`
	if got := strings.Join(strings.Fields(seen.Changes), " "); got != want {
		t.Errorf("the views' changes:\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(seen.Note, "nothing was saved") {
		t.Errorf("the page's note: %q", seen.Note)
	}
	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors %q", errs)
	}
	time.Sleep(200 * time.Millisecond) // its scripts have run
	if n := streams(p); n != opened || opened != 1 {
		t.Errorf("the dry run's page opened a live stream (%d, was %d): a fetch of its address would not give it again", n, opened)
	}
	dir := browser.ScreenshotDir(t)
	if err := p.Screenshot(filepath.Join(dir, "dry-run.png")); err != nil {
		t.Error(err)
	}
	p.Viewport(360, 800)
	time.Sleep(200 * time.Millisecond)
	var width int
	if p.Eval(`document.documentElement.scrollWidth`, &width); width > 360 {
		t.Errorf("the dry run's page at 360 px is %d px wide", width)
	}
	p.Screenshot(filepath.Join(dir, "dry-run-360.png"))
	t.Logf("screenshots in %s", dir)

	if now := d.gitOf("rev-parse", "HEAD"); now != head {
		t.Errorf("the dry run committed: HEAD %s, was %s", now, head)
	}
	if now := d.gitOf("status", "--porcelain"); now != status {
		t.Errorf("git status after the dry run:\n%s\nwas\n%s", now, status)
	}
	if _, problems, err := d.l.CheckHistory(); err != nil || len(problems) > 0 {
		t.Errorf("check --history: %v %v", err, problems)
	}
	if _, after := d.get(page); pagePart(after) == "" || pagePart(after) != pagePart(before) || strings.Contains(after, "Orders placed") {
		t.Errorf("the definition's page after the dry run:\n%s\nwas\n%s", pagePart(after), pagePart(before))
	}
}

// streams counts the live streams a page opened so far.
func streams(p *browser.Page) int {
	n := 0
	for _, r := range p.Requests() {
		if u, err := url.Parse(r); err == nil && u.Path == "/live" {
			n++
		}
	}
	return n
}

// pagePart is the part of a definition's page its views draw.
func pagePart(html string) string {
	return regexp.MustCompile(`(?s)<section class="q-page" data-live="page">.*?</section>`).FindString(html)
}

// The dry run's form carries the session's CSRF value, as every form:
// one posted without it is refused, and nothing is tried.
func TestTryFormNeedsItsCSRFValue(t *testing.T) {
	t.Parallel()
	d := newDemo(t, serve.Options{Open: true})
	d.get("/p/operations/workflow/echo") // the session
	resp, body := d.post("/p/operations/workflow/echo/try", url.Values{"source": {"document:\n  name: echo\npage:\n  result: hi\n"}})
	if resp.StatusCode != 403 || !strings.Contains(body, "CSRF value is missing or stale") {
		t.Errorf("a form without its CSRF value: %d\n%s", resp.StatusCode, body)
	}
	resp, body = d.post("/p/operations/workflow/echo/try", url.Values{"csrf": {d.csrf()}, "source": {"document:\n  name: echo\npage:\n  result: '{{ output.text '\n"}})
	if resp.StatusCode != 200 || !strings.Contains(body, "The document would be refused") || !strings.Contains(body, "Line 4: An output {{ is left open") || !strings.Contains(body, "{{ output.text ") {
		t.Errorf("a document the save refuses: %d\n%s", resp.StatusCode, body)
	}
}

package web_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"quire/internal/browser"
	"quire/serve"
)

// A run's page shows its thread, state, artifacts and commits as
// get_run_files and list_run_commits answer them, with the token's
// rights: a commit another program made with the run's trailer is on the
// page at the next read.
func TestRunPageFilesAndCommits(t *testing.T) {
	d := newDemo(t, serve.Options{})
	id := d.run("echo", "2026-11-01", `{"text":"hi"}`)
	d.call("append_thread", map[string]any{"playbook": "operations", "run_id": id, "text": "Checked the **figures**.", "actor": "agent-7"})
	d.call("put_artifact", map[string]any{"playbook": "operations", "run_id": id, "name": "data.csv", "content": "a,b\n1,2\n", "actor": "agent-7"})
	reader, err := serve.CreateToken(d.l, "cy", []string{"playbook:read"})
	if err != nil {
		t.Fatal(err)
	}
	page := func() string {
		t.Helper()
		req, _ := http.NewRequest("GET", d.srv.URL+"/p/operations/runs/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+reader)
		resp, err := d.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("the run page: %d %s", resp.StatusCode, b)
		}
		return html.UnescapeString(string(b))
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=rui", "-c", "user.email=rui@example.com"}, args...)...)
		cmd.Dir = d.l.Root()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	body := page()
	for _, want := range []string{"Checked the <strong>figures</strong>.", `"run_id": "` + id + `"`, "data.csv", "8 bytes",
		"echo " + id[len(id)-8:] + ": run created", "echo " + id[len(id)-8:] + ": run succeeded", "agent-7"} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %q", want)
		}
	}
	head := git("log", "-1", "--format=%H", "--grep=Run-Id: "+id)
	if !strings.Contains(body, `<code title="`+head+`">`+head[:12]+`</code>`) {
		t.Errorf("the run page lacks its newest commit %s:\n%s", head, body)
	}
	os.WriteFile(filepath.Join(d.l.Root(), "notes.md"), []byte("seen\n"), 0o644)
	git("add", "notes.md")
	git("commit", "-q", "-m", "Reviewed the echo\n\nRun-Id: "+id)
	body = page()
	if i, j := strings.Index(body, "Reviewed the echo"), strings.Index(body, ": run created"); i < 0 || j < i {
		t.Errorf("the commit made with git is not on the page, newest first:\n%s", body)
	}
}

// In a real browser, a run's page says what the run was asked (its input,
// its context.md as Markdown, the version it is pinned to) and draws its
// headline once, as its heading; thread.md's and context.md's own titles
// are not drawn (the sections' headings say them, and thread.md's would
// put the run's id on the page), and no heading of theirs is larger than
// their section's. A paused run's page says why it waits.
func TestBrowserRunPageSaysWhatItWasAsked(t *testing.T) {
	d := newDemo(t, serve.Options{Open: true})
	start := func(input string) string {
		t.Helper()
		r := d.call("run_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "echo",
			"member_of": []string{d.project}, "executor": "agent-7", "authorized_by": "ana", "input": json.RawMessage(input),
			"context": "# Context\n\nThe **October** close, asked by Ana.\n\n# Books\n\nAR and AP.\n"})
		return r["run_id"].(string)
	}
	id := start(`{"month":"2026-10"}`)
	// A version saved after the run started: the run keeps its own.
	d.call("update_definition", map[string]any{"playbook": "operations", "type": "workflow", "name": "echo", "actor": "ana",
		"source": "document:\n  name: echo\n  summary: version 2\npage:\n  result: |\n    {{ output.text }}\n"})
	d.call("append_thread", map[string]any{"playbook": "operations", "run_id": id, "text": "# Checked\n\nAll **figures**.", "actor": "agent-7"})
	d.call("end_run", map[string]any{"playbook": "operations", "run_id": id, "status": "succeeded", "actor": "agent-7",
		"output": map[string]string{"text": "October closed with **$182,450**."}})
	p := browser.NewPage(t)
	if err := p.Open(d.srv.URL + "/p/operations/runs/" + id); err != nil {
		t.Fatal(err)
	}
	var seen struct {
		H1, Title, Text, Input, Asked, Context, Thread string
		Headlines                                      int
		ContextHeads, ThreadHeads                      []string
		Larger                                         bool
		Source                                         string
	}
	script := `(() => {
	  const text = s => (document.querySelector(s) || {}).textContent || "";
	  const heads = s => [...document.querySelectorAll(s + " :is(h1,h2,h3,h4,h5,h6)")].map(h => h.tagName + " " + h.textContent);
	  const size = e => parseFloat(getComputedStyle(e).fontSize);
	  const section = document.querySelector(".q-threadmd").closest("section").querySelector("h2");
	  const body = document.body.innerText;
	  return {H1: text("h1"), Title: document.title, Text: body, Input: text(".q-input"), Asked: text(".q-asked"),
	    Context: text(".q-context"), Source: text(".q-source pre"), Thread: text(".q-threadmd"),
	    Headlines: body.split("October closed with $182,450.").length - 1,
	    ContextHeads: heads(".q-context"), ThreadHeads: heads(".q-threadmd"),
	    Larger: [...document.querySelectorAll(".q-threadmd :is(h1,h2,h3,h4,h5,h6)")].some(h => size(h) > size(section))};
	})()`
	if err := p.Eval(script, &seen); err != nil {
		t.Fatal(err)
	}
	if seen.H1 != "October closed with $182,450." || seen.Headlines != 1 || strings.Contains(seen.Title, "October") {
		t.Errorf("the headline is drawn %d times; the heading %q, the title %q", seen.Headlines, seen.H1, seen.Title)
	}
	if !strings.Contains(seen.Input, `"month": "2026-10"`) || !strings.Contains(seen.Asked, "at version 1") || !strings.Contains(seen.Source, "name: echo") || strings.Contains(seen.Source, "version 2") {
		t.Errorf("what the run was asked: %q", seen.Asked)
	}
	if !strings.HasPrefix(strings.TrimSpace(seen.Context), "The October close, asked by Ana.") || strings.Join(seen.ContextHeads, "|") != "H4 Books" {
		t.Errorf("context.md: %q, headings %q", seen.Context, seen.ContextHeads)
	}
	if strings.Contains(seen.Thread, "Thread of run") || len(seen.ThreadHeads) != 2 || !strings.HasPrefix(seen.ThreadHeads[0], "H4 agent-7, ") || seen.ThreadHeads[1] != "H3 Checked" || seen.Larger {
		t.Errorf("thread.md: %q, headings %q, larger than its section: %v", seen.Thread, seen.ThreadHeads, seen.Larger)
	}
	if strings.Contains(seen.Text, id) {
		t.Errorf("the page shows the run's id %s:\n%s", id, seen.Text)
	}
	dir := browser.ScreenshotDir(t)
	p.Screenshot(filepath.Join(dir, "run-page.png"))

	paused := start(`{"month":"2026-11"}`)
	d.call("transition_run", map[string]any{"playbook": "operations", "run_id": paused, "to": "paused",
		"reason": "waiting for the bank statement", "actor": "agent-7"})
	if err := p.Open(d.srv.URL + "/p/operations/runs/" + paused); err != nil {
		t.Fatal(err)
	}
	if text, err := p.Text(".q-pause"); err != nil || !strings.Contains(text, "Reason") || !strings.Contains(text, "waiting for the bank statement") {
		t.Errorf("the paused run's page: %q %v", text, err)
	}
	p.Screenshot(filepath.Join(dir, "run-page-paused.png"))
	escalated := start(`{"month":"2026-12"}`)
	d.call("record_event", map[string]any{"playbook": "operations", "run_id": escalated, "event": "pause_started", "actor": "agent-7",
		"data": map[string]string{"kind": "needs_review", "stage": "evidence", "summary": "The evidence does not support the claim."}})
	if err := p.Open(d.srv.URL + "/p/operations/runs/" + escalated); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := p.Eval(`document.querySelector(".q-pause dl").innerText`, &text); err != nil || strings.Join(strings.Fields(text), " ") != "Kind needs_review Stage evidence Summary The evidence does not support the claim." {
		t.Errorf("the escalated run's page: %q %v", text, err)
	}
	t.Logf("screenshots in %s", dir)
}

// A page opens with what it shows, not telemetry: the views' standing is
// a few words in small type ("Up to date"), how many events they folded
// and when the last was only on hover.
func TestBrowserStandingIsNoTelemetry(t *testing.T) {
	d := sharedDemo(t)
	p := browser.NewPage(t)
	var seen struct{ Text, Hover string }
	for i := 0; ; i++ {
		if err := p.Open(d.srv.URL + "/p/operations/workflow/fulfill-order"); err != nil {
			t.Fatal(err)
		}
		err := p.Eval(`(() => { const s = document.querySelector(".q-standing");
		  return {Text: s.innerText.trim(), Hover: (s.querySelector("[title]") || {}).title || ""}; })()`, &seen)
		if err != nil {
			t.Fatal(err)
		}
		if seen.Text != "Up to date" && i < 50 {
			time.Sleep(100 * time.Millisecond) // the views are still being built
			continue
		}
		break
	}
	if seen.Text != "Up to date" || !strings.Contains(seen.Hover, " events folded") {
		t.Errorf("the standing reads %q, and on hover %q", seen.Text, seen.Hover)
	}
	if n, err := p.Count(".q-standing small"); err != nil || n != 1 {
		t.Errorf("the standing is not in small type: %d %v", n, err)
	}
}

package web_test

import (
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
		"echo: run created", "echo: run succeeded", "agent-7"} {
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
	if i, j := strings.Index(body, "Reviewed the echo"), strings.Index(body, "echo: run created"); i < 0 || j < i {
		t.Errorf("the commit made with git is not on the page, newest first:\n%s", body)
	}
}

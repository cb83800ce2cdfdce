package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// httpDo sends a request to a server and answers its status and body.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// mcpCall calls one tool over MCP's streamable HTTP (a session of its
// own) and answers the body of the answer.
func mcpCall(t *testing.T, base, tool, args string) string {
	t.Helper()
	post := func(session, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("POST /mcp %s: %d %s", body, resp.StatusCode, b)
		}
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"quire-test","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, out := post(session, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args))
	return out
}

// bareRemote makes a bare repository and answers its file:// URL.
func bareRemote(t *testing.T) (string, string) {
	t.Helper()
	bare := filepath.Join(t.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return bare, "file://" + bare
}

// gitRepoWith makes a bare repository whose branch main holds files, and
// answers its URL.
func gitRepoWith(t *testing.T, files map[string]string) string {
	t.Helper()
	bare, url := bareRemote(t)
	work := filepath.Join(t.TempDir(), "work")
	os.MkdirAll(work, 0o755)
	gitIn(t, work, "init", "-q", "-b", "main")
	for name, text := range files {
		os.WriteFile(filepath.Join(work, name), []byte(text), 0o644)
	}
	gitIn(t, work, "add", ".")
	gitIn(t, work, "commit", "-q", "-m", "files")
	gitIn(t, work, "push", "-q", bare, "main")
	return url
}

// quire clone refuses a folder that is not empty and a remote that is not
// a vault this quire reads, naming what is wrong, and leaves nothing
// behind.
func TestCloneRefusesWhatIsNotAVault(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	nothingLeft := func(what string) {
		t.Helper()
		if m, _ := filepath.Glob(filepath.Join(parent, ".*")); len(m) > 0 {
			t.Errorf("%s: the clone left %v", what, m)
		}
	}
	plain := gitRepoWith(t, map[string]string{"README.md": "not a vault\n"})
	dir := filepath.Join(parent, "v")
	code, _, errs := quire(t, "", "clone", plain, dir)
	if code != 1 || !strings.Contains(errs, plain+" is not a quire vault: its branch main has no quire.yaml, where a vault names its format") {
		t.Fatalf("a clone of a plain repository: %d %s", code, errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("a refused clone left %s", dir)
	}
	nothingLeft("a plain repository")

	newer := gitRepoWith(t, map[string]string{"quire.yaml": "format: 99\norg: acme\n"})
	code, _, errs = quire(t, "", "clone", newer, dir)
	if code != 1 || !strings.Contains(errs, newer+" holds a vault of format 99; this quire reads format 1 at most: install a newer quire to clone it") {
		t.Fatalf("a clone of a newer vault: %d %s", code, errs)
	}
	nothingLeft("a newer vault")

	_, empty := bareRemote(t)
	code, _, errs = quire(t, "", "clone", empty, dir)
	if code != 1 || !strings.Contains(errs, "it has no branch (nothing was pushed to it yet") {
		t.Fatalf("a clone of an empty remote: %d %s", code, errs)
	}

	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine\n"), 0o644)
	code, _, errs = quire(t, "", "clone", newer, dir)
	if code != 1 || !strings.Contains(errs, dir+" exists and is not empty: quire clone makes the vault in a new or empty folder") {
		t.Fatalf("a clone into a folder that is not empty: %d %s", code, errs)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Errorf("the refused clone changed %s: %v", dir, names)
	}
	nothingLeft("a folder not empty")
}

// A writer serving with --push origin and two replicas made with quire
// clone serving with --follow origin: one polls every 200 ms, the other
// only on POST .../sync. Their list_runs, get_run and list_playbook_events
// equal the writer's once caught up; a write to a replica is refused over
// HTTP and MCP, naming the remote; the remote going away makes the
// replica's status say so, and it catches up once the remote is back.
func TestReplicasFollowTheWriter(t *testing.T) {
	t.Parallel()
	dir, v, run := newCloseRun(t)
	bare, url := bareRemote(t)
	if code, _, errs := quire(t, "", v, "remote", "add", "origin", url); code != 0 {
		t.Fatalf("remote add: %s", errs)
	}
	writer := startServe(t, dir, "--push", "origin")
	const pb = "/v1/orgs/acme/playbooks/finance"
	boundary := func(run, step string) {
		t.Helper()
		code, out := httpDo(t, "POST", writer+pb+"/runs/"+run+"/events", fmt.Sprintf(`{"event":"step_completed","step":%q,"actor":"agent-7"}`, step))
		if code != 201 && code != 200 {
			t.Fatalf("record_event on the writer: %d %s", code, out)
		}
	}
	remoteHead := func() string {
		out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
		return strings.TrimSpace(string(out))
	}
	pushed := func(what string) {
		t.Helper()
		waitFor(t, 40*time.Second, what, func() bool { return remoteHead() == gitIn(t, dir, "rev-parse", "HEAD") })
	}
	boundary(run, "do/1/a")
	pushed("the first push")

	replica := filepath.Join(t.TempDir(), "replica")
	code, out, errs := quire(t, "", "clone", url, replica)
	if code != 0 || !strings.Contains(out, "Cloned "+url+" (branch main) into "+replica+", the remote named origin") {
		t.Fatalf("clone: %d %s %s", code, out, errs)
	}
	if st := gitIn(t, replica, "status", "--porcelain", "--ignored=no"); st != "" {
		t.Fatalf("the clone's git status is not clean: %s", st)
	}
	if got := gitIn(t, replica, "config", "--get-all", "remote.origin.fetch"); got != "+refs/heads/main:refs/remotes/origin/main" {
		t.Errorf("the clone fetches %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(replica, ".quire", "history", "finance.*")); len(m) == 0 {
		t.Errorf("the clone built no history of finance under .quire/")
	}
	synced := filepath.Join(t.TempDir(), "synced")
	if code, _, errs := quire(t, "", "clone", url, synced); code != 0 {
		t.Fatalf("clone: %s", errs)
	}
	poll := startServe(t, replica, "--follow", "origin", "--follow-interval", "200ms")
	hook := startServe(t, synced, "--follow", "origin", "--follow-interval", "1h")

	// The writer records a run and boundaries over HTTP.
	code, out = httpDo(t, "GET", writer+"/v1/orgs/acme/projects", "")
	var projects []struct{ UID string }
	if code != 200 || json.Unmarshal([]byte(out), &projects) != nil || len(projects) == 0 {
		t.Fatalf("list_projects: %d %s", code, out)
	}
	code, out = httpDo(t, "POST", writer+pb+"/definitions/workflow/close/runs",
		fmt.Sprintf(`{"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, projects[0].UID))
	var second struct {
		RunID string `json:"run_id"`
	}
	if code/100 != 2 || json.Unmarshal([]byte(out), &second) != nil || second.RunID == "" {
		t.Fatalf("run_definition on the writer: %d %s", code, out)
	}
	for i := range 5 {
		boundary(run, fmt.Sprintf("do/%d/b", i+2))
		boundary(second.RunID, fmt.Sprintf("do/%d/a", i+1))
	}
	reads := []string{pb + "/runs?type=workflow&name=close", pb + "/runs/" + run, pb + "/runs/" + second.RunID, pb + "/events"}
	same := func(replica string) func() bool {
		return func() bool {
			for _, r := range reads {
				wc, w := httpDo(t, "GET", writer+r, "")
				rc, got := httpDo(t, "GET", replica+r, "")
				if wc != 200 || rc != wc || got != w {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 20*time.Second, "the polling replica reads what the writer reads", same(poll))
	if same(hook)() {
		t.Fatalf("the replica without polling caught up before any sync")
	}
	pushed("the writer's pushes")
	if code, out := httpDo(t, "POST", hook+"/v1/orgs/acme/sync", `{"ref":"refs/heads/main"}`); code != 202 || strings.Join(strings.Fields(out), "") != `{"syncing":"origin"}` {
		t.Fatalf("POST sync: %d %s", code, out)
	}
	waitFor(t, 5*time.Second, "the synced replica reads what the writer reads", same(hook))
	if code, out := httpDo(t, "POST", writer+"/v1/orgs/acme/sync", ""); code != 404 || !strings.Contains(out, "this server follows no remote") {
		t.Errorf("POST sync to the writer: %d %s", code, out)
	}

	// A write to a replica is refused, whatever the door, and writes
	// nothing.
	head := gitIn(t, replica, "rev-parse", "HEAD")
	words := "this server follows origin (" + url + "): send writes to the server that pushes to it"
	code, out = httpDo(t, "POST", poll+pb+"/runs/"+run+"/events", `{"event":"step_completed","step":"do/9/z","actor":"agent-7"}`)
	if code != 409 || !strings.Contains(out, `"code":"conflict"`) || !strings.Contains(out, words) || strings.Contains(out, `"path":"/`) {
		t.Errorf("a write over HTTP to the replica: %d %s", code, out)
	}
	if out := mcpCall(t, poll, "make_comment", `{"playbook":"finance","address":"playbooks/finance","text":"hi","author":"ana"}`); !strings.Contains(out, words) || !strings.Contains(out, `"isError":true`) {
		t.Errorf("a write over MCP to the replica: %s", out)
	}
	if now := gitIn(t, replica, "rev-parse", "HEAD"); now != head {
		t.Errorf("a refused write moved the replica's branch")
	}
	if st := gitIn(t, replica, "status", "--porcelain"); st != "" {
		t.Errorf("a refused write changed the replica's files: %s", st)
	}
	st := remoteStatus(t, "--vault="+replica, "origin")
	if f, _ := st["follow"].(map[string]any); f == nil || f["fetched"] != remoteHead() || f["behind"].(float64) != 0 || f["last_error"] != nil {
		t.Errorf("the replica's status once caught up: %v", st)
	}

	// The remote goes away: the replica says the fetch failed, and
	// catches up once it is back.
	os.Rename(bare, bare+".away")
	waitFor(t, 10*time.Second, "the replica's status names the failed fetch", func() bool {
		f, _ := remoteStatus(t, "--vault="+replica, "origin")["follow"].(map[string]any)
		return f != nil && f["last_error"] != nil && strings.Contains(f["last_error"].(string), "fetching origin")
	})
	if _, out, _ := quire(t, "", "--vault="+replica, "status"); !strings.Contains(out, "origin is followed (branch main): ") || !strings.Contains(out, "the last fetch failed at ") {
		t.Errorf("quire status of the replica while the remote is away: %s", out)
	}
	boundary(run, "do/9/c")
	code, out = httpDo(t, "GET", poll+pb+"/runs/"+run, "")
	if code != 200 {
		t.Errorf("a read of the replica while the remote is away: %d %s", code, out)
	}
	os.Rename(bare+".away", bare)
	pushed("the push once the remote is back")
	waitFor(t, 30*time.Second, "the replica catches up once the remote is back", same(poll))
	waitFor(t, 5*time.Second, "the replica's status clears the error", func() bool {
		f, _ := remoteStatus(t, "--vault="+replica, "origin")["follow"].(map[string]any)
		return f != nil && f["last_error"] == nil && f["fetched"] == remoteHead()
	})
	if st := gitIn(t, replica, "status", "--porcelain"); st != "" {
		t.Errorf("the replica's git status after following: %s", st)
	}

	// A person commits in a replica: its branch has diverged from the
	// remote's, which the replica says, and it is never overwritten.
	os.WriteFile(filepath.Join(synced, "notes.md"), []byte("a person's notes\n"), 0o644)
	gitIn(t, synced, "add", "notes.md")
	gitIn(t, synced, "commit", "-q", "-m", "notes")
	mine := gitIn(t, synced, "rev-parse", "HEAD")
	boundary(run, "do/9/d")
	pushed("the push after the replica's own commit")
	httpDo(t, "POST", hook+"/v1/orgs/acme/sync", "")
	waitFor(t, 10*time.Second, "the replica says its branch diverged", func() bool {
		f, _ := remoteStatus(t, "--vault="+synced, "origin")["follow"].(map[string]any)
		d, _ := f["diverged"].(string)
		return f["fetched"] == remoteHead() && strings.Contains(d, "the branch main has 1 commit(s) that origin's lacks") && strings.Contains(d, "quire never overwrites them")
	})
	if now := gitIn(t, synced, "rev-parse", "HEAD"); now != mine {
		t.Errorf("the diverged branch was moved: %s, not %s", now, mine)
	}
}

// A page's views follow on a replica: the writer's runs of
// close-the-month end over HTTP, and the replica's render_page answers
// the writer's, views and standing alike, once caught up, and again after
// the next run.
func TestAReplicasPageViewsFollow(t *testing.T) {
	t.Parallel()
	dir, v, project := newCLIVault(t)
	quire(t, "", v, "call", "create_playbook", "--args", `{"playbook":"finance","name":"Finance"}`)
	if code, out, errs := quire(t, "", v, "definition", "save", "../../testdata/vault/close-the-month.yaml", "--playbook", "finance"); code != 0 {
		t.Fatalf("definition save: %s %s", out, errs)
	}
	bare, url := bareRemote(t)
	quire(t, "", v, "remote", "add", "origin", url)
	writer := startServe(t, dir, "--push", "origin")
	const pb = "/v1/orgs/acme/playbooks/finance"
	closeMonth := func(month string, revenue int) {
		t.Helper()
		code, out := httpDo(t, "POST", writer+pb+"/definitions/workflow/close-the-month/runs",
			fmt.Sprintf(`{"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, project))
		var r struct {
			RunID string `json:"run_id"`
		}
		if code/100 != 2 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("run_definition: %d %s", code, out)
		}
		code, out = httpDo(t, "POST", writer+pb+"/runs/"+r.RunID+"/end",
			fmt.Sprintf(`{"status":"succeeded","output":{"month":%q,"revenue":%d},"actor":"agent-7"}`, month, revenue))
		if code/100 != 2 {
			t.Fatalf("end_run: %d %s", code, out)
		}
	}
	closeMonth("2026-10", 182450)
	waitFor(t, 20*time.Second, "the push", func() bool {
		out, _ := exec.Command("git", "--git-dir", bare, "rev-parse", "--verify", "-q", "refs/heads/main").Output()
		return strings.TrimSpace(string(out)) == gitIn(t, dir, "rev-parse", "HEAD")
	})
	replica := filepath.Join(t.TempDir(), "replica")
	if code, _, errs := quire(t, "", "clone", url, replica); code != 0 {
		t.Fatalf("clone: %s", errs)
	}
	follower := startServe(t, replica, "--follow", "origin", "--follow-interval", "200ms")
	render := func(base string) string {
		code, out := httpDo(t, "POST", base+pb+"/definitions/workflow/close-the-month/render", `{}`)
		if code != 200 {
			t.Fatalf("render_page: %d %s", code, out)
		}
		return out
	}
	caughtUp := func(month string) {
		t.Helper()
		var w, r string
		// 60 s: the first fold on a machine compiles QuickJS into the
		// user's cache, tens of seconds under the race detector and load.
		for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			w, r = render(writer), render(follower)
			if w == r && strings.Contains(w, month) && strings.Contains(w, `"live"`) {
				return
			}
		}
		t.Fatalf("the replica's page does not follow the writer's:\nwriter  %s\nreplica %s", w, r)
	}
	caughtUp("2026-10")
	closeMonth("2026-11", 190300)
	caughtUp("2026-11")
}

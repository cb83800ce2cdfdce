package serve

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A run's files and commits, the reads a run's page makes, over HTTP and
// over MCP: the same answer through both doors.
func TestRunFilesAndCommitsOverHTTPAndMCP(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := startRun(t, l, project)
	mustCall(t, l, "append_thread", map[string]any{"playbook": "finance", "run_id": runID, "text": "Reconciled 412 entries.", "actor": "agent-7"})
	mustCall(t, l, "put_artifact", map[string]any{"playbook": "finance", "run_id": runID, "name": "reports/q3.csv", "content": "a,b\n1,2\n", "actor": "agent-7"})
	mustCall(t, l, "end_run", map[string]any{"playbook": "finance", "run_id": runID, "status": "failed", "detail": "gave up", "actor": "agent-7"})

	_, c := newTestServer(t, newServer(l, true, nil))
	base := "/v1/orgs/acme/playbooks/finance/runs/" + runID
	st, files := c.do("GET", base+"/files", nil)
	if st != 200 || !strings.Contains(files["thread"].(string), "Reconciled 412 entries.") || !strings.Contains(files["context"].(string), "authorized by ana") {
		t.Fatalf("GET files: %d %v", st, files)
	}
	if state, _ := files["state"].(map[string]any); state["run_id"] != runID || state["state"] != "failed" {
		t.Fatalf("state: %v", files["state"])
	}
	if fmt.Sprint(files["artifacts"]) != "[map[bytes:8 name:reports/q3.csv]]" {
		t.Fatalf("artifacts: %v", files["artifacts"])
	}
	st, page := c.do("GET", base+"/commits?limit=1", nil)
	commits, _ := page["commits"].([]any)
	if st != 200 || len(commits) != 1 || page["next"] == nil {
		t.Fatalf("GET commits: %d %v", st, page)
	}
	newest := commits[0].(map[string]any)
	if newest["author"] != "agent-7" || !strings.HasPrefix(newest["subject"].(string), "close-the-month "+runID[len(runID)-8:]+": ") || len(newest["commit"].(string)) != 40 {
		t.Fatalf("the newest commit: %v", newest)
	}
	st, rest := c.do("GET", fmt.Sprintf("%s/commits?cursor=%v", base, page["next"]), nil)
	older, _ := rest["commits"].([]any)
	if st != 200 || len(older) == 0 || older[len(older)-1].(map[string]any)["subject"] != "close-the-month "+runID[len(runID)-8:]+": run created" {
		t.Fatalf("GET the older commits: %d %v", st, rest)
	}
	if st, out := c.do("GET", "/v1/orgs/acme/playbooks/finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e/commits", nil); st != 404 || code(out) != "not_found" {
		t.Fatalf("an unknown run: %d %v", st, out)
	}

	cs := connectInMemory(t, l)
	mc := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	got := mc.ok("get_run_files", map[string]any{"playbook": "finance", "run_id": runID})
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(files)
	if !jsonEqual(a, b) {
		t.Fatalf("over MCP %v, over HTTP %v", got, files)
	}
	all := mc.ok("list_run_commits", map[string]any{"playbook": "finance", "run_id": runID})
	if n := len(all["commits"].([]any)); n != 1+len(older) || all["next"] != nil {
		t.Fatalf("over MCP: %v", all)
	}
	mc.refused("list_run_commits", map[string]any{"playbook": "finance", "run_id": runID, "cursor": "later"}, "invalid_input")
}

// One commit of a run, asked of list_run_commits by its id: what it
// changed in the run's folder, read from git's objects, in the terms of
// each file (events added, thread appended, state's fields before and
// after, artifacts), and a refusal naming /commit for a commit the run
// does not have.
func TestOneRunCommitsChangesOverHTTP(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	runID := startRun(t, l, project)
	mustCall(t, l, "append_thread", map[string]any{"playbook": "finance", "run_id": runID, "text": "Reconciled 412 entries.", "actor": "agent-7"})
	mustCall(t, l, "put_artifact", map[string]any{"playbook": "finance", "run_id": runID, "name": "reports/q3.csv", "content": "a,b\n1,2\n", "actor": "agent-7"})
	mustCall(t, l, "record_event", map[string]any{"playbook": "finance", "run_id": runID, "event": "step_completed", "step": "do/1/review", "detail": "Reviewed 14 entries", "actor": "agent-7"})

	_, c := newTestServer(t, newServer(l, true, nil))
	base := "/v1/orgs/acme/playbooks/finance/runs/" + runID + "/commits"
	_, page := c.do("GET", base, nil)
	commits := page["commits"].([]any)
	step := commits[0].(map[string]any)["commit"].(string)
	created := commits[len(commits)-1].(map[string]any)["commit"].(string)

	st, one := c.do("GET", base+"?commit="+step[:10], nil)
	if st != 200 || len(one["commits"].([]any)) != 1 || one["commits"].([]any)[0].(map[string]any)["commit"] != step {
		t.Fatalf("GET one commit: %d %v", st, one)
	}
	ch := one["changes"].(map[string]any)
	evs := ch["events"].([]any)
	if len(evs) != 1 || evs[0].(map[string]any)["type"] != "step_completed" ||
		fmt.Sprint(evs[0].(map[string]any)["data"]) != "map[detail:Reviewed 14 entries step:do/1/review]" {
		t.Fatalf("events added: %v", evs)
	}
	if !strings.Contains(ch["thread"].(string), "Reconciled 412 entries.") || ch["thread_removed"] != nil {
		t.Fatalf("thread appended: %q", ch["thread"])
	}
	fields := map[string]string{}
	for _, s := range ch["state"].([]any) {
		s := s.(map[string]any)
		fields[s["field"].(string)] = fmt.Sprint(s["before"], " -> ", s["after"])
	}
	if fields["current_step"] != "<nil> -> do/1/review" || fields["events"] != "1 -> 2" || fields["state"] != "" {
		t.Fatalf("state changed: %v", fields)
	}
	if fmt.Sprint(ch["artifacts"]) != "[map[bytes:8 change:added name:reports/q3.csv]]" || fmt.Sprint(ch["files"]) != "[]" {
		t.Fatalf("files: %v %v", ch["artifacts"], ch["files"])
	}

	// The run's first commit adds its folder: run_created, and its files.
	_, first := c.do("GET", base+"?commit="+created, nil)
	ch = first["changes"].(map[string]any)
	if evs := ch["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["type"] != "run_created" {
		t.Fatalf("the first commit's events: %v", evs)
	}
	names := fmt.Sprint(ch["files"])
	if !strings.Contains(names, "context.md") || !strings.Contains(names, "definition.md") || !strings.Contains(names, "added") {
		t.Fatalf("the first commit's files: %v", names)
	}

	// Over MCP, the same answer.
	mc := &caller{t: t, cs: connectInMemory(t, l)}
	mc.schemas = checkTools(t, mc.cs)
	got, _ := json.Marshal(mc.ok("list_run_commits", map[string]any{"playbook": "finance", "run_id": runID, "commit": step}))
	want, _ := json.Marshal(one)
	if !jsonEqual(got, want) {
		t.Fatalf("over MCP %s, over HTTP %s", got, want)
	}

	for q, want := range map[string]string{
		"?commit=" + strings.Repeat("0", 40): "404 not_found /commit",
		"?commit=xyz":                        "400 invalid_input /commit",
		"?commit=" + step + "&limit=5":       "400 invalid_input /commit",
	} {
		st, out := c.do("GET", base+q, nil)
		e, _ := out["error"].(map[string]any)
		issues, _ := e["issues"].([]any)
		at := ""
		if len(issues) == 1 {
			at, _ = issues[0].(map[string]any)["path"].(string)
		}
		if got := fmt.Sprint(st, " ", code(out), " ", at); got != want {
			t.Errorf("GET %s: %s, want %s (%v)", q, got, want, out)
		}
	}
}

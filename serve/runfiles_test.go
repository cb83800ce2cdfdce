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

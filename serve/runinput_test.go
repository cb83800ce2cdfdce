package serve

import (
	"testing"
)

// get_run answers the run's input and, while it is paused, the reason
// it was paused for, over HTTP and MCP alike, each answer of its schema.
func TestGetRunInputAndPauseOverTheDoors(t *testing.T) {
	l := newLedger(t)
	project := seed(t, l)
	r := mustCall(t, l, "run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana", "input": map[string]any{"month": "2026-10"}})
	id := r["run_id"].(string)
	mustCall(t, l, "transition_run", map[string]any{"playbook": "finance", "run_id": id, "to": "paused",
		"reason": "waiting for the bank statement", "actor": "agent-7"})
	check := func(door string, got map[string]any) {
		t.Helper()
		in, _ := got["input"].(map[string]any)
		paused, _ := got["paused"].(map[string]any)
		if in["month"] != "2026-10" || paused["reason"] != "waiting for the bank statement" {
			t.Errorf("get_run over %s: %v", door, got)
		}
	}
	_, c := newTestServer(t, newServer(l, true, nil))
	status, got := c.do("GET", "/v1/orgs/acme/playbooks/finance/runs/"+id, nil)
	if status != 200 {
		t.Fatalf("GET the run: %d %v", status, got)
	}
	check("HTTP", got)
	cs := connectInMemory(t, l)
	mc := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	check("MCP", mc.ok("get_run", map[string]any{"playbook": "finance", "run_id": id}))
}

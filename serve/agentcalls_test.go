package serve

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// The guide's workflow (close-the-month, one step that closes October's
// books, in the project Operations) as a scripted agent runs it over MCP,
// told only the playbook, the workflow, the project's name and the output.
// Issue 27 counted the calls an agent needed: before, it found the
// project's uid with list_projects, parsed the YAML of get_definition's
// source for the steps, recorded each step's start and end, and read the
// run back to learn what had been recorded; now get_definition answers
// the steps, member_of takes the name, a step the document does not have
// is warned of in record_event's answer, and get_run says which steps are
// done. The goal is 5 calls or fewer.
func TestMCPAgentCallsForTheGuidesWorkflow(t *testing.T) {
	t.Parallel()
	before := runGuideAgent(t, false)
	after := runGuideAgent(t, true)
	t.Logf("calls for the guide's workflow over MCP: %d before issue 27, %d now", before, after)
	if after > 5 {
		t.Errorf("the agent needed %d calls; the goal is 5 or fewer", after)
	}
}

// runGuideAgent sets up the guide's vault and runs the agent, the way it
// had to before (!now) or the way it can now; it answers the agent's
// calls.
func runGuideAgent(t *testing.T, now bool) int {
	l := newLedger(t)
	mustCall(t, l, "create_project", map[string]any{"name": "Operations"})
	mustCall(t, l, "create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	mustCall(t, l, "create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": workflowSource(t)})
	cs := connectInMemory(t, l)
	c := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	calls := 0
	call := func(name string, args map[string]any) map[string]any {
		calls++
		return c.ok(name, args)
	}
	def := map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month"}
	output := map[string]any{"month": "2026-10", "revenue": 182450}
	if now {
		var steps []string
		for _, s := range call("get_definition", def)["steps"].([]any) {
			steps = append(steps, s.(map[string]any)["step"].(string))
		}
		run := call("run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
			"member_of": []string{"Operations"}, "executor": "agent-7", "authorized_by": "ana"})
		id := run["run_id"]
		for _, s := range steps {
			if w := call("record_event", map[string]any{"playbook": "finance", "run_id": id, "event": "step_completed", "step": s, "actor": "agent-7"})["warnings"]; w != nil {
				t.Fatalf("%s: %v", s, w)
			}
		}
		if end := call("end_run", map[string]any{"playbook": "finance", "run_id": id, "status": "succeeded", "output": output, "actor": "agent-7"}); end["status"] != "succeeded" {
			t.Fatalf("end_run: %v", end)
		}
		for _, s := range call("get_run", map[string]any{"playbook": "finance", "run_id": id})["steps"].([]any) {
			if st := s.(map[string]any)["status"]; st != "completed" {
				t.Errorf("step %v: %v", s, st)
			}
		}
		return calls
	}
	var project any
	for _, p := range call("list_projects", nil)["items"].([]any) {
		if p.(map[string]any)["name"] == "Operations" {
			project = p.(map[string]any)["uid"]
		}
	}
	var doc struct {
		Do []map[string]any `yaml:"do"`
	}
	if err := yaml.Unmarshal([]byte(call("get_definition", def)["source"].(string)), &doc); err != nil {
		t.Fatal(err)
	}
	run := call("run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []any{project}, "executor": "agent-7", "authorized_by": "ana"})
	id := run["run_id"]
	for i, task := range doc.Do {
		for name := range task {
			step := fmt.Sprintf("do/%d/%s", i, name)
			for _, ev := range []string{"step_started", "step_completed"} {
				call("record_event", map[string]any{"playbook": "finance", "run_id": id, "event": ev, "step": step, "actor": "agent-7"})
			}
		}
	}
	call("end_run", map[string]any{"playbook": "finance", "run_id": id, "status": "succeeded", "output": output, "actor": "agent-7"})
	call("list_playbook_events", map[string]any{"playbook": "finance", "run_id": id})
	return calls
}

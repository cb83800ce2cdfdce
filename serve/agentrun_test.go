package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// evidenceGate is the AgentRun example the format's tests use.
func evidenceGate(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../words/agentrun/testdata/evidence-gate.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// setTop sets (or with nil, removes) a top-level field of a JSON document.
func setTop(t *testing.T, src, field string, v any) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		delete(doc, field)
	} else {
		doc[field] = v
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return string(b)
}

// issues are a refusal's issues.
func issuesOf(out map[string]any) []map[string]any {
	var is []map[string]any
	list, _ := out["error"].(map[string]any)["issues"].([]any)
	for _, x := range list {
		is = append(is, x.(map[string]any))
	}
	return is
}

// An author's AgentRun documents over MCP, as issue 27 tried them: a
// JSON document in AgentRun form whose v is not 2 is refused saying so
// (it was saved as a YAML workflow), JSON that does not parse is refused
// at its own line and column, a run's input is checked against
// input.schemaId, a predicate the format does not name is refused with
// those it names, and a kind beginning with a vowel takes "An".
func TestMCPAgentRunAuthor(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	cs := connectInMemory(t, l)
	c := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	project := c.ok("create_project", map[string]any{"name": "Finance"})["uid"].(string)
	c.ok("create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	src := evidenceGate(t)
	save := func(name, source string) map[string]any {
		return c.refused("create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": name, "source": source}, "invalid_input")
	}
	for _, v := range []struct {
		v    any
		want string
	}{
		{nil, `An AgentRun document has "v": 2, the version of the format quire reads; this one has schemas and root and no v.`},
		{3, `An AgentRun document has "v": 2, the version of the format quire reads; not 3.`},
		{"2", `An AgentRun document has "v": 2, the version of the format quire reads, a number; not "2", a string.`},
	} {
		is := issuesOf(save("gate", setTop(t, src, "v", v.v)))
		if len(is) != 1 || is[0]["path"] != "/source/v" || is[0]["message"] != v.want {
			t.Errorf("v %v: issues %v", v.v, is)
		}
	}
	broken := strings.Replace(src, `"name": "evidence-gate",`, `"name": "evidence-gate"`, 1)
	is := issuesOf(save("gate", broken))
	if len(is) != 1 || is[0]["line"] != 4.0 || !strings.HasPrefix(is[0]["message"].(string), "The document is not JSON: at line 4, column 3, invalid character '\"' after object key:value pair") {
		t.Errorf("JSON that does not parse: %v", is)
	}
	is = issuesOf(save("gate", strings.Replace(src, `"field_equals"`, `"field_equal"`, 1)))
	if len(is) != 1 || is[0]["path"] != "/source/root/steps/2/when/predicate" || is[0]["message"] != `The format's predicates are empty and field_equals; not "field_equal".` {
		t.Errorf("an unknown predicate: %v", is)
	}
	is = issuesOf(save("gate", strings.Replace(src, `"kind": "needs_review", `, `"colour": "red", `, 1)))
	if len(is) != 1 || !strings.HasPrefix(is[0]["message"].(string), "An escalate node has node, label, when") {
		t.Errorf("a field an escalate does not take: %v", is)
	}
	c.ok("create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "evidence-gate", "source": src})
	start := func(input any) (map[string]any, bool) {
		out, res := c.call("run_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "evidence-gate",
			"member_of": []string{project}, "executor": "agent-7", "authorized_by": "ana", "input": input})
		return out, res.IsError
	}
	out, refused := start(map[string]any{"record": map[string]any{"claim": 5}})
	if !refused || code(out) != "invalid_input" {
		t.Fatalf("an input of the wrong shape: %v", out)
	}
	want := []map[string]any{{"path": "/input/record/claim", "message": "Expected text."}, {"path": "/input/record", "message": `Expected the field "evidence".`}}
	if got := issuesOf(out); !sameIssues(got, want) {
		t.Errorf("input issues %v, want %v", got, want)
	}
	run, refused := start(map[string]any{"record": map[string]any{"claim": "c", "evidence": "e"}})
	if refused {
		t.Fatalf("a fitting input refused: %v", run)
	}
	// A rejected run's issues say what was expected at each pointer.
	end := c.ok("end_run", map[string]any{"playbook": "finance", "run_id": run["run_id"], "status": "succeeded",
		"output": map[string]any{"record": map[string]any{"claim": "c", "extra": 1}, "accepted": "yes"}, "actor": "agent-7"})
	var got []map[string]any
	for _, x := range end["issues"].([]any) {
		got = append(got, x.(map[string]any))
	}
	want = []map[string]any{{"path": "/record", "message": `Expected the field "evidence".`}, {"path": "/record/extra", "message": "Expected no such field."},
		{"path": "/accepted", "message": "Expected true or false."}}
	if end["status"] != "rejected" || !sameIssues(got, want) {
		t.Errorf("end_run: %v, issues %v, want %v", end["status"], got, want)
	}
	if d := end["detail"].(string); strings.Contains(d, "quire.invalid") || strings.Contains(d, "validation failed") || strings.Contains(d, ".;") {
		t.Errorf("detail in the schema library's words: %s", d)
	}
}

// sameIssues compares issues' paths and messages, in any order.
func sameIssues(got, want []map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	seen := map[string]bool{}
	for _, g := range got {
		seen[g["path"].(string)+" "+g["message"].(string)] = true
	}
	for _, w := range want {
		if !seen[w["path"].(string)+" "+w["message"].(string)] {
			return false
		}
	}
	return true
}

// An agent learns a workflow's steps from get_definition, where a run is
// from get_run, and of a step the document does not have from
// record_event's warnings: it parses no document (issue 27).
func TestMCPWorkflowSteps(t *testing.T) {
	t.Parallel()
	l := newLedger(t)
	cs := connectInMemory(t, l)
	c := &caller{t: t, cs: cs, schemas: checkTools(t, cs)}
	project := c.ok("create_project", map[string]any{"name": "Finance"})["uid"].(string)
	c.ok("create_playbook", map[string]any{"playbook": "finance", "name": "Finance"})
	c.ok("create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month", "source": workflowSource(t)})
	c.ok("create_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "evidence-gate", "source": evidenceGate(t)})
	steps := func(m map[string]any) string {
		var out []string
		for _, s := range m["steps"].([]any) {
			s := s.(map[string]any)
			line := s["step"].(string) + " " + s["kind"].(string)
			if c, ok := s["calls"]; ok {
				line += " -> " + c.(string)
			}
			if st, ok := s["status"]; ok {
				line += ": " + st.(string)
			}
			out = append(out, line)
		}
		return strings.Join(out, "; ")
	}
	def := c.ok("get_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month"})
	if got := steps(def); got != "do/0/work call -> run_definition computation/close-the-month-step" {
		t.Errorf("close-the-month's steps: %s", got)
	}
	def = c.ok("get_definition", map[string]any{"playbook": "finance", "type": "workflow", "name": "evidence-gate"})
	if got, want := steps(def), "evidence-gate chain; evidence-gate/check-support judge; evidence-gate/gate-probability code; evidence-gate/evidence-not-supported escalate; evidence-gate/assemble-result code"; got != want {
		t.Errorf("evidence-gate's steps: %s\nwant %s", got, want)
	}
	// member_of takes a project's name as well as its uid.
	start := map[string]any{"playbook": "finance", "type": "workflow", "name": "close-the-month",
		"member_of": []string{"Finanse"}, "executor": "agent-7", "authorized_by": "ana"}
	bad := c.refused("run_definition", start, "invalid_input")
	if is := issuesOf(bad); len(is) != 1 || is[0]["path"] != "/member_of/0" || is[0]["message"] != `rule 1: "Finanse" is not a project's uid or name; the projects are "Finance"` {
		t.Errorf("a wrong project: %v", is)
	}
	start["member_of"] = []string{"Finance"}
	run := c.ok("run_definition", start)
	id := run["run_id"]
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: fmt.Sprintf("quire://finance/runs/%s/definition.md", id)})
	if err != nil || !strings.Contains(res.Contents[0].Text, "member_of:\n    - "+project+"\n") {
		t.Errorf("the project named is not the run's member_of %s: %v %v", project, res, err)
	}
	rec := func(typ, step string) map[string]any {
		return c.ok("record_event", map[string]any{"playbook": "finance", "run_id": id, "event": typ, "step": step, "actor": "agent-7"})
	}
	if w := rec("step_started", "do/0/work")["warnings"]; w != nil {
		t.Errorf("a step of the document warned of: %v", w)
	}
	got := c.ok("get_run", map[string]any{"playbook": "finance", "run_id": id})
	if s := steps(got); s != "do/0/work call -> run_definition computation/close-the-month-step: started" {
		t.Errorf("get_run's steps while started: %s", s)
	}
	ev := rec("step_completed", "do/9/nothing")
	want := `[map[message:the run's pinned document has no step "do/9/nothing"; its steps are do/0/work path:/step]]`
	if w := fmt.Sprint(ev["warnings"]); w != want || ev["type"] != "step_completed" {
		t.Errorf("a made-up step: %v, warnings %s", ev["type"], w)
	}
	rec("step_completed", "do/0/work")
	got = c.ok("get_run", map[string]any{"playbook": "finance", "run_id": id})
	if s := steps(got); s != "do/0/work call -> run_definition computation/close-the-month-step: completed" {
		t.Errorf("get_run's steps once done: %s", s)
	}
}

package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"quire/words/agentrun"
	"quire/words/refusal"
)

func readExample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("../words/agentrun/testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// del marks a member to remove in a variant.
type del struct{}

// variant sets (or with del, removes) the member at ptr of a copy of the
// document.
func variant(t testing.TB, src, ptr string, val any) string {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	segs := strings.Split(ptr, "/")[1:]
	cur := doc
	for i, s := range segs {
		s = strings.NewReplacer("~1", "/", "~0", "~").Replace(s)
		last := i == len(segs)-1
		switch x := cur.(type) {
		case map[string]any:
			if last {
				if _, isDel := val.(del); isDel {
					delete(x, s)
				} else {
					x[s] = val
				}
			}
			cur = x[s]
		case []any:
			var k int
			fmt.Sscan(s, &k)
			if last {
				x[k] = val
			}
			cur = x[k]
		default:
			t.Fatalf("no %s in the document", ptr)
		}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return string(b)
}

func raw(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		panic(s + ": " + err.Error())
	}
	return v
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// An AgentRun document is saved, versioned, read and retired like every
// definition; a broken one is refused as invalid_input at its pointer.
func TestAgentRunSavedAsWorkflow(t *testing.T) {
	f := newFixture(t)
	src := readExample(t, "evidence-gate")
	d := f.call("create_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(src)+`}`).(*Definition)
	if d.Path != "playbooks/finance/definitions/workflow/evidence-gate.json" || d.Version != 1 {
		t.Fatalf("saved at %s version %d", d.Path, d.Version)
	}
	if d.OutputSchema != nil {
		t.Errorf("output_schema %s: an AgentRun document declares no shape", d.OutputSchema)
	}
	broken := variant(t, src, "/root/steps/1/code", "(s) => ({ at: Date.now() })")
	r := f.refuse("update_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(broken)+`}`, refusal.InvalidInput, "/source/root/steps/1/code", "")
	if !strings.Contains(r.Issues[0].Message, "line 1, column 15 of the code: Date is unavailable") || r.Issues[0].Line != 26 {
		t.Errorf("issue %+v", r.Issues[0])
	}
	f.refuse("create_definition", `{"playbook":"finance","type":"workflow","name":"bare-ref","source":`+jsonString(variant(t, src, "/schemas/Input/properties/record", raw(`{"$ref":"Record"}`)))+`}`,
		refusal.InvalidInput, "/source/schemas/Input/properties/record/$ref", "")
	v2 := variant(t, src, "/root/steps/2/summary", "The evidence falls short of the claim.")
	if d := f.call("update_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(v2)+`}`).(*Definition); d.Version != 2 {
		t.Errorf("version %d", d.Version)
	}
	// A YAML workflow does not become an AgentRun document (its file keeps its name).
	f.refuse("update_definition", `{"playbook":"finance","type":"workflow","name":"close-the-month","source":`+jsonString(src)+`}`, refusal.Conflict, "/source", "a YAML workflow")
	g := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","version":1}`).(*Definition)
	if g.Source != src {
		t.Errorf("version 1 reads back changed")
	}
	rep := f.call("inspect_workflow", `{"playbook":"finance","name":"evidence-gate"}`).(*agentrun.Report)
	if !rep.OK || rep.Name != "evidence-gate" || len(rep.Nodes) != 5 {
		t.Errorf("inspect_workflow: %+v", rep)
	}
	rep = f.call("inspect_workflow", `{"source":`+jsonString(broken)+`}`).(*agentrun.Report)
	if rep.OK || len(rep.Issues) != 1 || rep.Issues[0].Path != "/source/root/steps/1/code" {
		t.Errorf("inspect_workflow of a broken source: %+v", rep.Issues)
	}
	f.refuse("inspect_workflow", `{"playbook":"finance","name":"close-the-month"}`, refusal.InvalidInput, "/name", "not an AgentRun document")
	f.call("retire_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate"}`)
	f.refuse("update_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(src)+`}`, refusal.Conflict, "/name", "retired")
	f.clean()
}

// try_code runs the evidence gate's code over the example's state, and
// stores its value as as says; it never touches the vault.
func TestAgentRunTryCode(t *testing.T) {
	f := newFixture(t)
	src := readExample(t, "evidence-gate")
	f.call("create_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(src)+`}`)
	head := f.git("rev-parse", "HEAD")
	state := `{"record":{"claim":"c","evidence":"e"},"check":{"supported":true},"check$answers":{"answers":{"supported":{"noul":0.93}}}}`
	res := f.call("try_code", `{"playbook":"finance","name":"evidence-gate","label":"gate-probability","state":`+state+`}`).(*TryCode)
	if res.Error != nil || string(res.Value) != `{"accepted":true}` || res.Stored != "as" || res.Key != "gate" {
		t.Fatalf("try_code: %+v (%v)", res, res.Error)
	}
	var after map[string]any
	json.Unmarshal(res.State, &after)
	if g, _ := after["gate"].(map[string]any); g["accepted"] != true || after["record"] == nil {
		t.Errorf("state after: %s", res.State)
	}
	// Below the threshold, and with the probability missing, the gate fails closed.
	for _, st := range []string{
		`{"check$answers":{"answers":{"supported":{"noul":0.89}}}}`,
		`{"check$answers":{"answers":{"supported":{}}}}`,
		`{}`,
	} {
		res := f.call("try_code", `{"source":`+jsonString(src)+`,"label":"gate-probability","state":`+st+`}`).(*TryCode)
		if res.Error != nil || string(res.Value) != `{"accepted":false}` {
			t.Errorf("over %s: %+v", st, res)
		}
	}
	// Without as: an object is a patch, anything else goes under the label.
	for _, c := range []struct{ code, stored, state string }{
		{"(s) => ({ total: s.n + 1 })", "patch", `{"n":1,"total":2}`},
		{"(s) => [s.n]", "label", `{"n":1,"sum":[1]}`},
	} {
		doc := variant(t, src, "/root/steps/3", raw(`{"node":"code","label":"sum","code":`+jsonString(c.code)+`}`))
		doc = variant(t, doc, "/output/path", "gate")
		res := f.call("try_code", `{"source":`+jsonString(doc)+`,"label":"sum","state":{"n":1}}`).(*TryCode)
		if res.Error != nil || res.Stored != c.stored || string(res.State) != c.state {
			t.Errorf("%s: %+v, state %s", c.code, res, res.State)
		}
	}
	// An error names its line in the code; mutating the state is an error;
	// the shadowed globals are undefined even when reached around the check.
	for _, c := range []struct{ code, words string }{
		{"(s) => {\n  const x = 1;\n  return s.missing.deep;\n}", "TypeError"},
		{"(s) => {\n  const x = 1;\n  throw new RangeError('too far');\n}", "RangeError: too far"},
		{"(s) => { s.check = 1; return {}; }", "read-only"},
		{"(s) => ({ d: typeof [].constructor.constructor('return Date')() })", "not a function"},
		// The function's words, not the fold's (its tries, its views); the
		// overflow last, as it crashes the worker, which starts again.
		{"(s) => ({ big: 'x'.repeat(600000) })", "the function's value is too large: 600020 bytes as JSON"},
		{"(s) => { const f = (n) => f(n + 1) + 1; return { n: f(0) }; }", "Maximum call stack size exceeded (the function recurses without end"},
	} {
		doc := variant(t, src, "/root/steps/1/code", c.code)
		res := f.call("try_code", `{"source":`+jsonString(doc)+`,"label":"gate-probability","state":{"check":{}}}`).(*TryCode)
		if res.Error == nil || !strings.Contains(res.Error.Message, c.words) || strings.Contains(res.Error.Message, "fold") {
			t.Errorf("%q: %+v %+v", c.code, res, res.Error)
		}
		if (c.words == "TypeError" || strings.HasPrefix(c.words, "RangeError")) && res.Error != nil && res.Error.Line != 3 {
			t.Errorf("%q: line %d, want 3", c.code, res.Error.Line)
		}
	}
	f.refuse("try_code", `{"source":`+jsonString(src)+`,"label":"check-support","state":{}}`, refusal.InvalidInput, "/label", "a judge node")
	f.refuse("try_code", `{"source":`+jsonString(src)+`,"label":"nowhere","state":{}}`, refusal.NotFound, "/label", "no node labelled")
	f.refuse("try_code", `{"source":`+jsonString(src)+`,"label":"gate-probability","state":[1]}`, refusal.InvalidInput, "/state", "a JSON object")
	f.refuse("try_code", `{"source":`+jsonString(variant(t, src, "/root/steps/1/code", "(s) => Date.now()"))+`,"label":"gate-probability","state":{}}`, refusal.InvalidInput, "/source/root/steps/1/code", "")
	if h := f.git("rev-parse", "HEAD"); h != head {
		t.Errorf("try_code committed")
	}
	f.clean()
}

// A run of an AgentRun workflow: its steps by label path, an escalation
// recorded as pause_started shows on the paused run with its summary, and
// end_run's output is checked against output.schemaId's schema.
func TestAgentRunRecordedRun(t *testing.T) {
	f := newFixture(t)
	src := readExample(t, "evidence-gate")
	f.call("create_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(src)+`}`)
	input, _ := os.ReadFile("../words/agentrun/testdata/evidence-gate.input.json")
	start := func() *Run {
		return f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"evidence-gate","member_of":[%q],"executor":"agent-7","authorized_by":"ana","input":%s}`, f.project, input)).(*Run)
	}
	rec := func(r *Run, ev, step, data string) *Event {
		args := fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":%q,"actor":"agent-7"`, r.RunID, ev)
		if step != "" {
			args += fmt.Sprintf(`,"step":%q`, step)
		}
		if data != "" {
			args += `,"data":` + data
		}
		return &f.call("record_event", args+"}").(*RecordedEvent).Event
	}
	r := start()
	if !strings.HasPrefix(r.Path, "playbook-runs/evidence-gate-") {
		t.Errorf("run folder %s", r.Path)
	}
	rec(r, "step_started", "evidence-gate/check-support", "")
	rec(r, "call_record", "evidence-gate/check-support", `{"tool":"jev.judge","duration_ms":812}`)
	rec(r, "step_completed", "evidence-gate/check-support", `{"as":"check","value":{"supported":true}}`)
	rec(r, "step_completed", "evidence-gate/gate-probability", `{"as":"gate","value":{"accepted":false}}`)
	rec(r, "pause_started", "evidence-gate/evidence-not-supported", `{"kind":"needs_review","stage":"evidence","summary":"The evidence does not clearly support the claim."}`)
	got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run)
	var paused map[string]string
	json.Unmarshal(got.Paused, &paused)
	if got.State != "paused" || paused["summary"] != "The evidence does not clearly support the claim." || paused["kind"] != "needs_review" || paused["stage"] != "evidence" {
		t.Fatalf("paused run: state %s, paused %s", got.State, got.Paused)
	}
	if got.CurrentStep == nil || *got.CurrentStep != "evidence-gate/evidence-not-supported" {
		t.Errorf("current step %v", got.CurrentStep)
	}
	f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"pause_resumed","actor":"ana"}`, r.RunID))
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)).(*Run); got.State != "active" || got.Paused != nil {
		t.Errorf("resumed run: %s %s", got.State, got.Paused)
	}
	// An output that does not match output.schemaId's schema (Result, with
	// Record by #/definitions/Record) ends the run as a conflict, unworkable.
	end := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"record":{"claim":"c"},"accepted":"yes"},"actor":"agent-7"}`, r.RunID)).(*Run)
	if end.Status != "rejected" || end.Reason != "conflict" || end.Kind != "unworkable" || len(end.Issues) == 0 {
		t.Fatalf("mismatched output: %+v", end)
	}
	paths := ""
	for _, is := range end.Issues {
		paths += is.Path + " "
	}
	if !strings.Contains(paths, "/accepted") && !strings.Contains(paths, "/record") {
		t.Errorf("issues %+v", end.Issues)
	}
	r2 := start()
	ok := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"record":{"claim":"c","evidence":"e"},"accepted":true},"actor":"agent-7"}`, r2.RunID)).(*Run)
	if ok.Status != "succeeded" {
		t.Errorf("matching output: %+v", ok)
	}
	f.clean()
}

// An AgentRun document's page (quire's top-level page key) works as any
// workflow's: checked at save, rendered over an output.
func TestAgentRunPage(t *testing.T) {
	f := newFixture(t)
	src := variant(t, readExample(t, "evidence-gate"), "/page", raw(`{"result": "{% if run.status == \"started\" %}Checking…{% else %}{{ output.record.claim }} {% if output.accepted %}accepted{% else %}not accepted{% endif %}{% endif %}\n"}`))
	f.call("create_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","source":`+jsonString(src)+`}`)
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"evidence-gate","render":true,"sample_output":{"record":{"claim":"The v1 endpoint is gone.","evidence":"e"},"accepted":true}}`).(*Definition)
	if d.Page == nil || !strings.Contains(d.Page.Result, "The v1 endpoint is gone. accepted") {
		t.Fatalf("page: %+v", d.Page)
	}
	broken := variant(t, src, "/page/colour", "blue")
	f.refuse("create_definition", `{"playbook":"finance","type":"workflow","name":"broken-page","source":`+jsonString(broken)+`}`, refusal.InvalidInput, "/source", "")
}

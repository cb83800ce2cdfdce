package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"quire/words/refusal"
)

func readExample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/agentrun/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The document's own examples inspect clean, with the state keys the
// document says each node produces.
func TestAgentRunExamplesInspectClean(t *testing.T) {
	for _, c := range []struct {
		file    string
		keys    map[string]string // step → "key=value; key=value"
		verdict string
	}{
		{"minimal-typed-answer", map[string]string{"extract-facts": "facts=Facts"}, "matches"},
		{"sift-node", map[string]string{
			"migration-notes/select-migration-notes": "selected={answers: array of unknown (raw answers), items: array of Note, values: array of MigrationQuestions}",
			"migration-notes/summarize-migration":    "report=Report"}, "matches"},
		{"route-fragment", map[string]string{
			"check-migration-detail":                         "routing={taken: one of needs_details, ready}",
			"check-migration-detail/summarize-ready-changes": "report=Report"}, "matches"},
		{"evidence-gate", map[string]string{
			"evidence-gate/check-support":    "check=Check; check$answers=unknown (raw answers)",
			"evidence-gate/gate-probability": "gate=unknown (dynamic code)",
			"evidence-gate/assemble-result":  "result=unknown (dynamic code)"}, "unknown"},
	} {
		r := InspectAgentRun(readExample(t, c.file))
		if !r.OK || len(r.Issues) != 0 {
			t.Errorf("%s: issues %+v", c.file, r.Issues)
			continue
		}
		got := map[string]string{}
		for _, n := range r.Nodes {
			var parts []string
			for _, p := range n.Produces {
				parts = append(parts, p.Key+"="+p.Value)
			}
			if len(parts) > 0 {
				got[n.Step] = strings.Join(parts, "; ")
			}
		}
		for step, want := range c.keys {
			if got[step] != want {
				t.Errorf("%s: %s produces %q, want %q", c.file, step, got[step], want)
			}
		}
		if len(got) != len(c.keys) {
			t.Errorf("%s: produces %v, want %v", c.file, got, c.keys)
		}
		if r.Output == nil || r.Output.Verdict != c.verdict {
			t.Errorf("%s: output %+v, want verdict %s", c.file, r.Output, c.verdict)
		}
		if c.verdict == "unknown" && len(r.Unknown) == 0 {
			t.Errorf("%s: says nothing of where shapes stay unknown", c.file)
		}
	}
}

// Well-formed code that a scanner reading it as text would misjudge
// inspects clean: a regex just inside a template's ${ (read as a division
// before the scanner was shared, its comma or semicolon was "more than one
// expression"), a / that divides after a template, braces in strings.
func TestAgentRunCodeScannedAsCode(t *testing.T) {
	src := readExample(t, "evidence-gate")
	for _, code := range []string{
		"(s) => `${/,/.test(s.claim) ? 'list' : 'one'}`",
		"(s) => `${/;/.source}`",
		"(s) => `${s.claim}`.length / 2 > 1 ? '}' : '{'",
		"(s) => /[/,]}/.test(`a, ${s.x}`) // a comment, with a comma",
	} {
		r := InspectAgentRun(variant(t, src, "/root/steps/1/code", code))
		if !r.OK || len(r.Issues) != 0 {
			t.Errorf("%s: issues %+v", code, r.Issues)
		}
	}
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

// For every rule, a broken variant of an example is refused at its
// pointer, with words that say the rule.
func TestAgentRunRulesRefusedAtPointer(t *testing.T) {
	const (
		min   = "minimal-typed-answer"
		sift  = "sift-node"
		route = "route-fragment"
		gate  = "evidence-gate"
	)
	code := "/root/steps/1/code"
	for _, c := range []struct {
		file, ptr string
		val       any
		at, words string
	}{
		// top-level fields
		{min, "/v", del{}, "", ""}, // no longer an AgentRun document: see below
		{min, "/name", "", "/name", "nonempty name"},
		{min, "/schemas", del{}, "/schemas", "catalog"},
		{min, "/input", raw(`{"schema":"Input"}`), "/input", "schemaId"},
		{min, "/input/schemaId", "Inputs", "/input/schemaId", `"Inputs" names no schema`},
		{min, "/output/schemaId", "Answer", "/output/schemaId", `"Answer" names no schema`},
		{min, "/output/path", del{}, "/output", "output is"},
		{min, "/root", del{}, "/root", "root"},
		{min, "/extra", 1, "/extra", "not one of them"},
		// schemas: $ref form, valid JSON Schema
		{sift, "/schemas/Input/properties/notes/items", raw(`{"$ref":"Note"}`), "/schemas/Input/properties/notes/items/$ref", `{"$ref":"#/definitions/Note"}`},
		{sift, "/schemas/Input/properties/notes/items", raw(`{"$ref":"#/definitions/Nope"}`), "/schemas/Input/properties/notes/items/$ref", "names no schema"},
		{min, "/schemas/Facts/properties/date/type", "text", "/schemas/Facts/properties/date/type", "Not a valid JSON Schema"},
		{min, "/schemas/Facts/required", "date", "/schemas/Facts/required", "Not a valid JSON Schema"},
		// node kinds
		{min, "/root/node", "summarize", "/root/node", "node is the node's kind"},
		{min, "/root/label", del{}, "/root/label", "Every node has a label"},
		{min, "/root/out", "Fact", "/root/out", `"Fact" names no schema`},
		{min, "/root/instructions", del{}, "/root", "needs instructions"},
		{min, "/root/requires", raw(`["{text}"]`), "/root/requires/0", "requires names a path"},
		{gate, code, "return { accepted: true }", code, "not a bare statement body"},
		{gate, code, "async (s) => ({ accepted: true })", code, "an async function"},
		{gate, code, "function* (s) { yield 1 }", code, "a generator"},
		{gate, code, "(s) => ({ at: Date.now() })", code, "line 1, column 15 of the code: Date is unavailable"},
		{gate, code, "(s) => {\n  return new Promise((r) => setTimeout(r, 1));\n}", code, "line 2, column 14 of the code: Promise is unavailable"},
		{gate, code, "(s) => {\n  return new Promise((r) => setTimeout(r, 1));\n}", code, "setTimeout is unavailable"},
		{gate, code, "(s) => Function('return 1')()", code, "Function is unavailable"},
		{gate, code, "(s) => eval('1')", code, "eval is unavailable"},
		{gate, code, "(s) => fetch('https://example.com')", code, "fetch is unavailable"},
		{gate, code, "(s) => globalThis.process", code, "globalThis is unavailable"},
		{gate, code, "(s) => {\n  return {x: 1\n}", code, "line 3, column 2 of the code"},
		{gate, code, "(s) => 1, 2", code, "a comma or a semicolon"},
		{gate, code, "(function (s) { return 1 })(1)", code, "nothing follows the function"},
		{gate, "/root/steps/1/state", raw(`{}`), "/root/steps/1/state", "code node permits only node, label, code and optional as"},
		{gate, "/root/steps/1/requires", raw(`["record"]`), "/root/steps/1/requires", "code node permits only"},
		{gate, "/root/steps/0/instructions", "Is it supported?", "/root/steps/0/instructions", "A judge has no instructions"},
		{gate, "/root/steps/0/state", raw(`{}`), "/root/steps/0/state", "nonempty state map"},
		{gate, "/root/steps/0/as", del{}, "/root/steps/0", "needs as"},
		{gate, "/schemas/Check/properties/supported", raw(`{"type":"string","description":"Why?"}`), "/schemas/Check/properties/supported", "flat"},
		{gate, "/schemas/Check/properties/supported", raw(`{"type":"integer","description":"How well?","criteria":["no"]}`), "/schemas/Check/properties/supported", "2 to 10 level descriptions"},
		{gate, "/schemas/Check/properties/supported/description", del{}, "/schemas/Check/properties/supported", "description"},
		{sift, "/root/steps/0/keep", del{}, "/root/steps/0", "needs keep"},
		{sift, "/root/steps/0/itemsPath", del{}, "/root/steps/0", "needs itemsPath"},
		{sift, "/root/steps/0/keep/path", "relevant", "/root/steps/0/keep/path", "no question of out"},
		{route, "/root/branches/ready", del{}, "/root/branches", "at least two named branches"},
		{route, "/root/branches/ready/body", del{}, "/root/branches/ready", "with body"},
		{route, "/root/unsure/branch", "maybe", "/root/unsure", "one of the route's branches"},
		{route, "/root/unsure", del{}, "/root", "needs unsure"},
		{route, "/root/state", raw(`{}`), "/root/state", "nonempty state map"},
		{route, "/root/branches/needs_details/body/when", del{}, "/root/branches/needs_details/body", "needs when"},
		{route, "/root/branches/needs_details/body/label", "summarize-ready-changes", "/root/branches/ready/body/label", "labels are unique"},
		{sift, "/root", raw(`{"node":"loop","label":"again","until":{"predicate":"empty","path":"notes"},"maxIters":21,"body":{"node":"code","label":"c","code":"(s) => ({})"}}`), "/root/maxIters", "1 through 20"},
		{sift, "/root", raw(`{"node":"loop","label":"again","maxIters":3,"body":{"node":"code","label":"c","code":"(s) => ({})"}}`), "/root", "needs until"},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"rows","maxConcurrency":1000,"body":{"node":"extract","label":"row","instructions":"x","out":"Note","as":"row"}}`), "/root/maxConcurrency", "bounds maxConcurrency"},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"rows","body":{"node":"extract","label":"row","instructions":"x","out":"Note","as":"row"}}`), "/root", "needs maxConcurrency"},
		{sift, "/root", raw(`{"node":"call","label":"read","tool":"read","args":{"path":"x"},"out":"Note","as":"read","deadline_s":0}`), "/root/deadline_s", "positive"},
		{sift, "/root", raw(`{"node":"call","label":"read","tool":"read","out":"Note","as":"read","deadline_s":5}`), "/root", "needs args"},
		{sift, "/root", raw(`{"node":"parallel","label":"both","branches":[{"node":"extract","label":"a","instructions":"x","out":"Note","as":"same"},{"node":"extract","label":"b","instructions":"y","out":"Note","as":"same"}]}`), "/root/branches/1", "different top-level keys"},
		// edges: paths a closed producer excludes
		{min, "/root/requires", raw(`["body"]`), "/root/requires/0", `"body" is not in workflow state`},
		{sift, "/root/steps/2/requires", raw(`["selected.notes"]`), "/root/steps/2/requires/0", `has no "notes"`},
		{sift, "/root/steps/1/when/path", "selected.items.title", "/root/steps/1/when/path", "an array is still an array"},
		{gate, "/root/steps/0/state/claim", "{record.text}", "/root/steps/0/state/claim", `has no "text"`},
		{min, "/output/path", "facts.when", "/output/path", `has no "when"`},
		{sift, "/root", raw(`{"node":"map","label":"each","itemsPath":"notes","as":"report","maxConcurrency":2,"body":{"node":"extract","label":"row","instructions":"x","out":"Report","as":"report"}}`), "/output/path", "an array is still an array"},
	} {
		src := variant(t, readExample(t, c.file), c.ptr, c.val)
		if c.at == "" {
			if IsAgentRun(src) {
				t.Errorf("%s without v is still an AgentRun document", c.file)
			}
			continue
		}
		r := InspectAgentRun(src)
		found := false
		for _, is := range r.Issues {
			if is.Path == "/source"+c.at && strings.Contains(is.Message, c.words) {
				found = true
				if is.Line < 1 {
					t.Errorf("%s %s: issue without its line: %+v", c.file, c.ptr, is)
				}
			}
		}
		if !found || r.OK {
			t.Errorf("%s with %s = %v: want an issue at %s saying %q; got %+v", c.file, c.ptr, c.val, c.at, c.words, r.Issues)
		}
	}
	// A document nested deeper than 128 levels is refused before its
	// schemas are compiled (whose check would take minutes).
	deep := `{"v":2,"name":"d","schemas":{"Deep":` + strings.Repeat(`{"not":`, 200) + `{}` + strings.Repeat(`}`, 200) + `},"root":{"node":"code","label":"c","code":"(s) => 1"}}`
	if r := InspectAgentRun(deep); r.OK || r.Issues[0].Path != "/source" || !strings.Contains(r.Issues[0].Message, "nests 203 levels; a document nests at most 128") {
		t.Errorf("a deep document: %+v", r.Issues)
	}
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
	rep := f.call("inspect_workflow", `{"playbook":"finance","name":"evidence-gate"}`).(*WorkflowReport)
	if !rep.OK || rep.Name != "evidence-gate" || len(rep.Nodes) != 5 {
		t.Errorf("inspect_workflow: %+v", rep)
	}
	rep = f.call("inspect_workflow", `{"source":`+jsonString(broken)+`}`).(*WorkflowReport)
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
	} {
		doc := variant(t, src, "/root/steps/1/code", c.code)
		res := f.call("try_code", `{"source":`+jsonString(doc)+`,"label":"gate-probability","state":{"check":{}}}`).(*TryCode)
		if res.Error == nil || !strings.Contains(res.Error.Message, c.words) {
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
	input, _ := os.ReadFile("testdata/agentrun/evidence-gate.input.json")
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
		return f.call("record_event", args+"}").(*Event)
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

// FuzzInspectAgentRun: whatever the text, the inspection answers (no
// panic), the same twice, OK exactly when it found no issue, and every
// issue is at /source and a pointer, with a line inside the document.
func FuzzInspectAgentRun(f *testing.F) {
	for _, name := range []string{"minimal-typed-answer", "sift-node", "route-fragment", "evidence-gate"} {
		f.Add(readExample(f, name))
	}
	f.Add(`{"v":2,"name":"x","schemas":{"A":{"$ref":"A"}},"output":{"schemaId":"A","path":"a"},"root":{"node":"code","label":"c","code":"(s) => ({ a: s })","as":"a"}}`)
	f.Add(`{"v":2,"root":{"node":"parallel","label":"p","branches":[{"node":"map","label":"m","itemsPath":"x.y","as":"a","maxConcurrency":2,"body":{"node":"chain","label":"c","steps":[]}}]}}`)
	f.Fuzz(func(t *testing.T, src string) {
		r := InspectAgentRun(src)
		if r.OK != (len(r.Issues) == 0) {
			t.Fatalf("ok %v with %d issues", r.OK, len(r.Issues))
		}
		lines := strings.Count(src, "\n") + 1
		for _, is := range r.Issues {
			if !strings.HasPrefix(is.Path, "/source") || is.Line > lines || is.Line < 0 || is.Message == "" {
				t.Fatalf("issue %+v (the document has %d lines)", is, lines)
			}
		}
		again, _ := json.Marshal(InspectAgentRun(src))
		first, _ := json.Marshal(r)
		if string(again) != string(first) {
			t.Fatalf("two inspections differ:\n%s\n%s", first, again)
		}
	})
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

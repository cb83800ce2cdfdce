package ledger

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"quire/words/refusal"
)

func source(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile("../testdata/vault/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func saveArgs(typ, name, src string) string {
	b, _ := json.Marshal(map[string]string{"playbook": "finance", "type": typ, "name": name, "source": src})
	return string(b)
}

func TestExamplePagesSaveAndBrokenOnesAreRefused(t *testing.T) {
	f := newFixture(t)
	for _, w := range []string{"morning-social-content", "close-the-month", "fulfill-order"} {
		src := source(t, w+".yaml")
		name := w
		if w == "close-the-month" {
			name = "close-month"
		}
		d := f.call("create_definition", saveArgs("workflow", name, src)).(*Definition)
		if d.Source != src {
			t.Errorf("%s: the source was not stored as given", w)
		}
	}
	// A page key the format does not have, at its line.
	src := source(t, "morning-social-content.yaml")
	lines := strings.Split(src, "\n")
	at := 0
	for i, l := range lines {
		if l == "page:" {
			at = i + 1
		}
	}
	broken := strings.Replace(src, "page:\n", "page:\n  colour: blue\n", 1)
	r := f.refuse("create_definition", saveArgs("workflow", "broken-page", broken), refusal.InvalidInput, "/source", "")
	if r.Issues[0].Line != at+1 {
		t.Fatalf("issue at line %d, want %d: %+v", r.Issues[0].Line, at+1, r.Issues)
	}
	// A module that uses what the sandbox lacks is refused with the compiler's words.
	bad := strings.Replace(src, "const time = event.time?.slice(0, 10);", "const time = event.time?.slice(0, 10); console.log(time);", 1)
	r = f.refuse("create_definition", saveArgs("workflow", "console-page", bad), refusal.InvalidInput, "/source", "console")
	if r.Issues[0].Line == 0 {
		t.Fatalf("no line: %+v", r.Issues)
	}
}

func TestOutputShapeChecksAtSaveAndAtTheEnd(t *testing.T) {
	f := newFixture(t)
	f.refuse("create_definition", saveArgs("workflow", "nope", "document:\n  name: x\noutput:\n  shape: serie\n"),
		refusal.InvalidInput, "/source", "/output/shape: \"serie\" is not a shape; did you mean \"series\"? The shapes are series, categories, table and text.")
	r := f.refuse("create_definition", saveArgs("workflow", "nope", "document:\n  name: x\noutput:\n  shape: table\n  schema:\n    type: object\n"),
		refusal.InvalidInput, "/source", "/output/schema")
	if r.Issues[0].Line != 5 {
		t.Fatalf("line %d: %+v", r.Issues[0].Line, r.Issues)
	}
	d := f.call("create_definition", saveArgs("workflow", "by-channel", "document:\n  name: x\noutput:\n  shape: categories\n")).(*Definition)
	if d.Details == nil || d.Details.Shape != "categories" || !strings.Contains(string(d.OutputSchema), `"$id"`) ||
		!strings.Contains(string(d.OutputSchema), "https://on.auto/shapes/categories") {
		t.Fatalf("definition: %+v %s", d.Details, d.OutputSchema)
	}
	run := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"by-channel","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	if run.OutputShape != "categories" {
		t.Fatalf("output_shape %q", run.OutputShape)
	}
	// An output that does not match its shape ends the run: conflict of the
	// kind unworkable, at most three issues at their pointers in the output.
	ended := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"values":[{"name":"a","value":"x"},{"name":"a","value":1},{"name":"","value":2},{"name":"b","value":1,"low":5}]},"actor":"agent-7"}`, run.RunID)).(*Run)
	if ended.Status != "rejected" || ended.State != "failed" || ended.Reason != "conflict" || ended.Kind != "unworkable" ||
		len(ended.Issues) != 3 || !strings.HasPrefix(ended.Issues[0].Path, "/values/") || ended.OutputShape != "categories" ||
		!strings.HasPrefix(ended.Detail, "The workflow's output does not match the output schema: /values/") || len(ended.Output) != 0 {
		t.Fatalf("ended %+v", ended)
	}
	if got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run.RunID)).(*Run); got.Status != "rejected" || len(got.Issues) != 3 || got.Kind != "unworkable" {
		t.Fatalf("get_run %+v", got)
	}
	f.refuse("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"values":[]},"actor":"agent-7"}`, run.RunID), refusal.Conflict, "", "")
	run = f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"by-channel","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	got := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"unit":"posts","values":[{"name":"LinkedIn","value":3}]},"actor":"agent-7"}`, run.RunID)).(*Run)
	if got.Status != "succeeded" || got.OutputShape != "categories" {
		t.Fatalf("%+v", got)
	}
	// A definition's own output.schema is checked too.
	f.call("create_definition", saveArgs("workflow", "own-schema", "document:\n  name: x\noutput:\n  schema:\n    type: object\n    required: [month]\n"))
	run = f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"own-schema","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	if got := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"revenue":1},"actor":"agent-7"}`, run.RunID)).(*Run); got.Status != "rejected" || got.Kind != "unworkable" || !strings.Contains(got.Detail, "month") || got.OutputShape != "none" {
		t.Fatalf("own schema: %+v", got)
	}
	f.clean()
}

// TestOutputShapesAsTheSpecSays: output-shapes.md's rules for what a run
// and a definition show, for reasoning and prediction functions.
func TestOutputShapesAsTheSpecSays(t *testing.T) {
	f := newFixture(t)
	runOf := func(typ, name, input string) *Run {
		return f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":%q,"name":%q,"input":%s,"member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, typ, name, input, f.project)).(*Run)
	}
	// A reasoning function with output.shape answers JSON: text is refused.
	r := f.refuse("create_definition", saveArgs("reasoning", "judge", "---\nmodel: x\noutput:\n  shape: table\n  format: text\n---\nJudge it.\n"),
		refusal.InvalidInput, "/source", "/output/format: A reasoning function with output.shape answers JSON of the shape")
	if r.Issues[0].Line != 5 {
		t.Fatalf("line %d", r.Issues[0].Line)
	}
	d := f.call("create_definition", saveArgs("reasoning", "judge", "---\nmodel: x\noutput:\n  shape: categories\n  format: json\n---\nJudge it.\n")).(*Definition)
	if d.Details == nil || d.Details.Shape != "categories" || len(d.Warnings) != 2 || d.Warnings[0].Line != 4 ||
		!strings.Contains(d.Warnings[0].Message, "Anthropic models do not receive the shapes' bounds") ||
		!strings.Contains(d.Warnings[1].Message, "not portable to strict structured outputs") {
		t.Fatalf("reasoning: %+v %+v", d.Details, d.Warnings)
	}
	// A reasoning function's mismatch is output_invalid, with up to 20 issues.
	run := runOf("reasoning", "judge", "{}")
	values := make([]string, 25)
	for i := range values {
		values[i] = fmt.Sprintf(`{"name":"n%d","value":"x"}`, i)
	}
	ended := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":{"values":[%s]},"actor":"agent-7"}`, run.RunID, strings.Join(values, ","))).(*Run)
	if ended.Status != "rejected" || ended.Reason != "output_invalid" || ended.Kind != "" || len(ended.Issues) != 20 {
		t.Fatalf("reasoning end: %+v", ended)
	}
	// A prediction function shows the series shape; a question says series,
	// a build none; a definition without a shape none.
	f.call("create_definition", saveArgs("prediction", "weekly", "---\nmodel: x\n---\nPredict.\n"))
	f.call("create_definition", saveArgs("workflow", "plain", "document:\n  name: x\n"))
	for _, op := range []string{"get_definition", "update_definition"} {
		args := `{"playbook":"finance","type":"prediction","name":"weekly"}`
		if op == "update_definition" {
			args = saveArgs("prediction", "weekly", "---\nmodel: y\n---\nPredict.\n")
		}
		d := f.call(op, args).(*Definition)
		if d.Details == nil || d.Details.Shape != "series" || !strings.Contains(string(d.OutputSchema), "https://on.auto/shapes/series") {
			t.Fatalf("%s: %+v %s", op, d.Details, d.OutputSchema)
		}
	}
	for _, d := range f.call("list_definitions", `{"playbook":"finance"}`).([]*Definition) {
		if d.Type == "prediction" && (d.Details == nil || d.Details.Shape != "series") || d.Name == "plain" && d.Details != nil {
			t.Fatalf("list: %s %+v", d.Name, d.Details)
		}
	}
	for _, c := range []struct{ typ, name, input, want string }{
		{"prediction", "weekly", `{"series":"signups"}`, "series"},
		{"prediction", "weekly", `{"build":true}`, "none"},
		{"workflow", "plain", "{}", "none"},
	} {
		run := runOf(c.typ, c.name, c.input)
		got := f.call("get_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, run.RunID)).(*Run)
		if run.OutputShape != c.want || got.OutputShape != c.want {
			t.Fatalf("%s %s: run_definition %q, get_run %q", c.name, c.input, run.OutputShape, got.OutputShape)
		}
	}
	for _, r := range f.call("list_runs", `{"playbook":"finance"}`).(*RunPage).Runs {
		if r.OutputShape == "" {
			t.Fatalf("list_runs: no output_shape %+v", r)
		}
	}
	// A question's answer is checked against the series shape, then for
	// order (low <= value <= high); a build's answer is not.
	for _, c := range []struct{ input, output, status, reason, kind, at string }{
		{`{"series":"signups"}`, `{"period":"day","lines":[{"name":"Signups","points":[{"at":"2026-11-02","value":10,"low":8,"high":12}]}]}`, "succeeded", "", "", ""},
		{`{"series":"signups"}`, `{"period":"day","lines":[{"name":"Signups","points":[{"at":"2026-11-02","value":10,"low":8,"high":12},{"at":"2026-11-03","value":10,"low":11,"high":12}]}]}`, "rejected", "unavailable", "not_in_order", "/lines/0/points/1"},
		{`{"series":"signups"}`, `{"period":"day","lines":[{"name":"Signups","points":[{"at":"2026-11-02","value":10,"high":9}]}]}`, "rejected", "unavailable", "not_in_order", "/lines/0/points/0"},
		{`{"series":"signups"}`, `{"winner":"a"}`, "rejected", "conflict", "unworkable", ""},
		{`{"build":true}`, `{"version":1,"winner":"a","candidates":[]}`, "succeeded", "", "", ""},
	} {
		run := runOf("prediction", "weekly", c.input)
		ended := f.call("end_run", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"status":"succeeded","output":%s,"actor":"agent-7"}`, run.RunID, c.output)).(*Run)
		if ended.Status != c.status || ended.Reason != c.reason || ended.Kind != c.kind {
			t.Fatalf("%s answering %s: %s %s %s %+v", c.input, c.output, ended.Status, ended.Reason, ended.Kind, ended.Issues)
		}
		if c.at != "" && (len(ended.Issues) != 1 || ended.Issues[0].Path != c.at) {
			t.Fatalf("%s: issues %+v, want one at %s", c.output, ended.Issues, c.at)
		}
	}
	f.clean()
}

func TestPlaybookPage(t *testing.T) {
	f := newFixture(t)
	pg := "data:\n  language: typescript\n  source:\n    events:\n      - type: run_succeeded\n  views:\n    runs_per_day: series\n  module: |\n    export function fold(view: View, event: Event): View {\n      return view;\n    }\nruns: |\n  {{ views.runs_per_day | json }}\n"
	args, _ := json.Marshal(map[string]any{"playbook": "finance", "page": pg})
	p := f.call("update_playbook", string(args)).(*Playbook)
	if p.Page == nil || p.Page.Source != pg {
		t.Fatalf("page %+v", p.Page)
	}
	args, _ = json.Marshal(map[string]any{"playbook": "finance", "page": pg + "result: |\n  x\n"})
	r := f.refuse("update_playbook", string(args), refusal.InvalidInput, "/page", "")
	if r.Issues[0].Line != 14 {
		t.Fatalf("line %d: %+v", r.Issues[0].Line, r.Issues)
	}
	p = f.call("update_playbook", `{"playbook":"finance","page":null}`).(*Playbook)
	if p.Page != nil {
		t.Fatalf("page not removed: %+v", p.Page)
	}
	ev := f.call("list_playbook_events", `{"playbook":"finance"}`).(*EventPage)
	n := 0
	for _, e := range ev.Events {
		if e.Type == "playbook_page_saved" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d playbook_page_saved events", n)
	}
	f.clean()
}

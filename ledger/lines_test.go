package ledger

import (
	"encoding/json"
	"fmt"
	"path"
	"testing"
)

// The CloudEvents form carries the line's own step and detail in data: a
// caller's data.step or data.detail never stands in for them, in
// record_event's answer, get_event, list_playbook_events (both ways) and
// what a fold sees; every other key of data stays the caller's.
func TestCloudFormKeepsTheEventsOwnFields(t *testing.T) {
	f := newFixture(t)
	src := `document:
  name: steps
page:
  data:
    language: typescript
    source:
      events:
        - type: milestone_fired
          subject: workflow/steps
    views:
      seen: categories
    module: |
      export function fold(view: View, event: Event): View {
        const data = event.data as { [k: string]: Json };
        const name = String(data['step']) + '|' + String(data['detail']) + '|' + String(data['note']);
        return { seen: { values: [...(view.seen?.values ?? []), { name: name, value: 1 }] } };
      }
  runs: |
    {{ views.seen.values[0].name }}
`
	f.call("create_definition", saveArgs("workflow", "steps", src))
	r := f.call("run_definition", fmt.Sprintf(`{"playbook":"finance","type":"workflow","name":"steps","member_of":[%q],"executor":"agent-7","authorized_by":"ana"}`, f.project)).(*Run)
	const want = `{"note":"kept","step":"do/1/real","detail":"the real detail","extra":[1,2]}`
	rec := f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"milestone_fired","step":"do/1/real","detail":"the real detail","actor":"agent-7",
		"data":{"note":"kept","step":"do/9/fake","detail":"a fake detail","extra":[1,2]}}`, r.RunID)).(*Event)
	got := map[string]string{"record_event": string(rec.Data)}
	ev := f.call("get_event", fmt.Sprintf(`{"playbook":"finance","event_id":%q}`, rec.ID)).(*Event)
	got["get_event"] = string(ev.Data)
	for _, args := range []string{`{"playbook":"finance"}`, fmt.Sprintf(`{"playbook":"finance","run_id":%q}`, r.RunID)} {
		page := f.call("list_playbook_events", args).(*EventPage)
		for _, e := range page.Events {
			if e.ID == rec.ID {
				got["list_playbook_events "+args] = string(e.Data)
			}
		}
	}
	if len(got) != 4 {
		t.Fatalf("the event is not in every read: %v", got)
	}
	for where, data := range got {
		if data != want {
			t.Errorf("%s: data %s, want %s", where, data, want)
		}
	}
	// A caller's step or detail stays where the line has none.
	rec = f.call("record_event", fmt.Sprintf(`{"playbook":"finance","run_id":%q,"event":"call_record","actor":"agent-7","data":{"step":"theirs","detail":"theirs too"}}`, r.RunID)).(*Event)
	if string(rec.Data) != `{"step":"theirs","detail":"theirs too"}` {
		t.Errorf("a line without step or detail: data %s", rec.Data)
	}
	d := f.call("get_definition", `{"playbook":"finance","type":"workflow","name":"steps"}`).(*Definition)
	if d.Page.Runs != "do/1/real|the real detail|kept" {
		b, _ := json.Marshal(d.Page)
		t.Fatalf("the fold saw %q: %s", d.Page.Runs, b)
	}
}

// A write to a run that ended is its own boundary: no boundary of the run
// follows it but the archive, so it is committed before the call returns.
func TestWritesToAnEndedRunAreCommitted(t *testing.T) {
	f := newFixture(t)
	for _, end := range []string{`"status":"succeeded"`, `"status":"rejected","reason":"no"`} {
		r := f.start()
		run := fmt.Sprintf(`"playbook":"finance","run_id":%q`, r.RunID)
		f.call("append_thread", `{`+run+`,"text":"before the end","actor":"agent-7"}`)
		f.call("end_run", `{`+run+`,`+end+`,"actor":"agent-7"}`)
		f.clean()
		f.call("append_thread", `{`+run+`,"text":"a note after the end","actor":"agent-7"}`)
		f.clean()
		f.call("put_artifact", `{`+run+`,"name":"late/report.txt","content":"written after the end"}`)
		f.clean()
		f.call("put_artifact", `{`+run+`,"name":"late/report.txt","content":"written again","actor":"ana"}`)
		f.clean()
		if log := f.git("log", "-1", "--format=%an %s", "--", r.Path); log != fmt.Sprintf("ana finance: run %s of workflow/close-the-month: artifact artifacts/late/report.txt written\n", path.Base(r.Path)) {
			t.Errorf("last commit of the run: %q", log)
		}
	}
}

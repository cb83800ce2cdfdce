package address

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func tools(cs []Call) []string {
	var out []string
	for _, c := range cs {
		if c.Person {
			out = append(out, "person")
		} else {
			out = append(out, c.Tool)
		}
	}
	return out
}

// TestExplainStepComment is the first worked example of "From an address to
// a call": a comment on the step /do/1/review of version 4 of close-the-week.
func TestExplainStepComment(t *testing.T) {
	e := mustParse(t, step1).Explain()
	if e.Kind != KindStep || e.Segments.Step != "do/1/review" || e.Segments.Version != 4 {
		t.Errorf("kind and segments: %+v", e)
	}
	wf := map[string]string{"playbook": "finance", "type": "workflow", "name": "close-the-week"}
	if r := e.Read[0]; r.Tool != "get_definition" || !reflect.DeepEqual(r.Args, wf) || !strings.Contains(r.Note, "at /do/1/review in its source") {
		t.Errorf("read: %+v", r)
	}
	if a := e.Act[0]; a.Tool != "update_definition" || !reflect.DeepEqual(a.Args, wf) {
		t.Errorf("act of the workflow: %+v", a)
	}
	if a := e.Act[1]; a.Tool != "update_definition" || !strings.Contains(a.Note, "function the step calls") {
		t.Errorf("act of the function: %+v", a)
	}
	if e.Resolve == nil || e.Resolve.Tool != "resolve_comment" || e.Resolve.Args["playbook"] != "finance" {
		t.Errorf("resolve: %+v", e.Resolve)
	}
	got, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"address":"finance/definitions/workflow/close-the-week/4/steps/do/1/review","kind":"step","thing":"a step of a workflow",` +
		`"segments":{"playbook":"finance","type":"workflow","name":"close-the-week","version":4,"step":"do/1/review"},` +
		`"read":[{"tool":"get_definition","args":{"name":"close-the-week","playbook":"finance","type":"workflow"},"note":"the step is at /do/1/review in its source; a step that calls a function names it there, to read with get_definition and its type and name"}],` +
		`"act":[{"tool":"update_definition","args":{"name":"close-the-week","playbook":"finance","type":"workflow"},"note":"of the workflow"},` +
		`{"tool":"update_definition","args":{"playbook":"finance"},"note":"or of the function the step calls, by the type and name its source names"}],` +
		`"resolve":{"tool":"resolve_comment","args":{"playbook":"finance"},"note":"with the comment's id and how acted"},` +
		`"note":"get_definition reads the current version; the address names version 4, so if the definition changed since, read the comment against the current document and act only where it still applies."}`
	if string(got) != want {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

// TestExplainConnectionComment is the second worked example: a comment on a
// connection that says the CRM stopped answering.
func TestExplainConnectionComment(t *testing.T) {
	e := mustParse(t, "org/connections/"+connID).Explain()
	if e.Kind != KindConnection || e.Segments.Connection != connID {
		t.Errorf("kind and segments: %+v", e)
	}
	if r := e.Read[0]; r.Tool != "list_connections" || r.Args != nil || !strings.Contains(r.Note, connID) {
		t.Errorf("read: %+v", r)
	}
	if a := e.Act[0]; a.Tool != "reconnect_connection" || !reflect.DeepEqual(a.Args, map[string]string{"connection_id": connID}) {
		t.Errorf("act: %+v", a)
	}
	if a := e.Act[1]; a.Tool != "remove_connection" || !strings.Contains(a.Note, "once the person says to") {
		t.Errorf("act: %+v", a)
	}
	if r := e.Resolve; r == nil || r.Tool != "resolve_comment" || r.Args != nil || !strings.Contains(r.Note, "no playbook") {
		t.Errorf("resolve: %+v", r)
	}
}

// TestExplainTools checks each row of "From an address to a call", by the
// tools named.
func TestExplainTools(t *testing.T) {
	for _, c := range []struct {
		s         string
		read, act []string
	}{
		{"playbooks/finance", []string{"get_playbook", "list_definitions"}, []string{"update_playbook", "update_definition"}},
		{defV4, []string{"get_definition"}, []string{"update_definition"}},
		{step1, []string{"get_definition"}, []string{"update_definition", "update_definition"}},
		{run, []string{"get_run", "list_playbook_events"}, []string{"update_definition", "run_definition", "cancel_run"}},
		{run + "/events/" + eventID, []string{"get_event"}, []string{"update_definition", "run_definition", "cancel_run"}},
		{run + "/result/2", []string{"get_run"}, []string{"update_definition"}},
		{"finance/" + reqID, []string{"list_interactions", "get_run"}, []string{"answer_interaction"}},
		{run + "/parts/row", []string{"get_run", "list_playbook_events"}, []string{"update_definition", "run_definition", "cancel_run"}},
		{"playbooks/finance/parts/settings", []string{"get_playbook", "list_definitions", "search"}, []string{"update_playbook", "update_definition"}},
		{"org", []string{"list_playbooks", "list_connections"}, []string{"person"}},
		{"org/connections/" + connID, []string{"list_connections", "list_connection_tools"}, []string{"reconnect_connection", "remove_connection"}},
		{"org/members/user_2kLm7Qx", []string{"list_members"}, []string{"person"}},
		{"org/settings/connections", []string{"list_connections", "list_connection_tools"}, []string{"reconnect_connection", "remove_connection"}},
		{"org/settings/tool-servers", []string{"search"}, []string{"person"}},
		{"org/settings/runtime", []string{"person"}, []string{"activate_license", "person"}},
		{"org/settings/runtime/parts/license-key", []string{"person"}, []string{"activate_license", "person"}},
		{"org/settings/members", []string{"list_members"}, []string{"invite_member", "person"}},
		{"finance/workflow/close-the-week", []string{"get_definition"}, []string{"update_definition"}},
		{"playbooks/finance/1762000000000", []string{"get_playbook", "list_playbook_events"}, []string{"update_playbook"}},
		{"finance/comments/" + cmtID, []string{"list_comments"}, []string{"resolve_comment"}},
		{"org/comments/" + cmtID, []string{"list_comments"}, []string{"resolve_comment"}},
		{defAny, []string{"get_definition"}, []string{"update_definition"}},
	} {
		e := mustParse(t, c.s).Explain()
		if got := tools(e.Read); !reflect.DeepEqual(got, c.read) {
			t.Errorf("%s: read %v, want %v", c.s, got, c.read)
		}
		if got := tools(e.Act); !reflect.DeepEqual(got, c.act) {
			t.Errorf("%s: act %v, want %v", c.s, got, c.act)
		}
	}
	// The pages with no tool: the agent reports to the person.
	for _, p := range []string{"organisation", "email-domains", "billing", "plans", "credits", "credit-history", "licenses", "mcp", "not-listed"} {
		e := mustParse(t, "org/settings/"+p).Explain()
		if !reflect.DeepEqual(tools(e.Read), []string{"person"}) || !reflect.DeepEqual(tools(e.Act), []string{"person"}) {
			t.Errorf("org/settings/%s: read %v act %v, want the person alone", p, tools(e.Read), tools(e.Act))
		}
	}
}

func TestExplainDetails(t *testing.T) {
	e := mustParse(t, run+"/parts/result-2-3").Explain()
	if e.Kind != KindPart || e.Of != KindRun || e.Segments.Part != "result-2-3" || !strings.Contains(e.Note, "3rd cell of the 2nd block") {
		t.Errorf("a cell of a run's result: %+v", e)
	}
	e = mustParse(t, run+"/result/12").Explain()
	if !strings.Contains(e.Read[0].Note, "the 12th top-level block of its page.result") {
		t.Errorf("a block: %+v", e.Read[0])
	}
	e = mustParse(t, "playbooks/finance/0").Explain()
	if e.Segments.At == nil || *e.Segments.At != 0 || !strings.Contains(e.Note, "1970-01-01T00:00:00.000Z") || e.Resolve != nil {
		t.Errorf("a playbook change: %+v", e)
	}
	e = mustParse(t, "org/comments/"+cmtID).Explain()
	if e.Act[0].Args["comment_id"] != cmtID || e.Act[0].Args["playbook"] != "" || !strings.Contains(e.Note, "playbook whose id is org") {
		t.Errorf("an organization's comment: %+v", e)
	}
	// Every example explains, names its kind and has calls.
	for _, ex := range examples {
		e := ex.want.Explain()
		if e.Address != ex.s || e.Kind != ex.want.Kind || e.Of != ex.want.Of || len(e.Read) == 0 || len(e.Act) == 0 {
			t.Errorf("Explain(%s): %+v", ex.s, e)
		}
		if (e.Resolve != nil) != CommentTakes(ex.want) {
			t.Errorf("Explain(%s): resolve %+v", ex.s, e.Resolve)
		}
	}
}

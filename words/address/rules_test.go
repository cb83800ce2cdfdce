package address

import "testing"

func mustParse(t *testing.T, s string) Address {
	t.Helper()
	a, err := Parse(s)
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return a
}

const (
	run2   = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3f"
	defV4  = "finance/definitions/workflow/close-the-week/4"
	defAny = "finance/definitions/workflow/close-the-week"
	step1  = defV4 + "/steps/do/1/review"
)

var run = "finance/runs/" + runID

// TestContains takes the under cases of "What the runtime checks" one by one.
func TestContains(t *testing.T) {
	for _, c := range []struct {
		why, under, a string
		want          bool
	}{
		// A run holds itself, its events, the blocks of its result and its parts.
		{"a run holds itself", run, run, true},
		{"a run holds its events", run, run + "/events/" + eventID, true},
		{"a run holds its events by UUID alone", run, run + "/events/" + runID, true},
		{"a run holds the blocks of its result", run, run + "/result/2", true},
		{"a run holds its parts", run, run + "/parts/output", true},
		{"a run holds a cell of its result", run, run + "/parts/result-2-3", true},
		{"a run holds not another run's event", run, "finance/runs/" + run2 + "/events/" + eventID, false},
		{"a run holds not the same run id of another playbook", run, "sales/runs/" + runID + "/result/1", false},
		{"a run holds not its request", run, "finance/" + runID, false},
		{"a run holds not another run", run, "finance/runs/" + run2, false},
		// A definition at a version holds its steps and parts.
		{"a definition holds itself", defV4, defV4, true},
		{"a definition holds its steps", defV4, step1, true},
		{"a definition holds its nested steps", defV4, defV4 + "/steps/do/1/review/do/2", true},
		{"a definition holds its parts", defV4, defV4 + "/parts/source", true},
		{"a definition holds not another version", defV4, "finance/definitions/workflow/close-the-week/3", false},
		{"a definition holds not another version's step", defV4, "finance/definitions/workflow/close-the-week/3/steps/do/1/review", false},
		{"a definition holds not another version's part", defV4, "finance/definitions/workflow/close-the-week/5/parts/source", false},
		{"a definition holds not its broken form", defV4, "finance/workflow/close-the-week", false},
		// A definition without its version holds every version, their steps and parts.
		{"a definition without version holds itself", defAny, defAny, true},
		{"a definition without version holds a version", defAny, defV4, true},
		{"a definition without version holds version 1", defAny, "finance/definitions/workflow/close-the-week/1", true},
		{"a definition without version holds a step", defAny, step1, true},
		{"a definition without version holds another version's step", defAny, "finance/definitions/workflow/close-the-week/9/steps/x", true},
		{"a definition without version holds a part", defAny, defV4 + "/parts/runs-1-2", true},
		{"a definition without version holds not another name", defAny, "finance/definitions/workflow/close-the-month/4", false},
		{"a definition without version holds not another type", "finance/definitions/reasoning/close-the-week", defV4, false},
		{"a definition without version holds not another playbook's", "sales/definitions/workflow/close-the-week", defV4, false},
		// The playbook holds its parts alone.
		{"the playbook holds itself", "playbooks/finance", "playbooks/finance", true},
		{"the playbook holds its parts", "playbooks/finance", "playbooks/finance/parts/ledger", true},
		{"the playbook holds not its definitions", "playbooks/finance", defV4, false},
		{"the playbook holds not its runs", "playbooks/finance", run, false},
		{"the playbook holds not its requests", "playbooks/finance", "finance/" + reqID, false},
		{"the playbook holds not another's parts", "playbooks/finance", "playbooks/sales/parts/ledger", false},
		// org holds its parts alone.
		{"org holds itself", "org", "org", true},
		{"org holds its parts", "org", "org/parts/name", true},
		{"org holds not its connections", "org", "org/connections/" + connID, false},
		{"org holds not its members", "org", "org/members/user_2kLm7Qx", false},
		{"org holds not its pages", "org", "org/settings/billing", false},
		{"org holds not a page's part", "org", "org/settings/runtime/parts/license", false},
		{"org holds not playbook org", "org", "playbooks/org", false},
		{"org holds not playbook org's definitions", "org", "org/definitions/workflow/close-the-week/4", false},
		{"a connection holds its parts", "org/connections/" + connID, "org/connections/" + connID + "/parts/tools", true},
		{"a member holds its parts", "org/members/user_2kLm7Qx", "org/members/user_2kLm7Qx/parts/role", true},
		{"a page holds its parts", "org/settings/runtime", "org/settings/runtime/parts/license", true},
		{"a page holds not another page's parts", "org/settings/runtime", "org/settings/billing/parts/license", false},
		// A step, an event, a block and a request hold only themselves.
		{"a step holds itself", step1, step1, true},
		{"a nested step is not under another step", defV4 + "/steps/do/1", step1, false},
		{"a step holds not what its /parts/ would be", step1, step1 + "/parts/source", false},
		{"a step holds not its definition", step1, defV4, false},
		{"an event holds itself", run + "/events/" + eventID, run + "/events/" + eventID, true},
		{"an event holds itself, in either case", run + "/events/" + runID, run + "/events/" + "019A4012-7C3E-7D10-9B2A-4E6F8A1C2D3E", true},
		{"an event holds not its run", run + "/events/" + eventID, run, false},
		{"an event holds not another event of its step", run + "/events/" + runID, run + "/events/" + runID + "_1", false},
		{"a block holds itself", run + "/result/2", run + "/result/2", true},
		{"a block holds not its cells", run + "/result/2", run + "/parts/result-2-1", false},
		{"a block holds not another block", run + "/result/2", run + "/result/3", false},
		{"a request holds itself", "finance/" + reqID, "finance/" + reqID, true},
		{"a request holds not its run", "finance/" + runID, run, false},
		// A part holds itself alone.
		{"a part holds itself", run + "/parts/output", run + "/parts/output", true},
		{"a part holds not its thing", run + "/parts/output", run, false},
		{"a part holds not another part", run + "/parts/output", run + "/parts/events", false},
		// The forms no comment is made on hold themselves.
		{"a comment holds itself", "finance/comments/" + cmtID, "finance/comments/" + cmtID, true},
		{"a broken definition holds not a version", "finance/workflow/close-the-week", defV4, false},
	} {
		if got := Contains(mustParse(t, c.under), mustParse(t, c.a)); got != c.want {
			t.Errorf("%s: Contains(%s, %s) = %v, want %v", c.why, c.under, c.a, got, c.want)
		}
	}
	if Contains(Address{}, Address{}) {
		t.Errorf("Contains of zero addresses = true")
	}
}

func TestForms(t *testing.T) {
	for _, c := range []struct {
		s                      string
		comment, org, activity bool
	}{
		{"playbooks/finance", true, false, true},
		{"playbooks/finance/parts/ledger", true, false, true},
		{defV4, true, false, true},
		{step1, true, false, true},
		{run, true, false, true},
		{run + "/events/" + eventID, true, false, true},
		{run + "/result/2", true, false, true},
		{"finance/" + reqID, true, false, true},
		{"org", true, true, true},
		{"org/parts/name", true, true, true},
		{"org/connections/" + connID, true, true, true},
		{"org/members/user_2kLm7Qx/parts/role", true, true, true},
		{"org/settings/billing", true, true, true},
		{"finance/workflow/close-the-week", false, false, true},
		{"playbooks/finance/1762000000000", false, false, true},
		{"finance/comments/" + cmtID, false, false, true},
		{"org/comments/" + cmtID, false, false, true},
		{defAny, false, false, false},
		{"org/definitions/workflow/close-the-week/4", true, false, true},
	} {
		a := mustParse(t, c.s)
		if got := CommentTakes(a); got != c.comment {
			t.Errorf("CommentTakes(%s) = %v", c.s, got)
		}
		if got := IsOrgThing(a); got != c.org {
			t.Errorf("IsOrgThing(%s) = %v", c.s, got)
		}
		if got := ActivityForm(a); got != c.activity {
			t.Errorf("ActivityForm(%s) = %v", c.s, got)
		}
	}
}

func TestForComment(t *testing.T) {
	for _, s := range []string{"playbooks/finance", defV4, step1, run + "/parts/result-1-2", "finance/" + reqID} {
		if _, err := ForComment(s, "finance"); err != nil {
			t.Errorf("ForComment(%s, finance): %v", s, err)
		}
	}
	for _, s := range []string{"org", "org/connections/" + connID, "org/settings/runtime/parts/license"} {
		if _, err := ForComment(s, ""); err != nil {
			t.Errorf("ForComment(%s, org): %v", s, err)
		}
	}
	if _, err := ForComment("org/definitions/workflow/close-the-week/4", "org"); err != nil {
		t.Errorf("ForComment of playbook org on its definition: %v", err)
	}
	for _, c := range []struct{ s, playbook, msg string }{
		{"finance/runs/x", "finance", `<run_id> "x" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
		{defAny, "finance", `"finance/definitions/workflow/close-the-week" is a definition without its version, of a form no comment is made on`},
		{"finance/comments/" + cmtID, "finance", `"finance/comments/` + cmtID + `" is a comment's own address (a reply is a new comment on the same address), of a form no comment is made on`},
		{"finance/workflow/close-the-week", "finance", `"finance/workflow/close-the-week" is a broken definition, a form only the activity names, of a form no comment is made on`},
		{"playbooks/finance/1762000000000", "finance", `"playbooks/finance/1762000000000" is a playbook created or updated, a form only the activity names, of a form no comment is made on`},
		{defV4, "sales", `"finance/definitions/workflow/close-the-week/4" names playbook "finance", not "sales": a playbook's comments are on its own things`},
		{"org/settings/billing", "finance", `"org/settings/billing" is the organization's: a comment on it is the organization's own, made and listed through the organization's comments`},
		{"org/settings/billing", "org", `"org/settings/billing" is the organization's: a comment on it is the organization's own, made and listed through the organization's comments`},
		{defV4, "", `"finance/definitions/workflow/close-the-week/4" is of playbook "finance": the organization's comments are on org, org/connections/<connection>, org/members/<member>, org/settings/<page> and their parts`},
	} {
		_, err := ForComment(c.s, c.playbook)
		if err == nil {
			t.Errorf("ForComment(%s, %q) took it", c.s, c.playbook)
			continue
		}
		checkRefusal(t, "ForComment("+c.s+")", err, c.msg)
	}
}

func TestForUnder(t *testing.T) {
	if a, err := ForUnder(defAny, "finance"); err != nil || a.Kind != KindDefinitionAny {
		t.Errorf("ForUnder(%s): %+v, %v", defAny, a, err)
	}
	if _, err := ForUnder("org", ""); err != nil {
		t.Errorf("ForUnder(org): %v", err)
	}
	_, err := ForUnder(defAny, "")
	checkRefusal(t, "ForUnder of the organization", err, `"finance/definitions/workflow/close-the-week" is a definition without its version, which under does not take`)
	_, err = ForUnder("finance/comments/"+cmtID, "finance")
	checkRefusal(t, "ForUnder of a comment", err, `"finance/comments/`+cmtID+`" is a comment's own address (a reply is a new comment on the same address), which under does not take`)
	_, err = ForUnder("sales/definitions/workflow/close-the-week", "finance")
	checkRefusal(t, "ForUnder of another playbook", err, `"sales/definitions/workflow/close-the-week" names playbook "sales", not "finance": a playbook's comments are on its own things`)
}

func TestForActivity(t *testing.T) {
	for _, ex := range examples {
		_, err := ForActivity(ex.s)
		if (err == nil) != (ex.want.Kind != KindDefinitionAny) {
			t.Errorf("ForActivity(%s) = %v", ex.s, err)
		}
	}
	_, err := ForActivity(defAny)
	checkRefusal(t, "ForActivity", err, `"finance/definitions/workflow/close-the-week" is a definition without its version, of a form the activity does not name`)
	_, err = ForActivity("finance")
	checkRefusal(t, "ForActivity", err, `the address ends after segment 1 "finance": no address of a playbook is one segment; a playbook is playbooks/<playbook>`)
}

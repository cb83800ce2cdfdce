package address

import "strings"

// The ids of the examples of addresses.md.
const (
	runID   = "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e"
	eventID = "019a4012-7c41-7e22-8a10-1b2c3d4e5f60_2"
	reqID   = "019a400e-1f2b-7a44-8c5d-6b7e9f0a1b2c"
	connID  = "019a3f10-2b4c-7d5e-8f60-718293a4b5c6"
	cmtID   = "019a4100-0000-7000-8000-000000000001"
	// alphaID is a UUID that is also a valid playbook id.
	alphaID = "abcdef01-1f2b-7a44-8c5d-6b7e9f0a1b2c"
)

// example is one address that parses, and what it parses to.
type example struct {
	s    string
	want Address
}

var (
	closeTheWeek = Address{Kind: KindDefinition, Playbook: "finance", Type: "workflow", Name: "close-the-week", Version: 4}
	categorize   = Address{Kind: KindDefinition, Playbook: "finance", Type: "reasoning", Name: "categorize-invoice", Version: 7}
	financeRun   = Address{Kind: KindRun, Playbook: "finance", RunID: runID}
)

func partOf(a Address, part string) Address {
	a.Of, a.Kind, a.Part = a.Kind, KindPart, part
	return a
}

func step(a Address, s string) Address {
	a.Kind, a.Step = KindStep, s
	return a
}

// examples holds every example address of addresses.md, the parts Studio
// names and the pages of Settings it lists, then the cases its notes decide.
var examples = func() []example {
	ex := []example{
		// The forms, a comment can be made on any of these things of a playbook.
		{"playbooks/finance", Address{Kind: KindPlaybook, Playbook: "finance"}},
		{"finance/definitions/reasoning/categorize-invoice/7", categorize},
		{"finance/definitions/workflow/close-the-week/4/steps/do/1/review", step(closeTheWeek, "do/1/review")},
		{"finance/runs/" + runID, financeRun},
		{"finance/runs/" + runID + "/events/" + eventID, Address{Kind: KindEvent, Playbook: "finance", RunID: runID, EventID: eventID}},
		{"finance/runs/" + runID + "/result/2", Address{Kind: KindBlock, Playbook: "finance", RunID: runID, Block: 2}},
		{"finance/" + reqID, Address{Kind: KindRequest, Playbook: "finance", RunID: reqID}},
		{"playbooks/finance/parts/ledger", partOf(Address{Kind: KindPlaybook, Playbook: "finance"}, "ledger")},
		{"finance/definitions/reasoning/categorize-invoice/7/parts/source", partOf(categorize, "source")},
		// Of the organization.
		{"org", Address{Kind: KindOrg}},
		{"org/connections/" + connID, Address{Kind: KindConnection, Connection: connID}},
		{"org/members/user_2kLm7Qx", Address{Kind: KindMember, Member: "user_2kLm7Qx"}},
		{"org/settings/billing", Address{Kind: KindSettings, Page: "billing"}},
		{"org/settings/runtime/parts/license", partOf(Address{Kind: KindSettings, Page: "runtime"}, "license")},
		{"org/settings/runtime/parts/runtime-address", partOf(Address{Kind: KindSettings, Page: "runtime"}, "runtime-address")},
		{"org/settings/runtime/parts/runtime-status", partOf(Address{Kind: KindSettings, Page: "runtime"}, "runtime-status")},
		{"org/settings/runtime/parts/license-key", partOf(Address{Kind: KindSettings, Page: "runtime"}, "license-key")},
		{"org/settings/credit-history/parts/credits-available", partOf(Address{Kind: KindSettings, Page: "credit-history"}, "credits-available")},
		{"org/parts/name", partOf(Address{Kind: KindOrg}, "name")},
		{"org/connections/" + connID + "/parts/tools", partOf(Address{Kind: KindConnection, Connection: connID}, "tools")},
		{"org/members/user_2kLm7Qx/parts/role", partOf(Address{Kind: KindMember, Member: "user_2kLm7Qx"}, "role")},
		// The four forms only the activity names.
		{"finance/workflow/close-the-week", Address{Kind: KindBrokenDefinition, Playbook: "finance", Type: "workflow", Name: "close-the-week"}},
		{"playbooks/finance/1762000000000", Address{Kind: KindPlaybookChange, Playbook: "finance", At: 1762000000000}},
		{"finance/comments/" + cmtID, Address{Kind: KindComment, Playbook: "finance", CommentID: cmtID}},
		{"org/comments/" + cmtID, Address{Kind: KindComment, CommentID: cmtID}},
		// The form list_comments' under also takes.
		{"finance/definitions/workflow/close-the-week", Address{Kind: KindDefinitionAny, Playbook: "finance", Type: "workflow", Name: "close-the-week"}},
		// A playbook's page of Settings is its part.
		{"playbooks/finance/parts/settings", partOf(Address{Kind: KindPlaybook, Playbook: "finance"}, "settings")},
		// A cell of a run's result is a part of the run.
		{"finance/runs/" + runID + "/parts/result-2-3", partOf(financeRun, "result-2-3")},
		// A step runs to the end: /parts/ after it is the step's.
		{"finance/definitions/workflow/close-the-week/4/steps/do/1/review/parts/source", step(closeTheWeek, "do/1/review/parts/source")},
		// Two segments whose second is a UUID: a request, even in playbooks or org.
		{"playbooks/" + reqID, Address{Kind: KindRequest, Playbook: "playbooks", RunID: reqID}},
		{"playbooks/" + alphaID, Address{Kind: KindRequest, Playbook: "playbooks", RunID: alphaID}},
		{"org/" + reqID, Address{Kind: KindRequest, Playbook: "org", RunID: reqID}},
		{"finance/" + alphaID, Address{Kind: KindRequest, Playbook: "finance", RunID: alphaID}},
		// A playbook whose id is org keeps every address of its own.
		{"playbooks/org", Address{Kind: KindPlaybook, Playbook: "org"}},
		{"playbooks/org/parts/card", partOf(Address{Kind: KindPlaybook, Playbook: "org"}, "card")},
		{"org/definitions/workflow/close-the-week/4", Address{Kind: KindDefinition, Playbook: "org", Type: "workflow", Name: "close-the-week", Version: 4}},
		{"org/definitions/workflow/close-the-week", Address{Kind: KindDefinitionAny, Playbook: "org", Type: "workflow", Name: "close-the-week"}},
		{"org/runs/" + runID, Address{Kind: KindRun, Playbook: "org", RunID: runID}},
		{"org/runs/" + runID + "/result/1", Address{Kind: KindBlock, Playbook: "org", RunID: runID, Block: 1}},
		{"org/workflow/close-the-week", Address{Kind: KindBrokenDefinition, Playbook: "org", Type: "workflow", Name: "close-the-week"}},
		// A playbook whose id is playbooks, or a word of the grammar.
		{"playbooks/playbooks", Address{Kind: KindPlaybook, Playbook: "playbooks"}},
		{"runs/runs/" + runID, Address{Kind: KindRun, Playbook: "runs", RunID: runID}},
		{"definitions/definitions/workflow/steps/1/steps/parts", step(Address{Playbook: "definitions", Type: "workflow", Name: "steps", Version: 1}, "parts")},
		{"playbooks/parts/parts/parts", partOf(Address{Kind: KindPlaybook, Playbook: "parts"}, "parts")},
		// Bounds.
		{"abc/definitions/lookup/" + strings.Repeat("n", 48) + "/2147483646", Address{Kind: KindDefinition, Playbook: "abc", Type: "lookup", Name: strings.Repeat("n", 48), Version: 2147483646}},
		{"finance/definitions/workflow/close-the-week/1/steps/" + strings.Repeat("s", 255), step(Address{Playbook: "finance", Type: "workflow", Name: "close-the-week", Version: 1}, strings.Repeat("s", 255))},
		{"finance/definitions/workflow/close-the-week/1/steps/" + strings.Repeat("é", 127) + "x", step(Address{Playbook: "finance", Type: "workflow", Name: "close-the-week", Version: 1}, strings.Repeat("é", 127)+"x")},
		{"finance/definitions/workflow/close-the-week/1/steps/do/0/a~1b~0c/Review?#%", step(Address{Playbook: "finance", Type: "workflow", Name: "close-the-week", Version: 1}, "do/0/a~1b~0c/Review?#%")},
		{"finance/runs/" + runID + "/events/" + strings.ToUpper(runID), Address{Kind: KindEvent, Playbook: "finance", RunID: runID, EventID: strings.ToUpper(runID)}},
		{"finance/runs/" + runID + "/events/" + runID + "_2147483646", Address{Kind: KindEvent, Playbook: "finance", RunID: runID, EventID: runID + "_2147483646"}},
		{"finance/runs/" + runID + "/result/2147483646", Address{Kind: KindBlock, Playbook: "finance", RunID: runID, Block: 2147483646}},
		{"playbooks/finance/0", Address{Kind: KindPlaybookChange, Playbook: "finance"}},
		{"playbooks/finance/253402300799999", Address{Kind: KindPlaybookChange, Playbook: "finance", At: 253402300799999}},
		{"playbooks/finance/parts/" + strings.Repeat("p", 64), partOf(Address{Kind: KindPlaybook, Playbook: "finance"}, strings.Repeat("p", 64))},
		{"org/members/" + strings.Repeat("M", 64), Address{Kind: KindMember, Member: strings.Repeat("M", 64)}},
		{"org/members/parts", Address{Kind: KindMember, Member: "parts"}},
		{"org/members/-", Address{Kind: KindMember, Member: "-"}},
		{"org/settings/a", Address{Kind: KindSettings, Page: "a"}},
		{"finance/comments/" + strings.ToUpper(cmtID), Address{Kind: KindComment, Playbook: "finance", CommentID: strings.ToUpper(cmtID)}},
	}
	// The parts Studio names, of a playbook, a definition and a run.
	for _, p := range []string{"ledger", "name", "description", "card", "settings"} {
		ex = append(ex, example{"playbooks/finance/parts/" + p, partOf(Address{Kind: KindPlaybook, Playbook: "finance"}, p)})
	}
	for _, p := range []string{"overview", "source", "result", "details", "runs-3", "runs-3-2"} {
		ex = append(ex, example{"finance/definitions/reasoning/categorize-invoice/7/parts/" + p, partOf(categorize, p)})
	}
	for _, p := range []string{"output", "events", "result", "result-1-1", "row"} {
		ex = append(ex, example{"finance/runs/" + runID + "/parts/" + p, partOf(financeRun, p)})
	}
	// The pages of Studio's Settings.
	for _, p := range settingsPages {
		ex = append(ex, example{"org/settings/" + p, Address{Kind: KindSettings, Page: p}})
	}
	// Every type.
	for _, t := range Types() {
		ex = append(ex, example{"finance/definitions/" + t + "/close-the-week/1", Address{Kind: KindDefinition, Playbook: "finance", Type: t, Name: "close-the-week", Version: 1}})
	}
	return ex
}()

var settingsPages = []string{"organisation", "members", "email-domains", "billing", "plans", "credits", "credit-history", "runtime", "licenses", "connections", "mcp", "tool-servers"}

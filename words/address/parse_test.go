package address

import (
	"strings"
	"testing"

	"quire/words/refusal"
)

func TestParseExamples(t *testing.T) {
	for _, ex := range examples {
		a, err := Parse(ex.s)
		if err != nil {
			t.Errorf("Parse(%q): %v", ex.s, err)
			continue
		}
		if a != ex.want {
			t.Errorf("Parse(%q)\n got %+v\nwant %+v", ex.s, a, ex.want)
		}
		if got := a.String(); got != ex.s {
			t.Errorf("Parse(%q).String() = %q", ex.s, got)
		}
		if got := ex.want.String(); got != ex.s {
			t.Errorf("%+v.String() = %q, want %q", ex.want, got, ex.s)
		}
	}
}

// TestStringOrgComment: a comment of playbook org formats as the
// organization's own comment does.
func TestStringOrgComment(t *testing.T) {
	a := Address{Kind: KindComment, Playbook: "org", CommentID: cmtID}
	if got := a.String(); got != "org/comments/"+cmtID {
		t.Errorf("String() = %q", got)
	}
}

// refused is an address that breaks a rule, and the message of its issue.
type refused struct {
	rule, s, msg string
}

var (
	longID = strings.Repeat("a", 49)
	stepOf = "finance/definitions/workflow/close-the-week/4/steps/"
	runOf  = "finance/runs/" + runID
)

var refusals = []refused{
	// A whole address.
	{"empty", "", `the address is empty: an address names one thing as text`},
	{"at most 512 characters", stepOf + strings.Repeat("x", 600), `the address is 652 characters: an address is at most 512`},
	{"at most 512 characters, far over", strings.Repeat("x", 3000), `the address is 3000 bytes: an address is at most 512 characters`},
	{"at most 512 characters, counted as characters", "org/members/" + strings.Repeat("é", 501), `the address is 513 characters: an address is at most 512`},
	{"no white space", "playbooks/fin ance", `segment 2 has white space (U+0020) at character 14: an address has no white space`},
	{"no white space: tab", "playbooks/finance\t", `segment 2 has white space (U+0009) at character 18: an address has no white space`},
	{"no white space: newline in a step", stepOf + "do/1\n", `segment 8 has white space (U+000A) at character 57: an address has no white space`},
	{"no white space: no-break space", stepOf + "do\u00a0x", `segment 7 has white space (U+00A0) at character 55: an address has no white space`},
	{"no white space: ideographic space", stepOf + "do\u3000x", `segment 7 has white space (U+3000) at character 55: an address has no white space`},
	{"no control character", stepOf + "do\x00", `segment 7 has the control character U+0000 at character 55: an address has none`},
	{"no control character: DEL", "org\x7f", `segment 1 has the control character U+007F at character 4: an address has none`},
	{"valid UTF-8", stepOf + "do\xff", `segment 7 is not valid UTF-8 at character 55: an address is text`},
	{"no / at its end", "playbooks/finance/", `the address ends with /: an address has no / at its end`},
	{"no / at its end: a step", stepOf + "do/1/", `the address ends with /: an address has no / at its end`},
	{"no / at its end: alone", "/", `the address ends with /: an address has no / at its end`},
	{"no empty segment: first", "/org", `segment 1 is empty: an address has no empty segment`},
	{"no empty segment", "finance//" + reqID, `segment 2 is empty: an address has no empty segment`},
	{"no empty segment: in a step", stepOf + "do//review", `segment 8 is empty: an address has no empty segment`},

	// <playbook>
	{"playbook: lowercase", "Finance/runs/" + runID, `<playbook> "Finance" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: at least 3", "fi/runs/" + runID, `<playbook> "fi" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: at most 48", longID + "/runs/" + runID, `<playbook> "` + longID + `" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: begins with a letter", "1finance/runs/" + runID, `<playbook> "1finance" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: begins with a letter, not a hyphen", "-finance/runs/" + runID, `<playbook> "-finance" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: no underscore", "fin_ance/runs/" + runID, `<playbook> "fin_ance" (segment 1) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: of playbooks/", "playbooks/Finance", `<playbook> "Finance" (segment 2) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"playbook: no address of a playbook is one segment", "finance", `the address ends after segment 1 "finance": no address of a playbook is one segment; a playbook is playbooks/<playbook>`},
	{"playbook: playbooks alone", "playbooks", `the address ends after segment 1: a playbook is playbooks/<playbook>`},

	// <type>
	{"type: from the list", "finance/definitions/workflows/close-the-week/4", `<type> "workflows" (segment 3) must be one of reasoning, lookup, interaction, prediction, computation, generation or workflow`},
	{"type: lowercase", "finance/definitions/Workflow/close-the-week/4", `<type> "Workflow" (segment 3) must be one of reasoning, lookup, interaction, prediction, computation, generation or workflow`},
	{"type: of a broken definition", "finance/function/close-the-week", `segment 2 "function" must be definitions, runs, comments or a <type> (one of reasoning, lookup, interaction, prediction, computation, generation or workflow)`},

	// <name>
	{"name: by the rule of a playbook's id", "finance/definitions/workflow/Close/4", `<name> "Close" (segment 4) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"name: at most 48", "finance/definitions/workflow/" + longID + "/4", `<name> "` + longID + `" (segment 4) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},
	{"name: of a broken definition", "finance/workflow/x", `<name> "x" (segment 3) must be 3 to 48 lowercase letters, digits and hyphens, beginning with a letter`},

	// <version>
	{"version: from 1", "finance/definitions/workflow/close-the-week/0", `<version> "0" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"version: no leading zero", "finance/definitions/workflow/close-the-week/04", `<version> "04" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"version: at most 2147483646", "finance/definitions/workflow/close-the-week/2147483647", `<version> "2147483647" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"version: far over", "finance/definitions/workflow/close-the-week/99999999999999999999", `<version> "99999999999999999999" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"version: a whole number", "finance/definitions/workflow/close-the-week/v4", `<version> "v4" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"version: not signed", "finance/definitions/workflow/close-the-week/+4", `<version> "+4" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},

	// <step>
	{"step: at most 255 bytes", stepOf + strings.Repeat("s", 256), `<step> (segment 7 to the end) is 256 bytes: a step is at most 255 bytes in UTF-8, without its leading /`},
	{"step: at most 255 bytes in UTF-8", stepOf + strings.Repeat("é", 128), `<step> (segment 7 to the end) is 256 bytes: a step is at most 255 bytes in UTF-8, without its leading /`},
	{"step: a JSON Pointer's ~", stepOf + "do/a~2b", `<step> "do/a~2b" (segment 7 to the end) has a ~ at byte 5 that is neither ~0 nor ~1: a step is a JSON Pointer, which writes ~ as ~0 and / as ~1`},
	{"step: a JSON Pointer's ~ at its end", stepOf + "do~", `<step> "do~" (segment 7 to the end) has a ~ at byte 3 that is neither ~0 nor ~1: a step is a JSON Pointer, which writes ~ as ~0 and / as ~1`},
	{"step: of a workflow", "finance/definitions/reasoning/categorize-invoice/7/steps/do", `segment 6 "steps" follows a definition of <type> "reasoning": only a workflow has steps`},
	{"step: not empty", "finance/definitions/workflow/close-the-week/4/steps", `the address ends after segment 6: a step is <playbook>/definitions/<type>/<name>/<version>/steps/<step>`},

	// <run_id>
	{"run_id: lowercase", "finance/runs/" + strings.ToUpper(runID), `<run_id> "019A4012-7C3E-7D10-9B2A-4E6F8A1C2D3E" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"run_id: a UUID", "finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3", `<run_id> "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"run_id: hyphens in place", "finance/runs/019a40127-c3e-7d10-9b2a-4e6f8a1c2d3e", `<run_id> "019a40127-c3e-7d10-9b2a-4e6f8a1c2d3e" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"run_id: hexadecimal", "finance/runs/019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3g", `<run_id> "019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3g" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"run_id of a request: lowercase", "finance/" + strings.ToUpper(reqID), `<run_id> "019A400E-1F2B-7A44-8C5D-6B7E9F0A1B2C" (segment 2) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits (an address of two segments whose second is a UUID is the request of a run, <playbook>/<run_id>)`},
	{"run_id of a request: in playbooks", "playbooks/" + strings.ToUpper(reqID), `<run_id> "019A400E-1F2B-7A44-8C5D-6B7E9F0A1B2C" (segment 2) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits (an address of two segments whose second is a UUID is the request of a run, <playbook>/<run_id>)`},
	{"run_id of a request: a UUID", "finance/close", `segment 2 "close" must be a <run_id>, a UUID in lowercase: an address of two segments is the request of a run, <playbook>/<run_id>`},

	// <event_id>
	{"event_id: a UUID", runOf + "/events/42", `<event_id> "42" (segment 5) must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero`},
	{"event_id: a number from 1", runOf + "/events/" + runID + "_0", `<event_id> "` + runID + `_0" (segment 5) must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero`},
	{"event_id: no leading zero", runOf + "/events/" + runID + "_02", `<event_id> "` + runID + `_02" (segment 5) must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero`},
	{"event_id: a number after _", runOf + "/events/" + runID + "_", `<event_id> "` + runID + `_" (segment 5) must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero`},
	{"event_id: an underscore", runOf + "/events/" + runID + "-2", `<event_id> "` + runID + `-2" (segment 5) must be a UUID, or a UUID, an underscore and a number from 1 to 2147483646 without a leading zero`},

	// <n>
	{"n: from 1", runOf + "/result/0", `<n> "0" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"n: no leading zero", runOf + "/result/02", `<n> "02" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},
	{"n: a whole number", runOf + "/result/second", `<n> "second" (segment 5) must be a whole number from 1 to 2147483646, without a leading zero`},

	// <part>
	{"part: lowercase", "playbooks/finance/parts/Ledger", `<part> "Ledger" (segment 4) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},
	{"part: begins with a letter", runOf + "/parts/1-1", `<part> "1-1" (segment 5) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},
	{"part: at most 64", "org/parts/" + strings.Repeat("p", 65), `<part> "` + strings.Repeat("p", 65) + `" (segment 3) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},
	{"part: no underscore", "finance/definitions/reasoning/categorize-invoice/7/parts/runs_1", `<part> "runs_1" (segment 7) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},
	{"part: one segment", "finance/definitions/reasoning/categorize-invoice/7/parts/a/b", `segment 8 "b" goes past the end of <playbook>/definitions/<type>/<name>/<version>/parts/<part>: a part is one segment, and a part takes no parts`},
	{"part: takes no parts", "playbooks/finance/parts/a/parts/b", `segment 5 "parts" goes past the end of playbooks/<playbook>/parts/<part>: a part is one segment, and a part takes no parts`},
	{"part: named", "org/settings/runtime/parts", `the address ends after segment 4: a part is org/settings/<page>/parts/<part>`},
	{"part: of the playbook, under playbooks/", "finance/parts/ledger", `segment 2 "parts" comes after the playbook's id: a part of a playbook is playbooks/<playbook>/parts/<part>`},
	{"part: after parts", "org/connections/" + connID + "/tools/x", `segment 4 "tools" must be parts: after org/connections/<connection> comes only /parts/<part>`},

	// <connection>
	{"connection: lowercase", "org/connections/" + strings.ToUpper(connID), `<connection> "019A3F10-2B4C-7D5E-8F60-718293A4B5C6" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"connection: a UUID", "org/connections/crm", `<connection> "crm" (segment 3) must be a UUID in lowercase, 8-4-4-4-12 hexadecimal digits`},
	{"connection: named", "org/connections", `the address ends after segment 2: a connection is org/connections/<connection>`},

	// <member>
	{"member: at most 64", "org/members/" + strings.Repeat("m", 65), `<member> "` + strings.Repeat("m", 65) + `" (segment 3) must be 1 to 64 ASCII letters, digits, underscores and hyphens`},
	{"member: ASCII", "org/members/usér", `<member> "usér" (segment 3) must be 1 to 64 ASCII letters, digits, underscores and hyphens`},
	{"member: no dot", "org/members/user.2kLm7Qx", `<member> "user.2kLm7Qx" (segment 3) must be 1 to 64 ASCII letters, digits, underscores and hyphens`},

	// <page>
	{"page: by the rule of a part", "org/settings/Billing", `<page> "Billing" (segment 3) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},
	{"page: by the rule of a part, at most 64", "org/settings/" + strings.Repeat("b", 65), `<page> "` + strings.Repeat("b", 65) + `" (segment 3) must be 1 to 64 lowercase letters, digits and hyphens, beginning with a letter`},

	// <id> of a comment
	{"id: a UUID", "finance/comments/42", `<id> "42" (segment 3) must be a UUID, 8-4-4-4-12 hexadecimal digits`},
	{"id: a UUID, of the organization", "org/comments/first", `<id> "first" (segment 3) must be a UUID, 8-4-4-4-12 hexadecimal digits`},

	// <at>
	{"at: no leading zero", "playbooks/finance/01762000000000", `<at> "01762000000000" (segment 3) must be a whole number of milliseconds since 1970-01-01T00:00:00Z, from 0 to 253402300799999, without a leading zero`},
	{"at: at most the year 9999", "playbooks/finance/253402300800000", `<at> "253402300800000" (segment 3) must be a whole number of milliseconds since 1970-01-01T00:00:00Z, from 0 to 253402300799999, without a leading zero`},
	{"at: a whole number", "playbooks/finance/1762000000000.5", `<at> "1762000000000.5" (segment 3) must be a whole number of milliseconds since 1970-01-01T00:00:00Z, from 0 to 253402300799999, without a leading zero`},
	{"at: or parts", "playbooks/finance/ledger", `segment 3 "ledger" is neither parts nor an <at>: an address that begins playbooks/ is playbooks/<playbook>, playbooks/<playbook>/parts/<part>, playbooks/<playbook>/<at> or the request playbooks/<run_id>; a playbook's definitions and runs begin <playbook>/, without playbooks/`},
	{"playbooks/ names a playbook", "playbooks/finance/definitions/workflow/close-the-week/4", `segment 3 "definitions" must be parts or, as the last segment, an <at>: an address that begins playbooks/ is playbooks/<playbook>, playbooks/<playbook>/parts/<part>, playbooks/<playbook>/<at> or the request playbooks/<run_id>; a playbook's definitions and runs begin <playbook>/, without playbooks/`},
	{"playbooks/ names a playbook, even one called playbooks", "playbooks/runs/" + runID, `segment 3 "` + runID + `" is neither parts nor an <at>: an address that begins playbooks/ is playbooks/<playbook>, playbooks/<playbook>/parts/<part>, playbooks/<playbook>/<at> or the request playbooks/<run_id>; a playbook's definitions and runs begin <playbook>/, without playbooks/`},

	// What takes no parts, and forms cut short or run on.
	{"a step takes no parts, but a reasoning has no steps", "finance/definitions/reasoning/categorize-invoice/7/steps/do/parts/x", `segment 6 "steps" follows a definition of <type> "reasoning": only a workflow has steps`},
	{"an event takes no parts", runOf + "/events/" + eventID + "/parts/x", `segment 6 "parts" goes past the end of <playbook>/runs/<run_id>/events/<event_id>: an event takes no parts`},
	{"a block takes no parts", runOf + "/result/2/parts/cell-1", `segment 6 "parts" goes past the end of <playbook>/runs/<run_id>/result/<n>: a block takes no parts; a cell of a block is a part of the run, <playbook>/runs/<run_id>/parts/result-<n>-<m>`},
	{"a request takes no parts", "finance/" + reqID + "/parts/x", `segment 3 "parts" goes past the end of the request of a run, <playbook>/<run_id>: a request takes no parts`},
	{"a comment takes no parts", "finance/comments/" + cmtID + "/parts/x", `segment 4 "parts" goes past the end of <playbook>/comments/<id>: a comment takes no parts; a reply is a new comment on the same address`},
	{"a comment of the organization takes no parts", "org/comments/" + cmtID + "/parts/x", `segment 4 "parts" goes past the end of org/comments/<id>: a comment takes no parts; a reply is a new comment on the same address`},
	{"a broken definition takes nothing after its name", "finance/workflow/close-the-week/4", `segment 4 "4" goes past the end of a broken definition, <playbook>/<type>/<name>: a definition at a version is <playbook>/definitions/<type>/<name>/<version>`},
	{"a definition is cut short", "finance/definitions/workflow", `the address ends after segment 3: a definition is <playbook>/definitions/<type>/<name>/<version>`},
	{"a definition goes on with parts or steps", "finance/definitions/workflow/close-the-week/4/views/x", `segment 6 "views" must be parts or steps: after <playbook>/definitions/<type>/<name>/<version> come /parts/<part> and, of a workflow, /steps/<step>`},
	{"a run goes on with events, result or parts", runOf + "/steps/x", `segment 4 "steps" must be events, result or parts: after <playbook>/runs/<run_id> come /events/<event_id>, /result/<n> and /parts/<part>`},
	{"a run is cut short", "finance/runs", `the address ends after segment 2: a run is <playbook>/runs/<run_id>`},
	{"an event is cut short", runOf + "/events", `the address ends after segment 4: an event is <playbook>/runs/<run_id>/events/<event_id>`},
	{"a block is cut short", runOf + "/result", `the address ends after segment 4: a block of a run's result is <playbook>/runs/<run_id>/result/<n>`},
	{"a comment is cut short", "finance/comments", `the address ends after segment 2: a comment of a playbook is <playbook>/comments/<id>`},
	{"a broken definition is cut short", "finance/workflow", `the address ends after segment 2: a broken definition is <playbook>/<type>/<name>`},
	{"a thing of a playbook", "finance/pages/x", `segment 2 "pages" must be definitions, runs, comments or a <type> (one of reasoning, lookup, interaction, prediction, computation, generation or workflow)`},
}

func TestParseRefusals(t *testing.T) {
	for _, r := range refusals {
		a, err := Parse(r.s)
		if err == nil {
			t.Errorf("%s: Parse(%q) = %+v, want a refusal", r.rule, r.s, a)
			continue
		}
		checkRefusal(t, r.rule, err, r.msg)
	}
}

// checkRefusal checks err is invalid_input with one issue at /address
// whose message is msg.
func checkRefusal(t *testing.T, rule string, err error, msg string) {
	t.Helper()
	rf, ok := refusal.As(err)
	if !ok {
		t.Errorf("%s: %v is not a refusal", rule, err)
		return
	}
	if rf.Code != refusal.InvalidInput || len(rf.Issues) != 1 || rf.Issues[0].Path != "/address" {
		t.Errorf("%s: refusal %+v, want invalid_input with one issue at /address", rule, rf)
		return
	}
	if rf.Issues[0].Message != msg {
		t.Errorf("%s: message\n got %s\nwant %s", rule, rf.Issues[0].Message, msg)
	}
	if rf.Message != "/address: "+msg {
		t.Errorf("%s: refusal's message %q", rule, rf.Message)
	}
}

func TestValidators(t *testing.T) {
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"ValidPlaybookID(finance)", ValidPlaybookID("finance"), true},
		{"ValidPlaybookID(abc)", ValidPlaybookID("abc"), true},
		{"ValidPlaybookID(ab)", ValidPlaybookID("ab"), false},
		{"ValidName(48)", ValidName(strings.Repeat("a", 48)), true},
		{"ValidName(49)", ValidName(strings.Repeat("a", 49)), false},
		{"ValidType(workflow)", ValidType("workflow"), true},
		{"ValidType(function)", ValidType("function"), false},
		{"ValidVersion(1)", ValidVersion(1), true},
		{"ValidVersion(0)", ValidVersion(0), false},
		{"ValidVersion(max)", ValidVersion(MaxVersion), true},
		{"ValidVersion(max+1)", ValidVersion(MaxVersion + 1), false},
		{"ValidPart(a)", ValidPart("a"), true},
		{"ValidPart(a-)", ValidPart("a-"), true},
		{"ValidPart(\"\")", ValidPart(""), false},
		{"ValidPage(credit-history)", ValidPage("credit-history"), true},
		{"ValidMember(user_2kLm7Qx)", ValidMember("user_2kLm7Qx"), true},
		{"ValidMember(\"\")", ValidMember(""), false},
		{"ValidUUID(upper)", ValidUUID(strings.ToUpper(runID)), true},
		{"ValidLowerUUID(upper)", ValidLowerUUID(strings.ToUpper(runID)), false},
		{"ValidLowerUUID(lower)", ValidLowerUUID(runID), true},
		{"ValidEventID(uuid)", ValidEventID(runID), true},
		{"ValidEventID(uuid_2)", ValidEventID(eventID), true},
		{"ValidEventID(uuid_0)", ValidEventID(runID + "_0"), false},
		{"ValidStep(do/1/review)", ValidStep("do/1/review"), true},
		{"ValidStep(do//review)", ValidStep("do//review"), false},
		{"ValidStep(/do)", ValidStep("/do"), false},
		{"ValidStep(do/)", ValidStep("do/"), false},
		{"ValidStep(a~2)", ValidStep("a~2"), false},
		{"ValidStep(a b)", ValidStep("a b"), false},
		{"ValidStep(256)", ValidStep(strings.Repeat("s", 256)), false},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if ts := Types(); len(ts) != 7 || ts[6] != "workflow" {
		t.Errorf("Types() = %v", ts)
	}
}

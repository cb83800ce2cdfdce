package runfolder

import (
	"strings"
	"testing"
)

const sampleFront = `---
uid: 019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e
type: playbook-run
name: close-the-month 019a4012-7c3e-7d10-9b2a-4e6f8a1c2d3e
created: "2026-11-01T09:00:00.000Z"
playbook: 01a2292a-44da-7afb-8afa-d7dd1e208c04
playbook_version: "3"
member_of:
    - 01a2292a-42b3-7480-940f-aab122fd10b3
binding: playbooks/finance/definitions/workflow/close-the-month.yaml
started: "2026-11-01T09:00:00.000Z"
executor: agent-7
authorized_by: ana
quire_playbook: finance
definition_type: workflow
definition_name: close-the-month
---

# notes
`

func TestParseFront(t *testing.T) {
	f, err := ParseFront([]byte(sampleFront))
	if err != nil {
		t.Fatal(err)
	}
	if f.PlaybookVersion != "3" || len(f.MemberOf) != 1 || f.Executor != "agent-7" {
		t.Fatalf("%+v", f)
	}
	for name, bad := range map[string]string{
		"no front matter": "# notes\n",
		"never closed":    "---\nuid: x\n",
		"unknown field":   strings.Replace(sampleFront, "executor:", "colour: blue\nexecutor:", 1),
		"wrong type":      strings.Replace(sampleFront, "member_of:\n    - 01a2292a-42b3-7480-940f-aab122fd10b3", "member_of: {a: 1}", 1),
	} {
		if _, err := ParseFront([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// A key written twice is refused at the line of its second writing.
	twice := strings.Replace(sampleFront, "executor: agent-7\n", "executor: agent-7\nexecutor: agent-8\n", 1)
	_, err = ParseFront([]byte(twice))
	if err == nil || !strings.Contains(err.Error(), `line 13: The key "executor" is written twice in one mapping (first at line 12)`) {
		t.Errorf("executor twice: %v", err)
	}
}

// FuzzParseFront: never panics.
func FuzzParseFront(f *testing.F) {
	f.Add(sampleFront)
	f.Add("---\n---\n")
	f.Add("---\nmember_of: [a, b]\n---")
	f.Add("---\nuid: a\nmember_of: [a, {b: 1, b: 2}]\nuid: b\n---\n")
	f.Add("---\r\n---\r\n\n---\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseFront([]byte(s))
	})
}

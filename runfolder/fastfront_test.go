package runfolder

import (
	"reflect"
	"strings"
	"testing"
)

// quireFront is a definition.md as quire writes it.
const quireFront = `---
uid: 019a4012-7c3e-7d10-9b2a-00000000000a
type: playbook-run
name: close 019a4012-7c3e-7d10-9b2a-00000000000a
created: "2026-11-01T07:01:30.000Z"
playbook: 01a23d43-f038-7f10-a1f8-9d089a4b253e
playbook_version: "1"
member_of:
    - 01a23d43-f031-7440-8819-a1437a3bff68
binding: playbooks/finance/definitions/workflow/close.yaml
started: "2026-11-01T07:01:30.000Z"
executor: agent-2
authorized_by: ana
quire_playbook: finance
definition_type: workflow
definition_name: close
---

# close run 019a4012-7c3e-7d10-9b2a-00000000000a
`

// The front matter quire writes is read without YAML, and as YAML reads
// it; what is not in that form is left to YAML.
func TestFastFrontReadsWhatQuireWrites(t *testing.T) {
	fr, ok := fastFront([]byte(quireFront))
	if !ok {
		t.Fatal("quire's own front matter is not read by the fast path")
	}
	want, err := parseFrontYAML([]byte(quireFront))
	if err != nil || !reflect.DeepEqual(fr, want) {
		t.Fatalf("fast %+v\nyaml %+v %v", fr, want, err)
	}
	for name, edit := range map[string]func(string) string{
		"a comment": func(s string) string { return strings.Replace(s, "executor: agent-2", "executor: agent-2 # who", 1) },
		"a key twice": func(s string) string {
			return strings.Replace(s, "executor: agent-2", "executor: agent-2\nexecutor: agent-3", 1)
		},
		"an unknown key":   func(s string) string { return strings.Replace(s, "executor: agent-2", "executer: agent-2", 1) },
		"a null":           func(s string) string { return strings.Replace(s, "executor: agent-2", "executor: null", 1) },
		"an item indented": func(s string) string { return strings.Replace(s, "    - 01a2", "    - x\n      - 01a2", 1) },
		"a flow list": func(s string) string {
			return strings.Replace(s, "member_of:\n    - 01a23d43-f031-7440-8819-a1437a3bff68", "member_of: [a]", 1)
		},
		"an escape":         func(s string) string { return strings.Replace(s, `"1"`, `"\x31"`, 1) },
		"a carriage return": func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") },
		"not closed":        func(s string) string { return strings.Replace(s, "\n---\n", "\n", 1) },
		"a list with no item": func(s string) string {
			return strings.Replace(s, "    - 01a23d43-f031-7440-8819-a1437a3bff68\n", "", 1)
		},
	} {
		if _, ok := fastFront([]byte(edit(quireFront))); ok {
			t.Errorf("%s: read by the fast path", name)
		}
	}
}

// Whatever the fast path reads, it reads as YAML does.
func FuzzFastFront(f *testing.F) {
	f.Add([]byte(quireFront))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nplaybook_version: 1\nstarted: 2026-11-01\nname: a - b\nmember_of:\n  - x\n  - y:z\n---\n"))
	f.Add([]byte("---\nexecutor: true\nbinding: 0x1F\nname: 1e3\nuid: 0o17\ntype: yes\n---\n"))
	f.Add([]byte("---\nmember_of:\n - a\n - b\nname: \"a # b\"\n---\nbody\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		fr, ok := fastFront(doc)
		if !ok {
			return
		}
		want, err := parseFrontYAML(doc)
		if err != nil {
			t.Fatalf("the fast path read %q, which YAML refuses: %v", doc, err)
		}
		if !reflect.DeepEqual(fr, want) {
			t.Fatalf("%q:\nfast %#v\nyaml %#v", doc, fr, want)
		}
	})
}

package agentrun

import (
	"strings"
	"testing"
)

// A document's steps are its nodes' label paths, in the inspection's
// order, each with what it calls.
func TestStepsAreTheInspectionsSteps(t *testing.T) {
	for _, name := range []string{"minimal-typed-answer", "sift-node", "route-fragment", "evidence-gate"} {
		src := readExample(t, name)
		doc, issues := Parse(src)
		if doc == nil {
			t.Fatalf("%s: %v", name, issues)
		}
		var got, want []string
		for _, s := range doc.Steps() {
			got = append(got, s.Step+" "+s.Kind)
		}
		for _, n := range Inspect(src).Nodes {
			want = append(want, n.Step+" "+n.Kind)
		}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Errorf("%s: steps %v, inspection %v", name, got, want)
		}
	}
	doc, _ := Parse(`{"v": 2, "root": {"node": "chain", "label": "c", "steps": [{"node": "call", "label": "read", "tool": "read"}, {"node": "agent", "label": "a", "tools": ["read", "grep"]}]}}`)
	var calls []string
	for _, s := range doc.Steps() {
		calls = append(calls, s.Step+"="+s.Calls)
	}
	if got := strings.Join(calls, " "); got != "c= c/read=read c/a=read, grep" {
		t.Errorf("calls: %s", got)
	}
}

package agentrun

import (
	"fmt"
	"strings"
)

// Step is one node of a document as a run records it: its step (the
// label path from root, the step its events name), its kind, and what it
// calls: a call node's host tool, an agent's declared tools.
type Step struct {
	Step  string
	Kind  string
	Calls string
}

// Steps are the document's nodes in document order, each before the
// nodes it holds (a route's branches in the order of their names). It
// reads the document as it is, without inspecting it: a node without a
// label is left out, with what it holds.
func (d *Doc) Steps() []Step {
	var out []Step
	var walk func(v any, parent string)
	walk = func(v any, parent string) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		kind, _ := m["node"].(string)
		label, _ := m["label"].(string)
		if kind == "" || label == "" {
			return
		}
		step := label
		if parent != "" {
			step = parent + "/" + label
		}
		out = append(out, Step{Step: step, Kind: kind, Calls: calls(m)})
		for _, f := range []string{"steps", "branches"} {
			if list, ok := m[f].([]any); ok {
				for _, c := range list {
					walk(c, step)
				}
			}
		}
		if bs, ok := m["branches"].(map[string]any); ok {
			for _, k := range sortedKeys(bs) {
				b, _ := bs[k].(map[string]any)
				walk(b["body"], step)
			}
		}
		walk(m["body"], step)
	}
	walk(d.v["root"], "")
	return out
}

// calls is what a node calls: a call node's tool, the tools an agent
// declares.
func calls(m map[string]any) string {
	if t, ok := m["tool"].(string); ok {
		return t
	}
	if ts, ok := m["tools"].([]any); ok && len(ts) > 0 {
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = fmt.Sprint(t)
		}
		return strings.Join(names, ", ")
	}
	return ""
}

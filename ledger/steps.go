package ledger

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"quire/runfolder"
	"quire/vault"
	"quire/words/agentrun"
	"quire/words/jsonptr"
	"quire/words/refusal"
)

// A workflow's steps, as its runs record them: get_definition answers
// them so an agent need not parse the document, get_run answers which of
// the pinned document's steps are done, and record_event warns of a step
// the pinned document does not have. A YAML workflow's step is its JSON
// Pointer in the document without the leading "/" (do/0/work, and
// do/1/close/do/0/post for a task inside a do task), an AgentRun
// document's the node's label path (evidence-gate/check-support).

// Step is one step of a workflow's document.
type Step struct {
	Step  string `json:"step" jsonschema:"record_event's step"`
	Kind  string `json:"kind" jsonschema:"the task's or node's kind"`
	Calls string `json:"calls,omitempty"`
}

// RunStep is a step of the pinned document and how far the run got with
// it.
type RunStep struct {
	Step   string `json:"step"`
	Kind   string `json:"kind"`
	Calls  string `json:"calls,omitempty"`
	Status string `json:"status" jsonschema:"its last step event without step_, or not_started"`
}

// taskKinds are the Serverless Workflow DSL's task kinds: a task is a
// mapping with one of them.
var taskKinds = []string{"call", "do", "emit", "for", "fork", "listen", "raise", "run", "set", "switch", "try", "wait"}

// workflowSteps reads a workflow document's steps; nil for a document
// that has none (or is not a workflow).
func workflowSteps(source string) []Step {
	if agentrun.Is(source) {
		doc, _ := agentrun.Parse(source)
		if doc == nil {
			return nil
		}
		var out []Step
		for _, s := range doc.Steps() {
			out = append(out, Step(s))
		}
		return out
	}
	var root yaml.Node
	if yaml.Unmarshal([]byte(source), &root) != nil || len(root.Content) == 0 {
		return nil
	}
	var out []Step
	yamlTasks(&out, field(root.Content[0], "do"), "do")
	return out
}

// yamlTasks adds the tasks of a task list at ref, and the tasks each
// holds.
func yamlTasks(out *[]Step, list *yaml.Node, ref string) {
	if list == nil || list.Kind != yaml.SequenceNode {
		return
	}
	for i, item := range list.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 {
			continue
		}
		name, task := item.Content[0].Value, item.Content[1]
		at := fmt.Sprintf("%s/%d/%s", ref, i, jsonptr.Escape(name))
		kind := ""
		for _, k := range taskKinds {
			if field(task, k) != nil {
				kind = k
				break
			}
		}
		*out = append(*out, Step{Step: at, Kind: kind, Calls: yamlCalls(task)})
		yamlTasks(out, field(task, "do"), at+"/do")
		yamlTasks(out, field(task, "try"), at+"/try")
		yamlTasks(out, field(field(task, "catch"), "do"), at+"/catch/do")
		yamlTasks(out, field(field(task, "fork"), "branches"), at+"/fork/branches")
	}
}

// yamlCalls is what a call task calls: the operation or function, and for
// run_definition the definition it runs.
func yamlCalls(task *yaml.Node) string {
	c := field(task, "call")
	if c == nil || c.Kind != yaml.ScalarNode {
		return ""
	}
	with := field(task, "with")
	typ, name := field(with, "type"), field(with, "name")
	if c.Value == "run_definition" && typ != nil && name != nil {
		return c.Value + " " + typ.Value + "/" + name.Value
	}
	return c.Value
}

// field is a mapping's value at key, or nil.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// runSteps answers each step of the pinned document with the run's last
// step event for it, read from run.jsonl.
func runSteps(steps []Step, f runfolder.Folder) ([]RunStep, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	last := map[string]string{}
	err := f.ReadLines(func(_ int64, raw []byte) error {
		var ln struct {
			Event string  `json:"event"`
			Step  *string `json:"step"`
		}
		if json.Unmarshal(raw, &ln) == nil && ln.Step != nil && strings.HasPrefix(ln.Event, "step_") {
			last[*ln.Step] = strings.TrimPrefix(ln.Event, "step_")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]RunStep, len(steps))
	for i, s := range steps {
		out[i] = RunStep{Step: s.Step, Kind: s.Kind, Calls: s.Calls, Status: "not_started"}
		if st, ok := last[s.Step]; ok {
			out[i].Status = st
		}
	}
	return out, nil
}

// stepWarning is the warning of a step the pinned document does not have,
// naming those it has; nil for one it has, or a document without steps.
func stepWarning(steps []Step, step string) []refusal.Issue {
	if len(steps) == 0 || step == "" {
		return nil
	}
	refs := make([]string, len(steps))
	for i, s := range steps {
		refs[i] = s.Step
	}
	if slices.Contains(refs, step) {
		return nil
	}
	return []refusal.Issue{{Path: "/step", Message: fmt.Sprintf("the run's pinned document has no step %q; its steps are %s", step, strings.Join(refs, ", "))}}
}

// runStepWarnings are quire check's warnings of a run that recorded steps
// its pinned document does not have: a warning and not a problem, since
// the capsule asks only that a step event name its step, and an agent's
// account of what it did is kept as it wrote it.
func (l *Ledger) runStepWarnings(e vault.Entry, st *runfolder.State) []Problem {
	if st == nil {
		var err error
		if st, err = (runfolder.Folder{V: l.v, Rel: e.Path}).LoadState(); err != nil {
			return nil // the checker reports a run it cannot read
		}
	}
	info, err := l.pinnedDocument(e, st)
	if err != nil || info == nil || len(info.Steps) == 0 {
		return nil
	}
	var odd []string
	for _, s := range st.StepsSeen {
		if stepWarning(info.Steps, s) != nil {
			odd = append(odd, s)
		}
	}
	if len(odd) == 0 {
		return nil
	}
	refs := make([]string, len(info.Steps))
	for i, s := range info.Steps {
		refs[i] = s.Step
	}
	return []Problem{{Path: path.Join(e.Path, runfolder.LogFile), Message: fmt.Sprintf("records steps its pinned document (%s/%s version %d) does not have: %s; its steps are %s",
		st.Type, st.Name, st.Version, strings.Join(odd, ", "), strings.Join(refs, ", "))}}
}

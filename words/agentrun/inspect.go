package agentrun

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"quire/words/refusal"
)

// topFields are the fields a document may have; quire adds page and
// description, which every workflow may carry.
var topFields = map[string]bool{"v": true, "name": true, "schemas": true, "input": true, "output": true, "root": true, "page": true, "description": true}

// Report is what inspecting an AgentRun document found.
type Report struct {
	Name string `json:"name,omitempty"`
	// OK is true when the inspection found no issue: the document saves.
	OK     bool            `json:"ok"`
	Issues []refusal.Issue `json:"issues" jsonschema:"each problem at /source and its JSON pointer in the document, with its line"`
	Nodes  []NodeReport    `json:"nodes" jsonschema:"each node in document order with the state keys it produces"`
	// Output is the final selection at output.path against output.schemaId.
	Output *OutputReport `json:"output,omitempty"`
	// Unknown says where shapes stay unknown (dynamic code, open schemas,
	// unions, conditional branches): passing does not prove those paths.
	Unknown []string `json:"unknown,omitempty"`
}

// NodeReport is one node and the typed state keys it produces.
type NodeReport struct {
	Label    string     `json:"label"`
	Step     string     `json:"step" jsonschema:"the label path, the step its events name"`
	Kind     string     `json:"kind"`
	Pointer  string     `json:"pointer"`
	Produces []StateKey `json:"produces,omitempty"`
}

// StateKey is one top-level state key and the value it holds.
type StateKey struct {
	Key   string `json:"key"`
	Value string `json:"value" jsonschema:"the value, e.g. Row, array of Row, or unknown (why)"`
}

// OutputReport is the final selection.
type OutputReport struct {
	Path     string `json:"path"`
	SchemaID string `json:"schema_id"`
	Value    string `json:"value"`
	Verdict  string `json:"verdict" jsonschema:"matches, unknown (not proven) or mismatch"`
}

// inspector is one inspection: the document, its catalog, and what it has
// found so far.
type inspector struct {
	doc     *Doc
	catalog map[string]any
	issues  []refusal.Issue
	report  *Report
	labels  map[string]string // label → pointer of its first node
	unknown map[string]bool
}

func (in *inspector) add(ptr, format string, args ...any) {
	in.issues = append(in.issues, refusal.Issue{Path: "/source" + ptr, Line: in.doc.Line(ptr), Message: fmt.Sprintf(format, args...)})
}

func (in *inspector) note(format string, args ...any) {
	in.unknown[fmt.Sprintf(format, args...)] = true
}

// Inspect inspects an AgentRun document without executing any of it, as
// the document's native inspection does. The report's issues are empty,
// and OK true, when the document may be saved; issues are in the order of
// their lines.
func Inspect(source string) *Report {
	r := &Report{Issues: []refusal.Issue{}, Nodes: []NodeReport{}}
	if len(source) > MaxDocument {
		r.Issues = append(r.Issues, refusal.Issue{Path: "/source", Message: fmt.Sprintf("The document takes %d bytes; a document holds at most 65,536 bytes.", len(source))})
		return r
	}
	doc, issues := Parse(source)
	if doc == nil {
		r.Issues = issues
		return r
	}
	in := &inspector{doc: doc, report: r, labels: map[string]string{}, unknown: map[string]bool{}}
	in.top()
	r.Issues = append(r.Issues, in.issues...)
	sort.SliceStable(r.Issues, func(i, j int) bool { return r.Issues[i].Line < r.Issues[j].Line })
	r.OK = len(r.Issues) == 0
	for u := range in.unknown {
		r.Unknown = append(r.Unknown, u)
	}
	sort.Strings(r.Unknown)
	return r
}

// top checks the document's own fields, then its nodes from root, then
// the final selection.
func (in *inspector) top() {
	v := in.doc.v
	for _, k := range sortedKeys(v) {
		if !topFields[k] {
			in.add("/"+escapePointer(k), "An AgentRun document has v, name, schemas, input, output and root (and quire's page and description); %q is not one of them.", k)
		}
	}
	if n, ok := v["v"].(json.Number); !ok || n.String() != "2" {
		in.add("/v", "An AgentRun document has \"v\": 2.")
	}
	if name, ok := v["name"].(string); !ok || strings.TrimSpace(name) == "" {
		in.add("/name", "An AgentRun document has a nonempty name.")
	} else {
		in.report.Name = name
	}
	in.catalog = map[string]any{}
	if s, ok := v["schemas"].(map[string]any); ok {
		in.catalog = s
		in.schemas()
	} else {
		in.add("/schemas", "An AgentRun document has schemas, its catalog: an object of named JSON Schemas.")
	}
	st := newState()
	if inp, present := v["input"]; present {
		m, ok := inp.(map[string]any)
		id, idOK := m["schemaId"].(string)
		switch {
		case !ok || !idOK:
			in.add("/input", "input is {\"schemaId\": \"<Name>\"}, naming a schema of the catalog.")
		case in.schemaRef("/input/schemaId", id):
			for k := range m {
				if k != "schemaId" {
					in.add("/input/"+escapePointer(k), "input has only schemaId.")
				}
			}
			st = in.inputState(id)
		}
	} else {
		st.open = true
		in.note("no input.schemaId: the input's keys are not known")
	}
	root, ok := v["root"].(map[string]any)
	if !ok {
		in.add("/root", "An AgentRun document has root, its first node (an object with node and label).")
	} else {
		in.node("/root", root, "", st)
	}
	in.output(st)
}

// output checks the final selection: output.path in the final state
// against output.schemaId.
func (in *inspector) output(st *state) {
	o, ok := in.doc.v["output"].(map[string]any)
	id, idOK := o["schemaId"].(string)
	p, pOK := o["path"].(string)
	if !ok || !idOK || !pOK {
		in.add("/output", "output is {\"schemaId\": <a schema of the catalog>, \"path\": <the state path of the final value>}.")
		return
	}
	for _, k := range sortedKeys(o) {
		if k != "schemaId" && k != "path" {
			in.add("/output/"+escapePointer(k), "output has schemaId and path; not %s.", k)
		}
	}
	if !in.schemaRef("/output/schemaId", id) {
		return
	}
	if !statePath.MatchString(p) {
		in.add("/output/path", "output.path is a state path, such as report.")
		return
	}
	before := len(in.issues)
	v := in.consume("/output/path", p, st)
	rep := &OutputReport{Path: p, SchemaID: id, Value: v.String(), Verdict: "unknown"}
	in.report.Output = rep
	if len(in.issues) > before {
		rep.Verdict = "mismatch"
		return
	}
	switch {
	case v == nil || v.unknown != "":
	case v.name == id:
		rep.Verdict = "matches"
	case v.array != nil:
		if s, _ := in.resolve(in.catalog[id]).(map[string]any); s["type"] != "array" && s["type"] != nil {
			in.add("/output/path", "%q is %s, but %s is %v: after mapping an array is still an array; assemble the object and point output.path to it.", p, v.String(), id, s["type"])
			rep.Verdict = "mismatch"
		}
	}
	if rep.Verdict == "unknown" {
		in.note("the final value at %s is %s: that it matches %s is not proven", p, v.String(), id)
	}
}

package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"quire/words/event"
	"quire/words/jsonptr"
	"quire/words/refusal"
)

// AgentRun documents (spec/agentrun-workflow-format.md) are workflow
// definitions whose source is JSON with "v": 2. quire never executes one:
// it saves it (definitions/workflow/<name>.json), inspects it without
// running anything (the document's "native inspection"), tries one code
// node in the fold's sandbox, and checks a run's output against
// output.schemaId's schema. This file is the inspection.
//
// Decisions where the document is silent (docs/vault-format.md says them
// too):
//   - Every node has a label (a step's address is its label path) and the
//     labels are unique in the document.
//   - A document may carry quire's own top-level page and description
//     beside the AgentRun fields; nothing else.
//   - An issue is at "/source" followed by the JSON pointer of what it is
//     about in the document, with the document's line; a code issue also
//     names the line and column (both from 1) inside the code.
//   - A schema refers to a sibling only as {"$ref":"#/definitions/<Name>"};
//     no other reference is taken (nothing is loaded from anywhere).
//   - map's maxConcurrency is an integer from 1 to 64.

// maxAgentRunDepth bounds a document's nesting: a JSON Schema's check
// against its meta-schema takes time that grows fast with its depth
// (5,000 nested nots take minutes), and a workflow's nodes and schemas
// nest a few levels each.
const maxAgentRunDepth = 128

// agentRunTop are the fields a document may have; quire adds page and
// description, which every workflow may carry.
var agentRunTop = map[string]bool{"v": true, "name": true, "schemas": true, "input": true, "output": true, "root": true, "page": true, "description": true}

// nodeFields are, for each node kind, its required fields and the others
// it permits ("node" and "label" are every node's).
var nodeFields = map[string]struct{ required, permitted []string }{
	"agent":    {[]string{"instructions"}, []string{"state", "requires", "out", "as", "tools", "model"}},
	"extract":  {[]string{"instructions", "out"}, []string{"state", "requires", "as", "tools", "model"}},
	"decide":   {[]string{"instructions", "out"}, []string{"state", "requires", "as", "tools", "model"}},
	"judge":    {[]string{"state", "out", "as"}, []string{"requires"}},
	"sift":     {[]string{"itemsPath", "out", "as", "keep"}, []string{"state", "describe", "requires"}},
	"route":    {[]string{"state", "branches", "unsure"}, []string{"as", "instructions", "requires"}},
	"escalate": {[]string{"when"}, []string{"kind", "stage", "summary"}},
	"loop":     {[]string{"until", "maxIters", "body"}, nil},
	"map":      {[]string{"itemsPath", "as", "maxConcurrency", "body"}, []string{"resultPath"}},
	"call":     {[]string{"tool", "args", "out", "as", "deadline_s"}, nil},
	"code":     {[]string{"code"}, []string{"as"}},
	"chain":    {[]string{"steps"}, nil},
	"parallel": {[]string{"branches"}, nil},
}

// IsAgentRun says whether a workflow's source is an AgentRun document: a
// JSON object whose v is 2.
func IsAgentRun(source string) bool {
	s := strings.TrimSpace(source)
	if !strings.HasPrefix(s, "{") {
		return false
	}
	var head struct {
		V json.RawMessage `json:"v"`
	}
	return json.Unmarshal([]byte(s), &head) == nil && string(head.V) == "2"
}

// WorkflowReport is what inspecting an AgentRun document found.
type WorkflowReport struct {
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

// ---- parsing ------------------------------------------------------------

// arDoc is a parsed document: its value, and the line of each JSON
// pointer's value.
type arDoc struct {
	v     map[string]any
	lines map[string]int
}

// parseAgentRun reads the JSON of a document strictly: one object, no
// duplicate member names; numbers stay json.Number.
func parseAgentRun(source string) (*arDoc, []refusal.Issue) {
	d := &arDoc{lines: map[string]int{}}
	if n := event.Depth([]byte(source)); n > maxAgentRunDepth {
		return nil, []refusal.Issue{{Path: "/source", Line: 1, Message: fmt.Sprintf("The AgentRun document nests %d levels; a document nests at most %d.", n, maxAgentRunDepth)}}
	}
	dec := json.NewDecoder(strings.NewReader(source))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		line := 1
		var se *json.SyntaxError
		if errorsAs(err, &se) {
			line = lineOfOffset(source, int(se.Offset))
		}
		return nil, []refusal.Issue{{Path: "/source", Line: line, Message: "The AgentRun document is not JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, []refusal.Issue{{Path: "/source", Line: lineOfOffset(source, int(dec.InputOffset())), Message: "The AgentRun document holds more than one JSON value."}}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, []refusal.Issue{{Path: "/source", Line: 1, Message: "An AgentRun document is a JSON object."}}
	}
	d.v = m
	if dup := d.mapLines(source); dup != nil {
		return nil, []refusal.Issue{*dup}
	}
	return d, nil
}

func errorsAs(err error, se **json.SyntaxError) bool {
	if e, ok := err.(*json.SyntaxError); ok {
		*se = e
		return true
	}
	return false
}

func lineOfOffset(s string, off int) int {
	if off > len(s) {
		off = len(s)
	}
	if off < 0 {
		off = 0
	}
	return strings.Count(s[:off], "\n") + 1
}

// mapLines walks the JSON's tokens and notes the line where each pointer's
// value begins; it answers an issue for a member named twice.
func (d *arDoc) mapLines(src string) *refusal.Issue {
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	start := func() int {
		off := int(dec.InputOffset())
		for off < len(src) && strings.IndexByte(" \t\r\n:,", src[off]) >= 0 {
			off++
		}
		return lineOfOffset(src, off)
	}
	var walk func(ptr string) *refusal.Issue
	walk = func(ptr string) *refusal.Issue {
		d.lines[ptr] = start()
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				line := start()
				k, err := dec.Token()
				if err != nil {
					return nil
				}
				key, _ := k.(string)
				if seen[key] {
					return &refusal.Issue{Path: "/source" + ptr + "/" + escapePointer(key), Line: line, Message: fmt.Sprintf("The member %q is given twice.", key)}
				}
				seen[key] = true
				if is := walk(ptr + "/" + escapePointer(key)); is != nil {
					return is
				}
			}
			dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if is := walk(fmt.Sprintf("%s/%d", ptr, i)); is != nil {
					return is
				}
			}
			dec.Token()
		}
		return nil
	}
	return walk("")
}

var escapePointer = jsonptr.Escape

// line is the document line of a pointer, or of its nearest ancestor.
func (d *arDoc) line(ptr string) int {
	for {
		if l, ok := d.lines[ptr]; ok {
			return l
		}
		i := strings.LastIndexByte(ptr, '/')
		if i < 0 {
			return 1
		}
		ptr = ptr[:i]
	}
}

// ---- the inspector ------------------------------------------------------

type inspector struct {
	doc     *arDoc
	catalog map[string]any
	issues  []refusal.Issue
	report  *WorkflowReport
	labels  map[string]string // label → pointer of its first node
	unknown map[string]bool
}

func (in *inspector) add(ptr, format string, args ...any) {
	in.issues = append(in.issues, refusal.Issue{Path: "/source" + ptr, Line: in.doc.line(ptr), Message: fmt.Sprintf(format, args...)})
}

func (in *inspector) note(format string, args ...any) {
	in.unknown[fmt.Sprintf(format, args...)] = true
}

// InspectAgentRun inspects an AgentRun document without executing any of
// it, as the document's native inspection does. The report's issues are
// empty when the document may be saved.
func InspectAgentRun(source string) *WorkflowReport {
	r := &WorkflowReport{Issues: []refusal.Issue{}, Nodes: []NodeReport{}}
	if len(source) > MaxDocument {
		r.Issues = append(r.Issues, refusal.Issue{Path: "/source", Message: fmt.Sprintf("The document takes %d bytes; a document holds at most 65,536 bytes.", len(source))})
		return r
	}
	doc, issues := parseAgentRun(source)
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

func (in *inspector) top() {
	v := in.doc.v
	keys := sortedKeys(v)
	for _, k := range keys {
		if !agentRunTop[k] {
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

// ---- the catalog ----------------------------------------------------------

var definitionsRef = regexp.MustCompile(`^#/definitions/([^/]+)$`)

// schemas checks each catalog schema: its references and that it is a
// valid JSON Schema (compiled with every other schema of the catalog
// beside it, and nothing loaded from anywhere).
func (in *inspector) schemas() {
	refsOK := true
	for _, name := range sortedKeys(in.catalog) {
		if !in.refs("/schemas/"+escapePointer(name), in.catalog[name]) {
			refsOK = false
		}
	}
	if !refsOK {
		return
	}
	for _, is := range compileCatalog(in.catalog) {
		in.add(is.Path, "%s", is.Message)
	}
}

// refs checks every $ref of a schema: #/definitions/<Name> of the catalog.
func (in *inspector) refs(ptr string, s any) bool {
	ok := true
	switch x := s.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			p := ptr + "/" + escapePointer(k)
			switch k {
			case "$ref", "$dynamicRef":
				ref, isStr := x[k].(string)
				if !isStr {
					continue // the schema's compile says what is wrong
				}
				m := definitionsRef.FindStringSubmatch(ref)
				switch {
				case m == nil && in.catalog[ref] != nil:
					in.add(p, "A schema refers to the catalog's schema %s as {\"$ref\":\"#/definitions/%s\"}, not {\"$ref\":%q}.", ref, ref, ref)
					ok = false
				case m == nil:
					in.add(p, "A $ref inside a schema is \"#/definitions/<Name>\", naming a schema of the catalog; %q is not.", ref)
					ok = false
				case in.catalog[m[1]] == nil:
					in.add(p, "%q names no schema of the catalog; its schemas are %s.", ref, strings.Join(sortedKeys(in.catalog), ", "))
					ok = false
				}
			case "const", "enum", "default", "examples", "criteria", "description", "title":
			default:
				if !in.refs(p, x[k]) {
					ok = false
				}
			}
		}
	case []any:
		for i, e := range x {
			if !in.refs(fmt.Sprintf("%s/%d", ptr, i), e) {
				ok = false
			}
		}
	}
	return ok
}

// catalogSchema is the catalog as one JSON Schema whose $defs are its
// schemas (their #/definitions/ references made #/$defs/, so the
// meta-schema checks each one), answering the schema named id.
func catalogSchema(catalog map[string]any, id string) map[string]any {
	defs := map[string]any{}
	for k, s := range catalog {
		defs[k] = toDefs(s)
	}
	out := map[string]any{"$defs": defs}
	if id != "" {
		out["$ref"] = "#/$defs/" + escapePointer(id)
	}
	return out
}

func toDefs(s any) any {
	switch x := s.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			switch k {
			case "$ref":
				if r, ok := e.(string); ok {
					if mm := definitionsRef.FindStringSubmatch(r); mm != nil {
						e = "#/$defs/" + mm[1]
					}
				}
				m[k] = e
			case "const", "enum", "default", "examples":
				m[k] = e
			default:
				m[k] = toDefs(e)
			}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toDefs(e)
		}
		return out
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return s
}

// compileCatalog compiles the catalog and answers its problems at
// /schemas/<Name>/… pointers.
func compileCatalog(catalog map[string]any) []refusal.Issue {
	whole := catalogSchema(catalog, "")
	raw, err := json.Marshal(whole)
	if err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: err.Error()}}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: err.Error()}}
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaBase, doc); err != nil {
		return []refusal.Issue{{Path: "/schemas", Message: "The catalog is not JSON Schema: " + err.Error()}}
	}
	var issues []refusal.Issue
	for _, name := range sortedKeys(catalog) {
		_, err := c.Compile(schemaBase + "#/$defs/" + escapePointer(name))
		if err == nil {
			continue
		}
		if sve, ok := err.(*jsonschema.SchemaValidationError); ok {
			if ve, ok := sve.Err.(*jsonschema.ValidationError); ok {
				seen := map[string]bool{}
				for _, leaf := range leaves(ve) {
					loc := "/" + strings.Join(mapStrings(leaf.InstanceLocation, escapePointer), "/")
					if !strings.HasPrefix(loc, "/$defs/") || seen[loc] {
						continue
					}
					seen[loc] = true
					text := leaf.Error()
					if i := strings.LastIndex(text, "': "); i >= 0 {
						text = text[i+3:]
					}
					issues = append(issues, refusal.Issue{Path: "/schemas/" + strings.TrimPrefix(loc, "/$defs/"),
						Message: "Not a valid JSON Schema: " + text + "."})
				}
				if len(issues) > 0 {
					return dedupeIssues(issues)
				}
			}
		}
		issues = append(issues, refusal.Issue{Path: "/schemas/" + escapePointer(name), Message: "Not a valid JSON Schema: " + err.Error()})
	}
	return dedupeIssues(issues)
}

func dedupeIssues(is []refusal.Issue) []refusal.Issue {
	seen := map[string]bool{}
	out := is[:0]
	for _, i := range is {
		k := i.Path + "\x00" + i.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, i)
		}
	}
	return out
}

// schemaRef checks that a node's or the document's schema id names a
// schema of the catalog.
func (in *inspector) schemaRef(ptr string, id string) bool {
	if in.catalog[id] == nil {
		if strings.HasPrefix(id, "#/definitions/") && in.catalog[strings.TrimPrefix(id, "#/definitions/")] != nil {
			in.add(ptr, "A schema id names the catalog's schema directly: %q, not %q.", strings.TrimPrefix(id, "#/definitions/"), id)
			return false
		}
		in.add(ptr, "%q names no schema of the catalog; its schemas are %s.", id, strings.Join(sortedKeys(in.catalog), ", "))
		return false
	}
	return true
}

// resolve follows a schema's #/definitions/ reference in the catalog.
func (in *inspector) resolve(s any) any {
	for i := 0; i < 16; i++ {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		r, ok := m["$ref"].(string)
		if !ok {
			return s
		}
		mm := definitionsRef.FindStringSubmatch(r)
		if mm == nil || in.catalog[mm[1]] == nil {
			return s
		}
		s = in.catalog[mm[1]]
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// agentRunInfo reads what ledger needs of an AgentRun document: the
// output schema a run's end_run is checked against (output.schemaId's
// schema, with the catalog beside it); with check, the inspection's
// issues.
func agentRunInfo(info *docInfo, source string, check bool) []refusal.Issue {
	if check {
		if r := InspectAgentRun(source); !r.OK {
			return r.Issues
		}
	}
	doc, _ := parseAgentRun(source)
	if doc == nil {
		return nil
	}
	catalog, _ := doc.v["schemas"].(map[string]any)
	out, _ := doc.v["output"].(map[string]any)
	if id, ok := out["schemaId"].(string); ok && catalog[id] != nil {
		info.Schema = catalogSchema(catalog, id)
	}
	return nil
}

// formOf names a workflow's form by its file.
func formOf(p string) string {
	if strings.HasSuffix(p, ".json") {
		return "an AgentRun document"
	}
	return "a YAML workflow"
}

// leaves are the innermost causes of a validation error.
func leaves(ve *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(ve.Causes) == 0 {
		return []*jsonschema.ValidationError{ve}
	}
	var out []*jsonschema.ValidationError
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

func mapStrings(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

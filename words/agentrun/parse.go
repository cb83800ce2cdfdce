package agentrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"quire/words/event"
	"quire/words/jsonptr"
	"quire/words/page"
	"quire/words/refusal"
)

// MaxDepth bounds a document's nesting: a JSON Schema's check against its
// meta-schema takes time that grows fast with its depth (5,000 nested nots
// take minutes), and a workflow's nodes and schemas nest a few levels each.
const MaxDepth = 128

// MaxDocument is the most a document may hold, as every definition's
// document (page-format.md, Limits).
const MaxDocument = page.MaxDocument

// Is says whether a workflow's source is an AgentRun document: a JSON
// object whose v is 2.
func Is(source string) bool {
	s := strings.TrimSpace(source)
	if !strings.HasPrefix(s, "{") {
		return false
	}
	var head struct {
		V json.RawMessage `json:"v"`
	}
	return json.Unmarshal([]byte(s), &head) == nil && string(head.V) == "2"
}

// Doc is a parsed document: its value, and the line of each JSON pointer's
// value.
type Doc struct {
	v     map[string]any
	lines map[string]int
}

// Value is the document as encoding/json decodes it, its numbers kept as
// json.Number. It is the document's own: a caller does not change it.
func (d *Doc) Value() map[string]any { return d.v }

// Parse reads the JSON of a document strictly: one object, nested at most
// MaxDepth levels, no member named twice; numbers stay json.Number. It
// answers nil and the one issue, at /source with its line, when the text
// is no such document.
func Parse(source string) (*Doc, []refusal.Issue) {
	d := &Doc{lines: map[string]int{}}
	if n := event.Depth([]byte(source)); n > MaxDepth {
		return nil, []refusal.Issue{{Path: "/source", Line: 1, Message: fmt.Sprintf("The AgentRun document nests %d levels; a document nests at most %d.", n, MaxDepth)}}
	}
	dec := json.NewDecoder(strings.NewReader(source))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, []refusal.Issue{notJSON(source, err)}
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

// notJSON is the issue of a source the JSON reader refused, at the line
// and column of the character it stopped at (both from 1).
func notJSON(source string, err error) refusal.Issue {
	off, why := len(source), "the text ends before its JSON does"
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// The reader has read Offset bytes when it stops: the last is
		// the one it refused.
		off, why = int(se.Offset)-1, se.Error()
	}
	line := lineOfOffset(source, off)
	col := utf8.RuneCountInString(source[strings.LastIndexByte(source[:max(off, 0)], '\n')+1:max(off, 0)]) + 1
	return refusal.Issue{Path: "/source", Line: line, Message: fmt.Sprintf("The document is not JSON: at line %d, column %d, %s.", line, col, why)}
}

// agentRunFields are the top-level fields only an AgentRun document has:
// a JSON workflow with one of them is meant as one.
var agentRunFields = []string{"v", "schemas", "root"}

// Misread answers why a workflow's source that is not an AgentRun
// document (Is is false) is refused all the same, or nil. JSON is YAML,
// so without it such a source would be saved as a YAML workflow with
// none of the AgentRun checks. A source that begins with "{" is JSON: one
// that does not parse is refused at the JSON's own line and column (the
// YAML reader would name another line, in a flow mapping's words), and a
// JSON object with AgentRun's own top-level fields (v, schemas, root)
// whose v is not the number 2 is refused at /source/v. Any other JSON
// object is a YAML workflow written as JSON.
func Misread(source string) *refusal.Issue {
	if !strings.HasPrefix(strings.TrimSpace(source), "{") || Is(source) {
		return nil
	}
	doc, issues := Parse(source)
	if doc == nil {
		return &issues[0]
	}
	var has []string
	for _, f := range agentRunFields {
		if _, ok := doc.v[f]; ok {
			has = append(has, f)
		}
	}
	if len(has) == 0 {
		return nil
	}
	msg := "An AgentRun document has \"v\": 2, the version of the format quire reads"
	switch v, ok := doc.v["v"]; {
	case !ok:
		msg += fmt.Sprintf("; this one has %s and no v.", strings.Join(has, " and "))
	case isString(v):
		msg += fmt.Sprintf(", a number; not %s, a string.", jsonText(v))
	default:
		msg += fmt.Sprintf("; not %s.", jsonText(v))
	}
	return &refusal.Issue{Path: "/source/v", Line: doc.Line("/v"), Message: msg}
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
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
func (d *Doc) mapLines(src string) *refusal.Issue {
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

// Line is the document line of a JSON pointer's value, or of its nearest
// ancestor's (1 for the document).
func (d *Doc) Line(ptr string) int {
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

// Node finds the node labelled label, the first in document order, and
// answers its JSON pointer in the document and the node; "" and nil when
// no node has that label.
func (d *Doc) Node(label string) (string, map[string]any) {
	return findLabel(d.v["root"], "/root", label)
}

func findLabel(v any, ptr, label string) (string, map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if _, isNode := x["node"]; isNode && x["label"] == label {
			return ptr, x
		}
		for _, k := range sortedKeys(x) {
			if p, n := findLabel(x[k], ptr+"/"+escapePointer(k), label); n != nil {
				return p, n
			}
		}
	case []any:
		for i, e := range x {
			if p, n := findLabel(e, fmt.Sprintf("%s/%d", ptr, i), label); n != nil {
				return p, n
			}
		}
	}
	return "", nil
}

// OutputSchema is the schema a run's output is checked against:
// output.schemaId's schema, as one JSON Schema with the catalog beside it
// in its $defs; nil when the document names no schema of its catalog.
func (d *Doc) OutputSchema() map[string]any { return d.schemaOf("output") }

// InputSchema is the schema a run's input is checked against when the run
// starts: input.schemaId's, as OutputSchema; nil when the document names
// none (input is optional).
func (d *Doc) InputSchema() map[string]any { return d.schemaOf("input") }

func (d *Doc) schemaOf(field string) map[string]any {
	catalog, _ := d.v["schemas"].(map[string]any)
	m, _ := d.v[field].(map[string]any)
	if id, ok := m["schemaId"].(string); ok && catalog[id] != nil {
		return catalogSchema(catalog, id)
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

package agentrun

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The workflow state as inspection knows it: the typed keys each node
// produces, and the paths a node reads checked against them, as the
// document's table "Check the edges before running" says.

// value is what a state key holds, as far as inspection knows it.
type value struct {
	schema  any    // a JSON Schema the value matches
	name    string // the catalog id of schema, when it is one
	array   *value
	fields  map[string]*value // a value quire's reading of the node makes
	closed  bool              // fields are all there are
	unknown string            // why the shape is unknown; "" when known
	desc    string            // what it is, when no schema says it
}

func unknownValue(why string) *value { return &value{unknown: why} }

func (v *value) String() string {
	switch {
	case v == nil:
		return "unknown"
	case v.unknown != "":
		return "unknown (" + v.unknown + ")"
	case v.desc != "":
		return v.desc
	case v.array != nil:
		return "array of " + v.array.String()
	case v.fields != nil:
		parts := []string{}
		for _, k := range sortedKeys(v.fields) {
			parts = append(parts, k+": "+v.fields[k].String())
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case v.name != "":
		return v.name
	}
	b, _ := json.Marshal(v.schema)
	if len(b) > 80 {
		b = append(b[:77], "..."...)
	}
	return "schema " + string(b)
}

// state is the workflow state at a point of the document: its known
// top-level keys, and whether others may be there (open).
type state struct {
	keys map[string]*value
	open bool
}

func newState() *state { return &state{keys: map[string]*value{}} }

func (s *state) clone() *state {
	c := &state{keys: make(map[string]*value, len(s.keys)), open: s.open}
	for k, v := range s.keys {
		c.keys[k] = v
	}
	return c
}

// inputState is the state the input starts: the input schema's properties.
func (in *inspector) inputState(id string) *state {
	st := newState()
	s, _ := in.resolve(in.catalog[id]).(map[string]any)
	props, _ := s["properties"].(map[string]any)
	for k, p := range props {
		st.keys[k] = in.schemaValue(p)
	}
	if ap, ok := s["additionalProperties"].(bool); !ok || ap {
		st.open = true
		in.note("the input schema %s is open: other input keys may be there", id)
	}
	return st
}

// schemaValue is the value of a schema, named when it is the catalog's.
func (in *inspector) schemaValue(s any) *value {
	v := &value{schema: s}
	if m, ok := s.(map[string]any); ok {
		if r, ok := m["$ref"].(string); ok {
			if mm := definitionsRef.FindStringSubmatch(r); mm != nil {
				v.name = mm[1]
			}
		}
	}
	return v
}

func (in *inspector) named(id string) *value {
	return &value{schema: in.catalog[id], name: id}
}

func orUnknown(v *value, what string) *value {
	if v == nil {
		return unknownValue(what)
	}
	return v
}

func jsonText(v any) string {
	if v == nil {
		return "nothing"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func stringList(v any) bool {
	l, ok := v.([]any)
	for _, e := range l {
		if _, isStr := e.(string); !isStr {
			return false
		}
	}
	return ok
}

func intField(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

func positive(n json.Number) bool {
	f, err := n.Float64()
	return err == nil && f > 0
}

// statePath is a path in workflow state: dot-separated names and indexes.
var statePath = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*(\$answers)?(\.[A-Za-z0-9_$-]+)*$`)

var stateKeyRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

func (in *inspector) stateKey(ptr string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok || !stateKeyRE.MatchString(s) {
		in.add(ptr, "as names a top-level state key (letters, digits, _, $ and -), not %s.", jsonText(v))
		return "", false
	}
	return s, true
}

var templateRE = regexp.MustCompile(`\{([^{}\s]+)\}`)

// templates checks the {path} of each string in a state or args map as a
// consumed path.
func (in *inspector) templates(ptr string, v any, st *state) {
	switch x := v.(type) {
	case string:
		for _, mm := range templateRE.FindAllStringSubmatch(x, -1) {
			if statePath.MatchString(mm[1]) {
				in.consume(ptr, mm[1], st)
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(x) {
			in.templates(ptr+"/"+escapePointer(k), x[k], st)
		}
	case []any:
		for i, e := range x {
			in.templates(fmt.Sprintf("%s/%d", ptr, i), e, st)
		}
	}
}

// consume checks a path a node reads against what state holds there: a
// path a known closed producer excludes is refused; an unknown shape is
// noted, not guessed. It answers the value at the path.
func (in *inspector) consume(ptr, path string, st *state) *value {
	segs := strings.Split(path, ".")
	v := st.keys[segs[0]]
	if v == nil {
		if !st.open {
			in.add(ptr, "%q is not in workflow state here: the state's keys are %s (a closed input schema and known producers).", segs[0], strings.Join(sortedKeys(st.keys), ", "))
			return nil
		}
		return unknownValue(segs[0] + " is not known to be produced")
	}
	at := segs[0]
	for _, seg := range segs[1:] {
		next, why := in.child(v, seg)
		if why != "" {
			in.add(ptr, "%q: %s at %s has no %q (%s).", path, v.String(), at, seg, why)
			return nil
		}
		v, at = next, at+"."+seg
	}
	return v
}

// child is the value at one more segment, or why a closed shape excludes it.
func (in *inspector) child(v *value, seg string) (*value, string) {
	_, numErr := fmt.Sscanf(seg, "%d", new(int))
	isIndex := numErr == nil
	switch {
	case v.unknown != "":
		return v, ""
	case v.array != nil:
		if isIndex {
			return v.array, ""
		}
		return nil, "an array is still an array: select an item or assemble an object"
	case v.fields != nil:
		if f := v.fields[seg]; f != nil {
			return f, ""
		}
		if v.closed {
			return nil, "its fields are " + strings.Join(sortedKeys(v.fields), ", ")
		}
		return unknownValue("an open value"), ""
	}
	s, ok := in.resolve(v.schema).(map[string]any)
	if !ok {
		return unknownValue("an open schema"), ""
	}
	for _, u := range []string{"anyOf", "oneOf", "allOf", "if", "$dynamicRef"} {
		if _, has := s[u]; has {
			in.note("%s is a union or conditional schema: paths under it are not checked", v.String())
			return unknownValue("a union"), ""
		}
	}
	typ, _ := s["type"].(string)
	if typ == "array" {
		if isIndex {
			return in.schemaValue(s["items"]), ""
		}
		return nil, "an array is still an array: select an item or assemble an object"
	}
	switch typ {
	case "string", "number", "integer", "boolean", "null":
		return nil, "a " + typ + " has no fields"
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if p, ok := props[seg]; ok {
			return in.schemaValue(p), ""
		}
	}
	if ap, ok := s["additionalProperties"].(bool); ok && !ap {
		props, _ := s["properties"].(map[string]any)
		return nil, "the schema is closed; its properties are " + strings.Join(sortedKeys(props), ", ")
	}
	in.note("%s is an open schema: paths beyond its properties are not checked", v.String())
	return unknownValue("an open schema"), ""
}

// elementOf is the item of a list at path, refusing a known non-list.
func (in *inspector) elementOf(ptr, path string, v *value) *value {
	if v == nil || v.unknown != "" {
		return nil
	}
	if v.array != nil {
		return v.array
	}
	if v.fields != nil {
		in.add(ptr, "%q is %s, not a list.", path, v.String())
		return nil
	}
	s, _ := in.resolve(v.schema).(map[string]any)
	switch t, _ := s["type"].(string); t {
	case "array":
		return in.schemaValue(s["items"])
	case "":
		return nil
	default:
		in.add(ptr, "%q is a %s, not a list.", path, t)
	}
	return nil
}

// flat checks a judge's or sift's question schema: an object whose every
// property is a described boolean, enum, or integer with 2 to 10 level
// descriptions in criteria. It answers the property names.
func (in *inspector) flat(ptr, id, kind string) map[string]any {
	s, _ := in.resolve(in.catalog[id]).(map[string]any)
	props, _ := s["properties"].(map[string]any)
	at := "/schemas/" + escapePointer(id)
	if len(props) == 0 {
		in.add(at, "%s's schema %s is flat: an object whose properties are its questions.", capital(kind), id)
		return nil
	}
	for _, name := range sortedKeys(props) {
		pp := at + "/properties/" + escapePointer(name)
		p, _ := props[name].(map[string]any)
		if d, _ := p["description"].(string); strings.TrimSpace(d) == "" {
			in.add(pp, "Each question of a %s's schema states itself in its description.", kind)
		}
		typ, _ := p["type"].(string)
		_, isEnum := p["enum"].([]any)
		switch {
		case typ == "boolean", isEnum && typ != "object" && typ != "array":
		case typ == "integer":
			if c, ok := p["criteria"].([]any); !ok || len(c) < 2 || len(c) > 10 || !stringList(p["criteria"]) {
				in.add(pp, "An integer question of a %s has 2 to 10 level descriptions in criteria (scores 0 to the last level's index).", kind)
			}
		default:
			in.add(pp, "%s's schema is flat: each property is a boolean, an enum, or an integer with 2 to 10 level descriptions in criteria.", capital(kind))
		}
	}
	return props
}

// keep checks a sift's keep: {path: a question of out, gte: a probability}.
func (in *inspector) keep(ptr string, v any, props map[string]any) {
	if v == nil {
		return
	}
	k, ok := v.(map[string]any)
	p, isStr := k["path"].(string)
	if !ok || !isStr {
		in.add(ptr, "keep is {\"path\": <a question of out>, \"gte\": <probability>}.")
		return
	}
	if props != nil && props[p] == nil {
		in.add(ptr+"/path", "keep.path %q is no question of out; its questions are %s.", p, strings.Join(sortedKeys(props), ", "))
	}
	if _, has := k["gte"]; has {
		in.probability(ptr+"/gte", k["gte"])
	}
}

func (in *inspector) probability(ptr string, v any) {
	n, ok := v.(json.Number)
	f, err := n.Float64()
	if !ok || err != nil || f < 0 || f > 1 {
		in.add(ptr, "gte is a probability from 0 to 1, not %s.", jsonText(v))
	}
}

// predicates are the predicates the format names: empty (the nonempty
// guard's opposite) and field_equals (with value). Mechanical checks
// belong in predicates, and the format names no others, so any other name
// would be a predicate no runner evaluates.
var predicates = []string{"empty", "field_equals"}

// predicate checks an escalate's when or a loop's until.
func (in *inspector) predicate(ptr string, v any, st *state) {
	if v == nil {
		return
	}
	w, ok := v.(map[string]any)
	pred, isStr := w["predicate"].(string)
	if !ok || !isStr || pred == "" {
		in.add(ptr, "A predicate is {\"predicate\": <name>, \"path\": <state path>, ...}, such as {\"predicate\": \"empty\", \"path\": \"selected.items\"}.")
		return
	}
	if !slices.Contains(predicates, pred) {
		in.add(ptr+"/predicate", "The format's predicates are %s; not %q.", strings.Join(predicates, " and "), pred)
		return
	}
	p, hasPath := w["path"].(string)
	if !hasPath || !statePath.MatchString(p) {
		in.add(ptr+"/path", "The predicate %s needs path, a state path.", pred)
		return
	}
	if _, has := w["value"]; pred == "field_equals" && !has {
		in.add(ptr, "The predicate field_equals needs value.")
	}
	in.consume(ptr+"/path", p, st)
}

package ledger

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The nodes of an AgentRun document, each checked against its kind's
// fields, and the typed state keys each produces, as the table "Check the
// edges before running" says.

// arValue is what a state key holds, as far as inspection knows it.
type arValue struct {
	schema  any    // a JSON Schema the value matches
	name    string // the catalog id of schema, when it is one
	array   *arValue
	fields  map[string]*arValue // a value quire's reading of the node makes
	closed  bool                // fields are all there are
	unknown string              // why the shape is unknown; "" when known
	desc    string              // what it is, when no schema says it
}

func unknownValue(why string) *arValue { return &arValue{unknown: why} }

func (v *arValue) String() string {
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

// arState is the workflow state at a point of the document: its known
// top-level keys, and whether others may be there (open).
type arState struct {
	keys map[string]*arValue
	open bool
}

func newState() *arState { return &arState{keys: map[string]*arValue{}} }

func (s *arState) clone() *arState {
	c := &arState{keys: make(map[string]*arValue, len(s.keys)), open: s.open}
	for k, v := range s.keys {
		c.keys[k] = v
	}
	return c
}

// inputState is the state the input starts: the input schema's properties.
func (in *inspector) inputState(id string) *arState {
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
func (in *inspector) schemaValue(s any) *arValue {
	v := &arValue{schema: s}
	if m, ok := s.(map[string]any); ok {
		if r, ok := m["$ref"].(string); ok {
			if mm := definitionsRef.FindStringSubmatch(r); mm != nil {
				v.name = mm[1]
			}
		}
	}
	return v
}

func (in *inspector) named(id string) *arValue {
	return &arValue{schema: in.catalog[id], name: id}
}

var stepLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// node checks one node and adds what it produces to st; it answers the
// value the node stores (under as or its label), nil for control nodes.
func (in *inspector) node(ptr string, m map[string]any, parent string, st *arState) *arValue {
	kind, _ := m["node"].(string)
	spec, known := nodeFields[kind]
	if !known {
		in.add(ptr+"/node", "node is the node's kind: one of agent, extract, decide, judge, sift, route, escalate, loop, map, call, code, chain or parallel; not %s.", jsonText(m["node"]))
		return nil
	}
	label, _ := m["label"].(string)
	step := label
	switch {
	case !stepLabel.MatchString(label):
		in.add(ptr+"/label", "Every node has a label (its step): 1 to 64 letters, digits, '-', '_' and '.', beginning with a letter or digit; not %s.", jsonText(m["label"]))
	case in.labels[label] != "":
		in.add(ptr+"/label", "The label %q is already the label of the node at %s; labels are unique.", label, in.labels[label])
	default:
		in.labels[label] = ptr
	}
	if parent != "" {
		step = parent + "/" + label
	}
	nr := NodeReport{Label: label, Step: step, Kind: kind, Pointer: ptr}
	in.report.Nodes = append(in.report.Nodes, nr)
	idx := len(in.report.Nodes) - 1
	produce := func(k string, v *arValue) {
		st.keys[k] = v
		in.report.Nodes[idx].Produces = append(in.report.Nodes[idx].Produces, StateKey{Key: k, Value: v.String()})
	}

	allowed := map[string]bool{"node": true, "label": true}
	for _, f := range spec.required {
		allowed[f] = true
		if _, ok := m[f]; !ok {
			in.add(ptr, "A %s node needs %s.", kind, f)
		}
	}
	for _, f := range spec.permitted {
		allowed[f] = true
	}
	for _, f := range sortedKeys(m) {
		if allowed[f] {
			continue
		}
		switch {
		case kind == "code":
			in.add(ptr+"/"+escapePointer(f), "A code node permits only node, label, code and optional as; not %s. The function receives the full workflow state.", f)
		case kind == "judge" && f == "instructions":
			in.add(ptr+"/instructions", "A judge has no instructions: put each complete question in its output schema property's description (and its decision criteria in criteria).")
		default:
			in.add(ptr+"/"+escapePointer(f), "A %s node has %s; not %s.", kind, fieldList(spec.required, spec.permitted), f)
		}
	}

	// Fields several kinds share.
	as, hasAs := "", false
	if v, ok := m["as"]; ok {
		as, hasAs = in.stateKey(ptr+"/as", v)
	}
	key := as
	if !hasAs {
		key = label
	}
	var out *arValue
	if v, ok := m["out"]; ok {
		if id, isStr := v.(string); !isStr {
			in.add(ptr+"/out", "out names a schema of the catalog.")
		} else if in.schemaRef(ptr+"/out", id) {
			out = in.named(id)
		}
	}
	if v, ok := m["state"]; ok {
		sm, isMap := v.(map[string]any)
		switch {
		case !isMap:
			in.add(ptr+"/state", "state is an object from names to values, {path} naming a state path.")
		case len(sm) == 0 && (kind == "judge" || kind == "route"):
			in.add(ptr+"/state", "A %s has a nonempty state map.", kind)
		default:
			in.templates(ptr+"/state", sm, st)
		}
	}
	if v, ok := m["requires"]; ok {
		rs, isList := v.([]any)
		if !isList {
			in.add(ptr+"/requires", "requires is a list of state paths, such as [\"text\"].")
		}
		for i, r := range rs {
			p := fmt.Sprintf("%s/requires/%d", ptr, i)
			s, isStr := r.(string)
			if !isStr || !statePath.MatchString(s) {
				in.add(p, "requires names a path in workflow state (such as notes.0.text), not %s.", jsonText(r))
				continue
			}
			in.consume(p, s, st)
		}
	}

	switch kind {
	case "agent", "extract", "decide":
		if v, ok := m["instructions"]; ok {
			if s, isStr := v.(string); !isStr || strings.TrimSpace(s) == "" {
				in.add(ptr+"/instructions", "instructions are literal prose: a nonempty string.")
			}
		}
		if v, ok := m["tools"]; ok {
			if !stringList(v) {
				in.add(ptr+"/tools", "tools is a list of host tool names ([] for none).")
			}
		}
		val := out
		if val == nil {
			val = unknownValue("an agent without out")
		}
		produce(key, val)
		return val
	case "judge":
		if out != nil {
			in.flat(ptr+"/out", out.name, kind)
			produce(key, out)
			produce(key+"$answers", unknownValue("raw answers"))
			return out
		}
	case "sift":
		var items *arValue
		if p, ok := m["itemsPath"].(string); ok && statePath.MatchString(p) {
			items = in.consume(ptr+"/itemsPath", p, st)
			items = in.elementOf(ptr+"/itemsPath", p, items)
		} else if _, present := m["itemsPath"]; present {
			in.add(ptr+"/itemsPath", "itemsPath is the state path of the list the node reads.")
		}
		if out != nil {
			props := in.flat(ptr+"/out", out.name, kind)
			in.keep(ptr+"/keep", m["keep"], props)
		}
		if items == nil {
			items = unknownValue("the items of itemsPath")
		}
		val := &arValue{fields: map[string]*arValue{
			"items": {array: items}, "values": {array: orUnknown(out, "out")}, "answers": {array: unknownValue("raw answers")}}, closed: true}
		produce(key, val)
		return val
	case "route":
		branches, _ := m["branches"].(map[string]any)
		if _, present := m["branches"]; present && len(branches) < 2 {
			in.add(ptr+"/branches", "A route has at least two named branches, each an object with body.")
		}
		names := sortedKeys(branches)
		val := &arValue{fields: map[string]*arValue{"taken": {schema: map[string]any{"enum": names}, desc: "one of " + strings.Join(names, ", ")}}}
		produce(key, val)
		if u, present := m["unsure"]; present {
			um, _ := u.(map[string]any)
			b, _ := um["branch"].(string)
			if branches[b] == nil {
				in.add(ptr+"/unsure", "unsure is {\"branch\": <one of the route's branches: %s>, \"gte\": <confidence>}.", strings.Join(names, ", "))
			}
			in.probability(ptr+"/unsure/gte", um["gte"])
		}
		before := st.clone()
		for _, b := range names {
			bp := ptr + "/branches/" + escapePointer(b)
			bm, ok := branches[b].(map[string]any)
			body, hasBody := bm["body"].(map[string]any)
			if !ok || !hasBody {
				in.add(bp, "A route's branch is an object with body (a node), and optional criteria.")
				continue
			}
			for _, f := range sortedKeys(bm) {
				if f != "body" && f != "criteria" {
					in.add(bp+"/"+escapePointer(f), "A route's branch has body and criteria; not %s.", f)
				}
			}
			bs := before.clone()
			in.node(bp+"/body", body, step, bs)
			for k, v := range bs.keys {
				if before.keys[k] != v {
					if st.keys[k] == nil {
						in.note("%s is set only when its branch of %s runs", k, label)
					}
					st.keys[k] = v
				}
			}
			st.open = st.open || bs.open
		}
		return val
	case "escalate":
		in.predicate(ptr+"/when", m["when"], st)
		for _, f := range []string{"kind", "stage", "summary"} {
			if v, ok := m[f]; ok {
				if _, isStr := v.(string); !isStr {
					in.add(ptr+"/"+f, "%s is a string.", f)
				}
			}
		}
		return nil
	case "loop":
		if n, ok := intField(m["maxIters"]); !ok || n < 1 || n > 20 {
			if _, present := m["maxIters"]; present {
				in.add(ptr+"/maxIters", "A loop's maxIters is an integer from 1 through 20; reaching the bound is not proof of success.")
			}
		}
		if body, ok := m["body"].(map[string]any); ok {
			in.node(ptr+"/body", body, step, st)
		} else if _, present := m["body"]; present {
			in.add(ptr+"/body", "A loop's body is a node.")
		}
		in.predicate(ptr+"/until", m["until"], st)
		return nil
	case "map":
		var items *arValue
		if p, ok := m["itemsPath"].(string); ok && statePath.MatchString(p) {
			items = in.elementOf(ptr+"/itemsPath", p, in.consume(ptr+"/itemsPath", p, st))
		} else if _, present := m["itemsPath"]; present {
			in.add(ptr+"/itemsPath", "itemsPath is the state path of the list the node maps over.")
		}
		if _, present := m["maxConcurrency"]; present {
			if n, ok := intField(m["maxConcurrency"]); !ok || n < 1 || n > 64 {
				in.add(ptr+"/maxConcurrency", "A map bounds maxConcurrency: an integer from 1 to 64.")
			}
		}
		resultPath, hasResult := m["resultPath"].(string)
		if _, present := m["resultPath"]; present && (!hasResult || !statePath.MatchString(resultPath)) {
			in.add(ptr+"/resultPath", "resultPath is a state path of the body's final state.")
			hasResult = false
		}
		var per *arValue
		if body, ok := m["body"].(map[string]any); ok {
			bs := st.clone()
			if items == nil {
				items = unknownValue("the items of itemsPath")
			}
			bs.keys["item"] = items
			bs.keys["item_index"] = &arValue{schema: map[string]any{"type": "integer"}}
			bodyVal := in.node(ptr+"/body", body, step, bs)
			_, bodyAs := body["as"]
			switch {
			case hasResult:
				per = in.consume(ptr+"/resultPath", resultPath, bs)
			case bodyAs && bodyVal != nil:
				per = bodyVal
			default:
				fields := map[string]*arValue{}
				for k, v := range bs.keys {
					fields[k] = v
				}
				per = &arValue{fields: fields, closed: !bs.open}
				in.note("%s keeps whole item states (a body without as or resultPath)", label)
			}
		} else if _, present := m["body"]; present {
			in.add(ptr+"/body", "A map's body is a node.")
		}
		val := &arValue{array: orUnknown(per, "the map's body")}
		if hasAs {
			produce(as, val)
		}
		return val
	case "call":
		if t, ok := m["tool"].(string); !ok || strings.TrimSpace(t) == "" {
			if _, present := m["tool"]; present {
				in.add(ptr+"/tool", "tool is the host tool's name.")
			}
		}
		if a, ok := m["args"]; ok {
			am, isMap := a.(map[string]any)
			if !isMap {
				in.add(ptr+"/args", "args is an object of the tool's typed arguments.")
			} else {
				in.templates(ptr+"/args", am, st)
			}
		}
		if d, present := m["deadline_s"]; present {
			if n, ok := d.(json.Number); !ok || !positive(n) {
				in.add(ptr+"/deadline_s", "deadline_s is a positive number of seconds.")
			}
		}
		if out != nil && hasAs {
			produce(as, out)
		}
		return out
	case "code":
		if c, ok := m["code"].(string); ok {
			for _, is := range checkCode(c) {
				in.add(ptr+"/code", "%s", is)
			}
		} else if _, present := m["code"]; present {
			in.add(ptr+"/code", "code is a single synchronous function expression, as a string.")
		}
		if hasAs {
			val := unknownValue("dynamic code")
			produce(as, val)
			return val
		}
		st.open = true
		in.note("%s returns a patch merged into state (or a non-object under %s): its keys are not known", label, label)
		produce(label, unknownValue("dynamic code: a non-object return; an object is merged as a patch"))
		return nil
	case "chain":
		steps, ok := m["steps"].([]any)
		if _, present := m["steps"]; present && (!ok || len(steps) == 0) {
			in.add(ptr+"/steps", "A chain's steps are a nonempty list of nodes.")
		}
		for i, s := range steps {
			p := fmt.Sprintf("%s/steps/%d", ptr, i)
			if sm, ok := s.(map[string]any); ok {
				in.node(p, sm, step, st)
			} else {
				in.add(p, "A step is a node (an object with node and label).")
			}
		}
		return nil
	case "parallel":
		bs, ok := m["branches"].([]any)
		if _, present := m["branches"]; present && (!ok || len(bs) == 0) {
			in.add(ptr+"/branches", "A parallel's branches are a nonempty list of nodes.")
		}
		before := st.clone()
		writer := map[string]int{}
		for i, b := range bs {
			p := fmt.Sprintf("%s/branches/%d", ptr, i)
			bm, ok := b.(map[string]any)
			if !ok {
				in.add(p, "A branch is a node (an object with node and label).")
				continue
			}
			s := before.clone()
			in.node(p, bm, step, s)
			for _, k := range sortedKeys(s.keys) {
				if before.keys[k] == s.keys[k] {
					continue
				}
				if j, dup := writer[k]; dup {
					in.add(p, "Parallel branches write different top-level keys: branches %d and %d both write %q.", j, i, k)
				}
				writer[k] = i
				st.keys[k] = s.keys[k]
			}
			st.open = st.open || s.open
		}
		return nil
	}
	return nil
}

func orUnknown(v *arValue, what string) *arValue {
	if v == nil {
		return unknownValue(what)
	}
	return v
}

func fieldList(required, permitted []string) string {
	all := append([]string{"node", "label"}, required...)
	if len(permitted) > 0 {
		all = append(all, "optional "+strings.Join(permitted, ", "))
	}
	return strings.Join(all, ", ")
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
func (in *inspector) templates(ptr string, v any, st *arState) {
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
func (in *inspector) consume(ptr, path string, st *arState) *arValue {
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
func (in *inspector) child(v *arValue, seg string) (*arValue, string) {
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
func (in *inspector) elementOf(ptr, path string, v *arValue) *arValue {
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
		in.add(at, "A %s's schema %s is flat: an object whose properties are its questions.", kind, id)
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
			in.add(pp, "A %s's schema is flat: each property is a boolean, an enum, or an integer with 2 to 10 level descriptions in criteria.", kind)
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

// predicate checks an escalate's when or a loop's until.
func (in *inspector) predicate(ptr string, v any, st *arState) {
	if v == nil {
		return
	}
	w, ok := v.(map[string]any)
	pred, isStr := w["predicate"].(string)
	if !ok || !isStr || pred == "" {
		in.add(ptr, "A predicate is {\"predicate\": <name>, \"path\": <state path>, ...}, such as {\"predicate\": \"empty\", \"path\": \"selected.items\"}.")
		return
	}
	p, hasPath := w["path"].(string)
	switch pred {
	case "empty", "field_equals":
		if !hasPath || !statePath.MatchString(p) {
			in.add(ptr+"/path", "The predicate %s needs path, a state path.", pred)
			return
		}
		if _, has := w["value"]; pred == "field_equals" && !has {
			in.add(ptr, "The predicate field_equals needs value.")
		}
	}
	if hasPath && statePath.MatchString(p) {
		in.consume(ptr+"/path", p, st)
	}
}

// output checks the final selection: output.path in the final state
// against output.schemaId.
func (in *inspector) output(st *arState) {
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

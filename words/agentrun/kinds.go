package agentrun

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// A kind is one node kind: the fields its nodes take and its check.
type kind struct {
	name string
	// required are the fields a node of the kind must have, permitted
	// the others it may have; node and label are every node's.
	required, permitted []string
	// nonemptyState: the node's state map names at least one value.
	nonemptyState bool
	// refuse words a field the kind does not take, where the kind says
	// more than the common words; "" leaves them.
	refuse func(field string) string
	// check checks the kind's own fields and stores what the node
	// produces; it answers the value the node stores (under as or its
	// label), nil for a control node.
	check func(in *inspector, n *nodeAt) *value
}

// kinds is the table of node kinds, in the order the document lists them.
// It is filled by init because a control kind's check walks its body
// through node, which reads the table: Go refuses a variable whose
// initializer refers to itself.
var kinds []kind

// kindNamed indexes kinds by name; kindList names them for a refusal.
var (
	kindNamed map[string]*kind
	kindList  string
)

func init() {
	agentFields := []string{"state", "requires", "as", "tools", "model"}
	kinds = []kind{
		{name: "agent", required: []string{"instructions"}, permitted: []string{"state", "requires", "out", "as", "tools", "model"}, check: checkAgent},
		{name: "extract", required: []string{"instructions", "out"}, permitted: agentFields, check: checkAgent},
		{name: "decide", required: []string{"instructions", "out"}, permitted: agentFields, check: checkAgent},
		{name: "judge", required: []string{"state", "out", "as"}, permitted: []string{"requires"}, nonemptyState: true, check: checkJudge,
			refuse: func(f string) string {
				if f == "instructions" {
					return "A judge has no instructions: put each complete question in its output schema property's description (and its decision criteria in criteria)."
				}
				return ""
			}},
		{name: "sift", required: []string{"itemsPath", "out", "as", "keep"}, permitted: []string{"state", "describe", "requires"}, check: checkSift},
		{name: "route", required: []string{"state", "branches", "unsure"}, permitted: []string{"as", "instructions", "requires"}, nonemptyState: true, check: checkRoute},
		{name: "escalate", required: []string{"when"}, permitted: []string{"kind", "stage", "summary"}, check: checkEscalate},
		{name: "loop", required: []string{"until", "maxIters", "body"}, check: checkLoop},
		{name: "map", required: []string{"itemsPath", "as", "maxConcurrency", "body"}, permitted: []string{"resultPath"}, check: checkMap},
		{name: "call", required: []string{"tool", "args", "out", "as", "deadline_s"}, check: checkCall},
		{name: "code", required: []string{"code"}, permitted: []string{"as"}, check: checkCodeNode,
			refuse: func(f string) string {
				return fmt.Sprintf("A code node permits only node, label, code and optional as; not %s. The function receives the full workflow state.", f)
			}},
		{name: "chain", required: []string{"steps"}, check: checkChain},
		{name: "parallel", required: []string{"branches"}, check: checkParallel},
	}
	kindNamed = make(map[string]*kind, len(kinds))
	names := make([]string, len(kinds))
	for i := range kinds {
		kindNamed[kinds[i].name] = &kinds[i]
		names[i] = kinds[i].name
	}
	kindList = strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// capital is a kind's name after its article, to begin a sentence: "An
// agent", "A judge".
func capital(name string) string {
	if strings.ContainsRune("aeiou", rune(name[0])) {
		return "An " + name
	}
	return "A " + name
}

// nodeAt is a node under check: where it is, its fields, and what the
// fields every kind shares gave.
type nodeAt struct {
	ptr   string
	m     map[string]any
	kind  *kind
	label string
	step  string // the label path, the step its events name
	as    string // the as field, when hasAs
	hasAs bool
	key   string // where the node stores its value: as, else its label
	out   *value // out's schema, nil without one
	st    *state
	index int // of its NodeReport
}

// produce stores v under the top-level key k and says so in the node's
// report.
func (in *inspector) produce(n *nodeAt, k string, v *value) {
	n.st.keys[k] = v
	in.report.Nodes[n.index].Produces = append(in.report.Nodes[n.index].Produces, StateKey{Key: k, Value: v.String()})
}

var stepLabel = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// node checks one node and adds what it produces to st; it answers the
// value the node stores (under as or its label), nil for control nodes.
func (in *inspector) node(ptr string, m map[string]any, parent string, st *state) *value {
	name, _ := m["node"].(string)
	k := kindNamed[name]
	if k == nil {
		in.add(ptr+"/node", "node is the node's kind: one of %s; not %s.", kindList, jsonText(m["node"]))
		return nil
	}
	n := &nodeAt{ptr: ptr, m: m, kind: k, st: st}
	n.label, _ = m["label"].(string)
	n.step = n.label
	switch {
	case !stepLabel.MatchString(n.label):
		in.add(ptr+"/label", "Every node has a label (its step): 1 to 64 letters, digits, '-', '_' and '.', beginning with a letter or digit; not %s.", jsonText(m["label"]))
	case in.labels[n.label] != "":
		in.add(ptr+"/label", "The label %q is already the label of the node at %s; labels are unique.", n.label, in.labels[n.label])
	default:
		in.labels[n.label] = ptr
	}
	if parent != "" {
		n.step = parent + "/" + n.label
	}
	in.report.Nodes = append(in.report.Nodes, NodeReport{Label: n.label, Step: n.step, Kind: name, Pointer: ptr})
	n.index = len(in.report.Nodes) - 1
	in.fields(n)
	in.shared(n)
	return k.check(in, n)
}

// fields checks that a node has its kind's required fields and no field
// its kind does not take.
func (in *inspector) fields(n *nodeAt) {
	k := n.kind
	allowed := map[string]bool{"node": true, "label": true}
	for _, f := range k.required {
		allowed[f] = true
		if _, ok := n.m[f]; !ok {
			in.add(n.ptr, "%s node needs %s.", capital(k.name), f)
		}
	}
	for _, f := range k.permitted {
		allowed[f] = true
	}
	for _, f := range sortedKeys(n.m) {
		if allowed[f] {
			continue
		}
		msg := ""
		if k.refuse != nil {
			msg = k.refuse(f)
		}
		if msg == "" {
			msg = fmt.Sprintf("%s node has %s; not %s.", capital(k.name), fieldList(k.required, k.permitted), f)
		}
		in.add(n.ptr+"/"+escapePointer(f), "%s", msg)
	}
}

func fieldList(required, permitted []string) string {
	all := append([]string{"node", "label"}, required...)
	if len(permitted) > 0 {
		all = append(all, "optional "+strings.Join(permitted, ", "))
	}
	return strings.Join(all, ", ")
}

// shared checks the fields several kinds share, wherever they are given:
// as, out, state and requires.
func (in *inspector) shared(n *nodeAt) {
	ptr, m := n.ptr, n.m
	if v, ok := m["as"]; ok {
		n.as, n.hasAs = in.stateKey(ptr+"/as", v)
	}
	n.key = n.as
	if !n.hasAs {
		n.key = n.label
	}
	if v, ok := m["out"]; ok {
		if id, isStr := v.(string); !isStr {
			in.add(ptr+"/out", "out names a schema of the catalog.")
		} else if in.schemaRef(ptr+"/out", id) {
			n.out = in.named(id)
		}
	}
	if v, ok := m["state"]; ok {
		sm, isMap := v.(map[string]any)
		switch {
		case !isMap:
			in.add(ptr+"/state", "state is an object from names to values, {path} naming a state path.")
		case len(sm) == 0 && n.kind.nonemptyState:
			in.add(ptr+"/state", "%s has a nonempty state map.", capital(n.kind.name))
		default:
			in.templates(ptr+"/state", sm, n.st)
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
			in.consume(p, s, n.st)
		}
	}
}

// ---- the kinds' checks ----------------------------------------------------

// checkAgent is agent's, extract's and decide's: instructions, tools, and
// out's value stored.
func checkAgent(in *inspector, n *nodeAt) *value {
	if v, ok := n.m["instructions"]; ok {
		if s, isStr := v.(string); !isStr || strings.TrimSpace(s) == "" {
			in.add(n.ptr+"/instructions", "instructions are literal prose: a nonempty string.")
		}
	}
	if v, ok := n.m["tools"]; ok {
		if !stringList(v) {
			in.add(n.ptr+"/tools", "tools is a list of host tool names ([] for none).")
		}
	}
	val := n.out
	if val == nil {
		val = unknownValue("an agent without out")
	}
	in.produce(n, n.key, val)
	return val
}

// checkJudge: out is a flat question schema; the judge stores its
// answers and, beside them, the raw answers.
func checkJudge(in *inspector, n *nodeAt) *value {
	if n.out == nil {
		return nil
	}
	in.flat(n.ptr+"/out", n.out.name, n.kind.name)
	in.produce(n, n.key, n.out)
	in.produce(n, n.key+"$answers", unknownValue("raw answers"))
	return n.out
}

// checkSift: the list at itemsPath, a flat question schema and keep; the
// sift stores the items kept, their values and their raw answers.
func checkSift(in *inspector, n *nodeAt) *value {
	ptr, m := n.ptr, n.m
	var items *value
	if p, ok := m["itemsPath"].(string); ok && statePath.MatchString(p) {
		items = in.consume(ptr+"/itemsPath", p, n.st)
		items = in.elementOf(ptr+"/itemsPath", p, items)
	} else if _, present := m["itemsPath"]; present {
		in.add(ptr+"/itemsPath", "itemsPath is the state path of the list the node reads.")
	}
	if n.out != nil {
		props := in.flat(ptr+"/out", n.out.name, n.kind.name)
		in.keep(ptr+"/keep", m["keep"], props)
	}
	if items == nil {
		items = unknownValue("the items of itemsPath")
	}
	val := &value{fields: map[string]*value{
		"items": {array: items}, "values": {array: orUnknown(n.out, "out")}, "answers": {array: unknownValue("raw answers")}}, closed: true}
	in.produce(n, n.key, val)
	return val
}

// checkRoute: two or more named branches, each a body, and unsure naming
// one of them; a key a branch sets is known to be set only when it runs.
func checkRoute(in *inspector, n *nodeAt) *value {
	ptr, m, st := n.ptr, n.m, n.st
	branches, _ := m["branches"].(map[string]any)
	if _, present := m["branches"]; present && len(branches) < 2 {
		in.add(ptr+"/branches", "A route has at least two named branches, each an object with body.")
	}
	names := sortedKeys(branches)
	val := &value{fields: map[string]*value{"taken": {schema: map[string]any{"enum": names}, desc: "one of " + strings.Join(names, ", ")}}}
	in.produce(n, n.key, val)
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
		in.node(bp+"/body", body, n.step, bs)
		for k, v := range bs.keys {
			if before.keys[k] != v {
				if st.keys[k] == nil {
					in.note("%s is set only when its branch of %s runs", k, n.label)
				}
				st.keys[k] = v
			}
		}
		st.open = st.open || bs.open
	}
	return val
}

// checkEscalate: when, and kind, stage and summary as strings.
func checkEscalate(in *inspector, n *nodeAt) *value {
	in.predicate(n.ptr+"/when", n.m["when"], n.st)
	for _, f := range []string{"kind", "stage", "summary"} {
		if v, ok := n.m[f]; ok {
			if _, isStr := v.(string); !isStr {
				in.add(n.ptr+"/"+f, "%s is a string.", f)
			}
		}
	}
	return nil
}

// checkLoop: maxIters from 1 through 20, the body, and until over the
// state after it.
func checkLoop(in *inspector, n *nodeAt) *value {
	ptr, m := n.ptr, n.m
	if v, ok := intField(m["maxIters"]); !ok || v < 1 || v > 20 {
		if _, present := m["maxIters"]; present {
			in.add(ptr+"/maxIters", "A loop's maxIters is an integer from 1 through 20; reaching the bound is not proof of success.")
		}
	}
	if body, ok := m["body"].(map[string]any); ok {
		in.node(ptr+"/body", body, n.step, n.st)
	} else if _, present := m["body"]; present {
		in.add(ptr+"/body", "A loop's body is a node.")
	}
	in.predicate(ptr+"/until", m["until"], n.st)
	return nil
}

// checkMap: the list at itemsPath, maxConcurrency, resultPath, and the
// body over each item; the map stores under as the list of what each
// body gave.
func checkMap(in *inspector, n *nodeAt) *value {
	ptr, m, st := n.ptr, n.m, n.st
	var items *value
	if p, ok := m["itemsPath"].(string); ok && statePath.MatchString(p) {
		items = in.elementOf(ptr+"/itemsPath", p, in.consume(ptr+"/itemsPath", p, st))
	} else if _, present := m["itemsPath"]; present {
		in.add(ptr+"/itemsPath", "itemsPath is the state path of the list the node maps over.")
	}
	if _, present := m["maxConcurrency"]; present {
		if v, ok := intField(m["maxConcurrency"]); !ok || v < 1 || v > 64 {
			in.add(ptr+"/maxConcurrency", "A map bounds maxConcurrency: an integer from 1 to 64.")
		}
	}
	resultPath, hasResult := m["resultPath"].(string)
	if _, present := m["resultPath"]; present && (!hasResult || !statePath.MatchString(resultPath)) {
		in.add(ptr+"/resultPath", "resultPath is a state path of the body's final state.")
		hasResult = false
	}
	var per *value
	if body, ok := m["body"].(map[string]any); ok {
		bs := st.clone()
		if items == nil {
			items = unknownValue("the items of itemsPath")
		}
		bs.keys["item"] = items
		bs.keys["item_index"] = &value{schema: map[string]any{"type": "integer"}}
		bodyVal := in.node(ptr+"/body", body, n.step, bs)
		_, bodyAs := body["as"]
		switch {
		case hasResult:
			per = in.consume(ptr+"/resultPath", resultPath, bs)
		case bodyAs && bodyVal != nil:
			per = bodyVal
		default:
			fields := map[string]*value{}
			for k, v := range bs.keys {
				fields[k] = v
			}
			per = &value{fields: fields, closed: !bs.open}
			in.note("%s keeps whole item states (a body without as or resultPath)", n.label)
		}
	} else if _, present := m["body"]; present {
		in.add(ptr+"/body", "A map's body is a node.")
	}
	val := &value{array: orUnknown(per, "the map's body")}
	if n.hasAs {
		in.produce(n, n.as, val)
	}
	return val
}

// checkCall: the tool, its args (whose {path} templates are read from
// state) and deadline_s; the call stores out's value under as.
func checkCall(in *inspector, n *nodeAt) *value {
	ptr, m := n.ptr, n.m
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
			in.templates(ptr+"/args", am, n.st)
		}
	}
	if d, present := m["deadline_s"]; present {
		if v, ok := d.(json.Number); !ok || !positive(v) {
			in.add(ptr+"/deadline_s", "deadline_s is a positive number of seconds.")
		}
	}
	if n.out != nil && n.hasAs {
		in.produce(n, n.as, n.out)
	}
	return n.out
}

// checkCodeNode: the code (CheckCode); under as the code's value is
// unknown, and without as its return is a patch of unknown keys.
func checkCodeNode(in *inspector, n *nodeAt) *value {
	if c, ok := n.m["code"].(string); ok {
		for _, is := range CheckCode(c) {
			in.add(n.ptr+"/code", "%s", is)
		}
	} else if _, present := n.m["code"]; present {
		in.add(n.ptr+"/code", "code is a single synchronous function expression, as a string.")
	}
	if n.hasAs {
		val := unknownValue("dynamic code")
		in.produce(n, n.as, val)
		return val
	}
	n.st.open = true
	in.note("%s returns a patch merged into state (or a non-object under %s): its keys are not known", n.label, n.label)
	in.produce(n, n.label, unknownValue("dynamic code: a non-object return; an object is merged as a patch"))
	return nil
}

// checkChain: a nonempty list of steps, each a node over the state the
// one before left.
func checkChain(in *inspector, n *nodeAt) *value {
	steps, ok := n.m["steps"].([]any)
	if _, present := n.m["steps"]; present && (!ok || len(steps) == 0) {
		in.add(n.ptr+"/steps", "A chain's steps are a nonempty list of nodes.")
	}
	for i, s := range steps {
		p := fmt.Sprintf("%s/steps/%d", n.ptr, i)
		if sm, ok := s.(map[string]any); ok {
			in.node(p, sm, n.step, n.st)
		} else {
			in.add(p, "A step is a node (an object with node and label).")
		}
	}
	return nil
}

// checkParallel: a nonempty list of branches, each a node over the state
// before them, no two writing the same top-level key.
func checkParallel(in *inspector, n *nodeAt) *value {
	ptr, st := n.ptr, n.st
	bs, ok := n.m["branches"].([]any)
	if _, present := n.m["branches"]; present && (!ok || len(bs) == 0) {
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
		in.node(p, bm, n.step, s)
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

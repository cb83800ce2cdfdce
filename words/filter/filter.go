package filter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync"

	"quire/words/refusal"
)

// Attributes a filter may name: the CloudEvents attributes and the
// playbook's extensions that the page format's Event type has. data is
// matched apart, as a subset.
var filterAttributes = map[string]bool{
	"specversion": true, "id": true, "type": true, "source": true, "subject": true, "time": true,
	"datacontenttype": true, "dataschema": true, "causationid": true, "correlationid": true,
	"caller": true, "definitionversion": true, "depth": true, "calldepth": true, "calledby": true,
	"triggerkind": true, "triggerreference": true,
}

// Max is the most filters data.source.events holds.
const Max = 8

// Filter names the events a fold takes: each attribute given must equal
// the event's, written out (no patterns), and Data, when given, must be a
// subset of the event's data.
type Filter struct {
	// Attrs are the attributes to match, type among them, each as text
	// (a number or a boolean written in the filter is matched as its text).
	Attrs map[string]string
	// Data is a JSON object: every key given must be equal in the event's
	// data, objects compared the same way, recursively; lists and other
	// values must be equal.
	Data map[string]any
}

// Parse reads data.source.events as a YAML or JSON decoder gives
// it (a list of mappings). It refuses, each at its JSON pointer relative
// to data.source.events (the caller prefixes it and adds the line): a
// value that is not a list of 1 to 8 mappings; a filter without type, or
// with an empty one; an attribute the Event type does not name; a value
// other than data that is not written out as text, a number or a boolean,
// or is empty; data that is not a mapping.
func Parse(v any) ([]Filter, []refusal.Issue) {
	list, ok := v.([]any)
	if !ok {
		return nil, []refusal.Issue{{Path: "", Message: "Expected a list of 1 to 8 filters, each with a type"}}
	}
	var issues []refusal.Issue
	if len(list) == 0 || len(list) > Max {
		issues = append(issues, refusal.Issue{Path: "", Message: fmt.Sprintf("Expected 1 to 8 filters, not %d", len(list))})
	}
	out := make([]Filter, 0, len(list))
	for i, item := range list {
		at := "/" + strconv.Itoa(i)
		m, ok := asMap(item)
		if !ok {
			issues = append(issues, refusal.Issue{Path: at, Message: "Expected a filter: a mapping with a type"})
			continue
		}
		f := Filter{Attrs: map[string]string{}}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			val := m[k]
			if k == "data" {
				d, ok := asMap(val)
				if !ok {
					issues = append(issues, refusal.Issue{Path: at + "/data", Message: "Expected data to be a mapping, matched as a subset of the event's data"})
					continue
				}
				f.Data = normalize(d).(map[string]any)
				continue
			}
			if !filterAttributes[k] {
				issues = append(issues, refusal.Issue{Path: at + "/" + k, Message: fmt.Sprintf("Unknown attribute %q: a filter takes type, source, subject, data and the attributes of Event", k)})
				continue
			}
			s, ok := scalarText(val)
			if !ok {
				issues = append(issues, refusal.Issue{Path: at + "/" + k, Message: "Expected " + k + " written out as text"})
				continue
			}
			if s == "" {
				issues = append(issues, refusal.Issue{Path: at + "/" + k, Message: "Expected " + k + " to be written out, not empty"})
				continue
			}
			f.Attrs[k] = s
		}
		if _, ok := m["type"]; !ok {
			issues = append(issues, refusal.Issue{Path: at + "/type", Message: "Expected a type: each filter names the type of the events it takes"})
		}
		out = append(out, f)
	}
	if len(issues) > 0 {
		return nil, issues
	}
	return out, nil
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any: // yaml.v2
		out := make(map[string]any, len(m))
		for k, x := range m {
			ks, ok := k.(string)
			if !ok {
				return nil, false
			}
			out[ks] = x
		}
		return out, true
	}
	return nil, false
}

// normalize turns YAML's numbers into float64 and its maps into
// map[string]any, as encoding/json gives an event's data.
func normalize(v any) any {
	if m, ok := asMap(v); ok {
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[k] = normalize(x)
		}
		return out
	}
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return v
}

func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false
		}
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	}
	return "", false
}

// Match tells whether an event (its CloudEvents form as encoding/json
// decodes it) matches the filter.
func (f Filter) Match(event map[string]any) bool {
	for k, want := range f.Attrs {
		got, ok := scalarText(normalize(event[k]))
		if !ok || got != want {
			return false
		}
	}
	if f.Data != nil {
		return subset(f.Data, normalize(event["data"]))
	}
	return true
}

func subset(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok || !subset(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !equal(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return equal(want, got)
}

// equal is JSON equality: objects with the same members, lists with equal
// items in order, numbers by value.
func equal(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// Filters are a page's filters: an event is folded when it matches any
// of them, and once only.
type Filters []Filter

// Match tells whether any filter matches the event.
func (fs Filters) Match(event map[string]any) bool {
	for _, f := range fs {
		if f.Match(event) {
			return true
		}
	}
	return false
}

// MatchJSON matches an event given as its JSON text. It decodes only the
// attributes the filters name, and data only when a filter has data. An
// event that is not a JSON object matches nothing.
func (fs Filters) MatchJSON(raw []byte) bool {
	return fs.MatchEvent(NewEvent(raw))
}

// Event is an event's JSON text, decoded once for any number of filters:
// the pages of a playbook, a thousand of them, match each new event
// against their own. Its decoding is safe for concurrent use.
type Event struct {
	raw      []byte
	topOnce  sync.Once
	top      map[string]json.RawMessage
	dataOnce sync.Once
	data     any
}

// NewEvent wraps an event's JSON text; nothing is decoded until a filter
// asks.
func NewEvent(raw []byte) *Event { return &Event{raw: raw} }

func (e *Event) attrs() map[string]json.RawMessage {
	e.topOnce.Do(func() {
		if json.Unmarshal(e.raw, &e.top) != nil {
			e.top = nil
		}
	})
	return e.top
}

func (e *Event) dataValue() any {
	e.dataOnce.Do(func() {
		if rv, present := e.attrs()["data"]; present {
			_ = json.Unmarshal(rv, &e.data)
		}
	})
	return e.data
}

// MatchEvent is MatchJSON over an event decoded once.
func (fs Filters) MatchEvent(e *Event) bool {
	top := e.attrs()
	if top == nil {
		return false
	}
	for _, f := range fs {
		if f.matchAttrs(top) && (f.Data == nil || subset(f.Data, e.dataValue())) {
			return true
		}
	}
	return false
}

// matchAttrs tells whether every attribute the filter names is the
// event's, as text.
func (f Filter) matchAttrs(top map[string]json.RawMessage) bool {
	for k, want := range f.Attrs {
		rv, present := top[k]
		if !present {
			return false
		}
		if len(rv) > 0 && rv[0] == '"' && bytes.IndexByte(rv, '\\') < 0 {
			if string(rv[1:len(rv)-1]) != want {
				return false
			}
			continue
		}
		var v any
		if json.Unmarshal(rv, &v) != nil {
			return false
		}
		if got, isText := scalarText(v); !isText || got != want {
			return false
		}
	}
	return true
}

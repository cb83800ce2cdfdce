package page

import (
	"regexp"
	"strconv"

	"gopkg.in/yaml.v3"

	"quire/fold/module"
	"quire/ledger/shape"
)

var dataKeys = []string{"language", "source", "views", "module"}

// data reads the data key: language, source.events, views and module.
func (ps *parser) data(key, n *yaml.Node) *Data {
	d := &Data{Line: ps.line(key), node: n}
	if n.Kind != yaml.MappingNode {
		ps.add(ps.line(n), "data is %s, but it is a mapping of language, source, views and module.", describe(n))
		return nil
	}
	found := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		if found[k.Value] {
			ps.add(ps.line(k), "data has the key %s twice.", k.Value)
			continue
		}
		found[k.Value] = true
		switch k.Value {
		case "language":
			if !isText(v) || v.Value != "typescript" {
				ps.add(ps.line(v), "data.language is %s, but the playbook's one language is typescript.", quoted(v))
			}
			d.Language = v.Value
		case "source":
			ps.source(d, k, v)
		case "views":
			ps.views(d, k, v)
		case "module":
			if !isText(v) {
				ps.add(ps.line(v), "data.module is %s, but it is a TypeScript module: write it as text, a block scalar such as module: |.", describe(v))
				continue
			}
			d.Module, d.ModuleLine = v.Value, ps.textLine(v)
		default:
			ps.add(ps.line(k), "data has the unknown key %s: data takes language, source, views and module.", strconv.Quote(k.Value))
		}
	}
	for _, want := range dataKeys {
		if !found[want] {
			what := want
			if want == "source" {
				what = "source.events"
			}
			ps.add(d.Line, "data has no %s: data needs language, source.events, views and module.", what)
		}
	}
	return d
}

func quoted(n *yaml.Node) string {
	if isText(n) {
		return strconv.Quote(n.Value)
	}
	return describe(n)
}

func (ps *parser) source(d *Data, key, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		ps.add(ps.line(n), "data.source is %s, but it is a mapping whose events are the filters.", describe(n))
		return
	}
	var events *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Value == "events" {
			events = deref(n.Content[i+1])
			continue
		}
		ps.add(ps.line(k), "data.source has the unknown key %s: it takes events.", strconv.Quote(k.Value))
	}
	if events == nil {
		ps.add(ps.line(key), "data has no source.events: data needs language, source.events, views and module.")
		return
	}
	if events.Kind != yaml.SequenceNode {
		ps.add(ps.line(events), "data.source.events is %s, but it is a list of 1 to 8 filters.", describe(events))
		return
	}
	switch n := len(events.Content); {
	case n == 0:
		ps.add(ps.line(events), "data.source.events has no filter, but it takes 1 to 8.")
	case n > MaxFilters:
		ps.add(ps.line(events.Content[MaxFilters]), "data.source.events has %d filters, but it takes at most 8.", n)
	}
	for _, f := range events.Content {
		if filter, ok := ps.filter(deref(f)); ok {
			d.Filters = append(d.Filters, filter)
		}
	}
}

// attrName is the form of a CloudEvents attribute's name.
var attrName = regexp.MustCompile(`^[a-z0-9]{1,20}$`)

// filter checks one filter as the events guide writes it: a type, and
// optionally a source, a subject, any other attribute and data. Every
// value but data is written out: a scalar matched as it is, never a
// pattern, a list or a mapping. type, source and subject are text.
//
// fold does not export a filter parser yet, so these structural rules
// live here; see doc.go.
func (ps *parser) filter(n *yaml.Node) (Filter, bool) {
	f := Filter{Line: ps.line(n)}
	if n.Kind != yaml.MappingNode {
		ps.add(ps.line(n), "A filter is %s, but it is a mapping of a type, and optionally a source, a subject, other attributes and data.", describe(n))
		return f, false
	}
	ok := true
	hasType := false
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		name := k.Value
		if seen[name] {
			ps.add(ps.line(k), "The filter has %s twice.", name)
			ok = false
			continue
		}
		seen[name] = true
		switch {
		case name == "data":
			continue
		case !attrName.MatchString(name):
			ps.add(ps.line(k), "The filter names the attribute %s, but an attribute's name is 1 to 20 lowercase letters and digits.", strconv.Quote(name))
			ok = false
		case name == "type" || name == "source" || name == "subject" || name == "id" || name == "time":
			if !isText(v) || v.Value == "" {
				ps.add(ps.line(v), "The filter's %s is %s, but it is written out as text.", name, describe(v))
				ok = false
			}
			if name == "type" {
				hasType = true
			}
		default:
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				ps.add(ps.line(v), "The filter's %s is %s, but every value but data is written out as text, a number or true or false.", name, describe(v))
				ok = false
			}
		}
	}
	if !hasType && !seen["type"] {
		ps.add(ps.line(n), "The filter has no type: each filter names a type, and optionally a source, a subject, other attributes and data.")
		ok = false
	}
	if !ok {
		return f, false
	}
	if err := n.Decode(&f.Value); err != nil {
		ps.add(ps.line(n), "The filter cannot be read: %s", err)
		return f, false
	}
	return f, true
}

func (ps *parser) views(d *Data, key, n *yaml.Node) {
	before := len(ps.issues)
	defer func() { d.viewsOK = len(ps.issues) == before }()
	if n.Kind != yaml.MappingNode {
		ps.add(ps.line(n), "data.views is %s, but it is a mapping of 1 to 8 views, each a name and its shape.", describe(n))
		return
	}
	count := len(n.Content) / 2
	switch {
	case count == 0:
		ps.add(ps.line(n), "data.views names no view, but it names 1 to 8.")
	case count > MaxViews:
		ps.add(ps.line(n.Content[2*MaxViews]), "data.views names %d views, but it names at most 8.", count)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		name := k.Value
		if !module.ValidViewName(name) || k.Tag != "!!str" {
			ps.add(ps.line(k), "The view's name %s is not 1 to 32 lowercase letters, digits and underscores beginning with a letter.", strconv.Quote(name))
			continue
		}
		if seen[name] {
			ps.add(ps.line(k), "data.views names %s twice.", name)
			continue
		}
		seen[name] = true
		if !isText(v) || !shape.Known(v.Value) {
			ps.add(ps.line(v), "The view %s takes %s, which is no shape: a view takes series, categories, table or text.", name, quoted(v))
			continue
		}
		d.Views = append(d.Views, View{Line: ps.line(k), Name: name, Shape: v.Value})
	}
}

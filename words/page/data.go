package page

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"quire/words/filter"
	"quire/words/near"
	"quire/words/shape"
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
	var raw any
	if err := events.Decode(&raw); err != nil {
		ps.add(ps.line(events), "data.source.events cannot be read: %s.", strings.TrimPrefix(err.Error(), "yaml: "))
		return
	}
	parsed, issues := filter.Parse(raw)
	for _, is := range issues {
		ps.add(ps.pointerLine(events, is.Path), "data.source.events%s: %s.", is.Path, strings.TrimSuffix(is.Message, "."))
	}
	if issues != nil || len(parsed) != len(events.Content) {
		return
	}
	for i, item := range events.Content {
		f := Filter{Line: ps.line(item), Match: parsed[i]}
		if err := deref(item).Decode(&f.Value); err != nil {
			ps.add(ps.line(item), "The filter cannot be read: %s.", strings.TrimPrefix(err.Error(), "yaml: "))
			continue
		}
		d.Filters = append(d.Filters, f)
	}
}

// pointerLine is the line of what a JSON pointer relative to the list of
// filters names (filter.Parse answers such pointers): a filter, an
// attribute's value, or, for a filter without the attribute named, the
// filter itself. The pointer "" names the list, or its ninth filter when
// it holds too many.
func (ps *parser) pointerLine(events *yaml.Node, pointer string) int {
	if pointer == "" {
		if len(events.Content) > MaxFilters {
			return ps.line(events.Content[MaxFilters])
		}
		return ps.line(events)
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	i, err := strconv.Atoi(parts[0])
	if err != nil || i < 0 || i >= len(events.Content) {
		return ps.line(events)
	}
	item := deref(events.Content[i])
	if len(parts) > 1 && item.Kind == yaml.MappingNode {
		for k := 0; k+1 < len(item.Content); k += 2 {
			if item.Content[k].Value == parts[1] {
				return ps.line(item.Content[k+1])
			}
		}
	}
	return ps.line(item)
}

// viewName is the form of a view's name: 1 to 32 lowercase letters, digits
// and underscores, beginning with a letter.
var viewName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// ValidViewName says whether name has the form of a view's name.
func ValidViewName(name string) bool { return viewName.MatchString(name) }

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
		if !ValidViewName(name) || k.Tag != "!!str" {
			ps.add(ps.line(k), "The view's name %s is not 1 to 32 lowercase letters, digits and underscores beginning with a letter.", strconv.Quote(name))
			continue
		}
		if seen[name] {
			ps.add(ps.line(k), "data.views names %s twice.", name)
			continue
		}
		seen[name] = true
		if !isText(v) || !shape.Known(v.Value) {
			hint := "; a view takes " + near.List(shape.Names())
			if isText(v) {
				hint = near.Suggest(v.Value, shape.Names(), "the shapes")
			}
			ps.add(ps.line(v), "The view %s takes %s, which is no shape%s.", name, quoted(v), hint)
			continue
		}
		d.Views = append(d.Views, View{Line: ps.line(k), Name: name, Shape: v.Value})
	}
}

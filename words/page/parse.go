package page

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"quire/internal/front"
	"quire/words/filter"
	"quire/words/refusal"
)

// Limits of the page format checked by Parse.
const (
	MaxDocument  = 65536 // bytes of the whole document, the page included
	MaxTemplates = 32768 // bytes of the templates together
	MaxViews     = 8
	MaxFilters   = filter.Max
	// glance's bounds: levels of mappings and lists, and values in all.
	MaxGlanceDepth  = 16
	MaxGlanceValues = 1000
)

// Keys are the keys a page takes.
var Keys = []string{"data", "result", "runs", "glance"}

type parser struct {
	path    string
	subject string
	form    Form
	maxLine int // the document's last line
	issues  []refusal.Issue
}

func (ps *parser) add(line int, format string, args ...any) {
	// YAML also breaks lines at a lone carriage return; a line is counted
	// here by line feeds, as editors and the issues' readers count.
	if line > ps.maxLine {
		line = ps.maxLine
	}
	ps.issues = append(ps.issues, refusal.Issue{Path: ps.path, Line: line, Message: fmt.Sprintf(format, args...)})
}

// line is the document's line of a node.
func (ps *parser) line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 0
	}
	return n.Line
}

// Parse reads the page of a document from where it goes, and refuses what
// the page format refuses of its form: a page that is not a mapping,
// unknown keys, data without what it needs, views and filters, templates
// that are not text, result in the playbook's page, data without runs or
// runs without data, and the sizes of the document and the templates.
// The module and the templates are checked by Check.
//
// It answers nil and no issues for a document without a page, or with
// page: {} or page: null. Every issue has the line of its document where
// the problem is, with two whole-document exceptions whose line is 0: a
// document over 65,536 bytes, and a document that is not YAML at all when
// the YAML parser names no line.
func Parse(doc []byte, where Where) (*Page, []refusal.Issue) {
	ps := &parser{path: "/source", subject: where.Subject, form: where.Form, maxLine: bytes.Count(doc, []byte("\n")) + 1}
	switch where.Form {
	case InWorkflow:
		ps.subject = "workflow"
	case ForPlaybook:
		ps.subject = "playbook"
		ps.path = "/page"
	}
	if ps.subject == "" {
		ps.subject = "function"
	}
	if len(doc) > MaxDocument {
		ps.add(0, "The document takes %d bytes, over the 65,536 bytes a document may take, its page included.", len(doc))
		return nil, ps.issues
	}
	var root yaml.Node
	if where.Form == InFunction {
		// The front matter's node lines are already the document's.
		m, err := front.Read(doc)
		var fe *front.Error
		switch {
		case errors.Is(err, front.ErrNone):
			return nil, nil
		case errors.As(err, &fe) && fe.Syntax:
			ps.add(fe.Line, "The document is not YAML: %s", fe.Message)
			return nil, ps.issues
		case fe != nil:
			ps.add(fe.Line, "%s", fe.Message)
			return nil, ps.issues
		case err != nil:
			ps.add(0, "%s", err)
			return nil, ps.issues
		}
		root = *m.Node
	} else if err := yaml.Unmarshal(doc, &root); err != nil {
		line, msg := ps.yamlErr(err)
		ps.add(line, "The document is not YAML: %s", msg)
		return nil, ps.issues
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	top := deref(root.Content[0])
	var pageKey, pageNode *yaml.Node
	switch where.Form {
	case InWorkflow, InFunction:
		if top.Kind != yaml.MappingNode {
			return nil, nil // not this package's to refuse
		}
		for i := 0; i+1 < len(top.Content); i += 2 {
			if top.Content[i].Value == "page" && top.Content[i].Kind == yaml.ScalarNode {
				pageKey, pageNode = top.Content[i], deref(top.Content[i+1])
			}
		}
		if pageNode == nil {
			return nil, nil
		}
	default:
		pageNode = top
	}
	if isNull(pageNode) {
		return nil, nil
	}
	p := &Page{Path: ps.path, Subject: ps.subject, Line: ps.line(pageNode)}
	if pageKey != nil {
		p.Line = ps.line(pageKey)
	}
	if pageNode.Kind != yaml.MappingNode {
		ps.add(ps.line(pageNode), "The page is not a mapping: a page takes the keys data, result, runs and glance.")
		return nil, ps.issues
	}
	if len(pageNode.Content) == 0 {
		return nil, nil
	}
	ps.page(p, pageNode)
	if len(ps.issues) > 0 {
		return p, ps.issues
	}
	return p, nil
}

var yamlLine = regexp.MustCompile(`^line (\d+): `)

// yamlErr is yaml.v3's error at its line: yaml.v3 writes the line into
// its words ("yaml: line 3: did not find expected node content"), and the
// issue carries it as its line, so the words leave it out. 0 when yaml.v3
// names no line.
func (ps *parser) yamlErr(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 {
			return n, msg[len(m[0]):]
		}
	}
	return 0, msg
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func isText(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
}

// textLine is the document's line of a text's first line: the line after
// the indicator of a block scalar, the node's own line otherwise.
func (ps *parser) textLine(n *yaml.Node) int {
	l := ps.line(n)
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		l++
	}
	return min(l, ps.maxLine)
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!null":
		return "null"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "true or false"
	case "!!str":
		return "text"
	}
	return "a value of type " + strings.TrimPrefix(n.Tag, "!!")
}

func (ps *parser) page(p *Page, m *yaml.Node) {
	seen := map[string]int{}
	var dataNode, runsKey *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], deref(m.Content[i+1])
		key := k.Value
		if first, dup := seen[key]; dup {
			ps.add(ps.line(k), "The page has the key %s twice; it was first on line %d.", key, first)
			continue
		}
		seen[key] = ps.line(k)
		switch {
		case key == "of" && ps.form == AsDefinition:
			if !isText(v) || v.Value == "" {
				ps.add(ps.line(v), "of is %s, but it names the page's subject, such as workflow/close-the-month.", describe(v))
				continue
			}
			p.Of = v.Value
			if t, _, ok := strings.Cut(v.Value, "/"); ok && ps.subject == "function" && t != "" {
				p.Subject = t
			} else if v.Value == "playbook" {
				p.Subject = "playbook"
			}
		case key == "data":
			dataNode = v
			p.Data = ps.data(k, v)
		case key == "result" || key == "runs":
			if !isText(v) {
				ps.add(ps.line(v), "%s is %s, but it is a template: write it as text, a block scalar such as %s: |.", key, describe(v), key)
				if key == "runs" {
					runsKey = k
				}
				continue
			}
			t := &Template{Key: key, Text: v.Value, Line: ps.textLine(v)}
			if key == "result" {
				p.Result = t
				if p.Subject == "playbook" {
					ps.add(ps.line(k), "The playbook's page has result, but the playbook has no runs of its own.")
				}
			} else {
				p.Runs, runsKey = t, k
			}
		case key == "glance":
			p.GlanceLine = ps.line(k)
			if ps.subject != "workflow" {
				ps.add(ps.line(k), "glance is a workflow's alone, and this page's subject is %s.", articled(ps.subject))
				continue
			}
			if v.Kind != yaml.MappingNode {
				ps.add(ps.line(v), "glance is %s, but it is a mapping whose strings are templates.", describe(v))
				continue
			}
			count := 0
			p.GlanceValue = ps.glance(p, "glance", v, 0, &count)
		default:
			ps.add(ps.line(k), "The page has the unknown key %s: a page takes the keys data, result, runs and glance.", strconv.Quote(key))
		}
	}
	if dataNode != nil && runsKey == nil {
		ps.add(seen["data"], "The page has data without runs: the views are kept for runs alone.")
	}
	if runsKey != nil && dataNode == nil {
		ps.add(ps.line(runsKey), "The page has runs without data: runs renders the views, which data keeps.")
	}
	total := 0
	for _, t := range p.Templates() {
		total += len(t.Text)
	}
	if total > MaxTemplates {
		ps.add(p.Line, "The page's templates take %d bytes together, over the 32 KiB (32,768 bytes) they may take.", total)
	}
}

func articled(s string) string {
	if s != "" && strings.ContainsRune("aeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// glance gathers the strings of glance, each a template, and keeps glance
// in its shape for RenderGlance. glance is a mapping that a client shows
// as it is, so its keys are text, each once, and it nests at most 16
// levels with at most 1,000 values (an alias counts each time it is used).
func (ps *parser) glance(p *Page, path string, n *yaml.Node, depth int, count *int) *GlanceValue {
	g := &GlanceValue{Template: -1}
	*count++
	switch {
	case *count == MaxGlanceValues+1:
		ps.add(ps.line(n), "glance holds more than %d values; it may hold at most %d.", MaxGlanceValues, MaxGlanceValues)
		return g
	case *count > MaxGlanceValues:
		return g
	case depth > MaxGlanceDepth && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode):
		ps.add(ps.line(n), "glance nests deeper than %d levels here; it may nest at most %d.", MaxGlanceDepth, MaxGlanceDepth)
		return g
	}
	switch n.Kind {
	case yaml.MappingNode:
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			if k.Kind != yaml.ScalarNode {
				ps.add(ps.line(k), "A key of glance is %s, but glance's keys are text.", describe(k))
				continue
			}
			if first, dup := seen[k.Value]; dup {
				ps.add(ps.line(k), "glance has the key %s twice here; it was first on line %d.", k.Value, first)
				continue
			}
			seen[k.Value] = ps.line(k)
			g.Keys = append(g.Keys, k.Value)
			g.Items = append(g.Items, ps.glance(p, path+"/"+k.Value, deref(n.Content[i+1]), depth+1, count))
		}
	case yaml.SequenceNode:
		g.List, g.Items = true, []*GlanceValue{}
		for i, c := range n.Content {
			g.Items = append(g.Items, ps.glance(p, path+"/"+strconv.Itoa(i), deref(c), depth+1, count))
		}
	case yaml.ScalarNode:
		if isText(n) {
			g.Template = len(p.Glance)
			p.Glance = append(p.Glance, Template{Key: path, Text: n.Value, Line: ps.textLine(n)})
			break
		}
		g.JSON = scalarJSON(n)
	default:
		g.JSON = []byte("null")
	}
	return g
}

// scalarJSON is a scalar of glance that is not text, as JSON: a number,
// true, false or null as YAML reads it, and any other (a date, .nan) as
// the text written.
func scalarJSON(n *yaml.Node) []byte {
	switch n.Tag {
	case "!!int", "!!float", "!!bool", "!!null":
		var v any
		if n.Decode(&v) == nil {
			if b, err := json.Marshal(v); err == nil {
				return b
			}
		}
	}
	b, _ := json.Marshal(n.Value)
	return b
}

// Templates gives the page's templates in the order of the page format:
// result, runs, then glance's strings.
func (p *Page) Templates() []Template {
	var ts []Template
	if p.Result != nil {
		ts = append(ts, *p.Result)
	}
	if p.Runs != nil {
		ts = append(ts, *p.Runs)
	}
	return append(ts, p.Glance...)
}

package page

import (
	"bytes"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"

	"quire/words/filter"
)

// Form is where a page is written.
type Form int

const (
	// InWorkflow: a workflow's YAML document, whose top-level key page is
	// the page.
	InWorkflow Form = iota
	// InFunction: a function's Markdown document, whose front matter's key
	// page is the page.
	InFunction
	// ForPlaybook: the playbook's page, the YAML text update_playbook takes
	// in page; the text is the page mapping, and issues are under /page.
	ForPlaybook
	// AsDefinition: a definition of its own, of the type page; the document
	// is the page mapping, with the key of naming its subject.
	AsDefinition
)

// Where says where a document's page is, and whose it is.
type Where struct {
	Form Form
	// Subject is the subject's type: "workflow", "playbook", or a
	// function's type ("reasoning", "computation", … or "function"). For
	// InWorkflow it is "workflow" and for ForPlaybook "playbook" whatever
	// is given; for AsDefinition the of key, when it names a type, wins.
	Subject string
}

// Page is a page as written, with the line of each part in its document.
type Page struct {
	Path    string // the JSON pointer of its issues: /source, or /page for the playbook's
	Subject string // workflow, playbook, or the function's type
	Line    int    // the line of the page mapping (of its key, where it has one)
	Of      string // AsDefinition: the of key, such as workflow/close-the-month

	Data   *Data     // nil for a page without data
	Result *Template // nil when absent
	Runs   *Template
	Glance []Template // a workflow's glance: each string in it, in order
	// GlanceLine is the line of the glance key, 0 when absent.
	GlanceLine int
	// GlanceValue is glance in the shape it is written, nil when absent;
	// RenderGlance gives it back with each string rendered.
	GlanceValue *GlanceValue
}

// GlanceValue is one value of glance as written: a mapping (Keys, with
// Items its values in the document's order), a list (List, Items), a
// string (Template, an index into Page.Glance) or another scalar (JSON, as
// written: a number, true, false or null).
type GlanceValue struct {
	Keys     []string
	Items    []*GlanceValue
	List     bool
	Template int // -1 unless a string
	JSON     []byte
}

// RenderGlance gives glance as JSON in the shape it is written, keys in the
// document's order, each string replaced by what render gives for it; nil
// without glance.
func (p *Page) RenderGlance(render func(Template) string) json.RawMessage {
	if p.GlanceValue == nil {
		return nil
	}
	var b bytes.Buffer
	p.GlanceValue.write(&b, p.Glance, render)
	return b.Bytes()
}

func (g *GlanceValue) write(b *bytes.Buffer, ts []Template, render func(Template) string) {
	text := func(s string) {
		j, _ := json.Marshal(s)
		b.Write(j)
	}
	switch {
	case g.Template >= 0:
		text(render(ts[g.Template]))
	case g.JSON != nil:
		b.Write(g.JSON)
	case g.List:
		b.WriteByte('[')
		for i, v := range g.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b, ts, render)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, v := range g.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			text(g.Keys[i])
			b.WriteByte(':')
			v.write(b, ts, render)
		}
		b.WriteByte('}')
	}
}

// Data is the page's data key: the projection that keeps the views.
type Data struct {
	Line     int
	Language string
	Filters  []Filter
	Views    []View
	Module   string
	// ModuleLine is the document's line of the module text's first line
	// (the line after `module: |`).
	ModuleLine int

	viewsOK bool // the views were read without a problem
	node    *yaml.Node
}

// Filter is one of data.source.events, decoded from YAML.
type Filter struct {
	Line  int
	Value map[string]any // as yaml.v3 decodes it
	Match filter.Filter  // as fold reads it, to match events
}

// View is one declared view.
type View struct {
	Line  int
	Name  string
	Shape string
}

// Template is one template's text and the document's line of its first
// line. Key names it: result, runs, or for glance its path, such as
// glance/headline or glance/figures/0.
type Template struct {
	Key  string
	Text string
	Line int
}

// IsFunction says whether the subject is a function.
func (p *Page) IsFunction() bool {
	return p.Subject != "workflow" && p.Subject != "playbook"
}

// ViewMap gives the views as name → shape; empty without data.
func (p *Page) ViewMap() map[string]string {
	m := map[string]string{}
	if p.Data != nil {
		for _, v := range p.Data.Views {
			m[v.Name] = v.Shape
		}
	}
	return m
}

// ViewsRead says whether the views were read without a problem: the
// module's types are made from them, so its check waits for them.
func (d *Data) ViewsRead() bool { return d.viewsOK }

func (p *Page) String() string {
	return fmt.Sprintf("page of %s at line %d", p.Subject, p.Line)
}

package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"quire/vault"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"

	"quire/fold/module"
	"quire/internal/front"
	"quire/ledger/pagecheck"
	"quire/render"
	"quire/words/agentrun"
	"quire/words/jsonptr"
	"quire/words/near"
	"quire/words/page"
	"quire/words/refusal"
	"quire/words/shape"
)

// A definition's document carries, beside what it does, what ledger reads
// of it: its output (output.shape or output.schema) and its page. Both are
// checked when the document is saved, and read again (without the module's
// type check) when a run ends or a page renders.

// TypePage is the type of a page saved as a definition of its own.
const TypePage = "page"

// docInfo is what ledger reads of one version of a document.
type docInfo struct {
	Shape      string
	ShapeLine  int
	Schema     any // output.schema as YAML decodes it; nil without one
	SchemaLine int
	// Steps are a workflow's steps (steps.go).
	Steps []Step
	// InputSchema is an AgentRun document's input.schemaId's schema, which
	// a run's input is checked against; nil without one.
	InputSchema map[string]any
	Page        *page.Page
	JS          string // the page's module, transpiled (after a full check)
	DataHash    string
	Description string // set by document
}

// outputOf finds the output mapping of a document: a workflow's top-level
// key, a function's front matter key (package front reads it, its lines
// the document's).
func outputOf(typ, source string) *yaml.Node {
	doc := &yaml.Node{}
	if typ != "workflow" {
		m, err := front.Read([]byte(source))
		if err != nil {
			return nil
		}
		doc = m.Node
	} else if yaml.Unmarshal([]byte(source), doc) != nil {
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "output" {
			return root.Content[i+1]
		}
	}
	return nil
}

func pageWhere(typ string) page.Where {
	switch typ {
	case "workflow":
		return page.Where{Form: page.InWorkflow, Subject: "workflow"}
	case TypePage:
		return page.Where{Form: page.AsDefinition}
	}
	return page.Where{Form: page.InFunction, Subject: typ}
}

// inspect reads a document's output and page. With check, it checks them
// as a save does: the shape rules, the page's every rule, the module's
// type check; issues come back as one invalid_input refusal.
func (l *Ledger) inspect(ctx context.Context, typ, source string, check bool) (*docInfo, error) {
	info := &docInfo{}
	if typ == "workflow" {
		info.Steps = workflowSteps(source)
	}
	var issues []refusal.Issue
	if typ == "workflow" && agentrun.Is(source) {
		issues = append(issues, agentRunInfo(info, source, check)...)
	}
	if out := outputOf(typ, source); out != nil && out.Kind == yaml.MappingNode {
		var shapeNode, schemaNode, formatNode *yaml.Node
		formatLine := 0
		for i := 0; i+1 < len(out.Content); i += 2 {
			switch out.Content[i].Value {
			case "shape":
				shapeNode = out.Content[i+1]
				info.ShapeLine = out.Content[i].Line
			case "format":
				formatNode, formatLine = out.Content[i+1], out.Content[i].Line
			case "schema":
				schemaNode = out.Content[i+1]
				info.SchemaLine = out.Content[i].Line
			}
		}
		if shapeNode != nil {
			info.Shape = shapeNode.Value
			switch {
			case shapeNode.Kind != yaml.ScalarNode || !shape.Known(shapeNode.Value):
				issues = append(issues, refusal.Issue{Path: "/source", Line: info.ShapeLine, Message: "/output/shape: " + notAShape(shapeNode)})
				info.Shape = ""
			case typ == "prediction":
				issues = append(issues, refusal.Issue{Path: "/source", Line: info.ShapeLine, Message: "/output/shape: A prediction function declares no output.shape; its questions answer a series."})
			case typ != "workflow" && typ != "reasoning" && typ != "computation":
				issues = append(issues, refusal.Issue{Path: "/source", Line: info.ShapeLine, Message: fmt.Sprintf("/output/shape: A %s function declares no output.shape; a reasoning function, a computation function and a workflow can.", typ)})
			}
			if schemaNode != nil {
				issues = append(issues, refusal.Issue{Path: "/source", Line: info.SchemaLine, Message: "/output/schema: output.schema stands beside output.shape, whose schema is the output schema."})
			}
			// output-shapes.md: a reasoning function's answer is JSON of the
			// shape, so output.format is json or left out; text is refused.
			if typ == "reasoning" && formatNode != nil && formatNode.Value == "text" {
				issues = append(issues, refusal.Issue{Path: "/source", Line: formatLine, Message: "/output/format: A reasoning function with output.shape answers JSON of the shape, so output.format is json or left out; text is refused."})
			}
		} else if schemaNode != nil {
			var s any
			if err := schemaNode.Decode(&s); err == nil {
				info.Schema = normalizeYAML(s)
				if check {
					if at, ref := outsideRef(info.Schema, "/output/schema"); at != "" {
						issues = append(issues, refusal.Issue{Path: "/source", Line: info.SchemaLine, Message: fmt.Sprintf("%s: %q points outside output.schema; a reference may point only inside it, such as #/$defs/item.", at, ref)})
					} else if _, err := compileSchema(info.Schema); err != nil {
						issues = append(issues, refusal.Issue{Path: "/source", Line: info.SchemaLine, Message: "/output/schema: " + err.Error()})
					}
				}
			}
		}
	}
	if check {
		opts, err := l.pageOptions()
		if err != nil {
			return nil, err
		}
		p, checked, pageIssues, err := pagecheck.CheckDocument(ctx, []byte(source), pageWhere(typ), opts)
		if err != nil {
			return nil, err
		}
		issues = append(issues, pageIssues...)
		info.Page, info.JS, info.DataHash = p, checked.JS, checked.DataHash
	} else {
		p, _ := page.Parse([]byte(source), pageWhere(typ))
		info.Page = p
		if p != nil && p.Data != nil {
			info.DataHash = page.DataHash(p)
		}
	}
	if len(issues) > 0 {
		return nil, refusal.WithIssues(refusal.InvalidInput, issues)
	}
	return info, nil
}

// pageOptions is how a save checks a page: the module type-checked unless
// the vault's settings say typecheck: syntax-only, the templates by render.
func (l *Ledger) pageOptions() (pagecheck.Options, error) {
	cfg, err := l.v.Config()
	if err != nil {
		return pagecheck.Options{}, err
	}
	mode := module.Full
	if cfg.Typecheck == "syntax-only" {
		mode = module.SyntaxOnly
	}
	setting := cfg.TSC
	if setting != "" && !filepath.IsAbs(setting) {
		setting = filepath.Join(l.v.Root(), setting)
	}
	return pagecheck.Options{Module: module.Options{Mode: mode, Setting: setting}, Templates: render.CheckTemplate}, nil
}

// normalizeYAML turns YAML's maps into JSON's.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeYAML(e)
		}
		return x
	case map[any]any:
		m := map[string]any{}
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = normalizeYAML(e)
		}
	case int:
		return float64(x)
	}
	return v
}

var schemaCache sync.Map // string(json) → *jsonschema.Schema

func compileSchema(s any) (*jsonschema.Schema, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if c, ok := schemaCache.Load(string(raw)); ok {
		return c.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// The schema stands alone: every URL it names is refused (the default
	// loader would read file:// URLs, so a refusal could quote any file the
	// server can read), and its base is no file either.
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaBase, doc); err != nil {
		return nil, err
	}
	sch, err := c.Compile(schemaBase)
	if err != nil {
		return nil, fmt.Errorf("the schema does not compile: %v", err)
	}
	schemaCache.Store(string(raw), sch)
	return sch, nil
}

// schemaBase is the URL an output.schema is compiled under: no file, so
// that a relative $ref resolves to nothing on disk.
const schemaBase = "https://quire.invalid/output.schema.json"

// noLoader refuses to load any URL: the only schemas are the document and
// the library's own meta-schemas.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside output.schema, and quire loads no schema from elsewhere", url)
}

// outsideRef finds the first $ref, $dynamicRef or $schema in an
// output.schema that points outside it (a $schema other than a draft of
// json-schema.org), and answers its pointer under at and its text.
// Values (const, enum, default, examples) are data, not schemas.
func outsideRef(v any, at string) (string, string) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := jsonptr.Append(at, k)
			switch k {
			case "$ref", "$dynamicRef":
				if ref, ok := x[k].(string); ok && !strings.HasPrefix(ref, "#") {
					return p, ref
				}
			case "$schema":
				if ref, ok := x[k].(string); ok && !strings.HasPrefix(ref, "https://json-schema.org/") && !strings.HasPrefix(ref, "http://json-schema.org/") {
					return p, ref
				}
			case "const", "enum", "default", "examples":
			default:
				if p, ref := outsideRef(x[k], p); p != "" {
					return p, ref
				}
			}
		}
	case []any:
		for i, e := range x {
			if p, ref := outsideRef(e, fmt.Sprintf("%s/%d", at, i)); p != "" {
				return p, ref
			}
		}
	}
	return "", ""
}

// checkAgainst checks an output against a definition's shape or schema and
// answers at most max issues.
func checkAgainst(info *docInfo, output json.RawMessage, max int) []refusal.Issue {
	var issues []refusal.Issue
	switch {
	case info.Shape != "":
		issues = shape.Check(info.Shape, output)
	case info.Schema != nil:
		sch, err := compileSchema(info.Schema)
		if err != nil {
			return nil
		}
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(output)))
		if err != nil {
			return []refusal.Issue{{Path: "/output", Message: "Expected JSON."}}
		}
		issues = schemaIssues(sch, v, "")
	}
	if len(issues) > max {
		issues = issues[:max]
	}
	return issues
}

// UpdatePlaybookArgs changes a playbook's name, description or page.
type UpdatePlaybookArgs struct {
	Playbook    string          `json:"playbook"`
	Name        string          `json:"name,omitempty"`
	Description *string         `json:"description,omitempty"`
	Page        json.RawMessage `json:"page,omitempty" jsonschema:"the playbook's page as YAML text; null removes it"`
	Actor       string          `json:"actor,omitempty"`
	RequestID   string          `json:"request_id,omitempty" jsonschema:"makes a retry safe: a call repeating an id answers the first call's answer and writes nothing (HTTP: the Idempotency-Key header)"`
}

// updatePlaybook is the operation update_playbook (ops.go).
func (l *Ledger) updatePlaybook(ctx context.Context, a *UpdatePlaybookArgs) (*Playbook, error) {
	f, err := l.readPlaybook(a.Playbook)
	if err != nil {
		return nil, err
	}
	newPage, pageSet := f.Page, false
	if len(a.Page) > 0 {
		pageSet = true
		if string(a.Page) == "null" {
			newPage = ""
		} else {
			var text string
			if err := json.Unmarshal(a.Page, &text); err != nil {
				return nil, refusal.Invalid("/page", "the page is YAML text (a JSON string), or null to remove it")
			}
			opts, err := l.pageOptions()
			if err != nil {
				return nil, err
			}
			_, _, issues, err := pagecheck.CheckDocument(ctx, []byte(text), page.Where{Form: page.ForPlaybook}, opts)
			if err != nil {
				return nil, err
			}
			if len(issues) > 0 {
				return nil, refusal.WithIssues(refusal.InvalidInput, issues)
			}
			newPage = text
		}
	}
	if a.Name == "" && a.Description == nil && !pageSet {
		return nil, refusal.Invalid("", "update_playbook changes name, description or page; none was given")
	}
	err = l.write(writeArgs{Keeps: playbookKeeps(a.Playbook), Request: requestIn(ctx)}, func(t *tx) error {
		t.answerWith(func() (any, error) { return l.playbookOf(a.Playbook) })
		f, err := l.readPlaybook(a.Playbook)
		if err != nil {
			return err
		}
		if a.Name != "" {
			f.Name = a.Name
		}
		if a.Description != nil {
			f.Description = *a.Description
		}
		f.Page = newPage
		fm, err := yaml.Marshal(f)
		if err != nil {
			return err
		}
		rel := playbookDir(a.Playbook) + "/playbook.md"
		if err := t.writeNew(rel, []byte("---\n"+string(fm)+"---\n")); err != nil {
			return err
		}
		now := l.Now()
		typ, detail := "playbook_updated", "Playbook updated"
		if pageSet {
			typ, detail = "playbook_page_saved", "Page saved"
			if newPage == "" {
				detail = "Page removed"
			}
		}
		if err := t.recordPlaybookEvent(a.Playbook, &eventLine{Event: typ, Timestamp: formatTime(now), Detail: detail, Actor: actorOr(a.Actor)}); err != nil {
			return err
		}
		t.commit([]string{playbookDir(a.Playbook)}, sig(actorOr(a.Actor), now), vault.Message{Subject: fmt.Sprintf("%s: %s", a.Playbook, strings.ToLower(detail))})
		return nil
	})
	if err != nil {
		return nil, err
	}
	l.wake(a.Playbook)
	return l.playbookOf(a.Playbook)
}

// notAShape says why a document's output.shape names no shape: the
// nearest shape to the name written, and the shapes.
func notAShape(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return "Expected the name of a shape: " + near.List(shape.Names()) + "."
	}
	return fmt.Sprintf("%q is not a shape%s.", n.Value, near.Suggest(n.Value, shape.Names(), "the shapes"))
}

package pagecheck

import (
	"context"
	"fmt"
	"time"

	"quire/fold/module"
	"quire/words/page"
	"quire/words/refusal"
)

// TemplateChecker checks one template of a page at save. render provides
// one; ledger passes it in, so this package does not import render. The
// contract:
//
//   - which is "result", "runs" or "glance" (each string of glance is
//     checked alone, with which "glance");
//   - text is the template as YAML gave it; firstLine is the document's
//     line of its first line, so the line n of text is the document's
//     line firstLine+n-1;
//   - views is data.views as name → shape: series, categories, table or
//     text; empty when the page has no data;
//   - subject is the subject's type: "playbook", "workflow", or the
//     function's type (such as "reasoning"), or "function";
//   - it answers one issue for each problem, with Line the document's line
//     (at least 1) and Message in the page format's words; Check puts the
//     page's path (/source, or /page for the playbook's) in Path, whatever
//     the checker wrote there;
//   - it checks what the page format checks of a template at save: it
//     compiles; its tags, filters and variables (result: output, run,
//     subject, today, now; runs: views, subject, today, now; glance:
//     views, output, run), views.<name> naming a declared view, run. and
//     subject. fields; the chart fences written out (kind, roles); the
//     rows written out; at most 1,000 names in tags and outputs;
//   - it is safe to call from several goroutines, does not panic on any
//     text, and returns within a small part of the 2-second check.
type TemplateChecker func(which, text string, firstLine int, views map[string]string, subject string) []refusal.Issue

// Options configure Check.
type Options struct {
	// Module configures the module's check; Module.Mode SyntaxOnly is the
	// vault's typecheck: syntax-only.
	Module module.Options
	// Templates checks the templates; nil checks none of them (for tests,
	// and for tools that check the module alone).
	Templates TemplateChecker
	// Budget bounds the whole check; 2 seconds if zero.
	Budget time.Duration
}

// Checked is a page checked at save.
type Checked struct {
	// JS is the module transpiled for the sandbox; empty without data.
	JS string
	// DataHash is page.DataHash of the page.
	DataHash string
}

// Check checks what Parse leaves to it: the module (fold/module: its rules,
// esbuild's syntax and tsc's types, each problem at its line of the
// document with the compiler's words) and each template (the caller's
// TemplateChecker). It answers the issues, or err: a refusal of code
// unavailable when the compiler is not installed (outside syntax-only), or
// another error for a fault of the runtime. A check past its budget is an
// issue at the page's line.
func Check(ctx context.Context, p *page.Page, opts Options) (Checked, []refusal.Issue, error) {
	var out Checked
	if p == nil {
		return out, nil, nil
	}
	budget := opts.Budget
	if budget <= 0 {
		budget = 2 * time.Second
	}
	// The budget is processor time (the compiler's is measured as such:
	// fold/module); the wall clock stops a check only at ten times it.
	ctx, cancel := context.WithTimeout(ctx, 10*budget)
	defer cancel()
	var issues []refusal.Issue
	views := p.ViewMap()
	if opts.Templates != nil {
		for _, t := range p.Templates() {
			which := t.Key
			if which != "result" && which != "runs" {
				which = "glance"
			}
			for _, is := range opts.Templates(which, t.Text, t.Line, views, p.Subject) {
				is.Path = p.Path
				if is.Line < 1 {
					is.Line = t.Line
				}
				issues = append(issues, is)
			}
		}
	}
	if d := p.Data; d != nil && d.ViewsRead() && d.ModuleLine > 0 {
		mopts := opts.Module
		if mopts.Timeout <= 0 {
			mopts.Timeout = budget
		}
		js, mis, err := module.Check(ctx, module.Source{TS: d.Module, FirstLine: d.ModuleLine, Path: p.Path, Views: moduleViews(d)}, mopts)
		if err != nil {
			return out, nil, err
		}
		issues = append(issues, mis...)
		out.JS = js
	}
	if ctx.Err() != nil && len(issues) == 0 {
		// The check at save takes at most 2 seconds; past them the page is
		// refused (invalid_input), as the page format's limits say.
		issues = append(issues, refusal.Issue{Path: p.Path, Line: p.Line, Message: fmt.Sprintf("The page's check took longer than the %s a check at save may take.", budget)})
	}
	out.DataHash = page.DataHash(p)
	if len(issues) > 0 {
		return out, issues, nil
	}
	return out, nil, nil
}

// CheckDocument parses the page of a document and checks it, as
// create_definition, update_definition and update_playbook do. It answers
// the page (nil for none) and every issue of both steps; the module is
// checked only when its views were read without a problem, since its types
// are made from them.
func CheckDocument(ctx context.Context, doc []byte, where page.Where, opts Options) (*page.Page, Checked, []refusal.Issue, error) {
	p, issues := page.Parse(doc, where)
	if p == nil {
		return nil, Checked{}, issues, nil
	}
	c, more, err := Check(ctx, p, opts)
	if err != nil {
		return p, c, nil, err
	}
	issues = append(issues, more...)
	sortIssues(issues)
	return p, c, issues, nil
}

func sortIssues(is []refusal.Issue) {
	for i := 1; i < len(is); i++ {
		for j := i; j > 0 && is[j].Line < is[j-1].Line; j-- {
			is[j], is[j-1] = is[j-1], is[j]
		}
	}
}

// moduleViews are the page's views as fold/module types them.
func moduleViews(d *page.Data) []module.View {
	vs := make([]module.View, 0, len(d.Views))
	for _, v := range d.Views {
		vs = append(vs, module.View{Name: v.Name, Shape: v.Shape})
	}
	return vs
}

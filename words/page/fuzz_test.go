package page

import (
	"os"
	"strings"
	"testing"
)

// FuzzParse reads any text in any form: Parse never panics, and every
// issue has a line within the document, apart from the two whole-document
// refusals (line 0) that doc.go names.
func FuzzParse(f *testing.F) {
	for _, name := range append(workflows, "review-brief.md") {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		form := uint8(InWorkflow)
		if strings.HasSuffix(name, ".md") {
			form = uint8(InFunction)
		}
		f.Add(string(b), form)
	}
	f.Add("page: [", uint8(InWorkflow))
	f.Add("data:\n  views: {a: series}\nruns: |\n  x\n", uint8(ForPlaybook))
	f.Add("of: workflow/x\nglance:\n  a: &x [*x]\n", uint8(AsDefinition))
	f.Fuzz(func(t *testing.T, doc string, form uint8) {
		where := Where{Form: Form(form % 4)}
		p, issues := Parse([]byte(doc), where)
		lines := strings.Count(doc, "\n") + 1
		for _, is := range issues {
			if is.Path != "/source" && is.Path != "/page" {
				t.Fatalf("path %q", is.Path)
			}
			if is.Line == 0 {
				if strings.Contains(is.Message, "over the 65,536 bytes") || strings.HasPrefix(is.Message, "The document is not YAML") {
					continue
				}
				t.Fatalf("issue without a line: %v", is)
			}
			if is.Line < 0 || is.Line > lines {
				t.Fatalf("line %d of a document of %d lines: %v", is.Line, lines, is)
			}
		}
		if p != nil {
			for _, tpl := range p.Templates() {
				if tpl.Line < 1 || tpl.Line > lines+1 {
					t.Fatalf("template %s at line %d of %d", tpl.Key, tpl.Line, lines)
				}
			}
			_ = DataHash(p)
		}
	})
}

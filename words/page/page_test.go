package page

import (
	"os"
	"strings"
	"testing"

	"quire/words/refusal"
)

func read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineOf is the line (from 1) of the first line of doc containing s.
func lineOf(t testing.TB, doc, s string) int {
	t.Helper()
	i := strings.Index(doc, s)
	if i < 0 {
		t.Fatalf("%q not in the document", s)
	}
	return strings.Count(doc[:i], "\n") + 1
}

var workflows = []string{"morning-social-content.yaml", "close-the-month.yaml", "fulfill-order.yaml"}

func TestViewsInOrder(t *testing.T) {
	p, issues := Parse([]byte(read(t, "fulfill-order.yaml")), Where{Form: InWorkflow})
	if issues != nil {
		t.Fatal(issues)
	}
	var names []string
	for _, v := range p.Data.Views {
		names = append(names, v.Name+":"+v.Shape)
	}
	if got := strings.Join(names, " "); got != "figures:categories revenue:series channels:categories sizes:categories latest:table" {
		t.Fatal(got)
	}
	if len(p.Data.Filters) != 1 || p.Data.Filters[0].Value["subject"] != "workflow/fulfill-order" || p.Data.Language != "typescript" {
		t.Fatalf("%+v", p.Data)
	}
}

func TestNoPage(t *testing.T) {
	base := "document:\n  dsl: '1.0.3'\ndo: []\n"
	for _, doc := range []string{base, base + "page: {}\n", base + "page:\n", base + "page: null\n"} {
		if p, issues := Parse([]byte(doc), Where{Form: InWorkflow}); p != nil || issues != nil {
			t.Errorf("%q: p=%v issues=%v", doc, p, issues)
		}
	}
	if p, issues := Parse([]byte("Just a prompt.\n"), Where{Form: InFunction}); p != nil || issues != nil {
		t.Errorf("no front matter: %v %v", p, issues)
	}
	if p, issues := Parse([]byte("null\n"), Where{Form: ForPlaybook}); p != nil || issues != nil {
		t.Errorf("playbook null: %v %v", p, issues)
	}
}

func TestPlaybookPage(t *testing.T) {
	doc := read(t, "close-the-month.yaml")
	page := doc[strings.Index(doc, "page:\n")+len("page:\n"):]
	// Unindent the page mapping: it is the whole text update_playbook takes.
	var b strings.Builder
	for _, l := range strings.SplitAfter(page, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  "))
	}
	text := b.String()
	_, issues := Parse([]byte(text), Where{Form: ForPlaybook})
	want := refusal.Issue{Path: "/page", Line: lineOf(t, text, "result: |"), Message: "The playbook's page has result, but the playbook has no runs of its own."}
	if len(issues) != 1 || issues[0] != want {
		t.Fatalf("issues = %v", issues)
	}
	noResult := text[:strings.Index(text, "result: |")] + text[strings.Index(text, "runs: |"):]
	p, issues := Parse([]byte(noResult), Where{Form: ForPlaybook})
	if issues != nil || p.Subject != "playbook" || p.Path != "/page" || p.Data == nil || !p.Data.ViewsRead() {
		t.Fatalf("p=%+v issues=%v", p, issues)
	}
	if p.Data.ModuleLine != lineOf(t, noResult, "  export function fold") {
		t.Fatalf("module line %d", p.Data.ModuleLine)
	}
}

func TestPageDefinition(t *testing.T) {
	text := "of: workflow/close-the-month\nresult: |\n  {{ output.month }} closed.\n"
	p, issues := Parse([]byte(text), Where{Form: AsDefinition})
	if issues != nil || p.Of != "workflow/close-the-month" || p.Subject != "workflow" || p.Result.Line != 3 {
		t.Fatalf("p=%+v issues=%v", p, issues)
	}
}

func TestDataHash(t *testing.T) {
	doc := read(t, "close-the-month.yaml")
	p1, _ := Parse([]byte(doc), Where{Form: InWorkflow})
	// A change of the templates and of the data's layout keeps the hash.
	same := strings.Replace(doc, "Closing the month…", "Closing…", 1)
	same = strings.Replace(same, "    language: typescript\n", "    language: 'typescript' # the one language\n", 1)
	p2, _ := Parse([]byte(same), Where{Form: InWorkflow})
	// A change of the module changes it.
	other := strings.Replace(doc, "points.slice(-36)", "points.slice(-24)", 1)
	p3, _ := Parse([]byte(other), Where{Form: InWorkflow})
	h1, h2, h3 := DataHash(p1), DataHash(p2), DataHash(p3)
	if h1 == "" || h1 != h2 || h1 == h3 {
		t.Fatalf("%s %s %s", h1, h2, h3)
	}
	if DataHash(nil) != "" {
		t.Fatal("nil page")
	}
}

func TestGlance(t *testing.T) {
	doc := read(t, "close-the-month.yaml") + "  glance:\n    headline: |\n      {{ views.revenue | json }}\n    figures:\n      - '{{ output.month }}'\n"
	p, issues := Parse([]byte(doc), Where{Form: InWorkflow})
	if issues != nil || len(p.Glance) != 2 || p.Glance[0].Key != "glance/headline" || p.Glance[0].Line != lineOf(t, doc, "      {{ views.revenue") ||
		p.Glance[1].Key != "glance/figures/0" || p.Glance[1].Line != lineOf(t, doc, "      - '{{") {
		t.Fatalf("p=%+v issues=%v", p.Glance, issues)
	}
	fn := "---\ndescription: x\npage:\n  result: |\n    hi\n  glance:\n    headline: x\n---\nprompt\n"
	_, issues = Parse([]byte(fn), Where{Form: InFunction, Subject: "reasoning"})
	if len(issues) != 1 || issues[0].Line != 6 || !strings.Contains(issues[0].Message, "glance is a workflow's alone") {
		t.Fatalf("function glance: %v", issues)
	}
}

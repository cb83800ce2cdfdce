package page

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"quire/fold/module"
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

func compilerOpts(t testing.TB) module.Options {
	t.Helper()
	c, err := module.FindCompiler("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no compiler: %v", err)
		}
		t.Skipf("no TypeScript compiler: %v", err)
	}
	return module.Options{Compiler: &c, Timeout: 60 * time.Second}
}

var workflows = []string{"morning-social-content.yaml", "close-the-month.yaml", "fulfill-order.yaml"}

func TestExamplesAccepted(t *testing.T) {
	opts := Options{Module: compilerOpts(t), Budget: time.Minute}
	for _, name := range workflows {
		t.Run(name, func(t *testing.T) {
			doc := read(t, name)
			p, c, issues, err := CheckDocument(context.Background(), []byte(doc), Where{Form: InWorkflow}, opts)
			if err != nil || len(issues) > 0 {
				t.Fatalf("err=%v issues=%v", err, issues)
			}
			if p.Data == nil || p.Runs == nil || p.Result == nil || c.JS == "" || !strings.HasPrefix(c.DataHash, "sha256:") {
				t.Fatalf("page = %+v, checked = %+v", p, c)
			}
			if want := lineOf(t, doc, "      export function fold"); p.Data.ModuleLine != want {
				t.Fatalf("module line %d, want %d", p.Data.ModuleLine, want)
			}
			if want := lineOf(t, doc, "    {% if run.status"); p.Result.Line != want {
				t.Fatalf("result line %d, want %d", p.Result.Line, want)
			}
			if p.Line != lineOf(t, doc, "page:") || p.Path != "/source" || p.Subject != "workflow" {
				t.Fatalf("page = %+v", p)
			}
		})
	}
	doc := read(t, "review-brief.md")
	p, _, issues, err := CheckDocument(context.Background(), []byte(doc), Where{Form: InFunction, Subject: "reasoning"}, opts)
	if err != nil || len(issues) > 0 || p == nil || p.Result == nil || p.Data != nil {
		t.Fatalf("function page: p=%+v err=%v issues=%v", p, err, issues)
	}
	if p.Result.Line != 6 || p.Result.Text != "{{ output | clip: 200 }}\n" || p.Line != 4 {
		t.Fatalf("function page: %+v %+v", p, p.Result)
	}
}

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
	p, c, issues, err := CheckDocument(context.Background(), []byte(noResult), Where{Form: ForPlaybook}, Options{Module: compilerOpts(t), Budget: time.Minute})
	if err != nil || issues != nil || p.Subject != "playbook" || p.Path != "/page" || c.JS == "" {
		t.Fatalf("p=%+v err=%v issues=%v", p, err, issues)
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

func TestTemplateCheckerContract(t *testing.T) {
	doc := read(t, "morning-social-content.yaml")
	type call struct {
		which, subject string
		line           int
		views          map[string]string
	}
	var calls []call
	checker := func(which, text string, firstLine int, views map[string]string, subject string) []refusal.Issue {
		calls = append(calls, call{which, subject, firstLine, views})
		if which == "runs" {
			return []refusal.Issue{{Line: firstLine + 1, Message: "a problem"}}
		}
		return nil
	}
	_, _, issues, err := CheckDocument(context.Background(), []byte(doc), Where{Form: InWorkflow}, Options{Templates: checker, Module: module.Options{Mode: module.SyntaxOnly}})
	if err != nil {
		t.Fatal(err)
	}
	runsLine := lineOf(t, doc, "    {% if views.by_channel")
	if len(calls) != 2 || calls[0].which != "result" || calls[1].which != "runs" || calls[1].line != runsLine ||
		calls[1].subject != "workflow" || calls[1].views["by_channel"] != "categories" || calls[1].views["posts_per_day"] != "series" {
		t.Fatalf("calls = %+v", calls)
	}
	if len(issues) != 1 || issues[0] != (refusal.Issue{Path: "/source", Line: runsLine + 1, Message: "a problem"}) {
		t.Fatalf("issues = %v", issues)
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

func TestCompilerMissing(t *testing.T) {
	t.Setenv("QUIRE_TSC", "/nonexistent/tsc")
	doc := []byte(read(t, "close-the-month.yaml"))
	_, _, issues, err := CheckDocument(context.Background(), doc, Where{Form: InWorkflow}, Options{})
	r, ok := refusal.As(err)
	if !ok || r.Code != refusal.Unavailable || !strings.Contains(r.Message, "npm install typescript@7") || issues != nil {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
	_, c, issues, err := CheckDocument(context.Background(), doc, Where{Form: InWorkflow}, Options{Module: module.Options{Mode: module.SyntaxOnly}})
	if err != nil || issues != nil || c.JS == "" {
		t.Fatalf("syntax-only: err=%v issues=%v", err, issues)
	}
}

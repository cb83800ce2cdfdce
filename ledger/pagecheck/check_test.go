package pagecheck

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"quire/fold/module"
	"quire/words/page"
	"quire/words/refusal"
)

// read reads one of the page format's examples, which words/page's tests
// read too.
func read(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("../../words/page/testdata/" + name)
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
			p, c, issues, err := CheckDocument(context.Background(), []byte(doc), page.Where{Form: page.InWorkflow}, opts)
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
	p, _, issues, err := CheckDocument(context.Background(), []byte(doc), page.Where{Form: page.InFunction, Subject: "reasoning"}, opts)
	if err != nil || len(issues) > 0 || p == nil || p.Result == nil || p.Data != nil {
		t.Fatalf("function page: p=%+v err=%v issues=%v", p, err, issues)
	}
	if p.Result.Line != 6 || p.Result.Text != "{{ output | clip: 200 }}\n" || p.Line != 4 {
		t.Fatalf("function page: %+v %+v", p, p.Result)
	}
}

func TestPlaybookPage(t *testing.T) {
	doc := read(t, "close-the-month.yaml")
	text := doc[strings.Index(doc, "page:\n")+len("page:\n"):]
	// Unindent the page mapping, without result: the whole text
	// update_playbook takes.
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  "))
	}
	text = b.String()
	noResult := text[:strings.Index(text, "result: |")] + text[strings.Index(text, "runs: |"):]
	p, c, issues, err := CheckDocument(context.Background(), []byte(noResult), page.Where{Form: page.ForPlaybook}, Options{Module: compilerOpts(t), Budget: time.Minute})
	if err != nil || issues != nil || p.Subject != "playbook" || p.Path != "/page" || c.JS == "" {
		t.Fatalf("p=%+v err=%v issues=%v", p, err, issues)
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
	_, _, issues, err := CheckDocument(context.Background(), []byte(doc), page.Where{Form: page.InWorkflow}, Options{Templates: checker, Module: module.Options{Mode: module.SyntaxOnly}})
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

func TestCompilerMissing(t *testing.T) {
	t.Setenv("QUIRE_TSC", "/nonexistent/tsc")
	doc := []byte(read(t, "close-the-month.yaml"))
	_, _, issues, err := CheckDocument(context.Background(), doc, page.Where{Form: page.InWorkflow}, Options{})
	r, ok := refusal.As(err)
	if !ok || r.Code != refusal.Unavailable || !strings.Contains(r.Message, "npm install typescript@7") || issues != nil {
		t.Fatalf("err=%v issues=%v", err, issues)
	}
	_, c, issues, err := CheckDocument(context.Background(), doc, page.Where{Form: page.InWorkflow}, Options{Module: module.Options{Mode: module.SyntaxOnly}})
	if err != nil || issues != nil || c.JS == "" {
		t.Fatalf("syntax-only: err=%v issues=%v", err, issues)
	}
}

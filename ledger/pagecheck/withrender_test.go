package pagecheck_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"quire/fold/module"
	"quire/ledger/pagecheck"
	"quire/render"
	"quire/words/page"
)

// The spec's pages pass the whole check at save with render's template
// checker, and a template problem comes back at its line.
func TestExamplesWithRender(t *testing.T) {
	c, err := module.FindCompiler("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	opts := pagecheck.Options{Module: module.Options{Compiler: &c, Timeout: time.Minute}, Templates: render.CheckTemplate, Budget: time.Minute}
	docs := map[string]page.Where{
		"morning-social-content.yaml": {Form: page.InWorkflow},
		"close-the-month.yaml":        {Form: page.InWorkflow},
		"fulfill-order.yaml":          {Form: page.InWorkflow},
		"review-brief.md":             {Form: page.InFunction, Subject: "reasoning"},
	}
	for name, where := range docs {
		doc, err := os.ReadFile("../../words/page/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		_, _, issues, err := pagecheck.CheckDocument(context.Background(), doc, where, opts)
		if err != nil || len(issues) > 0 {
			t.Errorf("%s: err=%v issues=%v", name, err, issues)
		}
	}
	doc, _ := os.ReadFile("../../words/page/testdata/close-the-month.yaml")
	bad := strings.Replace(string(doc), "{{ views.revenue | json }}", "{{ views.income | json }}", 1)
	_, _, issues, err := pagecheck.CheckDocument(context.Background(), []byte(bad), page.Where{Form: page.InWorkflow}, opts)
	line := strings.Count(bad[:strings.Index(bad, "views.income")], "\n") + 1
	if err != nil || len(issues) == 0 || issues[0].Line != line || issues[0].Path != "/source" || !strings.Contains(issues[0].Message, "income") {
		t.Fatalf("err=%v issues=%v (want line %d)", err, issues, line)
	}
}

// BenchmarkCheckFulfillOrderWithTemplates is the whole check at save of the
// fulfill-order page, render's template check included.
func BenchmarkCheckFulfillOrderWithTemplates(b *testing.B) {
	c, err := module.FindCompiler("")
	if err != nil {
		b.Skip(err)
	}
	doc, err := os.ReadFile("../../words/page/testdata/fulfill-order.yaml")
	if err != nil {
		b.Fatal(err)
	}
	opts := pagecheck.Options{Module: module.Options{Compiler: &c, Timeout: time.Minute}, Templates: render.CheckTemplate, Budget: time.Minute}
	for b.Loop() {
		_, _, issues, err := pagecheck.CheckDocument(context.Background(), doc, page.Where{Form: page.InWorkflow}, opts)
		if err != nil || issues != nil {
			b.Fatal(err, issues)
		}
	}
}

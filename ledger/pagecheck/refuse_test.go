package pagecheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"quire/fold/module"
	"quire/words/page"
)

// breaking is one rule broken in an example: replace old with new in the
// document, and expect an issue at the line of the first line containing
// at (in the changed document), with words.
type breaking struct {
	name, doc, old, new, at, words string
	path                           string
	where                          page.Where
}

// The module's rules and the compiler's problems come back at their lines
// in the document, beside what the page's parse refuses.
func TestRefusals(t *testing.T) {
	morning, month, order := workflows[0], workflows[1], workflows[2]
	cases := []breaking{
		// What Parse refuses comes back from CheckDocument too.
		{name: "language", doc: morning, old: "language: typescript", new: "language: javascript", at: "language: javascript", words: `data.language is "javascript", but the playbook's one language is typescript`},
		// The module's rules, at their lines in the document.
		{name: "module without fold", doc: order, old: "export function fold(", new: "export function fold2(", at: "      export function fold2", words: "The module does not export fold"},
		{name: "module top-level let", doc: morning, old: "    module: |\n", new: "    module: |\n      let count = 0;\n", at: "      let count", words: "a top-level let"},
		{name: "module import", doc: month, old: "    module: |\n", new: "    module: |\n      import { x } from './x';\n", at: "      import {", words: "import is refused"},
		{name: "module answer", doc: month, old: "    module: |\n", new: "    module: |\n      export function answer(): number {\n        return 1;\n      }\n", at: "      export function answer", words: "exports answer"},
		{name: "module syntax", doc: order, old: "const bin = total < 25 ? 0", new: "const bin = total < 25 ? ? 0", at: "const bin", words: "Unexpected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run(t, c, Options{Module: module.Options{Mode: module.SyntaxOnly}})
		})
	}
	typed := []breaking{
		{name: "absent global", doc: order, old: "const channel = textOf", new: "console.log(1);\n        const channel = textOf", at: "console.log", words: "Cannot find name 'console'"},
		{name: "wrong view type", doc: month, old: "{ revenue: { unit: 'USD', period: 'month'", new: "{ revenue: { unit: 'USD', period: 'monthly'", at: "period: 'monthly'", words: "Type '\"monthly\"' is not assignable"},
		{name: "undeclared view", doc: month, old: "      revenue: series", new: "      income: series", at: "const others = (view.revenue", words: "Property 'revenue' does not exist on type 'View'"},
	}
	opts := Options{Module: compilerOpts(t), Budget: time.Minute}
	for _, c := range typed {
		t.Run(c.name, func(t *testing.T) { run(t, c, opts) })
	}
}

func run(t *testing.T, c breaking, opts Options) {
	t.Helper()
	doc := read(t, c.doc)
	if !strings.Contains(doc, c.old) {
		t.Fatalf("%q not in %s", c.old, c.doc)
	}
	doc = strings.Replace(doc, c.old, c.new, 1)
	where := c.where
	path := c.path
	if path == "" {
		path = "/source"
	}
	_, _, issues, err := CheckDocument(context.Background(), []byte(doc), where, opts)
	if err != nil {
		t.Fatal(err)
	}
	line := lineOf(t, doc, c.at)
	for _, is := range issues {
		if is.Path == path && is.Line == line && strings.Contains(is.Message, c.words) {
			return
		}
	}
	t.Fatalf("want %s line %d %q; got %v", path, line, c.words, issues)
}

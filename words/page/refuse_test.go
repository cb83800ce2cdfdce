package page

import (
	"fmt"
	"strings"
	"testing"
)

// breaking is one rule broken in an example: replace old with new in the
// document, and expect an issue at the line of the first line containing
// at (in the changed document), with words.
type breaking struct {
	name, doc, old, new, at, words string
	path                           string
	where                          Where
}

func TestRefusals(t *testing.T) {
	morning, month := workflows[0], workflows[1]
	twelveLines := strings.Repeat("x", 40000)
	nineFilters := "      events:\n" + strings.Repeat("        - type: run_succeeded\n", 9)
	nineViews := "    views:\n" + func() string {
		var b strings.Builder
		for i := 0; i < 9; i++ {
			fmt.Fprintf(&b, "      v%d: text\n", i)
		}
		return b.String()
	}()
	cases := []breaking{
		{name: "not a mapping", doc: month, old: "page:\n  data:", new: "page: [1]\nx:\n  data:", at: "page: [1]", words: "The page is not a mapping"},
		{name: "unknown key", doc: month, old: "  result: |", new: "  headline: x\n  result: |", at: "  headline: x", words: `The page has the unknown key "headline"`},
		{name: "key twice", doc: month, old: "  result: |", new: "  runs: |\n    x\n  result: |", at: "  runs: |\n    ```chart", words: "The page has the key runs twice"},
		{name: "data not a mapping", doc: month, old: "  data:\n    language: typescript\n", new: "  data: 3\n  x:\n    language: typescript\n", at: "  data: 3", words: "data is a number, but it is a mapping"},
		{name: "no language", doc: morning, old: "    language: typescript\n", new: "", at: "  data:", words: "data has no language"},
		{name: "language", doc: morning, old: "language: typescript", new: "language: javascript", at: "language: javascript", words: `data.language is "javascript", but the playbook's one language is typescript`},
		{name: "no source", doc: morning, old: "    source:\n      events:\n        - type: run_succeeded\n          subject: workflow/morning-social-content\n", new: "", at: "  data:", words: "data has no source.events"},
		{name: "no events", doc: morning, old: "      events:\n        - type: run_succeeded\n          subject: workflow/morning-social-content\n", new: "      kinds: []\n", at: "      kinds", words: `data.source has the unknown key "kinds"`},
		{name: "no views", doc: month, old: "    views:\n      revenue: series\n", new: "", at: "  data:", words: "data has no views"},
		{name: "no module", doc: month, old: "    module: |", new: "    modules: |", at: "    modules: |", words: `data has the unknown key "modules"`},
		{name: "no module, also", doc: month, old: "    module: |", new: "    modules: |", at: "  data:", words: "data has no module"},
		{name: "nine views", doc: month, old: "    views:\n      revenue: series\n", new: nineViews, at: "      v8: text", words: "data.views names 9 views, but it names at most 8"},
		{name: "no view", doc: month, old: "    views:\n      revenue: series\n", new: "    views: {}\n", at: "    views: {}", words: "data.views names no view"},
		{name: "view name", doc: month, old: "      revenue: series", new: "      Revenue: series", at: "      Revenue: series", words: `The view's name "Revenue" is not 1 to 32 lowercase letters`},
		{name: "view name too long", doc: month, old: "      revenue: series", new: "      r" + strings.Repeat("e", 32) + ": series", at: "      reee", words: "is not 1 to 32"},
		{name: "view name digit", doc: month, old: "      revenue: series", new: "      1revenue: series", at: "      1revenue", words: "beginning with a letter"},
		{name: "shape", doc: month, old: "      revenue: series", new: "      revenue: line", at: "      revenue: line", words: `The view revenue takes "line", which is no shape`},
		{name: "nine filters", doc: month, old: "      events:\n        - type: run_succeeded\n          subject: workflow/close-the-month\n", new: nineFilters, at: strings.Repeat("        - type: run_succeeded\n", 8) + "        - type", words: "data.source.events: Expected 1 to 8 filters, not 9"},
		{name: "no filter", doc: month, old: "      events:\n        - type: run_succeeded\n          subject: workflow/close-the-month\n", new: "      events: []\n", at: "      events: []", words: "data.source.events: Expected 1 to 8 filters, not 0"},
		{name: "filter without type", doc: month, old: "        - type: run_succeeded\n", new: "        - kind: run_succeeded\n", at: "        - kind", words: "data.source.events/0/type: Expected a type"},
		{name: "filter value a pattern list", doc: month, old: "          subject: workflow/close-the-month", new: "          subject: [workflow/close-the-month]", at: "          subject: [", words: "data.source.events/0/subject: Expected subject written out as text"},
		{name: "filter attribute name", doc: month, old: "          subject: workflow/close-the-month", new: "          subject: workflow/close-the-month\n          Caller: me", at: "          Caller", words: `data.source.events/0/Caller: Unknown attribute "Caller"`},
		{name: "filter not a mapping", doc: month, old: "        - type: run_succeeded\n          subject: workflow/close-the-month\n", new: "        - run_succeeded\n", at: "        - run_succeeded", words: "data.source.events/0: Expected a filter: a mapping with a type"},
		{name: "result not text", doc: month, old: "  result: |\n    {% if run.status == \"started\" %}\n    Closing the month…\n    {% else %}\n    {{ output.month }} closed with {{ output.revenue | money }} of revenue.\n    {% endif %}\n", new: "  result:\n    headline: x\n", at: "    headline: x", words: "result is a mapping, but it is a template"},
		{name: "runs not text", doc: month, old: "  runs: |\n", new: "  runs: 12\n  other: |\n", at: "  runs: 12", words: "runs is a number, but it is a template"},
		{name: "data without runs", doc: month, old: "  runs: |\n", new: "  glance: |\n", at: "  data:", words: "The page has data without runs"},
		{name: "runs without data", doc: month, old: "  data:\n", new: "  notes:\n", at: "  runs: |", words: "The page has runs without data"},
		{name: "templates over 32 KiB", doc: month, old: "    Closing the month…", new: "    " + twelveLines, at: "page:", words: "The page's templates take"},
		{name: "module not text", doc: month, old: "    module: |\n", new: "    module:\n      - x\n    notes: |\n", at: "      - x", words: "data.module is a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { run(t, c) })
	}
}

func run(t *testing.T, c breaking) {
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
	_, issues := Parse([]byte(doc), where)
	line := lineOf(t, doc, c.at)
	if c.at == strings.Repeat("        - type: run_succeeded\n", 8)+"        - type" {
		line += 8
	}
	if c.at == "  runs: |\n    ```chart" {
		line = strings.Count(doc[:strings.LastIndex(doc, "  runs: |")], "\n") + 1
	}
	for _, is := range issues {
		if is.Path == path && is.Line == line && strings.Contains(is.Message, c.words) {
			return
		}
	}
	t.Fatalf("want %s line %d %q; got %v", path, line, c.words, issues)
}

func TestDocumentTooLarge(t *testing.T) {
	doc := read(t, workflows[1]) + "# " + strings.Repeat("x", 65536) + "\n"
	_, issues := Parse([]byte(doc), Where{Form: InWorkflow})
	if len(issues) != 1 || issues[0].Line != 0 || !strings.Contains(issues[0].Message, "over the 65,536 bytes") {
		t.Fatalf("%v", issues)
	}
}

func TestFunctionLines(t *testing.T) {
	doc := read(t, "review-brief.md")
	doc = strings.Replace(doc, "  result: |", "  results: |", 1)
	_, issues := Parse([]byte(doc), Where{Form: InFunction, Subject: "reasoning"})
	if len(issues) != 1 || issues[0].Line != 5 || issues[0].Path != "/source" || !strings.Contains(issues[0].Message, `unknown key "results"`) {
		t.Fatalf("%v", issues)
	}
	_, issues = Parse([]byte("---\npage: [\n---\nx\n"), Where{Form: InFunction})
	if len(issues) != 1 || issues[0].Line < 2 || !strings.Contains(issues[0].Message, "not YAML") {
		t.Fatalf("%v", issues)
	}
	_, issues = Parse([]byte("---\npage:\n  result: x\n"), Where{Form: InFunction})
	if len(issues) != 1 || issues[0].Line != 1 || !strings.Contains(issues[0].Message, "not closed") {
		t.Fatalf("%v", issues)
	}
}

package render

import (
	"strings"
	"testing"
)

func TestCheckTemplateRefusals(t *testing.T) {
	views := map[string]string{"revenue": "series", "by_channel": "categories"}
	type want struct {
		line int
		msg  string
	}
	cases := []struct {
		name, which, src string
		want             []want
	}{
		{"does not compile", "result", "{{ output.x | }}", []want{{10, "The output {{ output.x | }} does not compile"}}},
		{"left open", "result", "a\n{{ output.x", []want{{11, "An output {{ is left open"}}},
		{"tag left open", "result", "a\n{% if x", []want{{11, "A tag {% is left open"}}},
		{"block never closed", "result", "{% if output %}", []want{{10, "The tag if is never closed"}}},
		{"unknown tag", "result", "\n{% tablerow x in output %}{% endtablerow %}", []want{{11, "The tag tablerow is not available: it writes HTML"}, {11, "The tag endtablerow is not a tag a page has."}}},
		{"capture", "result", "{% capture x %}{% endcapture %}", []want{{10, "The tag capture is not available: use assign with append."}, {10, "The tag endcapture"}}},
		{"include", "result", "{% include 'x' %}", []want{{10, "The tag include is not available: each template stands alone."}}},
		{"unknown filter", "result", "{{ output | frob }}", []want{{10, "The filter frob is not a filter a page has."}}},
		{"filter arguments", "result", "{{ output | clip }}", []want{{10, "The filter clip takes 1 argument, not 0."}}},
		{"unknown variable", "result", "{{ views.revenue }}", []want{{10, "The variable views is not one result reads"}}},
		{"run field", "result", "\n\n{{ run.cost }}", []want{{12, "run has no field cost: its fields are status, started, ended, version."}}},
		{"subject field", "runs", "{{ subject.owner }}", []want{{10, "subject has no field owner"}}},
		{"undeclared view", "runs", "{{ views.nope }}", []want{{10, "The view nope is not declared: data.views declares by_channel, revenue."}}},
		{"dynamic view", "runs", "{% assign n = 'revenue' %}{{ views[n] }}", []want{{10, "views is read by the names of its fields"}}},
		{"names made are read", "runs", "{% assign x = 1 %}{% for p in views.revenue.lines %}{{ forloop.index }}{{ p.name }}{% endfor %}{% increment c %}{{ x }}{{ c }}", nil},
		{"forloop outside for", "runs", "{{ forloop.index }}", []want{{10, "The variable forloop is not one runs reads"}}},
		{"reserved name", "runs", "{% assign __st = 1 %}", []want{{10, "The name __st is not allowed"}}},
		{"break outside for", "runs", "{% break %}", []want{{10, "The tag break stands only inside a for."}}},
		{"chart kind", "runs", "```chart pie\n{{ views.revenue | json }}\n```", []want{{10, "The chart fence is refused: there is no chart of the kind pie; the kinds are line, bars, stacked, share, histogram, scatter, bubble, heatmap, range, funnel, calendar, timeline, table, figure and text."}}},
		{"chart kind misspelt", "runs", "```chart bar\n{{ views.revenue | json }}\n```", []want{{10, "The chart fence is refused: there is no chart of the kind bar; did you mean bars? The kinds are line, bars, stacked, share, histogram, scatter, bubble, heatmap, range, funnel, calendar, timeline, table, figure and text."}}},
		{"chart role", "runs", "x\n\n```chart line x=a\n```", []want{{12, "The chart fence is refused: a line chart takes no roles."}}},
		{"chart role twice", "runs", "```chart bars x=a x=b\n```", []want{{10, "The chart fence is refused: the role x is written twice."}}},
		{"chart role not taken", "runs", "```chart bars size=a\n```", []want{{10, "The chart fence is refused: a bars chart takes no role size; its roles are x, y and color."}}},
		{"chart written by a tag", "runs", "```chart {{ subject.name }}\n```", nil},
		{"chart in a list", "runs", "- item\n\n  ```chart pie\n  ```", nil},
		{"row never closed", "runs", "::: row\na\n---\nb", []want{{10, "This row is never closed by a line of :::."}}},
		{"row nested", "runs", "::: row\na\n::: row\n", []want{{12, "This row opens inside another row, and rows do not nest."}, {10, "This row is never closed"}}},
		{"row of 1", "runs", "::: row\na\n:::", []want{{10, "This row holds 1 cell, and a row holds at least 2."}}},
		{"row of 5", "runs", "::: row\na\n---\nb\n---\nc\n---\nd\n---\ne\n:::", []want{{10, "This row holds 5 cells, and a row holds at most 4."}}},
		{"row with an empty cell", "runs", "::: row\na\n---\n\n:::", []want{{10, "This row has an empty cell."}}},
		{"row with a tag", "runs", "::: row\n{% for l in views.revenue.lines %}\n{{ l.name }}\n---\n{% endfor %}\n:::", nil},
		{"stray :::", "runs", ":::", []want{{10, "This ::: closes no row."}}},
		{"other ::: line", "runs", "::: column", []want{{10, "The line ::: column is refused"}}},
		{"indented :::", "runs", "::: row\na\n---\nb\n :::\n:::", []want{{14, "A ::: line stands at the start of its line"}}},
		{"result in the playbook", "result", "x", []want{{10, "The playbook's page has no result"}}},
		{"too many names", "runs", strings.Repeat("{{ subject.name }}", 1001), []want{{10, "The template holds 1001 names in its tags and outputs; a template holds at most 1,000."}}},
	}
	for _, c := range cases {
		subject := "workflow"
		if c.name == "result in the playbook" {
			subject = "playbook"
		}
		got := CheckTemplate(c.which, c.src, 10, views, subject)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d issues, want %d: %+v", c.name, len(got), len(c.want), got)
			continue
		}
		for i, w := range c.want {
			if got[i].Path != "/source" || got[i].Line != w.line || !strings.HasPrefix(got[i].Message, w.msg) {
				t.Errorf("%s: issue %+v, want line %d %q", c.name, got[i], w.line, w.msg)
			}
		}
	}
	for _, name := range []string{"morning/result.liquid", "close/result.liquid", "fulfill/result.liquid"} {
		if is := CheckTemplate("result", page(t, name), 1, nil, "workflow"); len(is) > 0 {
			t.Errorf("%s: %+v", name, is)
		}
	}
	if is := CheckTemplate("runs", page(t, "morning/runs.liquid"), 1, map[string]string{"posts_per_day": "series", "by_channel": "categories"}, "workflow"); len(is) > 0 {
		t.Errorf("morning runs: %+v", is)
	}
	fv := map[string]string{"figures": "categories", "revenue": "series", "channels": "categories", "sizes": "categories", "latest": "table"}
	if is := CheckTemplate("runs", page(t, "fulfill/runs.liquid"), 1, fv, "workflow"); len(is) > 0 {
		t.Errorf("fulfill runs: %+v", is)
	}
}

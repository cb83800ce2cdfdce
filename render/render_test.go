package render

import (
	"strings"
	"testing"
)

func result(tmpl, output string) string {
	return Result(tmpl, done, workflow("w"), []byte(output), readTime, Options{})
}

func TestLinesInPlace(t *testing.T) {
	cases := []struct{ name, got, want string }{
		{"rejected", Result("x", Run{Status: "rejected", Reason: "unanswered", Kind: "expired", Detail: "Nobody answered the request before it expired at 2026-11-04T09:00:00.000Z"}, workflow("w"), nil, readTime, Options{}),
			"The run was rejected as unanswered, expired. Nobody answered the request before it expired at 2026-11-04T09:00:00.000Z"},
		{"rejected without kind", Result("x", Run{Status: "rejected", Reason: "declined", Detail: "The owner said no."}, workflow("w"), nil, readTime, Options{}),
			"The run was rejected as declined. The owner said no."},
		{"failed", Result("x", Run{Status: "failed"}, workflow("w"), nil, readTime, Options{}), "The run failed."},
		{"result stopped", result("Hello\n{{ output.posts }}", `{}`), "Could not display this run: output has no field posts, on line 2."},
		{"result stopped, document line", Result("Hello\n{{ output.posts }}", done, workflow("w"), []byte(`{}`), readTime, Options{FirstLine: 40}),
			"Could not display this run: output has no field posts, on line 41."},
		{"runs stopped", Runs("{{ views.x.values }}", []byte(`{"x":{"unit":"u"}}`), workflow("w"), readTime, Options{}),
			"Could not display this page’s figures: views.x has no field values, on line 1."},
		{"view not written reads null", Runs("{{ views.x | json }}", []byte(`{}`), workflow("w"), readTime, Options{}), "null"},
		{"field of null", Runs("{{ views.x.values }}", []byte(`{}`), workflow("w"), readTime, Options{}),
			"Could not display this page’s figures: views.x is null: it has no field values, on line 1."},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, c.got, c.want)
		}
	}
	if LineBuilding != "Building this page's figures from the playbook's history…" ||
		LineStalled != "The figures stopped updating because the page could not process an event. Correct the page to continue." ||
		LineOutOfReach != "Could not work out this page's figures as they stood when this run ended." {
		t.Error("a fixed line is not the spec's")
	}
}

func TestReads(t *testing.T) {
	out := `{"posts":[{"channel":"LinkedIn"}],"title":"Hi","n":4.800000000000001}`
	cases := []struct{ tmpl, want string }{
		{`{% if output.nope %}a{% elsif output.title %}b{% endif %}`, "b"},
		{`{% unless output.nope %}u{% endunless %}`, "u"},
		{`{{ output.nope | default: "Untitled" }}`, "Untitled"},
		{`{{ output.constructor }}`, "Could not display this run: output has no field constructor, on line 1."},
		{`{{ output.posts }}`, "[object Object]"},
		{`{{ output.title | split: "" }}`, "Hi"},
		{`{{ output.n }} {{ output.n | round: 1 }}`, "4.800000000000001 4.8"},
		{`{% for p in output.nope %}{% endfor %}`, "Could not display this run: output has no field nope, on line 1."},
		{`{% assign x = output.posts[3] %}`, "Could not display this run: output.posts has no item 3, on line 1."},
		{`{% case output.title %}{% when "Hi" %}yes{% else %}no{% endcase %}`, "yes"},
		{`{% increment c %}{% increment c %}{% decrement d %}{{ c }}`, "01-12"},
		{"{% liquid\nassign x = 3\necho x | plus: 1\n%}", "4"},
		{"{% # a note %}a{% comment %}x\ny{% endcomment %}b{% raw %}{{ z }}{% endraw %}", "ab{{ z }}"},
		{`{% for i in (1..3) %}{{ i }}{% cycle "a","b" %}{% if forloop.last %}.{% endif %}{% endfor %}`, "1a2b3a."},
		{`{% for i in (1..5) limit: 2 %}{{ i }}{% endfor %}`, "12"},
		{"  \n\n  text  \n\n", "text"},
		{`{{ today }} {{ now }} {{ subject.name }} {{ subject.description | json }} {{ run.version }}`, "2026-11-01 2026-11-01T09:45:00.000Z w null 4"},
	}
	for _, c := range cases {
		if got := result(c.tmpl, out); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.tmpl, got, c.want)
		}
	}
}

func TestLimits(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{`{% for i in (1..100000000) %}{% endfor %}`, "Could not display this run: it took more than 200 ms to render, the limit for a template."},
		{`{% assign s = "0123456789" %}{% for i in (1..13) %}{% assign s = s | append: s %}{% endfor %}{{ s }}`,
			"Could not display this run: it rendered more than 64 KiB (65,536 bytes), the limit for a rendered template."},
		{`{% assign s = "0123456789" %}{% for i in (1..30) %}{% assign s = s | append: s %}{% endfor %}`,
			"Could not display this run: it used more than 5,000,000 characters or items of memory, the limit for a render."},
	}
	for _, c := range cases {
		if got := result(c.tmpl, `{}`); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.tmpl, clip(got, 300), c.want)
		}
	}
}

func TestHeadline(t *testing.T) {
	long := strings.Repeat("a", 250)
	if got := Headline(long + "\nmore"); got != strings.Repeat("a", 199)+"…" {
		t.Errorf("headline of %d characters", len([]rune(got)))
	}
	if got := Headline("One.\n\nTwo."); got != "One." {
		t.Errorf("headline %q", got)
	}
}

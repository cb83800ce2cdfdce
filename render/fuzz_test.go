package render

import (
	"testing"
	"time"
)

// The save-time check and a render never panic, whatever the template.
func FuzzCheckTemplate(f *testing.F) {
	for _, s := range []string{"{{ output.x | clip: 3 }}", "{% if a %}{% elsif b %}{% else %}{% endif %}", "{% liquid\nassign x = 1\necho x\n%}",
		"{% for x in (1..3) limit: 2 %}{% cycle 'a' %}{% endfor %}", "::: row\na\n---\nb\n:::", "```chart bars x=\"a b\"\n{}\n```", "{{", "{%", "{% raw %}{{ x }}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		CheckTemplate("result", src, 1, map[string]string{"v": "series"}, "workflow")
		CheckTemplate("runs", src, 3, map[string]string{"v": "series"}, "workflow")
		Result(src, done, workflow("w"), []byte(`{"a":[1,{"b":null}],"c":"d"}`), time.Unix(0, 0), Options{})
	})
}

// Laying out Markdown, its chart blocks and rows, never panics.
func FuzzLayout(f *testing.F) {
	for _, s := range []string{"```chart line\nnull\n```", "::: row\n```chart table\n{\"columns\":[{\"name\":\"a\"}],\"rows\":[[1]]}\n```\n---\nb\n:::",
		"::: row\n::: row\n:::", "```chart scatter x=a\n{\"columns\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"rows\":[[\"x\",null]]}\n```", "- a\n  ```chart pie\n  ```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		Layout(md, "markdown")
		Layout(md, "text")
		Blocks(md)
	})
}

package render

import "testing"

func BenchmarkRenderFulfillRuns(b *testing.B) {
	tmpl, views := page(b, "fulfill/runs.liquid"), []byte(page(b, "fulfill/views.json"))
	b.ReportAllocs()
	for b.Loop() {
		Runs(tmpl, views, workflow("fulfill-order"), readTime, Options{})
	}
}

func BenchmarkRenderFulfillResult(b *testing.B) {
	tmpl, out := page(b, "fulfill/result.liquid"), []byte(page(b, "fulfill/output.json"))
	b.ReportAllocs()
	for b.Loop() {
		Result(tmpl, done, workflow("fulfill-order"), out, readTime, Options{})
	}
}

func BenchmarkRenderLoop3000(b *testing.B) {
	tmpl := `{% for i in (1..3000) %}{{ "x" | append: "0123456789" }}{% endfor %}`
	b.ReportAllocs()
	for b.Loop() {
		Result(tmpl, done, workflow("w"), nil, readTime, Options{})
	}
}

package render

import "testing"

// exampleOutput is the output every filter's example reads.
const exampleOutput = `{"posts":[{"channel":"LinkedIn","value":3},{"channel":"X","value":5}],"title":"Hello world","total":1234.5,"when":"2026-11-01T09:30:00Z","note":"a\nb"}`

// Every entry of the table of filters renders its example.
func TestFilterExamples(t *testing.T) {
	for _, f := range filters {
		t.Run(f.Name, func(t *testing.T) {
			got := Result(f.Example, done, workflow("w"), []byte(exampleOutput), readTime, Options{})
			if got != f.Want {
				t.Errorf("%s\n got %q\nwant %q", f.Example, got, f.Want)
			}
			if is := CheckTemplate("result", f.Example, 1, nil, "workflow"); len(is) > 0 {
				t.Errorf("the check refuses the example: %v", is)
			}
		})
	}
}

func TestFilterDetails(t *testing.T) {
	cases := []struct{ tmpl, want string }{
		{`{{ "short" | clip: 80 }}`, "short"},
		{`{{ "abcdef" | clip: 3 }}`, "ab…"},
		{`{{ "ab cdef" | clip: 4 }}`, "ab…"},
		{`{{ 0.5 | money }}`, "$0.50"},
		{`{{ 1000000 | money: "GBP" }}`, "£1,000,000"},
		{`{{ 2.004 | money }}`, "$2"},
		{`{{ 1234 | number }} {{ -1234567 | number }} {{ 12 | number }}`, "1,234 -1,234,567 12"},
		{`{{ 0 | percent }} {{ 0.5 | percent }} {{ 0.12345 | percent: 2 }}`, "0% 50% 12.35%"},
		{`{{ output.posts | json }}`, `[{"channel":"LinkedIn","value":3},{"channel":"X","value":5}]`},
		{`{{ 'a"b<>&' | json }} {{ output.note | json }}`, `"a\"b<>&" "a\nb"`},
		{`{{ output.posts | sum: "value" | plus: 0.5 }}`, "8.5"},
		{`{{ output | json }}`, exampleOutput},
		{`{{ 10 | divided_by: 4 }} {{ 10 | divided_by: 4.0 }}`, "2 2.5"},
	}
	for _, c := range cases {
		if got := Result(c.tmpl, done, workflow("w"), []byte(exampleOutput), readTime, Options{}); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.tmpl, got, c.want)
		}
	}
}

func TestJSNumbers(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0", 1: "1", -2.5: "-2.5", 4.800000000000001: "4.800000000000001", 1e21: "1e+21", 1e20: "100000000000000000000",
		1.5e-7: "1.5e-7", 0.000001: "0.000001", 123456789.125: "123456789.125",
	} {
		if got := jsNumber(f); got != want {
			t.Errorf("jsNumber(%v) = %q, want %q", f, got, want)
		}
	}
}
